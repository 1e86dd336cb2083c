package gateway

import (
	"fmt"
	"slices"
	"strings"

	"github.com/tlsplane/tlsplane/translator/input"
	"github.com/tlsplane/tlsplane/translator/route"
)

// The GRPCRoute spec: when an HTTPRoute and a GRPCRoute attach to one
// listener and their hostnames intersect, exactly one is accepted there:
// the oldest, then the first by namespace/name. The other is not accepted
// on that parent (Accepted False) and is served through it nowhere: gRPC
// and plain HTTP requests for one hostname would otherwise split between
// two routes' rules.

// rejectConflicts applies the rule to every listener the entries attach
// to, before statuses and reach are computed from them.
func rejectConflicts(entries []routeEntry) {
	type attached struct {
		e         *routeEntry
		parent    int
		hostnames []string
	}
	byListener := map[*listenerState][]attached{}
	var listeners []*listenerState // in the order entries reach them: deterministic
	for i := range entries {
		e := &entries[i]
		for p := range e.parents {
			for _, a := range e.parents[p].attachments {
				if byListener[a.listener] == nil {
					listeners = append(listeners, a.listener)
				}
				byListener[a.listener] = append(byListener[a.listener], attached{e, p, a.hostnames})
			}
		}
	}
	for _, l := range listeners {
		var http, grpc []attached
		for _, a := range byListener[l] {
			if a.e.rs.Kind == input.KindGRPCRoute {
				grpc = append(grpc, a)
			} else {
				http = append(http, a)
			}
		}
		if len(http) == 0 || len(grpc) == 0 {
			continue // the common case: one kind per listener
		}
		byHost := map[string][]int{}
		for i, a := range http {
			for _, h := range a.hostnames {
				byHost[h] = append(byHost[h], i)
			}
		}
		for _, g := range grpc {
			for _, i := range meeting(g.hostnames, byHost, http, func(a attached) []string { return a.hostnames }) {
				h := http[i]
				loser, winner := g, h
				if route.OlderFirst(g.e.rs, h.e.rs) {
					loser, winner = h, g
				}
				reject(loser.e, loser.parent, winner.e.rs)
			}
		}
	}
}

// meeting are the indexes (sorted) of the items whose hostnames meet one
// of hostnames, through byHost (item indexes by hostname): exact names,
// "*", and the wildcards covering a name cost a lookup each; a wildcard
// among hostnames scans every item.
func meeting[T any](hostnames []string, byHost map[string][]int, items []T, hostnamesOf func(T) []string) []int {
	found := map[int]bool{}
	for _, h := range hostnames {
		if h == "*" || strings.HasPrefix(h, "*.") {
			for i, item := range items {
				if hostnamesIntersect([]string{h}, hostnamesOf(item)) {
					found[i] = true
				}
			}
			continue
		}
		keys := []string{h, "*"}
		for rest := h; strings.Contains(rest, "."); {
			rest = rest[strings.Index(rest, ".")+1:]
			keys = append(keys, "*."+rest)
		}
		for _, k := range keys {
			for _, i := range byHost[k] {
				found[i] = true
			}
		}
	}
	out := make([]int, 0, len(found))
	for i := range found {
		out = append(out, i)
	}
	slices.Sort(out)
	return out
}

// reject marks the parent not accepted for the conflict with other, and
// takes the route out of every listener of that parent.
func reject(e *routeEntry, parent int, other *route.Route) {
	p := &e.parents[parent]
	if !p.Accepted && p.Reason == "Conflicted" {
		return
	}
	detachRoute(e.rs, e.parents[parent:parent+1])
	for _, a := range p.attachments {
		// Still counted as a route of its kind there: a patch of the
		// winner must not proceed as if the listener held one kind.
		a.listener.byKind[e.rs.Kind]++
	}
	p.Accepted, p.attachedListener, p.attachments = false, false, nil
	p.Reason = "Conflicted"
	p.Message = fmt.Sprintf("%s %s, older or first by name, serves the same hostnames on this listener: an HTTPRoute and a GRPCRoute may not share them", other.Kind, other.Name)
}

// hostnamesIntersect: some hostname of a meets one of b ("*" meets all).
func hostnamesIntersect(a, b []string) bool {
	for _, x := range a {
		for _, y := range b {
			if x == y || x == "*" || y == "*" || hostnameMatches(x, y) || hostnameMatches(y, x) {
				return true
			}
		}
	}
	return false
}

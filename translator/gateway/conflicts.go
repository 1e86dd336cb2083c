package gateway

import (
	"fmt"
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
		as := byListener[l]
		for i, a := range as {
			for _, b := range as[i+1:] {
				if a.e.rs.kind == b.e.rs.kind || !hostnamesIntersect(a.hostnames, b.hostnames) {
					continue
				}
				loser, winner := b, a
				if olderFirst(b.e.rs, a.e.rs) {
					loser, winner = a, b
				}
				reject(loser.e, loser.parent, winner.e.rs)
			}
		}
	}
}

// olderFirst: a wins over b, the oldest then by namespace/name.
func olderFirst(a, b *routeState) bool {
	ta, tb := a.meta.CreationTimestamp.Time, b.meta.CreationTimestamp.Time
	if !ta.Equal(tb) {
		return ta.Before(tb)
	}
	return a.nn.String() < b.nn.String()
}

// reject marks the parent not accepted for the conflict with other, and
// takes the route out of every listener of that parent.
func reject(e *routeEntry, parent int, other *routeState) {
	p := &e.parents[parent]
	if !p.accepted && p.acceptedReason == "Conflicted" {
		return
	}
	detachRoute(e.rs, e.parents[parent:parent+1])
	p.accepted, p.attachedListener, p.attachments = false, false, nil
	p.acceptedReason = "Conflicted"
	p.acceptedMsg = fmt.Sprintf("%s %s, older or first by name, serves the same hostnames on this listener: an HTTPRoute and a GRPCRoute may not share them", other.kind, other.nn)
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

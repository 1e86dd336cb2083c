package gateway

import (
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/types"
)

// A Gateway's fleet is served only the clusters its own routes reach (and
// the load assignments and secrets those read): another tenant's
// clusters, and the client keys they present, never reach it. What a
// route reaches is counted per Gateway and cluster name as it attaches
// and detaches, so a route patch costs the clusters of the routes it
// changes, never a walk over every route.

// countClusters adds delta for each cluster e sends traffic to through a
// served listener, per Gateway (accepted or not: a route with a rule
// tlsplane does not support is not accepted, and its other rules are
// served), noting in flips
// (when not nil), per Gateway, each cluster it started (true) or stopped
// (false) reaching.
func (m *memo) countClusters(e routeEntry, delta int, flips map[types.NamespacedName]map[string]bool) {
	for _, p := range e.parents {
		gw := p.gateway.nn
		for _, a := range p.attachments {
			if !a.listener.served() {
				continue
			}
			for _, name := range e.rs.Clusters(a.listener.raw()) {
				counts := m.clusters[gw]
				if counts == nil {
					counts = map[string]int{}
					m.clusters[gw] = counts
				}
				before := counts[name]
				if counts[name] += delta; counts[name] <= 0 {
					delete(counts, name)
				}
				if flips != nil && (before == 0) != (counts[name] == 0) {
					if flips[gw] == nil {
						flips[gw] = map[string]bool{}
					}
					flips[gw][name] = counts[name] > 0
				}
			}
		}
	}
}

// PatchReached is reached (sorted) with the clusters flips says started
// (true) or stopped (false) being reached: a copy, or reached itself when
// nothing differs. It costs a copy of reached, never a sort of it.
func PatchReached(reached []string, flips map[string]bool) []string {
	out, copied := reached, false
	for _, name := range sortedFlips(flips) {
		i, found := slices.BinarySearch(out, name)
		if found == flips[name] {
			continue
		}
		if !copied {
			out, copied = slices.Clone(out), true
		}
		if found {
			out = slices.Delete(out, i, i+1)
		} else {
			out = slices.Insert(out, i, name)
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

func sortedFlips(flips map[string]bool) []string {
	names := make([]string, 0, len(flips))
	for name := range flips {
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}

// reachedOf is the clusters gw's routes reach, sorted; nil for none.
func (m *memo) reachedOf(gw types.NamespacedName) []string {
	counts := m.clusters[gw]
	if len(counts) == 0 {
		return nil
	}
	out := make([]string, 0, len(counts))
	for name := range counts {
		out = append(out, name)
	}
	slices.Sort(out)
	return out
}

// ReachedClusters are the names of the clusters the routes attached to
// gs reach through its served listeners, sorted: what its fleet is served
// of the clusters. Every name the fleet's listeners and route
// configurations send traffic to is in it.
func (r *Result) ReachedClusters(gs *Gateway) []string {
	if r.memo == nil {
		return nil
	}
	return r.memo.reachedOf(gs.nn)
}

// XBackendReach is, per XBackend some accepted route names, the Gateways
// whose accepted routes name it, sorted: its status.parents. It reads the
// counts as route patches leave them.
func (r *Result) XBackendReach() map[types.NamespacedName][]types.NamespacedName {
	if r.memo == nil || len(r.memo.xreach) == 0 {
		return nil
	}
	out := make(map[types.NamespacedName][]types.NamespacedName, len(r.memo.xreach))
	for x, gws := range r.memo.xreach {
		list := make([]types.NamespacedName, 0, len(gws))
		for gw := range gws {
			list = append(list, gw)
		}
		slices.SortFunc(list, func(a, b types.NamespacedName) int { return strings.Compare(a.String(), b.String()) })
		out[x] = list
	}
	return out
}

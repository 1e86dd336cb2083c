package gateway

import (
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/tlsplane/tlsplane/translator/input"
	"github.com/tlsplane/tlsplane/translator/route"
)

// A change to HTTPRoutes alone leaves every listener, Gateway address and
// ReferenceGrant as judged, so it is applied to the last run of the
// Gateway rules instead of running them again: each changed route is
// detached, judged and attached again, and the engine rebuilds only the
// virtual hosts of the hostnames it had or has. One route among 10,000
// behind one Gateway then costs that route, not the Gateway's 10,000
// virtual hosts.

// memo is what the last run of the Gateway rules judged.
type memo struct {
	g        *gatewayIndex
	gateways map[types.NamespacedName]*Gateway
	routes   map[route.Key]routeEntry // routes with a parent of ours
	// reach counts, per Service port, the accepted attachments through
	// which each Gateway sends traffic there.
	reach map[input.ServicePort]map[types.NamespacedName]int
	// clusters counts, per Gateway, the accepted attachments through
	// which it sends traffic to each cluster (reached.go).
	clusters map[types.NamespacedName]map[string]int
	// xreach counts, per XBackend, the accepted attachments through which
	// each Gateway's routes name it (resolved or not).
	xreach map[types.NamespacedName]map[types.NamespacedName]int
}

// routeEntry is one route as judged and attached.
type routeEntry struct {
	rs      *route.Route
	parents []parentResult
}

// countReach adds delta for each Gateway e sends traffic to a Service port
// through, noting the ports in touched (when not nil).
func (m *memo) countReach(e routeEntry, delta int, touched map[input.ServicePort]bool) {
	for _, p := range e.parents {
		if !p.Accepted || !p.attachedListener {
			continue
		}
		for _, x := range e.rs.XBackends {
			if m.xreach[x] == nil {
				m.xreach[x] = map[types.NamespacedName]int{}
			}
			if m.xreach[x][p.gateway.nn] += delta; m.xreach[x][p.gateway.nn] <= 0 {
				delete(m.xreach[x], p.gateway.nn)
				if len(m.xreach[x]) == 0 {
					delete(m.xreach, x)
				}
			}
		}
		for _, b := range e.rs.Backends {
			if m.reach[b] == nil {
				m.reach[b] = map[types.NamespacedName]int{}
			}
			if m.reach[b][p.gateway.nn] += delta; m.reach[b][p.gateway.nn] == 0 {
				delete(m.reach[b], p.gateway.nn)
			}
			if touched != nil {
				touched[b] = true
			}
		}
	}
}

// reachOf is the Gateways reaching b, sorted; nil for none.
func (m *memo) reachOf(b input.ServicePort) []types.NamespacedName {
	if len(m.reach[b]) == 0 {
		delete(m.reach, b)
		return nil
	}
	out := make([]types.NamespacedName, 0, len(m.reach[b]))
	for nn := range m.reach[b] {
		out = append(out, nn)
	}
	slices.SortFunc(out, func(a, b types.NamespacedName) int { return strings.Compare(a.String(), b.String()) })
	return out
}

// Rebuild names, per Gateway listener, the hostnames whose virtual hosts
// a route patch touched (Table.HostsToRebuild reads it).
type Rebuild map[*listenerState]map[string]bool

// RoutePatch is what PatchRoutes changed.
type RoutePatch struct {
	// Gateways are those whose listeners a changed route had or has,
	// sorted by name: their statuses and route tables to redo.
	Gateways []*Gateway
	Rebuild  Rebuild
	// Statuses are the changed HTTPRoutes' statuses, GRPCStatuses the
	// GRPCRoutes'; nil: the route has no parent of ours (any more).
	Statuses     map[types.NamespacedName]*gwv1.HTTPRouteStatus
	GRPCStatuses map[types.NamespacedName]*gwv1.GRPCRouteStatus
	// Reached are the Service ports whose reaching Gateways changed
	// (Reach is updated already): their policies' ancestors change.
	Reached []input.ServicePort
	// Clusters are, per Gateway, the clusters its routes started (true)
	// or stopped (false) reaching: PatchReached applies them.
	Clusters map[types.NamespacedName]map[string]bool
}

// ChangedRoutes are the routes a patch applies, by kind: the names
// changed, and the objects now (a missing one was deleted).
type ChangedRoutes struct {
	HTTP        []types.NamespacedName
	HTTPObjects map[types.NamespacedName]*gwv1.HTTPRoute
	GRPC        []types.NamespacedName
	GRPCObjects map[types.NamespacedName]*gwv1.GRPCRoute
}

// PatchRoutes applies the changes of the routes named to this run of the
// rules. ok is false when there is no run to patch, or a listener the
// changed routes had or have carries routes of both kinds (their
// conflicts are settled over every route: run Judge then; this run is not
// to be used any more).
func (r *Result) PatchRoutes(c ChangedRoutes, ix *input.Index, now metav1.Time) (RoutePatch, bool) {
	m := r.memo
	if m == nil {
		return RoutePatch{}, false
	}
	patch := RoutePatch{Rebuild: Rebuild{}, Statuses: map[types.NamespacedName]*gwv1.HTTPRouteStatus{},
		GRPCStatuses: map[types.NamespacedName]*gwv1.GRPCRouteStatus{}, Clusters: map[types.NamespacedName]map[string]bool{}}
	touched := map[types.NamespacedName]*Gateway{}
	backends := map[input.ServicePort]bool{}
	note := func(e routeEntry, delta int) {
		for _, p := range e.parents {
			touched[p.gateway.nn] = p.gateway
			for _, a := range p.attachments {
				if patch.Rebuild[a.listener] == nil {
					patch.Rebuild[a.listener] = map[string]bool{}
				}
				for _, h := range a.hostnames {
					patch.Rebuild[a.listener][h] = true
				}
			}
		}
		m.countReach(e, delta, backends)
		m.countClusters(e, delta, patch.Clusters)
	}
	// A listener that held both kinds before the patch counts too: the
	// routes left there may have lost a conflict to the one going away.
	mixedBefore := false
	apply := func(key route.Key, judge func() *route.Route) {
		if e, ok := m.routes[key]; ok {
			mixedBefore = mixedBefore || holdsBothKinds(e.parents)
			detachRoute(e.rs, e.parents)
			note(e, -1)
			delete(m.routes, key)
		}
		if judge == nil {
			return
		}
		rs := judge()
		parents := attachRoute(rs, m.gateways, m.g)
		if len(parents) == 0 {
			return
		}
		e := routeEntry{rs: rs, parents: parents}
		m.routes[key] = e
		note(e, 1)
		st := route.Status(rs, parents, r.cfg.ControllerName, now)
		if key.Kind == input.KindGRPCRoute {
			patch.GRPCStatuses[key.Name] = &gwv1.GRPCRouteStatus{RouteStatus: st}
		} else {
			patch.Statuses[key.Name] = &gwv1.HTTPRouteStatus{RouteStatus: st}
		}
	}
	for _, nn := range c.HTTP {
		patch.Statuses[nn] = nil
		var judge func() *route.Route
		if obj := c.HTTPObjects[nn]; obj != nil {
			judge = func() *route.Route { return route.JudgeHTTPRoute(obj, ix, m.g.grants) }
		}
		apply(route.Key{Kind: input.KindHTTPRoute, Name: nn}, judge)
	}
	for _, nn := range c.GRPC {
		patch.GRPCStatuses[nn] = nil
		var judge func() *route.Route
		if obj := c.GRPCObjects[nn]; obj != nil {
			judge = func() *route.Route { return route.JudgeGRPCRoute(obj, ix, m.g.grants) }
		}
		apply(route.Key{Kind: input.KindGRPCRoute, Name: nn}, judge)
	}
	if mixedBefore {
		return RoutePatch{}, false
	}
	for l := range patch.Rebuild {
		if l.byKind[input.KindHTTPRoute] > 0 && l.byKind[input.KindGRPCRoute] > 0 {
			return RoutePatch{}, false
		}
	}
	for _, nn := range input.SortedKeys(touched) {
		patch.Gateways = append(patch.Gateways, touched[nn])
	}
	for b := range backends {
		before, after := r.Reach[b], m.reachOf(b)
		if slices.Equal(before, after) {
			continue
		}
		if after == nil {
			delete(r.Reach, b)
		} else {
			r.Reach[b] = after
		}
		patch.Reached = append(patch.Reached, b)
	}
	return patch, true
}

// holdsBothKinds reports whether a listener a route is attached to holds
// HTTPRoutes and GRPCRoutes.
func holdsBothKinds(parents []parentResult) bool {
	for _, p := range parents {
		for _, a := range p.attachments {
			if a.listener.byKind[input.KindHTTPRoute] > 0 && a.listener.byKind[input.KindGRPCRoute] > 0 {
				return true
			}
		}
	}
	return false
}

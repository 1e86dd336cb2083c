package translator

import (
	"slices"
	"strings"

	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	"google.golang.org/protobuf/proto"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// A change to HTTPRoutes alone leaves every listener, Gateway address and
// ReferenceGrant as judged, so it is applied to the last run of the
// Gateway rules instead of running them again: each changed route is
// detached, judged and attached again, and only the virtual hosts of the
// hostnames it had or has are rebuilt. One route among 10,000 behind one
// Gateway then costs that route, not the Gateway's 10,000 virtual hosts.

// gatewayMemo is what the last run of the Gateway rules judged.
type gatewayMemo struct {
	g        *gatewayIndex
	gateways map[types.NamespacedName]*gatewayState
	routes   map[types.NamespacedName]routeEntry // routes with a parent of ours
	// reach counts, per Service port, the accepted attachments through
	// which each Gateway sends traffic there.
	reach map[serviceBackend]map[types.NamespacedName]int
}

// routeEntry is one route as judged and attached.
type routeEntry struct {
	rs      *routeState
	parents []parentResult
}

// tableState is one served route configuration of a Gateway as last built:
// rc, and the plan it was first built from (its name, port and listeners;
// its vhosts are the first build's, the virtual hosts served are rc's).
type tableState struct {
	plan *routeTablePlan
	rc   *routev3.RouteConfiguration
}

// countReach adds delta for each Gateway e sends traffic to a Service port
// through, noting the ports in touched (when not nil).
func (m *gatewayMemo) countReach(e routeEntry, delta int, touched map[serviceBackend]bool) {
	for _, p := range e.parents {
		if !p.accepted || !p.attachedListener {
			continue
		}
		for _, b := range e.rs.backends {
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
func (m *gatewayMemo) reachOf(b serviceBackend) []types.NamespacedName {
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

// patchRoutes applies the update's HTTPRoute changes to the last run of
// the Gateway rules. false when that run cannot be patched (none kept, a
// listener left out with a warning, a virtual host Envoy would reject):
// run the rules whole then, which also redoes what this one changed.
func (w *world) patchRoutes(u *update, opts Options, stamp metav1.Time) bool {
	m := w.gateways.memo
	if m == nil || len(w.gateways.warnings) > 0 {
		return false
	}
	hosts := map[*listenerState]map[string]bool{} // hostnames to rebuild
	touched := map[types.NamespacedName]*gatewayState{}
	backends := map[serviceBackend]bool{}
	note := func(e routeEntry, delta int) {
		for _, p := range e.parents {
			touched[p.gateway.nn] = p.gateway
			for _, a := range p.attachments {
				if hosts[a.listener] == nil {
					hosts[a.listener] = map[string]bool{}
				}
				for _, h := range a.hostnames {
					hosts[a.listener][h] = true
				}
			}
		}
		m.countReach(e, delta, backends)
	}
	routeStatuses := copyOnWrite[types.NamespacedName, gwv1.HTTPRouteStatus]{m: w.gateways.statuses.HTTPRoutes}
	for _, nn := range sortedKeys(u.routes) {
		if e, ok := m.routes[nn]; ok {
			detachRoute(e.rs, e.parents)
			note(e, -1)
			delete(m.routes, nn)
		}
		r := w.gateway.routes[nn]
		if r == nil {
			routeStatuses.delete(nn)
			continue
		}
		rs := judgeRoute(r, w.ix, m.g)
		parents := attachRoute(rs, m.gateways, m.g)
		if len(parents) == 0 {
			routeStatuses.delete(nn)
			continue
		}
		e := routeEntry{rs: rs, parents: parents}
		m.routes[nn] = e
		note(e, 1)
		routeStatuses.set(nn, routeStatus(rs, parents, opts.ControllerName, stamp), semanticallyEqual)
	}

	fleets := copyOnWrite[string, *FleetResources]{m: w.gateways.fleets}
	gatewayStatuses := copyOnWrite[types.NamespacedName, gwv1.GatewayStatus]{m: w.gateways.statuses.Gateways}
	changed := map[string]bool{}
	for _, nn := range sortedKeys(touched) {
		gs := touched[nn]
		gatewayStatuses.set(nn, gatewayStatus(gs, m.g, stamp), semanticallyEqual)
		name := GatewayFleet(nn)
		fleet, ok := patchFleet(w.gateways.fleets[name], gs, hosts)
		if !ok {
			return false
		}
		if fleet != w.gateways.fleets[name] {
			fleets.set(name, fleet, nil)
			changed[name] = true
		}
	}

	for b := range backends {
		before, after := w.gateways.reach[b], m.reachOf(b)
		if slices.Equal(before, after) {
			continue
		}
		if after == nil {
			delete(w.gateways.reach, b)
		} else {
			w.gateways.reach[b] = after
		}
		// Their policies have other Gateway ancestors now.
		for policy := range w.byService[b.service] {
			u.statuses[policy] = true
		}
	}
	w.gateways.fleets = fleets.m
	w.gateways.statuses = GatewayAPIStatuses{GatewayClasses: w.gateways.statuses.GatewayClasses,
		Gateways: gatewayStatuses.m, HTTPRoutes: routeStatuses.m}
	u.fleetsDirty = true
	if u.changedFleets == nil {
		u.changedFleets = map[string]bool{}
	}
	for name := range changed {
		u.changedFleets[name] = true
	}
	return true
}

func semanticallyEqual[T any](a, b T) bool { return equality.Semantic.DeepEqual(a, b) }

// patchFleet is fleet with the route configurations of gs rebuilt for the
// hostnames each listener has to rebuild; fleet itself when none changed.
func patchFleet(fleet *FleetResources, gs *gatewayState, hosts map[*listenerState]map[string]bool) (*FleetResources, bool) {
	if fleet == nil {
		return nil, false
	}
	routes, copied := fleet.Routes, false
	for _, ts := range gs.tables {
		rebuild := map[string]bool{}
		for _, l := range ts.plan.listeners {
			for h := range hosts[l] {
				rebuild[h] = true
			}
		}
		if len(rebuild) == 0 {
			continue
		}
		rc, ok := ts.patch(sortedNames(rebuild))
		if !ok {
			return nil, false
		}
		if rc == ts.rc {
			continue
		}
		i, found := slices.BinarySearchFunc(routes, ts.rc.Name, func(r *routev3.RouteConfiguration, name string) int {
			return strings.Compare(r.Name, name)
		})
		if !found || routes[i] != ts.rc {
			return nil, false
		}
		if !copied {
			routes, copied = slices.Clone(routes), true // the last Output's stays as it is
		}
		routes[i], ts.rc = rc, rc
	}
	if !copied {
		return fleet, true
	}
	return &FleetResources{Listeners: fleet.Listeners, Routes: routes, Secrets: fleet.Secrets}, true
}

// patch rebuilds the virtual hosts of hosts (sorted) in the table, keeping
// every other one, and each rebuilt one that came out equal, as it was.
// The table's route configuration is returned unchanged when nothing is
// new; ok is false when Envoy would reject a rebuilt virtual host.
func (ts *tableState) patch(hosts []string) (*routev3.RouteConfiguration, bool) {
	vhosts := ts.rc.VirtualHosts // one per hostname, sorted by it (routeTable)
	copied := false
	for _, h := range hosts {
		i, found := slices.BinarySearchFunc(vhosts, h, func(v *routev3.VirtualHost, h string) int { return strings.Compare(v.GetName(), h) })
		vh, ok := vhostOf(ts.plan.listeners, h)
		var v *routev3.VirtualHost
		if ok {
			if v = envoyVirtualHost(ts.plan, &vh); v.ValidateAll() != nil {
				return nil, false
			}
			if found && proto.Equal(v, vhosts[i]) {
				continue
			}
		} else if !found {
			continue
		}
		if !copied {
			vhosts, copied = slices.Clone(vhosts), true // the last Output's stays as it is
		}
		switch {
		case !ok:
			vhosts = slices.Delete(vhosts, i, i+1)
		case found:
			vhosts[i] = v
		default:
			vhosts = slices.Insert(vhosts, i, v)
		}
	}
	if !copied {
		return ts.rc, true
	}
	if len(vhosts) == 0 {
		vhosts = nil // as envoyRouteConfig builds an empty table
	}
	return routeConfigOf(ts.plan, vhosts), true
}

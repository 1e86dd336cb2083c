package translator

import (
	"slices"
	"strings"

	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	"google.golang.org/protobuf/proto"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/tlsplane/tlsplane/translator/envoy"
	"github.com/tlsplane/tlsplane/translator/gateway"
	"github.com/tlsplane/tlsplane/translator/input"
	"github.com/tlsplane/tlsplane/translator/outputpatch"
)

// patchRoutes applies the update's HTTPRoute changes to the last run of
// the Gateway rules (gateway.Result.PatchRoutes) and re-emits only the
// virtual hosts they touch. false when that run cannot be patched (none
// kept, a listener left out with a warning, a virtual host Envoy would
// reject): run the rules whole then, which also redoes what this one
// changed.
func (w *world) patchRoutes(u *update, stamp metav1.Time) bool {
	gw := &w.gateways
	if gw.judged == nil || len(gw.warnings) > 0 {
		return false
	}
	patch, ok := gw.judged.PatchRoutes(gateway.ChangedRoutes{
		HTTP: input.SortedKeys(u.routes), HTTPObjects: w.gateway.routes,
		GRPC: input.SortedKeys(u.grpcRoutes), GRPCObjects: w.gateway.grpcRoutes,
	}, w.ix, stamp)
	if !ok {
		return false
	}
	// Marked before anything can fail: Reach is patched already, so a whole
	// run after a failure here would not see these ports change.
	u.reachChanged = u.reachChanged || len(patch.Reached) > 0
	for _, b := range patch.Reached {
		// Their policies have other Gateway ancestors now.
		for policy := range w.byService[b.Service] {
			u.statuses[policy] = true
		}
	}
	routeStatuses := outputpatch.Statuses(gw.statuses.HTTPRoutes, patch.Statuses)
	grpcStatuses := outputpatch.Statuses(gw.statuses.GRPCRoutes, patch.GRPCStatuses)
	fleets := outputpatch.Map[string, *FleetResources]{M: gw.fleets}
	gatewayStatuses := outputpatch.Map[types.NamespacedName, gwv1.GatewayStatus]{M: gw.statuses.Gateways}
	setStatuses := outputpatch.Map[types.NamespacedName, gwv1.ListenerSetStatus]{M: gw.statuses.ListenerSets}
	changed := map[string]bool{}
	for _, gs := range patch.Gateways {
		// Nothing is refused: a refusal leaves a warning, and a run with
		// warnings is never patched.
		st := gw.judged.Status(gs, nil, stamp)
		gatewayStatuses.Set(gs.Name(), st, outputpatch.SemanticallyEqual)
		// A route through a ListenerSet changes its listeners' attachedRoutes.
		for nn, ls := range gw.judged.ListenerSetStatuses(gs, st, nil, stamp) {
			setStatuses.Set(nn, ls, outputpatch.SemanticallyEqual)
		}
		name := gs.Fleet()
		fleet, ok := patchFleet(gw.fleets[name], gw.tables[gs.Name()], patch.Rebuild, patch.Clusters[gs.Name()])
		if !ok {
			return false
		}
		if fleet != gw.fleets[name] {
			fleets.Set(name, fleet, nil)
			changed[name] = true
		}
	}
	gw.fleets = fleets.M
	gw.statuses = GatewayAPIStatuses{GatewayClasses: gw.statuses.GatewayClasses,
		Gateways: gatewayStatuses.M, HTTPRoutes: routeStatuses, GRPCRoutes: grpcStatuses,
		TLSRoutes: gw.statuses.TLSRoutes, TCPRoutes: gw.statuses.TCPRoutes, ListenerSets: setStatuses.M,
		UDPRoutes: gw.statuses.UDPRoutes}
	u.fleetsDirty = true
	if u.changedFleets == nil {
		u.changedFleets = map[string]bool{}
	}
	for name := range changed {
		u.changedFleets[name] = true
	}
	return true
}

// patchFleet is fleet with the route configurations of tables rebuilt for
// the hostnames rebuild names, and the clusters reached changed as reached
// says (gateway.PatchReached); fleet itself when none changed.
func patchFleet(fleet *FleetResources, tables []*tableState, rebuild gateway.Rebuild, reached map[string]bool) (*FleetResources, bool) {
	if fleet == nil {
		return nil, false
	}
	newReached := gateway.PatchReached(fleet.Reached, reached)
	routes, copied := fleet.Routes, false
	for _, ts := range tables {
		hosts := ts.table.HostsToRebuild(rebuild)
		if len(hosts) == 0 {
			continue
		}
		rc, ok := ts.patch(hosts)
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
	if !copied && slices.Equal(newReached, fleet.Reached) {
		return fleet, true
	}
	return &FleetResources{Listeners: fleet.Listeners, Routes: routes, Secrets: fleet.Secrets, Clusters: fleet.Clusters, Reached: newReached}, true
}

// patch re-emits the virtual hosts of hosts (sorted) in the table, keeping
// every other one, and each rebuilt one that came out equal, as it was.
// The table's route configuration is returned unchanged when nothing is
// new; ok is false when Envoy would reject a rebuilt virtual host.
func (ts *tableState) patch(hosts []string) (*routev3.RouteConfiguration, bool) {
	vhosts := ts.rc.VirtualHosts // one per hostname, sorted by it (as planned)
	copied := false
	for _, h := range hosts {
		i, found := slices.BinarySearchFunc(vhosts, h, func(v *routev3.VirtualHost, h string) int { return strings.Compare(v.GetName(), h) })
		vh, ok := ts.table.VirtualHost(h)
		var v *routev3.VirtualHost
		if ok {
			if v = envoy.VirtualHost(ts.table.Plan, &vh); v.ValidateAll() != nil {
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
		vhosts = nil // as envoy.RouteConfig emits an empty table
	}
	return envoy.RouteConfigOf(ts.table.Plan, vhosts), true
}

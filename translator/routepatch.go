package translator

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/tlsplane/tlsplane/translator/fleet"
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
		for policy := range w.byService[b.Service].All() {
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
		fleet, ok := fleet.Patch(gw.fleets[name], gw.tables[gs.Name()], patch.Rebuild, patch.Clusters[gs.Name()])
		if !ok {
			return false
		}
		if fleet != gw.fleets[name] {
			fleets.Set(name, fleet, nil)
			changed[name] = true
		}
	}
	gw.fleets = fleets.M
	routes := gw.statuses.RouteStatusMaps
	routes.HTTPRoutes, routes.GRPCRoutes = routeStatuses, grpcStatuses
	gw.statuses = GatewayAPIStatuses{GatewayClasses: gw.statuses.GatewayClasses,
		Gateways: gatewayStatuses.M, ListenerSets: setStatuses.M, RouteStatusMaps: routes}
	u.fleetsDirty = true
	if u.changedFleets == nil {
		u.changedFleets = map[string]bool{}
	}
	for name := range changed {
		u.changedFleets[name] = true
	}
	return true
}

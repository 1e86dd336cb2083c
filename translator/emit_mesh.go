package translator

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	listenerv3 "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	"google.golang.org/protobuf/proto"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/tlsplane/tlsplane/translator/envoy"
	"github.com/tlsplane/tlsplane/translator/input"
	"github.com/tlsplane/tlsplane/translator/mesh"
)

// meshOutput is the mesh's routes judged and its fleets emitted.
type meshOutput struct {
	fleets map[string]*FleetResources
	// httpRoutes and grpcRoutes are the statuses of the routes with a
	// Service parent in the mesh (ours for those parents only: addMesh
	// merges them).
	httpRoutes, grpcRoutes map[types.NamespacedName]gwv1.RouteStatus
	warnings               []string
}

// translateMesh judges the routes whose parent is a Service of a
// namespace in the mesh and emits a fleet per such namespace; nothing
// when no namespace is in the mesh.
func (e *emitter) translateMesh(in Inputs, ix *input.Index, sel *mesh.Selector, controller gwv1.GatewayController, stamp metav1.Time) meshOutput {
	members := sel.MembersOf(in.Namespaces)
	if len(members) == 0 {
		return meshOutput{}
	}
	res := mesh.Judge(mesh.Routes{HTTP: in.HTTPRoutes, GRPC: in.GRPCRoutes}, ix, members, sel, controller, stamp)
	plans, warnings := mesh.Fleets(res, ix)
	out := meshOutput{fleets: make(map[string]*FleetResources, len(plans)), httpRoutes: res.HTTPRoutes, grpcRoutes: res.GRPCRoutes, warnings: warnings}
	for _, f := range plans {
		res, w := e.emitMeshFleet(f)
		out.fleets[f.Name] = res
		out.warnings = append(out.warnings, w...)
	}
	return out
}

// emitMeshFleet builds a mesh fleet's listeners and route
// configurations; one Envoy would reject is left out, with a warning, so
// the rest of the fleet is still served.
func (e *emitter) emitMeshFleet(f *mesh.Fleet) (*FleetResources, []string) {
	res := &FleetResources{Reached: f.Reached}
	var warnings []string
	for _, p := range f.Listeners {
		var rc *routev3.RouteConfiguration
		if p.HTTP != nil {
			p.HTTP.Sessions = e.traffic.sessions
			rc = envoy.RouteConfig(p.HTTP)
		}
		l, err := envoy.Listener(p)
		if err == nil && rc != nil {
			err = rc.ValidateAll()
		}
		if err != nil {
			warnings = append(warnings, fmt.Sprintf("mesh fleet %s: listener %s not served: %v", f.Name, p.Name, err))
			continue
		}
		res.Listeners = append(res.Listeners, l)
		if rc != nil {
			res.Routes = append(res.Routes, rc)
		}
	}
	slices.SortFunc(res.Listeners, func(a, b *listenerv3.Listener) int { return strings.Compare(a.Name, b.Name) })
	slices.SortFunc(res.Routes, func(a, b *routev3.RouteConfiguration) int { return strings.Compare(a.Name, b.Name) })
	return res, warnings
}

// addMesh puts the mesh's fleets, route statuses and warnings into a
// whole translation's Output, leaving the Gateway fleets' and the
// Gateway parents' statuses as they were (maps are copied, not changed:
// the Gateway rules' are kept for Update).
func (m meshOutput) addMesh(out *Output, controller gwv1.GatewayController) {
	if len(m.fleets) == 0 && len(m.httpRoutes)+len(m.grpcRoutes) == 0 && len(m.warnings) == 0 {
		return
	}
	fleets := maps.Clone(out.Fleets)
	if fleets == nil {
		fleets = map[string]*FleetResources{}
	}
	maps.Copy(fleets, m.fleets)
	out.Fleets = fleets
	if len(m.httpRoutes) > 0 {
		out.GatewayAPI.HTTPRoutes = mergeRouteStatuses(out.GatewayAPI.HTTPRoutes, m.httpRoutes, controller,
			func(s gwv1.HTTPRouteStatus) gwv1.RouteStatus { return s.RouteStatus },
			func(s gwv1.RouteStatus) gwv1.HTTPRouteStatus { return gwv1.HTTPRouteStatus{RouteStatus: s} })
	}
	if len(m.grpcRoutes) > 0 {
		out.GatewayAPI.GRPCRoutes = mergeRouteStatuses(out.GatewayAPI.GRPCRoutes, m.grpcRoutes, controller,
			func(s gwv1.GRPCRouteStatus) gwv1.RouteStatus { return s.RouteStatus },
			func(s gwv1.RouteStatus) gwv1.GRPCRouteStatus { return gwv1.GRPCRouteStatus{RouteStatus: s} })
	}
	if len(m.warnings) > 0 {
		out.Warnings = append(slices.Clone(out.Warnings), m.warnings...)
		sort.Strings(out.Warnings)
	}
}

// mergeRouteStatuses is a copy of one kind's statuses from the Gateway
// rules with the mesh's merged in (mesh.MergeStatus).
func mergeRouteStatuses[S any](gateway map[types.NamespacedName]S, meshStatuses map[types.NamespacedName]gwv1.RouteStatus, controller gwv1.GatewayController,
	read func(S) gwv1.RouteStatus, wrap func(gwv1.RouteStatus) S) map[types.NamespacedName]S {
	out := maps.Clone(gateway)
	if out == nil {
		out = make(map[types.NamespacedName]S, len(meshStatuses))
	}
	for nn, st := range meshStatuses {
		gw, ok := out[nn]
		out[nn] = wrap(mesh.MergeStatus(read(gw), ok, st, controller))
	}
	return out
}

// keepUnchanged gives each of m's fleets that equals prev's of the same
// name prev's pointer, and names the fleets added, changed or removed.
func (m meshOutput) keepUnchanged(prev meshOutput) []string {
	var changed []string
	for name, f := range m.fleets {
		if old := prev.fleets[name]; old != nil && sameMeshFleet(old, f) {
			m.fleets[name] = old
			continue
		}
		changed = append(changed, name)
	}
	for name := range prev.fleets {
		if m.fleets[name] == nil {
			changed = append(changed, name)
		}
	}
	return changed
}

// sameMeshFleet compares two emissions of a mesh fleet (no secrets, no
// own clusters: a mesh fleet has neither).
func sameMeshFleet(a, b *FleetResources) bool {
	return slices.Equal(a.Reached, b.Reached) &&
		slices.EqualFunc(a.Listeners, b.Listeners, func(x, y *listenerv3.Listener) bool { return proto.Equal(x, y) }) &&
		slices.EqualFunc(a.Routes, b.Routes, func(x, y *routev3.RouteConfiguration) bool { return proto.Equal(x, y) })
}

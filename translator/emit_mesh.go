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
	"github.com/tlsplane/tlsplane/translator/plan"
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
	emitted := map[*plan.Listener]meshListener{}
	for _, f := range plans {
		res, w := e.emitMeshFleet(f, emitted)
		out.fleets[f.Name] = res
		out.warnings = append(out.warnings, w...)
	}
	return out
}

// meshListener is one emitted mesh listener plan: the listener, its
// route configuration (nil for a TCP proxy), or why Envoy would reject
// it.
type meshListener struct {
	listener *listenerv3.Listener
	routes   *routev3.RouteConfiguration
	err      error
}

// emitMeshFleet builds a mesh fleet's listeners and route
// configurations; one Envoy would reject is left out, with a warning, so
// the rest of the fleet is still served. A plan the fleets share
// (mesh.Fleets) is emitted once: emitted holds what this translation
// emitted so far, and the fleets get the same protos.
func (e *emitter) emitMeshFleet(f *mesh.Fleet, emitted map[*plan.Listener]meshListener) (*FleetResources, []string) {
	res := &FleetResources{Reached: f.Reached}
	var warnings []string
	for _, p := range f.Listeners {
		m, ok := emitted[p]
		if !ok {
			m = e.emitMeshListener(p)
			emitted[p] = m
		}
		if m.err != nil {
			warnings = append(warnings, fmt.Sprintf("mesh fleet %s: listener %s not served: %v", f.Name, p.Name, m.err))
			continue
		}
		res.Listeners = append(res.Listeners, m.listener)
		if m.routes != nil {
			res.Routes = append(res.Routes, m.routes)
		}
	}
	slices.SortFunc(res.Listeners, func(a, b *listenerv3.Listener) int { return strings.Compare(a.Name, b.Name) })
	slices.SortFunc(res.Routes, func(a, b *routev3.RouteConfiguration) int { return strings.Compare(a.Name, b.Name) })
	return res, warnings
}

// emitMeshListener emits one mesh listener plan and validates it.
func (e *emitter) emitMeshListener(p *plan.Listener) meshListener {
	var rc *routev3.RouteConfiguration
	if p.HTTP != nil {
		p.HTTP.Sessions = e.traffic.sessions
		rc = envoy.RouteConfig(p.HTTP)
	}
	l, err := envoy.Listener(p)
	if err == nil && rc != nil {
		err = rc.ValidateAll()
	}
	return meshListener{listener: l, routes: rc, err: err}
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

// keepUnchanged gives m the pointers of prev wherever they are equal, so
// that the snapshots digest, and the streams send, only what an Update
// changed: each listener and route configuration equal to prev's of the
// same name becomes prev's (compared once per emitted proto, not once
// per fleet: the fleets share them), each fleet whose resources all
// became prev's is prev's fleet, and a fleet's Reached equal to prev's
// is prev's slice. It names the fleets added, changed or removed.
func (m meshOutput) keepUnchanged(prev meshOutput) []string {
	listeners := internerOf(prev.fleets, func(f *FleetResources) []*listenerv3.Listener { return f.Listeners })
	routes := internerOf(prev.fleets, func(f *FleetResources) []*routev3.RouteConfiguration { return f.Routes })
	var changed []string
	for name, f := range m.fleets {
		old := prev.fleets[name]
		if old == nil {
			old = &FleetResources{}
		}
		listeners.intern(f.Listeners, old.Listeners)
		routes.intern(f.Routes, old.Routes)
		if prev.fleets[name] == nil {
			changed = append(changed, name)
			continue
		}
		if slices.Equal(old.Reached, f.Reached) {
			f.Reached = old.Reached
		}
		if sameBacking(old.Reached, f.Reached) && slices.Equal(old.Listeners, f.Listeners) && slices.Equal(old.Routes, f.Routes) {
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

// sameBacking: a and b are the very same slice (or both empty).
func sameBacking[T any](a, b []T) bool {
	return len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0])
}

// interner maps an emitted proto to an equal one of the previous
// emission: the fleet's own of the same name first (two fleets' listeners
// can be equal while their route configurations differ), else any
// fleet's. Each pair of pointers is compared once: the fleets share most
// of them.
type interner[P interface {
	comparable
	proto.Message
	GetName() string
}] struct {
	byName map[string][]P // prev's distinct protos per name (one, but where consumer routes differ)
	equal  map[[2]P]bool
}

func internerOf[P interface {
	comparable
	proto.Message
	GetName() string
}](fleets map[string]*FleetResources, of func(*FleetResources) []P) *interner[P] {
	in := &interner[P]{byName: map[string][]P{}, equal: map[[2]P]bool{}}
	for _, f := range fleets {
		for _, r := range of(f) {
			if olds := in.byName[r.GetName()]; !slices.Contains(olds, r) {
				in.byName[r.GetName()] = append(olds, r)
			}
		}
	}
	return in
}

// intern replaces, in place, each of rs (sorted by name) by its previous
// equal: of olds (the fleet's previous, sorted by name) if one is, else
// of any previous fleet's.
func (in *interner[P]) intern(rs, olds []P) {
	j := 0
	for i, r := range rs {
		name := r.GetName()
		for j < len(olds) && olds[j].GetName() < name {
			j++
		}
		if j < len(olds) && olds[j].GetName() == name && in.same(olds[j], r) {
			rs[i] = olds[j]
			continue
		}
		for _, old := range in.byName[name] {
			if in.same(old, r) {
				rs[i] = old
				break
			}
		}
	}
}

func (in *interner[P]) same(old, r P) bool {
	if old == r {
		return true
	}
	k := [2]P{old, r}
	eq, ok := in.equal[k]
	if !ok {
		eq = proto.Equal(old, r)
		in.equal[k] = eq
	}
	return eq
}

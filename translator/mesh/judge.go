package mesh

import (
	"fmt"
	"strconv"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/tlsplane/tlsplane/translator/input"
	"github.com/tlsplane/tlsplane/translator/route"
)

// Result is the mesh's routes judged: which apply to each Service port,
// for whom, and their status entries for their Service parents.
type Result struct {
	Members Members
	// selector is what made Members, for the refusals naming it.
	selector *Selector
	// Producers are, per Service port, the accepted routes in the
	// Service's namespace: they apply to every caller without a consumer
	// route for the port.
	Producers map[input.ServicePort][]*route.Route
	// Consumers are, per caller namespace and Service port, the accepted
	// routes of that namespace for a Service of another: they replace the
	// producer routes for that namespace's callers (GEP-1426).
	Consumers map[string]map[input.ServicePort][]*route.Route
	// HTTPRoutes and GRPCRoutes are the statuses of the routes with a
	// Service parent in the mesh: other controllers' entries kept, then
	// ours for those parents only (MergeStatus adds the Gateway parents').
	HTTPRoutes, GRPCRoutes map[types.NamespacedName]gwv1.RouteStatus
}

// Routes are the route objects the mesh reads.
type Routes struct {
	HTTP []*gwv1.HTTPRoute
	GRPC []*gwv1.GRPCRoute
}

// candidate is a route object that may have Service parents.
type candidate struct {
	refs  []gwv1.ParentReference
	judge func() *route.Route
}

// Judge finds the routes with a parentRef to a Service of a namespace in
// the mesh and judges each such parent. GRPCRoutes go first: on a Service
// port where both kinds apply to the same callers, the GRPCRoutes win
// (GEP-1294). Routes of a name are taken as the Gateway rules read them
// (the last of a name wins); nothing happens without members.
func Judge(routes Routes, ix *input.Index, members Members, sel *Selector, controller gwv1.GatewayController, now metav1.Time) *Result {
	res := &Result{Members: members, selector: sel}
	if len(members) == 0 {
		return res
	}
	grpc := input.ByKey(routes.GRPC, func(r *gwv1.GRPCRoute) types.NamespacedName { return input.NameOf(r.Namespace, r.Name) })
	res.GRPCRoutes = res.judgeKind(input.KindGRPCRoute, ix, controller, now, len(grpc), func(yield func(types.NamespacedName, candidate) bool) {
		for _, nn := range input.SortedKeys(grpc) {
			r := grpc[nn]
			if !yield(nn, candidate{r.Spec.ParentRefs, func() *route.Route { return route.JudgeMeshGRPCRoute(r, ix) }}) {
				return
			}
		}
	})
	http := input.ByKey(routes.HTTP, func(r *gwv1.HTTPRoute) types.NamespacedName { return input.NameOf(r.Namespace, r.Name) })
	res.HTTPRoutes = res.judgeKind(input.KindHTTPRoute, ix, controller, now, len(http), func(yield func(types.NamespacedName, candidate) bool) {
		for _, nn := range input.SortedKeys(http) {
			r := http[nn]
			if !yield(nn, candidate{r.Spec.ParentRefs, func() *route.Route { return route.JudgeMeshHTTPRoute(r, ix) }}) {
				return
			}
		}
	})
	return res
}

// judgeKind judges the routes of one kind in order, attaches the accepted
// ones and returns their statuses; nil when none has a parent of ours.
func (res *Result) judgeKind(kind input.Kind, ix *input.Index, controller gwv1.GatewayController, now metav1.Time, n int,
	routes func(yield func(types.NamespacedName, candidate) bool)) map[types.NamespacedName]gwv1.RouteStatus {
	var statuses map[types.NamespacedName]gwv1.RouteStatus
	for nn, c := range routes {
		var parents []parent
		for _, ref := range c.refs {
			if !IsServiceParent(ref) {
				continue
			}
			if p, ok := judgeParent(ref, kind, nn.Namespace, ix, res.Members, res.selector); ok {
				parents = append(parents, p)
			}
		}
		if len(parents) == 0 {
			continue
		}
		rs := c.judge()
		if kind != input.KindGRPCRoute {
			for i := range parents {
				res.yieldToGRPC(&parents[i], nn.Namespace)
			}
		}
		res.attach(rs, parents)
		if statuses == nil {
			statuses = make(map[types.NamespacedName]gwv1.RouteStatus, n)
		}
		statuses[nn] = route.Status(rs, parents, controller, now)
	}
	return statuses
}

// yieldToGRPC takes from an accepted parent of a route of namespace
// routeNS the ports where GRPCRoutes apply to the same callers; with
// none left, the parent refuses the route (Conflicted, GEP-1294).
func (res *Result) yieldToGRPC(p *parent, routeNS string) {
	if !p.Accepted {
		return
	}
	var kept, lost []int32
	for _, port := range p.ports {
		if res.grpcOn(input.ServicePort{Service: p.service, Port: port}, routeNS) {
			lost = append(lost, port)
		} else {
			kept = append(kept, port)
		}
	}
	switch {
	case len(lost) == 0:
	case len(kept) == 0:
		p.Accepted, p.Reason, p.ports = false, ReasonConflicted, nil
		p.Message = fmt.Sprintf("Service %s port %s: GRPCRoutes apply there to the same callers, and a GRPCRoute wins over an HTTPRoute (GEP-1294)", p.service, portList(lost))
	default:
		p.ports = kept
		p.Message += fmt.Sprintf("; port %s left to the GRPCRoutes that apply there to the same callers (GEP-1294)", portList(lost))
	}
}

// ReasonConflicted is GEP-1294's reason for a route that another route
// kind on the same Service port displaces.
const ReasonConflicted = "Conflicted"

// grpcOn reports whether a GRPCRoute applies to sp for callers of a route
// of namespace routeNS: a producer one when the route is a producer, a
// consumer one of the same namespace otherwise.
func (res *Result) grpcOn(sp input.ServicePort, routeNS string) bool {
	routes := res.Producers[sp]
	if sp.Service.Namespace != routeNS {
		routes = res.Consumers[routeNS][sp]
	}
	for _, rs := range routes {
		if rs.Kind == input.KindGRPCRoute {
			return true
		}
	}
	return false
}

func portList(ports []int32) string {
	parts := make([]string, len(ports))
	for i, p := range ports {
		parts[i] = strconv.Itoa(int(p))
	}
	return strings.Join(parts, ", ")
}

// attach records rs on every port its accepted parents select, once per
// port even when two parentRefs select it.
func (res *Result) attach(rs *route.Route, parents []parent) {
	for _, p := range parents {
		if !p.Accepted {
			continue
		}
		for _, port := range p.ports {
			sp := input.ServicePort{Service: p.service, Port: port}
			if p.service.Namespace == rs.Name.Namespace {
				res.Producers = addOnce(res.Producers, sp, rs)
				continue
			}
			if res.Consumers == nil {
				res.Consumers = map[string]map[input.ServicePort][]*route.Route{}
			}
			res.Consumers[rs.Name.Namespace] = addOnce(res.Consumers[rs.Name.Namespace], sp, rs)
		}
	}
}

func addOnce(m map[input.ServicePort][]*route.Route, sp input.ServicePort, rs *route.Route) map[input.ServicePort][]*route.Route {
	if m == nil {
		m = map[input.ServicePort][]*route.Route{}
	}
	for _, have := range m[sp] {
		if have == rs {
			return m
		}
	}
	m[sp] = append(m[sp], rs)
	return m
}

// MergeStatus is a route's status with Gateway parents (gateway, computed
// by the Gateway rules; ok false when it has none of ours) and Service
// parents (mesh): the Gateway rules' entries unchanged, then our entries
// for the Service parents, within the API's limit.
func MergeStatus(gateway gwv1.RouteStatus, ok bool, mesh gwv1.RouteStatus, controller gwv1.GatewayController) gwv1.RouteStatus {
	if !ok {
		return mesh
	}
	out := gwv1.RouteStatus{Parents: append([]gwv1.RouteParentStatus(nil), gateway.Parents...)}
	for _, p := range mesh.Parents {
		if p.ControllerName == controller && IsServiceParent(p.ParentRef) && len(out.Parents) < maxRouteParents {
			out.Parents = append(out.Parents, p)
		}
	}
	return out
}

// maxRouteParents is the API's limit on status.parents.
const maxRouteParents = 32

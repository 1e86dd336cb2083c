package mesh

import (
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
	// Producers are, per Service port, the accepted routes in the
	// Service's namespace: they apply to every caller without a consumer
	// route for the port.
	Producers map[input.ServicePort][]*route.Route
	// Consumers are, per caller namespace and Service port, the accepted
	// routes of that namespace for a Service of another: they replace the
	// producer routes for that namespace's callers (GEP-1426).
	Consumers map[string]map[input.ServicePort][]*route.Route
	// HTTPRoutes are the statuses of the HTTPRoutes with a Service parent
	// in the mesh: other controllers' entries kept, then ours for those
	// parents only (MergeStatus adds the Gateway parents').
	HTTPRoutes map[types.NamespacedName]gwv1.RouteStatus
}

// Judge finds the HTTPRoutes with a parentRef to a Service of a
// namespace in the mesh and judges each such parent. Routes are taken in
// input order, the last of a name winning, as the Gateway rules read
// them; nothing happens without members.
func Judge(routes []*gwv1.HTTPRoute, ix *input.Index, members Members, controller gwv1.GatewayController, now metav1.Time) *Result {
	res := &Result{Members: members}
	if len(members) == 0 {
		return res
	}
	byName := input.ByKey(routes, func(r *gwv1.HTTPRoute) types.NamespacedName { return input.NameOf(r.Namespace, r.Name) })
	for _, nn := range input.SortedKeys(byName) {
		r := byName[nn]
		var parents []parent
		for _, ref := range r.Spec.ParentRefs {
			if !IsServiceParent(ref) {
				continue
			}
			if p, ok := judgeParent(ref, input.KindHTTPRoute, nn.Namespace, ix, members); ok {
				parents = append(parents, p)
			}
		}
		if len(parents) == 0 {
			continue
		}
		rs := route.JudgeMeshHTTPRoute(r, ix)
		res.attach(rs, parents)
		if res.HTTPRoutes == nil {
			res.HTTPRoutes = map[types.NamespacedName]gwv1.RouteStatus{}
		}
		res.HTTPRoutes[nn] = route.Status(rs, parents, controller, now)
	}
	return res
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

package translator

import (
	"iter"
	"maps"
	"reflect"

	"k8s.io/apimachinery/pkg/types"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/tlsplane/tlsplane/translator/input"
)

// RouteKind describes one route kind (input.RouteKind); RouteKinds lists
// every one, and RouteStatusesOf finds a kind's computed statuses.
type RouteKind = input.RouteKind

// RouteKinds is every route kind the translator reads.
var RouteKinds = input.RouteKinds

// RouteKindOf is the description of kind; false when it is no route kind.
func RouteKindOf(kind Kind) (RouteKind, bool) { return input.RouteKindOf(kind) }

// RouteStatuses are one route kind's computed statuses, read as the
// RouteStatus each kind's status type holds (and nothing else).
type RouteStatuses interface {
	Len() int
	Get(types.NamespacedName) (gwv1.RouteStatus, bool)
	All() iter.Seq2[types.NamespacedName, gwv1.RouteStatus]
	// SortedKeys are the routes' names by namespace, then name.
	SortedKeys() []types.NamespacedName
	// Same reports whether other is the very same map: the translator
	// hands back the same map when no status of the kind changed.
	Same(other RouteStatuses) bool
}

// RouteStatusesOf are the statuses of the routes of kind among st; none
// for a kind that is no route kind.
func RouteStatusesOf(st GatewayAPIStatuses, kind Kind) RouteStatuses {
	if of, ok := routeStatuses[kind]; ok {
		return of(st)
	}
	return statusMap[gwv1.RouteStatus]{}
}

// routeStatuses finds each route kind's map in GatewayAPIStatuses: a row
// per row of input.RouteKinds.
var routeStatuses = map[Kind]func(GatewayAPIStatuses) RouteStatuses{
	KindHTTPRoute: func(st GatewayAPIStatuses) RouteStatuses {
		return statusMap[gwv1.HTTPRouteStatus]{st.HTTPRoutes, func(s gwv1.HTTPRouteStatus) gwv1.RouteStatus { return s.RouteStatus }}
	},
	KindGRPCRoute: func(st GatewayAPIStatuses) RouteStatuses {
		return statusMap[gwv1.GRPCRouteStatus]{st.GRPCRoutes, func(s gwv1.GRPCRouteStatus) gwv1.RouteStatus { return s.RouteStatus }}
	},
	KindTLSRoute: func(st GatewayAPIStatuses) RouteStatuses {
		return statusMap[gwv1.TLSRouteStatus]{st.TLSRoutes, func(s gwv1.TLSRouteStatus) gwv1.RouteStatus { return s.RouteStatus }}
	},
	KindTCPRoute: func(st GatewayAPIStatuses) RouteStatuses {
		return statusMap[gwv1.TCPRouteStatus]{st.TCPRoutes, func(s gwv1.TCPRouteStatus) gwv1.RouteStatus { return s.RouteStatus }}
	},
	KindUDPRoute: func(st GatewayAPIStatuses) RouteStatuses {
		return statusMap[gwv1.UDPRouteStatus]{st.UDPRoutes, func(s gwv1.UDPRouteStatus) gwv1.RouteStatus { return s.RouteStatus }}
	},
}

// statusMap is RouteStatuses over one kind's map, whose S keeps its
// RouteStatus where route says.
type statusMap[S any] struct {
	m     map[types.NamespacedName]S
	route func(S) gwv1.RouteStatus
}

func (s statusMap[S]) Len() int { return len(s.m) }

func (s statusMap[S]) Get(nn types.NamespacedName) (gwv1.RouteStatus, bool) {
	v, ok := s.m[nn]
	if !ok {
		return gwv1.RouteStatus{}, false
	}
	return s.route(v), true
}

func (s statusMap[S]) All() iter.Seq2[types.NamespacedName, gwv1.RouteStatus] {
	return func(yield func(types.NamespacedName, gwv1.RouteStatus) bool) {
		for nn, v := range maps.All(s.m) {
			if !yield(nn, s.route(v)) {
				return
			}
		}
	}
}

func (s statusMap[S]) SortedKeys() []types.NamespacedName { return input.SortedKeys(s.m) }

func (s statusMap[S]) Same(other RouteStatuses) bool {
	o, ok := other.(statusMap[S])
	return ok && reflect.ValueOf(s.m).UnsafePointer() == reflect.ValueOf(o.m).UnsafePointer()
}

// OurParents are the route parent entries controller writes, in order.
func OurParents(st gwv1.RouteStatus, controller gwv1.GatewayController) []gwv1.RouteParentStatus {
	return Ours(st.Parents, controller)
}

// OurAncestors are the policy ancestor entries controller writes, in
// order.
func OurAncestors(st gwv1.PolicyStatus, controller gwv1.GatewayController) []gwv1.PolicyAncestorStatus {
	return Ours(st.Ancestors, controller)
}

// StatusEntry is an entry of a status that many controllers share, each
// writing its own: a route's parent, a policy's ancestor.
type StatusEntry interface {
	gwv1.RouteParentStatus | gwv1.PolicyAncestorStatus
}

// Ours keeps, in order, the entries controller writes.
func Ours[E StatusEntry](entries []E, controller gwv1.GatewayController) []E {
	var out []E
	for _, e := range entries {
		if ControllerOf(e) == controller {
			out = append(out, e)
		}
	}
	return out
}

// ControllerOf is the controllerName of a status entry.
func ControllerOf[E StatusEntry](e E) gwv1.GatewayController {
	switch e := any(&e).(type) {
	case *gwv1.RouteParentStatus:
		return e.ControllerName
	case *gwv1.PolicyAncestorStatus:
		return e.ControllerName
	}
	return ""
}

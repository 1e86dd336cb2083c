package statuswriter

import (
	"k8s.io/apimachinery/pkg/api/equality"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// ours returns the ancestor entries written by controller, in order.
func ours(st gwv1.PolicyStatus, controller gwv1.GatewayController) []gwv1.PolicyAncestorStatus {
	var out []gwv1.PolicyAncestorStatus
	for _, a := range st.Ancestors {
		if a.ControllerName == controller {
			out = append(out, a)
		}
	}
	return out
}

// needsWrite reports whether the live status's entries of controller differ
// from the desired ones: the compare before any write.
func needsWrite(live, desired gwv1.PolicyStatus, controller gwv1.GatewayController) bool {
	a, b := ours(live, controller), ours(desired, controller)
	if len(a) == 0 && len(b) == 0 {
		return false
	}
	return !equality.Semantic.DeepEqual(a, b)
}

// merge returns live's status with controller's entries replaced by the
// desired ones. Other controllers' entries stay exactly as, and where, they
// are on the live object; ours take the place of our first live entry, or
// go last when there was none.
func merge(live, desired gwv1.PolicyStatus, controller gwv1.GatewayController) gwv1.PolicyStatus {
	want := ours(desired, controller)
	out := gwv1.PolicyStatus{Ancestors: make([]gwv1.PolicyAncestorStatus, 0, len(live.Ancestors)+len(want))}
	placed := false
	for _, a := range live.Ancestors {
		if a.ControllerName != controller {
			out.Ancestors = append(out.Ancestors, a)
			continue
		}
		if !placed {
			out.Ancestors = append(out.Ancestors, want...)
			placed = true
		}
	}
	if !placed {
		out.Ancestors = append(out.Ancestors, want...)
	}
	return out
}

// ourParents returns the route parent entries written by controller, in order.
func ourParents(st gwv1.RouteStatus, controller gwv1.GatewayController) []gwv1.RouteParentStatus {
	var out []gwv1.RouteParentStatus
	for _, p := range st.Parents {
		if p.ControllerName == controller {
			out = append(out, p)
		}
	}
	return out
}

// routeNeedsWrite is needsWrite for a route's parents (HTTPRoute,
// GRPCRoute, TLSRoute, TCPRoute, UDPRoute: their statuses are a RouteStatus each).
func routeNeedsWrite(live, desired gwv1.RouteStatus, controller gwv1.GatewayController) bool {
	a, b := ourParents(live, controller), ourParents(desired, controller)
	if len(a) == 0 && len(b) == 0 {
		return false
	}
	return !equality.Semantic.DeepEqual(a, b)
}

// mergeRoute is merge for a route: other controllers' parents stay as,
// and where, they are on the live object (the translator's copy of them may
// be older); ours take the place of our first live entry, or go last.
func mergeRoute(live, desired gwv1.RouteStatus, controller gwv1.GatewayController) gwv1.RouteStatus {
	want := ourParents(desired, controller)
	out := gwv1.RouteStatus{Parents: make([]gwv1.RouteParentStatus, 0, len(live.Parents)+len(want))}
	placed := false
	for _, p := range live.Parents {
		if p.ControllerName != controller {
			out.Parents = append(out.Parents, p)
			continue
		}
		if !placed {
			out.Parents = append(out.Parents, want...)
			placed = true
		}
	}
	if !placed {
		out.Parents = append(out.Parents, want...)
	}
	if len(out.Parents) > maxRouteParents {
		// The API admits 32: ours go first among those dropped, never
		// another controller's.
		out.Parents = keepOthers(out.Parents, controller, maxRouteParents)
	}
	return out
}

// maxRouteParents is the API's limit on status.parents.
const maxRouteParents = 32

// keepOthers trims parents to limit by dropping our last entries.
func keepOthers(parents []gwv1.RouteParentStatus, controller gwv1.GatewayController, limit int) []gwv1.RouteParentStatus {
	excess := len(parents) - limit
	out := make([]gwv1.RouteParentStatus, 0, limit)
	for i := len(parents) - 1; i >= 0; i-- {
		if excess > 0 && parents[i].ControllerName == controller {
			excess--
			continue
		}
		out = append(out, parents[i])
	}
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	if len(out) > limit {
		out = out[:limit]
	}
	return out
}

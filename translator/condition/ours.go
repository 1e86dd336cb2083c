package condition

import gwv1 "sigs.k8s.io/gateway-api/apis/v1"

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

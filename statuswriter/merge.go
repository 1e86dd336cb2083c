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

package dataplane

import (
	"maps"
	"slices"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
	gwxv1a1 "sigs.k8s.io/gateway-api/apisx/v1alpha1"

	"github.com/tlsplane/tlsplane/translator/condition"
)

// WithAncestorCondition returns statuses with conds[policy] set on every
// entry controller owns of that policy: what the data plane observed
// (Envoy's rejections, handshakes) beside the translator's conditions. A
// condition of the same type is replaced; observedGeneration is the
// entry's; lastTransitionTime is now, or previous's while the condition's
// status holds. statuses is read-only: changed entries are deep copies in
// a new map, and statuses itself comes back when conds is empty.
func WithAncestorCondition(statuses map[types.NamespacedName]gwv1.PolicyStatus, conds map[types.NamespacedName]metav1.Condition,
	previous map[types.NamespacedName]gwv1.PolicyStatus, controller gwv1.GatewayController, now time.Time) map[types.NamespacedName]gwv1.PolicyStatus {
	if len(conds) == 0 {
		return statuses
	}
	out := maps.Clone(statuses)
	for key, cond := range conds {
		st, ok := out[key]
		if !ok {
			continue
		}
		st = *st.DeepCopy()
		for i := range st.Ancestors {
			a := &st.Ancestors[i]
			if a.ControllerName != controller {
				continue
			}
			c := cond
			c.LastTransitionTime = metav1.NewTime(now)
			if len(a.Conditions) > 0 {
				c.ObservedGeneration = a.Conditions[0].ObservedGeneration
			}
			if pc := ancestorCondition(previous[key], a.AncestorRef, controller, c.Type); pc != nil && pc.Status == c.Status {
				c.LastTransitionTime = pc.LastTransitionTime
			}
			a.Conditions = append(slices.DeleteFunc(a.Conditions, func(x metav1.Condition) bool { return x.Type == c.Type }), c)
		}
		out[key] = st
	}
	return out
}

// ancestorCondition is the condition of type typ on controller's entry
// for ref in st, or nil.
func ancestorCondition(st gwv1.PolicyStatus, ref gwv1.ParentReference, controller gwv1.GatewayController, typ string) *metav1.Condition {
	for _, a := range st.Ancestors {
		if a.ControllerName != controller || condition.AncestorKey(a.AncestorRef) != condition.AncestorKey(ref) {
			continue
		}
		for i := range a.Conditions {
			if a.Conditions[i].Type == typ {
				return &a.Conditions[i]
			}
		}
	}
	return nil
}

// WithParentCondition is WithAncestorCondition for XBackends, whose
// status.parents entries hold the same three fields as a policy's
// ancestors under other names: one rule for both, through a copy.
func WithParentCondition(statuses map[types.NamespacedName]gwxv1a1.BackendStatus, conds map[types.NamespacedName]metav1.Condition,
	previous map[types.NamespacedName]gwxv1a1.BackendStatus, controller gwv1.GatewayController, now time.Time) map[types.NamespacedName]gwxv1a1.BackendStatus {
	if len(conds) == 0 {
		return statuses
	}
	asPolicies := func(m map[types.NamespacedName]gwxv1a1.BackendStatus) map[types.NamespacedName]gwv1.PolicyStatus {
		out := make(map[types.NamespacedName]gwv1.PolicyStatus, len(conds))
		for key := range conds {
			if st, ok := m[key]; ok {
				out[key] = policyStatusOf(st)
			}
		}
		return out
	}
	changed := WithAncestorCondition(asPolicies(statuses), conds, asPolicies(previous), controller, now)
	out := maps.Clone(statuses)
	for key, st := range changed {
		out[key] = backendStatusOf(st)
	}
	return out
}

func policyStatusOf(st gwxv1a1.BackendStatus) gwv1.PolicyStatus {
	out := gwv1.PolicyStatus{Ancestors: make([]gwv1.PolicyAncestorStatus, len(st.Ancestors))}
	for i, a := range st.Ancestors {
		out.Ancestors[i] = gwv1.PolicyAncestorStatus{AncestorRef: a.AncestorRef, ControllerName: a.ControllerName, Conditions: a.Conditions}
	}
	return out
}

func backendStatusOf(st gwv1.PolicyStatus) gwxv1a1.BackendStatus {
	out := gwxv1a1.BackendStatus{Ancestors: make([]gwxv1a1.BackendAncestorStatus, len(st.Ancestors))}
	for i, a := range st.Ancestors {
		out.Ancestors[i] = gwxv1a1.BackendAncestorStatus{ControllerName: a.ControllerName, AncestorRef: a.AncestorRef, Conditions: a.Conditions}
	}
	return out
}

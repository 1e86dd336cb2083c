package gateway

import (
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/tlsplane/tlsplane/translator/condition"
)

// reasonParentNotProgrammed is the ListenerSet Programmed reason the API
// documents without a constant.
const reasonParentNotProgrammed = "ParentNotProgrammed"

// attachedSets counts the ListenerSets the Gateway takes: its
// status.attachedListenerSets.
func (gs *Gateway) attachedSets() int32 {
	var n int32
	for _, s := range gs.sets {
		if s.attached() {
			n++
		}
	}
	return n
}

// ListenerSetStatuses are the statuses of the ListenerSets whose parentRef
// names gs: whether the Gateway takes each (Accepted), whether its
// listeners are served (Programmed), and each listener's conditions.
// parent is gs's status as Status wrote it, with the same refused.
func (r *Result) ListenerSetStatuses(gs *Gateway, parent gwv1.GatewayStatus, refused map[Socket]string, now metav1.Time) map[types.NamespacedName]gwv1.ListenerSetStatus {
	if len(gs.sets) == 0 {
		return nil
	}
	parentProgrammed := meta.IsStatusConditionTrue(parent.Conditions, string(gwv1.GatewayConditionProgrammed))
	out := make(map[types.NamespacedName]gwv1.ListenerSetStatus, len(gs.sets))
	for _, s := range gs.sets {
		out[s.nn] = listenerSetStatus(s, parentProgrammed, refused, now)
	}
	return out
}

func listenerSetStatus(s *listenerSet, parentProgrammed bool, refused map[Socket]string, now metav1.Time) gwv1.ListenerSetStatus {
	served, programmedListeners := 0, 0
	for _, l := range s.listeners {
		if l.served() {
			served++
			if refused[l.socket()] == "" {
				programmedListeners++
			}
		}
	}
	accepted := metav1.Condition{Type: string(gwv1.ListenerSetConditionAccepted), Status: metav1.ConditionTrue,
		Reason: string(gwv1.ListenerSetReasonAccepted), Message: "ListenerSet is attached to its Gateway"}
	programmed := metav1.Condition{Type: string(gwv1.ListenerSetConditionProgrammed), Status: metav1.ConditionTrue,
		Reason: string(gwv1.ListenerSetReasonProgrammed), Message: "its listeners are served by the Gateway's Envoy fleet"}
	switch {
	case !s.attached():
		accepted.Status, accepted.Reason, accepted.Message = metav1.ConditionFalse, s.notAttachedReason, s.notAttachedMsg
		programmed.Status, programmed.Reason, programmed.Message = metav1.ConditionFalse, s.notAttachedReason, s.notAttachedMsg
		if s.notAttachedReason == string(gwv1.ListenerSetReasonParentNotAccepted) {
			programmed.Reason = reasonParentNotProgrammed
		}
	case !parentProgrammed:
		programmed.Status, programmed.Reason, programmed.Message = metav1.ConditionFalse, reasonParentNotProgrammed, "the parent Gateway is not programmed; see its status"
	case programmedListeners == 0:
		programmed.Status, programmed.Reason = metav1.ConditionFalse, string(gwv1.ListenerSetReasonInvalid)
		programmed.Message = "Envoy would reject every listener; see status.listeners"
	}
	if s.attached() && served < len(s.listeners) {
		accepted.Reason = string(gwv1.ListenerSetReasonListenersNotValid)
		accepted.Message = fmt.Sprintf("%d of %d listeners are served; see status.listeners", served, len(s.listeners))
	}
	ls := s.ls
	st := gwv1.ListenerSetStatus{Conditions: condition.Stamp(ls.Status.Conditions, []metav1.Condition{accepted, programmed}, ls.Generation, now)}
	prev := map[gwv1.SectionName][]metav1.Condition{}
	for _, l := range ls.Status.Listeners {
		prev[l.Name] = l.Conditions
	}
	for _, l := range s.listeners {
		st.Listeners = append(st.Listeners, gwv1.ListenerEntryStatus(listenerStatus(l, prev[l.spec.Name], refused, ls.Generation, now)))
	}
	return st
}

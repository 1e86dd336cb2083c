package trafficpolicy

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/tlsplane/tlsplane/translator/backendtls"
	"github.com/tlsplane/tlsplane/translator/condition"
)

// Reach lists the Gateways whose accepted routes send traffic to a
// target, sorted; none for a target no Gateway reaches.
type Reach func(Target) []types.NamespacedName

// Status is v's complete status: other controllers' entries as in
// previous, then ours: one per Gateway reaching a target (its Accepted
// the worst among the targets that Gateway reaches), or the target itself
// when no Gateway reaches it (as BackendTLSPolicy's ancestors).
func Status(v *Verdict, reach Reach, controller gwv1.GatewayController, previous gwv1.PolicyStatus, now metav1.Time) gwv1.PolicyStatus {
	var ours []gwv1.PolicyAncestorStatus
	index := map[string]int{}
	for _, o := range v.Targets {
		cond := condition.Capped(accepted(v, o))
		var refs []gwv1.ParentReference
		if o.NotFound == "" && o.Unsupported == "" && reach != nil {
			for _, gw := range reach(o.Target) {
				refs = append(refs, backendtls.GatewayAncestorRef(gw))
			}
		}
		if len(refs) == 0 {
			refs = []gwv1.ParentReference{o.Target.ancestorRef()}
		}
		for _, ref := range refs {
			ours = backendtls.AddAncestor(ours, index, ref, controller, cond)
		}
	}
	return backendtls.MergeStatus(previous, ours, controller, v.Policy.Generation, now)
}

// accepted is the policy's Accepted condition on one target: a missing
// or unsupported target, then the policy's own problems, then a conflict.
func accepted(v *Verdict, o Outcome) metav1.Condition {
	c := metav1.Condition{Type: string(gwv1.PolicyConditionAccepted), Status: metav1.ConditionFalse}
	switch {
	case o.NotFound != "":
		c.Reason, c.Message = string(gwv1.PolicyReasonTargetNotFound), o.NotFound
	case o.Unsupported != "":
		c.Reason, c.Message = string(gwv1.PolicyReasonInvalid), o.Unsupported
	case v.Invalid != "":
		c.Reason, c.Message = string(gwv1.PolicyReasonInvalid), v.Invalid
	case o.Winner != nil:
		c.Reason = string(gwv1.PolicyReasonConflicted)
		c.Message = fmt.Sprintf("XBackendTrafficPolicy %s: %s is governed by XBackendTrafficPolicy %s, the older (created %s)",
			v.Name, o.Target, o.Winner.Name, o.Winner.Policy.CreationTimestamp.UTC().Format("2006-01-02T15:04:05Z"))
	default:
		c.Status, c.Reason = metav1.ConditionTrue, string(gwv1.PolicyReasonAccepted)
		c.Message = fmt.Sprintf("XBackendTrafficPolicy %s governs %s", v.Name, o.Target)
		if v.Note != "" {
			c.Message += ": " + v.Note
		}
	}
	return c
}

package backendtls

import (
	"fmt"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/tlsplane/tlsplane/translator/condition"
	"github.com/tlsplane/tlsplane/translator/tlsopts"
)

// maxAncestors is the API's limit on status.ancestors.
const maxAncestors = 16

// AncestorStatuses are this controller's status entries for one policy:
// one per targetRef, in targetRef order, each with Accepted and ResolvedRefs.
func AncestorStatuses(v *Verdict, attachments []*Attachment, controller gwv1.GatewayController) []gwv1.PolicyAncestorStatus {
	resolved := condition.Capped(resolvedRefsCondition(v)) // once: shared by every entry
	out := make([]gwv1.PolicyAncestorStatus, 0, len(attachments))
	seen := map[string]bool{}
	for _, a := range attachments {
		ref := ancestorRef(v, a)
		if key := condition.AncestorKey(ref); seen[key] {
			continue // a repeated targetRef has one entry
		} else {
			seen[key] = true
		}
		out = append(out, gwv1.PolicyAncestorStatus{
			AncestorRef:    ref,
			ControllerName: controller,
			Conditions:     appendFreshness([]metav1.Condition{condition.Capped(acceptedCondition(v, a)), resolved}, v),
		})
	}
	return out
}

func ancestorRef(v *Verdict, a *Attachment) gwv1.ParentReference {
	group, kind := a.ref.Group, a.ref.Kind
	namespace := gwv1.Namespace(v.Name.Namespace)
	return gwv1.ParentReference{
		Group:       &group,
		Kind:        &kind,
		Namespace:   &namespace,
		Name:        a.ref.Name,
		SectionName: a.ref.SectionName,
	}
}

// acceptedCondition ranks the reasons: a missing target, then one that
// cannot take the policy or be served, then a conflict, then the policy's
// own problems.
func acceptedCondition(v *Verdict, a *Attachment) metav1.Condition {
	c := metav1.Condition{Type: string(gwv1.PolicyConditionAccepted), Status: metav1.ConditionFalse}
	switch {
	case a.notFound != "":
		c.Reason, c.Message = string(gwv1.PolicyReasonTargetNotFound), a.notFound
	case a.invalid != "":
		c.Reason, c.Message = string(gwv1.PolicyReasonInvalid), a.invalid
	case a.unserved != "":
		// A Service the API server would refuse (ExternalName without
		// externalName, a port number Envoy rejects) leaves a port without
		// a cluster. Not Invalid: that is "the policy is syntactically or
		// semantically invalid" (policy_types.go), and this policy is not;
		// TargetNotFound is "the policy is attached to an invalid target
		// resource", which this is.
		c.Reason, c.Message = string(gwv1.PolicyReasonTargetNotFound), a.unserved
	case a.Winner != nil:
		c.Reason, c.Message = string(gwv1.PolicyReasonConflicted), conflictMessage(a)
	case !v.Accepted():
		c.Reason, c.Message = string(v.RejectReason), v.RejectMessage
	default:
		c.Status = metav1.ConditionTrue
		c.Reason, c.Message = string(gwv1.PolicyReasonAccepted), "Policy is accepted"+a.note+a.CANote
	}
	return c
}

func conflictMessage(a *Attachment) string {
	on := "Service " + a.Target.Service.String()
	if a.Target.Section != "" {
		on += " port " + a.Target.Section
	}
	why := "it is older"
	if a.Winner.Policy.CreationTimestamp.Equal(&a.verdict.Policy.CreationTimestamp) {
		why = "it is as old and its namespace/name sorts first"
	}
	return fmt.Sprintf("BackendTLSPolicy %s takes precedence on %s: %s", a.Winner.Name, on, why)
}

// appendFreshness adds ConditionRevocationListsFresh when the policy
// fetches its revocation lists.
func appendFreshness(conditions []metav1.Condition, v *Verdict) []metav1.Condition {
	f := v.FetchedCRLs.Freshness
	if f == nil {
		return conditions
	}
	c := metav1.Condition{Type: ConditionRevocationListsFresh, Status: metav1.ConditionFalse, Reason: f.Reason,
		Message: "spec.options " + tlsopts.CRLDistributionPointsKey + ": " + f.Message}
	if f.Fresh {
		c.Status = metav1.ConditionTrue
	}
	return append(conditions, condition.Capped(c))
}

// resolvedRefsCondition is the same on every ancestor: it is about the
// policy's caCertificateRefs, not its targets.
func resolvedRefsCondition(v *Verdict) metav1.Condition {
	c := metav1.Condition{
		Type:    string(gwv1.BackendTLSPolicyConditionResolvedRefs),
		Status:  metav1.ConditionTrue,
		Reason:  string(gwv1.BackendTLSPolicyReasonResolvedRefs),
		Message: "All references are resolved",
	}
	problems := v.Trust.Problems
	if len(v.optionProblems) > 0 {
		problems = append(slices.Clip(problems), v.optionProblems...)
	}
	if len(problems) == 0 {
		return c
	}
	msgs := make([]string, 0, len(problems))
	for _, p := range problems {
		msgs = append(msgs, p.Message)
	}
	c.Status = metav1.ConditionFalse
	c.Reason = string(problems[0].Reason)
	c.Message = strings.Join(msgs, "; ")
	return c
}

// MergeStatus makes the complete status: other controllers' entries as they
// were, then ours (capped so the total stays within the API's limit), with
// each condition's lastTransitionTime kept unless its status changed.
func MergeStatus(previous gwv1.PolicyStatus, ours []gwv1.PolicyAncestorStatus, controller gwv1.GatewayController, generation int64, now metav1.Time) gwv1.PolicyStatus {
	prevOurs := map[string]gwv1.PolicyAncestorStatus{}
	var out gwv1.PolicyStatus
	for _, a := range previous.Ancestors {
		if a.ControllerName == controller {
			prevOurs[condition.AncestorKey(a.AncestorRef)] = a
			continue
		}
		out.Ancestors = append(out.Ancestors, *a.DeepCopy())
	}
	room := maxAncestors - len(out.Ancestors)
	for i, a := range ours {
		if i >= room {
			break
		}
		before := prevOurs[condition.AncestorKey(a.AncestorRef)]
		for j := range a.Conditions {
			c := &a.Conditions[j]
			c.ObservedGeneration = generation
			c.LastTransitionTime = now
			for _, pc := range before.Conditions {
				if pc.Type == c.Type && pc.Status == c.Status {
					c.LastTransitionTime = pc.LastTransitionTime
				}
			}
		}
		out.Ancestors = append(out.Ancestors, a)
	}
	return out
}

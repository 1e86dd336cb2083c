package condition

import (
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// Capped keeps a condition's message within the API server's limit: an
// option value or a CA problem may quote up to megabytes of input.
func Capped(c metav1.Condition) metav1.Condition {
	c.Message = CapMessage(c.Message, MaxConditionMessage)
	return c
}

// Stamp sets observedGeneration, caps messages, and keeps each
// condition's lastTransitionTime from prev when its status did not change.
func Stamp(prev, next []metav1.Condition, generation int64, now metav1.Time) []metav1.Condition {
	out := make([]metav1.Condition, len(next))
	for i, c := range next {
		c = Capped(c)
		c.ObservedGeneration = generation
		c.LastTransitionTime = now
		for _, pc := range prev {
			if pc.Type == c.Type && pc.Status == c.Status {
				c.LastTransitionTime = pc.LastTransitionTime
			}
		}
		out[i] = c
	}
	return out
}

// AncestorKey identifies a policy's ancestorRef, with the API's defaults
// filled in.
func AncestorKey(r gwv1.ParentReference) string {
	group, kind, namespace, section := gwv1.GroupName, "Gateway", "", ""
	if r.Group != nil {
		group = string(*r.Group)
	}
	if r.Kind != nil {
		kind = string(*r.Kind)
	}
	if r.Namespace != nil {
		namespace = string(*r.Namespace)
	}
	if r.SectionName != nil {
		section = string(*r.SectionName)
	}
	return strings.Join([]string{group, kind, namespace, string(r.Name), section}, "\x00")
}

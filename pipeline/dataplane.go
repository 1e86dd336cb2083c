package pipeline

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/tlsplane/tlsplane/translator"
)

// ConditionDataPlaneAccepted is the implementation-specific condition a
// policy's ancestor entries carry while an Envoy rejects (NACKs) resources
// translated from the policy. It is present only as False: tlsplane cannot
// know that every Envoy of every fleet accepted a policy, so it asserts
// nothing until one rejects, and removes the condition once a newer
// version of the rejected type is accepted by that fleet.
const ConditionDataPlaneAccepted = "tlsplane.io/DataPlaneAccepted"

// ReasonRejected is ConditionDataPlaneAccepted's reason.
const ReasonRejected = "Rejected"

// maxRejectionMessage bounds the condition message: Envoy's error_detail
// can quote a whole resource, and the API allows 32 KiB per message.
const maxRejectionMessage = 1024

// withRejections returns statuses with ConditionDataPlaneAccepted set on
// our entries of every policy a rejection implicates. Statuses is the
// translator's read-only output: changed entries are deep copies in a new
// map. previous supplies lastTransitionTime for a condition still False.
func withRejections(statuses map[types.NamespacedName]gwv1.PolicyStatus, previous translator.PreviousStatus,
	rejections []Rejection, controller gwv1.GatewayController, now time.Time) map[types.NamespacedName]gwv1.PolicyStatus {
	byPolicy := map[types.NamespacedName][]Rejection{}
	for _, r := range rejections {
		for _, key := range r.Policies {
			if _, ok := statuses[key]; ok {
				byPolicy[key] = append(byPolicy[key], r)
			}
		}
	}
	conds := make(map[types.NamespacedName]metav1.Condition, len(byPolicy))
	for key, rs := range byPolicy {
		conds[key] = metav1.Condition{
			Type: ConditionDataPlaneAccepted, Status: metav1.ConditionFalse, Reason: ReasonRejected, Message: rejectionMessage(rs),
		}
	}
	return translator.WithAncestorCondition(statuses, conds, previous, controller, now)
}

// rejectionMessage names, per rejection, the fleet, node, type and version
// with Envoy's words, sorted, truncated to maxRejectionMessage.
func rejectionMessage(rs []Rejection) string {
	rs = slices.Clone(rs)
	slices.SortFunc(rs, func(a, b Rejection) int {
		return cmp.Or(cmp.Compare(a.Fleet, b.Fleet), cmp.Compare(a.TypeURL, b.TypeURL))
	})
	parts := make([]string, 0, len(rs))
	for _, r := range rs {
		parts = append(parts, fmt.Sprintf("Envoy node %q of fleet %q rejected %s version %s: %s",
			r.Node, r.Fleet, typeName(r.TypeURL), r.Version, strings.TrimSpace(r.Message)))
	}
	return translator.CapMessage(strings.Join(parts, "; "), maxRejectionMessage)
}

// typeName is the last part of a type URL: Cluster, ClusterLoadAssignment, Secret.
func typeName(typeURL string) string {
	return typeURL[strings.LastIndexByte(typeURL, '.')+1:]
}

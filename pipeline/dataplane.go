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
	gwxv1a1 "sigs.k8s.io/gateway-api/apisx/v1alpha1"

	"github.com/tlsplane/tlsplane/translator"
)

// ConditionDataPlaneAccepted is the implementation-specific condition a
// policy's ancestor entries carry while an Envoy rejects (NACKs) resources
// translated from the policy. It is present only as False: tlsplane cannot
// know that every Envoy of every fleet accepted a policy, so it asserts
// nothing until one rejects, and removes the condition once a newer
// version of the rejected type is accepted by that fleet.
const ConditionDataPlaneAccepted = "tlsplane.io/DataPlaneAccepted"

// ReasonRejected is ConditionDataPlaneAccepted's reason when an Envoy
// rejected (NACKed) resources.
const ReasonRejected = "Rejected"

// ReasonEnvoyBuildRefuses is ConditionDataPlaneAccepted's reason when a
// cluster was withheld from a fleet whose connected Envoy build cannot
// take its TLS parameters (no Envoy rejected anything: it was not sent).
const ReasonEnvoyBuildRefuses = translator.ReasonEnvoyBuildRefuses

// maxRejectionMessage bounds the condition message: Envoy's error_detail
// can quote a whole resource, and the API allows 32 KiB per message.
const maxRejectionMessage = 1024

// withRejections returns statuses with ConditionDataPlaneAccepted set on
// our entries of every policy a rejection implicates, or a cluster of
// which a fleet's Envoy build refuses (refusals of reason
// ReasonEnvoyBuildRefuses). Statuses is the translator's read-only output:
// changed entries are deep copies in a new map. previous supplies
// lastTransitionTime for a condition still False.
func withRejections(statuses map[types.NamespacedName]gwv1.PolicyStatus, previous translator.PreviousStatus,
	rejections []Rejection, refusals []translator.FleetRefusal, controller gwv1.GatewayController, now time.Time) map[types.NamespacedName]gwv1.PolicyStatus {
	byPolicy := map[types.NamespacedName][]Rejection{}
	for _, r := range rejections {
		for _, key := range r.Policies {
			if _, ok := statuses[key]; ok {
				byPolicy[key] = append(byPolicy[key], r)
			}
		}
	}
	refused := buildRefusalsOf(refusals, translator.KindBackendTLSPolicy)
	conds := make(map[types.NamespacedName]metav1.Condition, len(byPolicy)+len(refused))
	for key, rs := range byPolicy {
		conds[key] = metav1.Condition{
			Type: ConditionDataPlaneAccepted, Status: metav1.ConditionFalse, Reason: ReasonRejected, Message: rejectionMessage(rs, refused[key]),
		}
	}
	for key, messages := range refused {
		if _, ok := statuses[key]; !ok || len(byPolicy[key]) > 0 {
			continue
		}
		conds[key] = buildRefusalCondition(messages)
	}
	return translator.WithAncestorCondition(statuses, conds, previous, controller, now)
}

// withBuildRefusals returns XBackend statuses with ConditionDataPlaneAccepted
// False on every XBackend a fleet's Envoy build refuses a cluster of.
func withBuildRefusals(statuses map[types.NamespacedName]gwxv1a1.BackendStatus, previous map[types.NamespacedName]gwxv1a1.BackendStatus,
	refusals []translator.FleetRefusal, controller gwv1.GatewayController, now time.Time) map[types.NamespacedName]gwxv1a1.BackendStatus {
	refused := buildRefusalsOf(refusals, translator.KindXBackend)
	conds := make(map[types.NamespacedName]metav1.Condition, len(refused))
	for key, messages := range refused {
		if _, ok := statuses[key]; ok {
			conds[key] = buildRefusalCondition(messages)
		}
	}
	return translator.WithXBackendCondition(statuses, conds, previous, controller, now)
}

// buildRefusalsOf are the messages of the build refusals naming an
// object of kind, by object.
func buildRefusalsOf(refusals []translator.FleetRefusal, kind translator.Kind) map[types.NamespacedName][]string {
	out := map[types.NamespacedName][]string{}
	for _, r := range refusals {
		if r.Reason != ReasonEnvoyBuildRefuses {
			continue
		}
		for _, o := range r.Objects {
			if o.Kind == kind {
				out[o.Name] = append(out[o.Name], r.Message)
			}
		}
	}
	return out
}

func buildRefusalCondition(messages []string) metav1.Condition {
	messages = slices.Clone(messages)
	slices.Sort(messages)
	return metav1.Condition{Type: ConditionDataPlaneAccepted, Status: metav1.ConditionFalse, Reason: ReasonEnvoyBuildRefuses,
		Message: translator.CapMessage(strings.Join(messages, "; "), maxRejectionMessage)}
}

// rejectionMessage names, per rejection, the fleet, node, type and version
// with Envoy's words, sorted, then the build refusals, truncated to
// maxRejectionMessage.
func rejectionMessage(rs []Rejection, refused []string) string {
	rs = slices.Clone(rs)
	slices.SortFunc(rs, func(a, b Rejection) int {
		return cmp.Or(cmp.Compare(a.Fleet, b.Fleet), cmp.Compare(a.TypeURL, b.TypeURL))
	})
	parts := make([]string, 0, len(rs))
	for _, r := range rs {
		parts = append(parts, fmt.Sprintf("Envoy node %q of fleet %q rejected %s version %s: %s",
			r.Node, r.Fleet, typeName(r.TypeURL), r.Version, strings.TrimSpace(r.Message)))
	}
	refused = slices.Clone(refused)
	slices.Sort(refused)
	parts = append(parts, refused...)
	return translator.CapMessage(strings.Join(parts, "; "), maxRejectionMessage)
}

// typeName is the last part of a type URL: Cluster, ClusterLoadAssignment, Secret.
func typeName(typeURL string) string {
	return typeURL[strings.LastIndexByte(typeURL, '.')+1:]
}

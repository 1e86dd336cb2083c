package translator

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
	gwxv1a1 "sigs.k8s.io/gateway-api/apisx/v1alpha1"

	"github.com/tlsplane/tlsplane/translator/dataplane"
)

// What serving a translation found goes into its statuses afterwards
// (package dataplane); the names callers had stay here.

// ObjectRef names one input object.
type ObjectRef = dataplane.ObjectRef

// FleetRefusal is one fleet whose new configuration is not served, and why.
type FleetRefusal = dataplane.FleetRefusal

// ReasonFleetNotServable is the Programmed reason of a Gateway whose
// fleet's configuration the publisher refused.
const ReasonFleetNotServable = dataplane.ReasonFleetNotServable

// ReasonEnvoyBuildRefuses is a refusal's reason when one cluster is
// withheld from a fleet whose Envoy build cannot take its TLS parameters;
// its objects are the cluster's policies and XBackends.
const ReasonEnvoyBuildRefuses = dataplane.ReasonEnvoyBuildRefuses

// GatewayOfFleet is the Gateway a Gateway fleet serves.
func GatewayOfFleet(fleet string) (types.NamespacedName, bool) {
	return dataplane.GatewayOfFleet(fleet)
}

// RefuseGateways returns statuses with each refused fleet's Gateway
// Programmed=False; statuses is not changed.
func RefuseGateways(statuses GatewayAPIStatuses, refusals []FleetRefusal, now metav1.Time) GatewayAPIStatuses {
	statuses.Gateways = dataplane.RefuseGateways(statuses.Gateways, refusals, now)
	return statuses
}

// WithAncestorCondition returns statuses with conds[policy] set on every
// entry controller (DefaultControllerName when empty) owns of that policy
// (dataplane.WithAncestorCondition).
func WithAncestorCondition(statuses map[types.NamespacedName]gwv1.PolicyStatus, conds map[types.NamespacedName]metav1.Condition,
	previous PreviousStatus, controller gwv1.GatewayController, now time.Time) map[types.NamespacedName]gwv1.PolicyStatus {
	if controller == "" {
		controller = DefaultControllerName
	}
	return dataplane.WithAncestorCondition(statuses, conds, previous, controller, now)
}

// WithXBackendCondition is WithAncestorCondition on XBackends' status.parents
// (dataplane.WithParentCondition).
func WithXBackendCondition(statuses map[types.NamespacedName]gwxv1a1.BackendStatus, conds map[types.NamespacedName]metav1.Condition,
	previous map[types.NamespacedName]gwxv1a1.BackendStatus, controller gwv1.GatewayController, now time.Time) map[types.NamespacedName]gwxv1a1.BackendStatus {
	if controller == "" {
		controller = DefaultControllerName
	}
	return dataplane.WithParentCondition(statuses, conds, previous, controller, now)
}

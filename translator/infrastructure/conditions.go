package infrastructure

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// The Gateway conditions of ours, present only with the provisioner on.
const (
	// ConditionProvisioning says whether the Gateway's namespace is one
	// where the provisioner creates its Envoy.
	ConditionProvisioning     = "tlsplane.io/Provisioning"
	ReasonNamespaceAllowed    = "NamespaceAllowed"
	ReasonNamespaceNotAllowed = "NamespaceNotAllowed"
	// ConditionInfrastructureMetadata says whether every
	// spec.infrastructure key is copied; False names those dropped.
	ConditionInfrastructureMetadata = "tlsplane.io/InfrastructureMetadata"
	ReasonAllKeysCopied             = "AllKeysCopied"
	ReasonKeysDropped               = "KeysDropped"
)

// Conditions are gw's provisioning conditions, unstamped.
func (p *Policy) Conditions(gw *gwv1.Gateway) []metav1.Condition {
	ns := metav1.Condition{Type: ConditionProvisioning, Status: metav1.ConditionTrue,
		Reason: ReasonNamespaceAllowed, Message: p.NamespaceMessage(gw.Namespace)}
	if !p.Provisions(gw.Namespace) {
		ns.Status, ns.Reason = metav1.ConditionFalse, ReasonNamespaceNotAllowed
	}
	keys := metav1.Condition{Type: ConditionInfrastructureMetadata, Status: metav1.ConditionTrue,
		Reason: ReasonAllKeysCopied, Message: "every spec.infrastructure label and annotation is copied to the provisioned objects"}
	if dropped := p.Judge(gw).Summary(); dropped != "" {
		keys.Status, keys.Reason = metav1.ConditionFalse, ReasonKeysDropped
		keys.Message = "spec.infrastructure keys not copied to the ServiceAccount, Pods and other provisioned objects: " + dropped
	}
	return []metav1.Condition{ns, keys}
}

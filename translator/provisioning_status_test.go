package translator_test

import (
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/tlsplane/tlsplane/translator"
	"github.com/tlsplane/tlsplane/translator/infrastructure"
)

// With the provisioner on, each Gateway's status says whether its
// namespace is provisioned and names the spec.infrastructure keys dropped
// (never their values); without it, neither condition is there.
func TestGatewayProvisioningConditions(t *testing.T) {
	in := gatewayInputs(t, gatewayClass+`
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw, namespace: ns}
spec:
  gatewayClassName: tlsplane
  infrastructure:
    labels: {team: pay}
    annotations: {eks.amazonaws.com/role-arn: "arn:aws:iam::1:role/admin", example.com/cost: "42"}
  listeners: [{name: a, protocol: HTTP, port: 8080}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw, namespace: elsewhere}
spec:
  gatewayClassName: tlsplane
  listeners: [{name: a, protocol: HTTP, port: 8080}]`)
	policy := &infrastructure.Policy{Namespaces: []string{"ns"}, AllowedLabelKeys: []string{"*"}, AllowedAnnotationKeys: []string{"*"}, DeniedKeys: infrastructure.DefaultDeniedKeys}
	out := translator.Translate(in, nil, time.Now(), translator.Options{Provisioning: policy})
	st := out.GatewayAPI.Gateways[types.NamespacedName{Namespace: "ns", Name: "gw"}]
	wantCondition(t, "Gateway ns/gw", st.Conditions, infrastructure.ConditionProvisioning, metav1.ConditionTrue, infrastructure.ReasonNamespaceAllowed)
	wantCondition(t, "Gateway ns/gw", st.Conditions, infrastructure.ConditionInfrastructureMetadata, metav1.ConditionFalse, infrastructure.ReasonKeysDropped)
	for _, c := range st.Conditions {
		if c.Type == infrastructure.ConditionInfrastructureMetadata && (!strings.Contains(c.Message, "eks.amazonaws.com/role-arn") || strings.Contains(c.Message, "arn:aws") || strings.Contains(c.Message, "example.com/cost")) {
			t.Errorf("message %q: want the dropped key named, not its value nor the kept keys", c.Message)
		}
	}
	other := out.GatewayAPI.Gateways[types.NamespacedName{Namespace: "elsewhere", Name: "gw"}]
	wantCondition(t, "Gateway elsewhere/gw", other.Conditions, infrastructure.ConditionProvisioning, metav1.ConditionFalse, infrastructure.ReasonNamespaceNotAllowed)
	wantCondition(t, "Gateway elsewhere/gw", other.Conditions, infrastructure.ConditionInfrastructureMetadata, metav1.ConditionTrue, infrastructure.ReasonAllKeysCopied)
	wantCondition(t, "Gateway elsewhere/gw", other.Conditions, "Accepted", metav1.ConditionTrue, "Accepted")

	plain := translator.Translate(in, nil, time.Now(), translator.Options{})
	for _, c := range plain.GatewayAPI.Gateways[types.NamespacedName{Namespace: "ns", Name: "gw"}].Conditions {
		if strings.HasPrefix(c.Type, "tlsplane.io/") {
			t.Errorf("without the provisioner: condition %s", c.Type)
		}
	}
}

package gateway

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/tlsplane/tlsplane/translator/input"
	"github.com/tlsplane/tlsplane/translator/plan"
)

// backendCertificate is what a Gateway's
// spec.tls.backend.clientCertificateRef resolved to: the certificate, or
// why the reference cannot be used (the Gateway's ResolvedRefs).
type backendCertificate struct {
	cert    *plan.ClientCertificate // nil when unresolved
	reason  gwv1.GatewayConditionReason
	message string
}

const backendCertificateField = "spec.tls.backend.clientCertificateRef"

// judgeBackendCertificate resolves the Gateway's backend client
// certificate; nil when it names none. Only a core kubernetes.io/tls
// Secret is supported (the spec's Core support), permitted by a
// ReferenceGrant when it is in another namespace.
func judgeBackendCertificate(gw *gwv1.Gateway, ix *input.Index, g *gatewayIndex) *backendCertificate {
	if gw.Spec.TLS == nil || gw.Spec.TLS.Backend == nil || gw.Spec.TLS.Backend.ClientCertificateRef == nil {
		return nil
	}
	ref := gw.Spec.TLS.Backend.ClientCertificateRef
	const field = backendCertificateField
	invalid := func(reason gwv1.GatewayConditionReason, format string, args ...any) *backendCertificate {
		return &backendCertificate{reason: reason, message: field + ": " + fmt.Sprintf(format, args...)}
	}
	group, kind := "", "Secret"
	if ref.Group != nil {
		group = string(*ref.Group)
	}
	if ref.Kind != nil {
		kind = string(*ref.Kind)
	}
	if group != "" || kind != "Secret" {
		return invalid(gwv1.GatewayReasonInvalidClientCertificateRef, "group %q kind %q: only core Secrets hold client certificates", group, kind)
	}
	nn := input.NameOf(gw.Namespace, string(ref.Name))
	if ref.Namespace != nil {
		nn.Namespace = string(*ref.Namespace)
	}
	if !g.permitted(reference{gwv1.GroupName, "Gateway", gw.Namespace, "", "Secret", nn.Namespace, nn.Name}) {
		return invalid(gwv1.GatewayReasonRefNotPermitted, "Secret %s: no ReferenceGrant in %s permits Gateways of %s", nn, nn.Namespace, gw.Namespace)
	}
	s, ok := ix.Secrets[nn]
	switch {
	case !ok:
		return invalid(gwv1.GatewayReasonInvalidClientCertificateRef, "Secret %s does not exist", nn)
	case s.Type != corev1.SecretTypeTLS:
		return invalid(gwv1.GatewayReasonInvalidClientCertificateRef, "Secret %s is of type %q, not %q", nn, s.Type, corev1.SecretTypeTLS)
	}
	chain, key, err := input.KeyPair(s)
	if err != nil {
		return invalid(gwv1.GatewayReasonInvalidClientCertificateRef, "Secret %s: %v", nn, err)
	}
	return &backendCertificate{cert: &plan.ClientCertificate{
		SecretName: plan.GatewayClientCertificateSecretName(gw.Namespace, gw.Name), Chain: chain, Key: key,
	}}
}

// BackendClientCertificate is the certificate the Gateway presents to
// the TLS backends its routes reach. configured is false when the Gateway
// names none; cert is nil when it names one that cannot be used, and then
// those backends must fail closed rather than be reached without it.
func (gs *Gateway) BackendClientCertificate() (cert *plan.ClientCertificate, configured bool) {
	if gs.backend == nil {
		return nil, false
	}
	return gs.backend.cert, true
}

// RefuseBackendClientCertificate marks the Gateway's certificate as one
// Envoy would reject (why): the TLS backends its routes reach fail closed,
// and its ResolvedRefs names the field, the Secret and why.
func (gs *Gateway) RefuseBackendClientCertificate(why string) {
	ref := gs.gw.Spec.TLS.Backend.ClientCertificateRef
	nn := input.NameOf(gs.gw.Namespace, string(ref.Name))
	if ref.Namespace != nil {
		nn.Namespace = string(*ref.Namespace)
	}
	gs.backend = &backendCertificate{reason: gwv1.GatewayReasonInvalidClientCertificateRef,
		message: fmt.Sprintf("%s: Secret %s: Envoy would reject it: %s", backendCertificateField, nn, why)}
}

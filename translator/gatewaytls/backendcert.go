package gatewaytls

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/tlsplane/tlsplane/translator/input"
	"github.com/tlsplane/tlsplane/translator/plan"
	"github.com/tlsplane/tlsplane/translator/referencegrant"
)

// BackendCertificate is what a Gateway's
// spec.tls.backend.clientCertificateRef resolved to: the certificate, or
// why the reference cannot be used (the Gateway's ResolvedRefs).
type BackendCertificate struct {
	Cert    *plan.ClientCertificate // nil when unresolved
	Reason  gwv1.GatewayConditionReason
	Message string
}

// BackendCertificateField is the Gateway field a backend client
// certificate is named in; statuses about it start with it.
const BackendCertificateField = "spec.tls.backend.clientCertificateRef"

// JudgeBackendCertificate resolves the Gateway's backend client
// certificate; nil when it names none. Only a core kubernetes.io/tls
// Secret is supported (the spec's Core support), permitted by a
// ReferenceGrant when it is in another namespace.
func JudgeBackendCertificate(gw *gwv1.Gateway, ix *input.Index, grants referencegrant.Grants) *BackendCertificate {
	if gw.Spec.TLS == nil || gw.Spec.TLS.Backend == nil || gw.Spec.TLS.Backend.ClientCertificateRef == nil {
		return nil
	}
	ref := gw.Spec.TLS.Backend.ClientCertificateRef
	const field = BackendCertificateField
	invalid := func(reason gwv1.GatewayConditionReason, format string, args ...any) *BackendCertificate {
		return &BackendCertificate{Reason: reason, Message: field + ": " + fmt.Sprintf(format, args...)}
	}
	group, kind := input.GroupKind(ref.Group, ref.Kind, "Secret")
	if group != "" || kind != "Secret" {
		return invalid(gwv1.GatewayReasonInvalidClientCertificateRef, "group %q kind %q: only core Secrets hold client certificates", group, kind)
	}
	nn := input.NameOf(gw.Namespace, string(ref.Name))
	if ref.Namespace != nil {
		nn.Namespace = string(*ref.Namespace)
	}
	if !grants.Permits(referencegrant.Reference{FromGroup: gwv1.GroupName, FromKind: "Gateway", FromNamespace: gw.Namespace,
		ToKind: "Secret", ToNamespace: nn.Namespace, ToName: nn.Name}) {
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
	return &BackendCertificate{Cert: &plan.ClientCertificate{
		SecretName: plan.GatewayClientCertificateSecretName(gw.Namespace, gw.Name), Chain: chain, Key: key,
	}}
}

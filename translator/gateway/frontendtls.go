package gateway

import (
	"fmt"
	"strconv"
	"strings"

	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/tlsplane/tlsplane/translator/capem"
	"github.com/tlsplane/tlsplane/translator/input"
	"github.com/tlsplane/tlsplane/translator/plan"
	"github.com/tlsplane/tlsplane/translator/referencegrant"
)

// caCertificateKey is the key of a ConfigMap (or Secret) that holds the
// PEM CA bundle: the spec's core support.
const caCertificateKey = "ca.crt"

// frontendValidation is one client certificate validation of a Gateway's
// spec.tls.frontend (the default's, or a port's) as resolved: the CA
// bundle of its valid refs, and why the others cannot be used.
type frontendValidation struct {
	bundle   *plan.CABundle // nil when no ref is valid
	insecure bool           // mode AllowInsecureFallback
	// reason and message are the first invalid ref's (ResolvedRefs False
	// on the listeners it applies to); "" when every ref resolved.
	reason  gwv1.ListenerConditionReason
	message string
}

// frontendTLS is a Gateway's spec.tls.frontend, resolved once for all its
// HTTPS listeners.
type frontendTLS struct {
	byPort map[gwv1.PortNumber]*frontendValidation // perPort entries; nil: no validation on the port
	def    *frontendValidation                     // nil: none by default
}

// judgeFrontendTLS resolves every validation spec.tls.frontend sets; nil
// when it sets none.
func judgeFrontendTLS(gw *gwv1.Gateway, ix *input.Index, g *gatewayIndex) *frontendTLS {
	if gw.Spec.TLS == nil || gw.Spec.TLS.Frontend == nil {
		return nil
	}
	f := gw.Spec.TLS.Frontend
	out := &frontendTLS{def: resolveFrontendValidation(gw, "spec.tls.frontend.default.validation", "default", f.Default.Validation, ix, g)}
	for i, p := range f.PerPort {
		if out.byPort == nil {
			out.byPort = map[gwv1.PortNumber]*frontendValidation{}
		}
		field := fmt.Sprintf("spec.tls.frontend.perPort[%d].tls.validation", i)
		out.byPort[p.Port] = resolveFrontendValidation(gw, field, strconv.Itoa(int(p.Port)), p.TLS.Validation, ix, g)
	}
	return out
}

// forPort is the validation of the HTTPS listeners of port: its perPort
// entry's, which overrides the default even when it sets none.
func (f *frontendTLS) forPort(port gwv1.PortNumber) *frontendValidation {
	if f == nil {
		return nil
	}
	if v, ok := f.byPort[port]; ok {
		return v
	}
	return f.def
}

// insecureFields are the fields whose mode is AllowInsecureFallback, for
// the Gateway's InsecureFrontendValidationMode condition.
func (f *frontendTLS) insecureFields(gw *gwv1.Gateway) []string {
	if f == nil {
		return nil
	}
	var out []string
	if f.def != nil && f.def.insecure {
		out = append(out, "spec.tls.frontend.default.validation.mode")
	}
	for i, p := range gw.Spec.TLS.Frontend.PerPort {
		if v := f.byPort[p.Port]; v != nil && v.insecure {
			out = append(out, fmt.Sprintf("spec.tls.frontend.perPort[%d].tls.validation.mode", i))
		}
	}
	return out
}

// resolveFrontendValidation resolves one validation's caCertificateRefs:
// core ConfigMaps (and Secrets) holding a PEM bundle under ca.crt,
// permitted by a ReferenceGrant across namespaces. The valid refs'
// certificates make one bundle, served as the SDS secret of scope.
func resolveFrontendValidation(gw *gwv1.Gateway, field, scope string, v *gwv1.FrontendTLSValidation, ix *input.Index, g *gatewayIndex) *frontendValidation {
	if v == nil {
		return nil
	}
	out := &frontendValidation{insecure: v.Mode == gwv1.AllowInsecureFallback}
	var pems strings.Builder
	seen := map[string]bool{}
	for i, ref := range v.CACertificateRefs {
		pem, reason, problem := resolveFrontendCARef(gw, ref, ix, g)
		if problem != "" {
			if out.reason == "" {
				out.reason, out.message = reason, fmt.Sprintf("%s.caCertificateRefs[%d]: %s", field, i, problem)
			}
			continue
		}
		if !seen[pem] {
			seen[pem] = true
			pems.WriteString(pem)
		}
	}
	if pems.Len() > 0 {
		out.bundle = &plan.CABundle{SecretName: plan.FrontendCASecretName(gw.Namespace, gw.Name, scope), PEM: pems.String()}
	}
	return out
}

// resolveFrontendCARef is one ref's normalised PEM, or the listener
// reason and the message saying why it cannot be used.
func resolveFrontendCARef(gw *gwv1.Gateway, ref gwv1.ObjectReference, ix *input.Index, g *gatewayIndex) (string, gwv1.ListenerConditionReason, string) {
	if ref.Group != "" || (ref.Kind != "ConfigMap" && ref.Kind != "Secret") {
		return "", gwv1.ListenerReasonInvalidCACertificateKind, fmt.Sprintf("group %q kind %q: only core ConfigMaps and Secrets hold CA certificates", ref.Group, ref.Kind)
	}
	nn := input.NameOf(gw.Namespace, string(ref.Name))
	if ref.Namespace != nil {
		nn.Namespace = string(*ref.Namespace)
	}
	if !g.grants.Permits(referencegrant.Reference{FromGroup: gwv1.GroupName, FromKind: "Gateway", FromNamespace: input.NameOf(gw.Namespace, "").Namespace,
		ToKind: string(ref.Kind), ToNamespace: nn.Namespace, ToName: nn.Name}) {
		return "", gwv1.ListenerReasonRefNotPermitted, fmt.Sprintf("%s %s: no ReferenceGrant in %s permits Gateways of %s", ref.Kind, nn, nn.Namespace, gw.Namespace)
	}
	var (
		data          string
		exists, found bool
	)
	if ref.Kind == "ConfigMap" {
		if cm, ok := ix.ConfigMaps[nn]; ok {
			exists = true
			if s, ok := cm.Data[caCertificateKey]; ok {
				data, found = s, true
			} else if b, ok := cm.BinaryData[caCertificateKey]; ok {
				data, found = string(b), true
			}
		}
	} else if s, ok := ix.Secrets[nn]; ok {
		exists = true
		b, ok := s.Data[caCertificateKey]
		data, found = string(b), ok
	}
	switch {
	case !exists:
		return "", gwv1.ListenerReasonInvalidCACertificateRef, fmt.Sprintf("%s %s does not exist", ref.Kind, nn)
	case !found:
		return "", gwv1.ListenerReasonInvalidCACertificateRef, fmt.Sprintf("%s %s has no key %q", ref.Kind, nn, caCertificateKey)
	}
	pem, _, err := capem.Normalise([]byte(data))
	if err != nil {
		return "", gwv1.ListenerReasonInvalidCACertificateRef, fmt.Sprintf("%s %s: key %q %v", ref.Kind, nn, caCertificateKey, err)
	}
	return string(pem), "", ""
}

// judgeClientValidation applies the Gateway's frontend validation to an
// HTTPS listener: an invalid ref makes its ResolvedRefs False; no valid
// one leaves it not accepted (NoValidCACertificate), so never served
// without the validation it asks for.
func judgeClientValidation(l *gwv1.Listener, s *listenerState, f *frontendTLS) {
	v := f.forPort(l.Port)
	if v == nil {
		return
	}
	if v.reason != "" {
		s.caReason, s.caMsg = string(v.reason), fmt.Sprintf("listener %s: %s", l.Name, v.message)
	}
	if v.bundle == nil {
		s.accepted = false
		s.acceptedReason = string(gwv1.ListenerReasonNoValidCACertificate)
		s.acceptedMsg = fmt.Sprintf("listener %s: no caCertificateRef of its client certificate validation can be used; see ResolvedRefs", l.Name)
		return
	}
	s.frontend = v
}

// clientValidation is the listener's chain's client certificate
// validation; nil for none.
func (l *listenerState) clientValidation() *plan.ClientValidation {
	if l.frontend == nil {
		return nil
	}
	return &plan.ClientValidation{CASecret: l.frontend.bundle.SecretName, InsecureFallback: l.frontend.insecure}
}

// ClientCA is the CA bundle of a chain's ClientValidation.CASecret.
func (gs *Gateway) ClientCA(secret string) plan.CABundle {
	for _, l := range gs.listeners {
		if l.frontend != nil && l.frontend.bundle.SecretName == secret {
			return *l.frontend.bundle
		}
	}
	return plan.CABundle{SecretName: secret}
}

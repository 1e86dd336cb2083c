package gatewaytls

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

// Validation is one client certificate validation of a Gateway's
// spec.tls.frontend (the default's, or a port's) as resolved: the CA
// bundle of its valid refs, and why the others cannot be used.
type Validation struct {
	Bundle   *plan.CABundle // nil when no ref is valid
	Insecure bool           // mode AllowInsecureFallback
	// Reason and Message are the first invalid ref's (ResolvedRefs False
	// on the listeners it applies to); "" when every ref resolved.
	Reason  gwv1.ListenerConditionReason
	Message string
}

// Frontend is a Gateway's spec.tls.frontend, resolved once for all its
// HTTPS listeners.
type Frontend struct {
	byPort map[gwv1.PortNumber]*Validation // perPort entries; nil: no validation on the port
	def    *Validation                     // nil: none by default
}

// JudgeFrontend resolves every validation spec.tls.frontend sets; nil
// when it sets none.
func JudgeFrontend(gw *gwv1.Gateway, ix *input.Index, grants referencegrant.Grants) *Frontend {
	if gw.Spec.TLS == nil || gw.Spec.TLS.Frontend == nil {
		return nil
	}
	f := gw.Spec.TLS.Frontend
	out := &Frontend{def: resolveFrontendValidation(gw, "spec.tls.frontend.default.validation", "default", f.Default.Validation, ix, grants)}
	for i, p := range f.PerPort {
		if out.byPort == nil {
			out.byPort = map[gwv1.PortNumber]*Validation{}
		}
		field := fmt.Sprintf("spec.tls.frontend.perPort[%d].tls.validation", i)
		out.byPort[p.Port] = resolveFrontendValidation(gw, field, strconv.Itoa(int(p.Port)), p.TLS.Validation, ix, grants)
	}
	return out
}

// ForPort is the validation of the HTTPS listeners of port: its perPort
// entry's, which overrides the default even when it sets none.
func (f *Frontend) ForPort(port gwv1.PortNumber) *Validation {
	if f == nil {
		return nil
	}
	if v, ok := f.byPort[port]; ok {
		return v
	}
	return f.def
}

// InsecureFields are the fields whose mode is AllowInsecureFallback, for
// the Gateway's InsecureFrontendValidationMode condition.
func (f *Frontend) InsecureFields(gw *gwv1.Gateway) []string {
	if f == nil {
		return nil
	}
	var out []string
	if f.def != nil && f.def.Insecure {
		out = append(out, "spec.tls.frontend.default.validation.mode")
	}
	for i, p := range gw.Spec.TLS.Frontend.PerPort {
		if v := f.byPort[p.Port]; v != nil && v.Insecure {
			out = append(out, fmt.Sprintf("spec.tls.frontend.perPort[%d].tls.validation.mode", i))
		}
	}
	return out
}

// resolveFrontendValidation resolves one validation's caCertificateRefs:
// core ConfigMaps (and Secrets) holding a PEM bundle under ca.crt,
// permitted by a ReferenceGrant across namespaces. The valid refs'
// certificates make one bundle, served as the SDS secret of scope.
func resolveFrontendValidation(gw *gwv1.Gateway, field, scope string, v *gwv1.FrontendTLSValidation, ix *input.Index, grants referencegrant.Grants) *Validation {
	if v == nil {
		return nil
	}
	out := &Validation{Insecure: v.Mode == gwv1.AllowInsecureFallback}
	var pems strings.Builder
	seen := map[string]bool{}
	for i, ref := range v.CACertificateRefs {
		pem, reason, problem := resolveFrontendCARef(gw, ref, ix, grants)
		if problem != "" {
			if out.Reason == "" {
				out.Reason, out.Message = reason, fmt.Sprintf("%s.caCertificateRefs[%d]: %s", field, i, problem)
			}
			continue
		}
		if !seen[pem] {
			seen[pem] = true
			pems.WriteString(pem)
		}
	}
	if pems.Len() > 0 {
		out.Bundle = &plan.CABundle{SecretName: plan.FrontendCASecretName(gw.Namespace, gw.Name, scope), PEM: pems.String()}
	}
	return out
}

// resolveFrontendCARef is one ref's normalised PEM, or the listener
// reason and the message saying why it cannot be used.
func resolveFrontendCARef(gw *gwv1.Gateway, ref gwv1.ObjectReference, ix *input.Index, grants referencegrant.Grants) (string, gwv1.ListenerConditionReason, string) {
	if ref.Group != "" || (ref.Kind != "ConfigMap" && ref.Kind != "Secret") {
		return "", gwv1.ListenerReasonInvalidCACertificateKind, fmt.Sprintf("group %q kind %q: only core ConfigMaps and Secrets hold CA certificates", ref.Group, ref.Kind)
	}
	nn := input.NameOf(gw.Namespace, string(ref.Name))
	if ref.Namespace != nil {
		nn.Namespace = string(*ref.Namespace)
	}
	if !grants.Permits(referencegrant.Reference{FromGroup: gwv1.GroupName, FromKind: "Gateway", FromNamespace: input.NameOf(gw.Namespace, "").Namespace,
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

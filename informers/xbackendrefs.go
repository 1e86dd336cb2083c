package informers

import (
	gwxv1a1 "sigs.k8s.io/gateway-api/apisx/v1alpha1"

	"github.com/tlsplane/tlsplane/translator"
	"github.com/tlsplane/tlsplane/translator/input"
	"github.com/tlsplane/tlsplane/translator/tlsopts"
)

// xBackendRefs are the ConfigMaps and Secrets an XBackend's TLS reads:
// spec.tls.validation.caCertificateRefs (ConfigMaps and Secrets of its
// namespace), spec.tls.clientCertificateRef (a Secret), and the objects
// its tlsplane.io/ annotations name (the options BackendTLSPolicy takes
// in spec.options). Read whatever tls.mode says: a mode edited later then
// finds its objects already read. A reference to another namespace, which
// the translator refuses, is read too, so the refusal can name what it
// found.
func xBackendRefs(x *gwxv1a1.XBackend) []ref {
	var out []ref
	if t := x.Spec.TLS; t != nil {
		for _, c := range t.Validation.CACertificateRefs {
			if c.Group == "" && (c.Kind == "ConfigMap" || c.Kind == "Secret") {
				out = append(out, ref{translator.Kind(c.Kind), input.NameOf(x.Namespace, string(c.Name))})
			}
		}
		if c := t.ClientCertificateRef; c != nil && (c.Group == nil || *c.Group == "") && (c.Kind == nil || *c.Kind == "Secret") {
			out = append(out, ref{translator.KindSecret, secretOf(x.Namespace, c.Name, c.Namespace)})
		}
	}
	// As a policy's options: read without parsing the value beyond
	// what names an object.
	a := x.Annotations
	if name := a[string(tlsopts.ClientCertificateKey)]; name != "" {
		out = append(out, ref{translator.KindSecret, input.NameOf(x.Namespace, name)})
	}
	if value := a[string(tlsopts.CRLKey)]; value != "" {
		if crl, err := tlsopts.ParseObjectRef(value); err == nil {
			out = append(out, ref{translator.Kind(crl.Kind), input.NameOf(x.Namespace, crl.Name)})
		}
	}
	return out
}

package backendtls

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/tlsplane/tlsplane/translator/input"
	"github.com/tlsplane/tlsplane/translator/tlsopts"
)

// Ref names a ConfigMap or Secret a policy's verdict reads besides the
// policy: a CA bundle, or the client certificate.
type Ref struct {
	Kind input.Kind
	Name types.NamespacedName
}

// AppendRefs appends to refs the objects p's verdict reads, in a fixed
// order: its caCertificateRefs of a core kind, then its client certificate
// Secret, then its revocation lists. The engine re-judges p when one of them changes; it passes a
// buffer of its own, so a warm translation allocates nothing here.
func AppendRefs(refs []Ref, p *gwv1.BackendTLSPolicy) []Ref {
	namespace := input.NameOf(p.Namespace, p.Name).Namespace
	for _, ref := range p.Spec.Validation.CACertificateRefs {
		if ref.Group == "" && (ref.Kind == "ConfigMap" || ref.Kind == "Secret") {
			refs = append(refs, Ref{Kind: input.Kind(ref.Kind), Name: input.NameOf(namespace, string(ref.Name))})
		}
	}
	// Read without parsing the options: a name that is not valid names no
	// object, and costs one lookup.
	if name := p.Spec.Options[tlsopts.ClientCertificateKey]; name != "" {
		refs = append(refs, Ref{Kind: input.KindSecret, Name: input.NameOf(namespace, string(name))})
	}
	// Checked for presence first: parsing an absent value would build an
	// error for every policy of every translation.
	if value := p.Spec.Options[tlsopts.CRLKey]; value != "" {
		if crl, err := tlsopts.ParseObjectRef(string(value)); err == nil {
			refs = append(refs, Ref{Kind: input.Kind(crl.Kind), Name: input.NameOf(namespace, crl.Name)})
		}
	}
	return refs
}

// Object is the object r names, or nil when missing.
func (r Ref) Object(ix *input.Index) metav1.Object {
	if r.Kind == input.KindConfigMap {
		if cm, ok := ix.ConfigMaps[r.Name]; ok {
			return cm
		}
	} else if s, ok := ix.Secrets[r.Name]; ok {
		return s
	}
	return nil
}

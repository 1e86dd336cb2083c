package informers

import (
	"k8s.io/apimachinery/pkg/types"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/tlsplane/tlsplane/translator/backendtls"
	"github.com/tlsplane/tlsplane/translator/input"
)

// refs is the set of ConfigMaps and Secrets that BackendTLSPolicies read
// (CA certificate refs, client certificates) and Gateways name (their
// listeners' certificate refs, their backend client certificate): only
// changes to these can change a translation. (Every Service is
// translated, into a plain cluster when no policy targets it, so Services
// and EndpointSlices are always relevant.)
type refs struct {
	configMaps, secrets map[types.NamespacedName]bool
}

func refsOf(policies []*gwv1.BackendTLSPolicy, gateways []*gwv1.Gateway) refs {
	r := refs{
		configMaps: map[types.NamespacedName]bool{},
		secrets:    map[types.NamespacedName]bool{},
	}
	var buf []backendtls.Ref
	for _, p := range policies {
		// What the translator's verdict reads: CA refs, client certificate.
		buf = backendtls.AppendRefs(buf[:0], p)
		for _, ref := range buf {
			if ref.Kind == input.KindConfigMap {
				r.configMaps[ref.Name] = true
			} else {
				r.secrets[ref.Name] = true
			}
		}
	}
	for _, g := range gateways {
		if t := g.Spec.TLS; t != nil && t.Backend != nil && t.Backend.ClientCertificateRef != nil {
			c := t.Backend.ClientCertificateRef
			if (c.Group == nil || *c.Group == "") && (c.Kind == nil || *c.Kind == "Secret") {
				r.secrets[secretOf(g.Namespace, c.Name, c.Namespace)] = true
			}
		}
		for _, l := range g.Spec.Listeners {
			if l.TLS == nil {
				continue
			}
			for _, c := range l.TLS.CertificateRefs {
				if (c.Group != nil && *c.Group != "") || (c.Kind != nil && *c.Kind != "Secret") {
					continue
				}
				// A reference to another namespace is read even before a
				// ReferenceGrant permits it: the grant may come next.
				r.secrets[secretOf(g.Namespace, c.Name, c.Namespace)] = true
			}
		}
	}
	return r
}

// secretOf is the Secret a Gateway's reference names.
func secretOf(gatewayNamespace string, name gwv1.ObjectName, namespace *gwv1.Namespace) types.NamespacedName {
	nn := types.NamespacedName{Namespace: gatewayNamespace, Name: string(name)}
	if namespace != nil {
		nn.Namespace = string(*namespace)
	}
	return nn
}

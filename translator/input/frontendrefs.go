package input

import (
	"k8s.io/apimachinery/pkg/types"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// ObjectKey is one ConfigMap or Secret an object refers to.
type ObjectKey struct {
	Kind Kind
	Name types.NamespacedName
}

// FrontendCARefs are the ConfigMaps and Secrets a Gateway's
// spec.tls.frontend names as client CA certificates (the default's, then
// each port's). A reference to another namespace is named even before a
// ReferenceGrant permits it: the grant may come next.
func FrontendCARefs(gw *gwv1.Gateway) []ObjectKey {
	if gw.Spec.TLS == nil || gw.Spec.TLS.Frontend == nil {
		return nil
	}
	f := gw.Spec.TLS.Frontend
	var out []ObjectKey
	add := func(c gwv1.TLSConfig) {
		if c.Validation == nil {
			return
		}
		for _, ref := range c.Validation.CACertificateRefs {
			if ref.Group != "" || (ref.Kind != "ConfigMap" && ref.Kind != "Secret") {
				continue
			}
			nn := NameOf(gw.Namespace, string(ref.Name))
			if ref.Namespace != nil {
				nn.Namespace = string(*ref.Namespace)
			}
			out = append(out, ObjectKey{Kind: Kind(ref.Kind), Name: nn})
		}
	}
	add(f.Default)
	for _, p := range f.PerPort {
		add(p.TLS)
	}
	return out
}

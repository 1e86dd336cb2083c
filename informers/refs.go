package informers

import (
	"k8s.io/apimachinery/pkg/types"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// refs is the set of ConfigMaps and Secrets some BackendTLSPolicy names in
// its CA certificate refs: only changes to these can change a translation.
// (Every Service is translated, into a plain cluster when no policy targets
// it, so Services and EndpointSlices are always relevant.)
type refs struct {
	configMaps, secrets map[types.NamespacedName]bool
}

func refsOf(policies []*gwv1.BackendTLSPolicy) refs {
	r := refs{
		configMaps: map[types.NamespacedName]bool{},
		secrets:    map[types.NamespacedName]bool{},
	}
	for _, p := range policies {
		for _, c := range p.Spec.Validation.CACertificateRefs {
			nn := types.NamespacedName{Namespace: p.Namespace, Name: string(c.Name)}
			if c.Group != "" {
				continue
			}
			switch c.Kind {
			case "ConfigMap":
				r.configMaps[nn] = true
			case "Secret":
				r.secrets[nn] = true
			}
		}
	}
	return r
}

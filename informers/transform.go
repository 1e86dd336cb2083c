package informers

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// caCertificateKey is the only ConfigMap key, and a BackendTLSPolicy's only
// Secret key, the translator reads (translator/cabundle.go).
const caCertificateKey = "ca.crt"

// lastApplied can hold a whole copy of the object, Secret data included.
const lastApplied = "kubectl.kubernetes.io/last-applied-configuration"

// slimmer is the informers' transform: it runs before an object enters the
// cache and drops what translation never reads. Cluster-wide Secrets and
// ConfigMaps are the bulk of the memory.
type slimmer struct {
	// listenerKeys keeps tls.crt and tls.key of Secrets, which a Gateway's
	// HTTPS listener serves. Without the Gateway kind being watched it is
	// false, and no private key is ever held by this process.
	listenerKeys bool
}

func (s slimmer) slim(obj any) (any, error) {
	if m, ok := obj.(metav1.Object); ok {
		m.SetManagedFields(nil)
		if a := m.GetAnnotations(); a[lastApplied] != "" {
			copied := make(map[string]string, len(a))
			for k, v := range a {
				if k != lastApplied {
					copied[k] = v
				}
			}
			m.SetAnnotations(copied)
		}
	}
	switch o := obj.(type) {
	case *corev1.Secret:
		if s.listenerKeys {
			o.Data = only(o.Data, caCertificateKey, corev1.TLSCertKey, corev1.TLSPrivateKeyKey)
		} else {
			o.Data = only(o.Data, caCertificateKey)
		}
		o.StringData = nil
	case *corev1.ConfigMap:
		o.BinaryData = only(o.BinaryData, caCertificateKey)
		if v, ok := o.Data[caCertificateKey]; ok {
			o.Data = map[string]string{caCertificateKey: v}
		} else {
			o.Data = nil
		}
	case *corev1.Namespace:
		// allowedRoutes selectors read a namespace's name and labels only.
		o.Spec, o.Status = corev1.NamespaceSpec{}, corev1.NamespaceStatus{}
	}
	return obj, nil
}

// only keeps keys of data, or returns nil when none is present.
func only(data map[string][]byte, keys ...string) map[string][]byte {
	var out map[string][]byte
	for _, k := range keys {
		if v, ok := data[k]; ok {
			if out == nil {
				out = make(map[string][]byte, len(keys))
			}
			out[k] = v
		}
	}
	return out
}

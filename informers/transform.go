package informers

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The ConfigMap and Secret keys the translator reads: CA certificates
// (translator/backendtls), a policy's certificate revocation lists
// (tlsplane.io/crlRef, translator/backendtls/crl.go), and key pairs
// (translator/input/keypair.go).
const (
	caCertificateKey = "ca.crt"
	crlKey           = "ca.crl"
)

// lastApplied can hold a whole copy of the object, Secret data included.
const lastApplied = "kubectl.kubernetes.io/last-applied-configuration"

// slimmer is the informers' transform: it runs before an object enters the
// cache and drops what translation never reads. Cluster-wide Secrets and
// ConfigMaps are the bulk of the memory.
type slimmer struct{}

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
		// Key pairs are kept whether or not Gateways are watched: a
		// policy's tlsplane.io/clientCertificateRef names one too.
		o.Data = only(o.Data, caCertificateKey, crlKey, corev1.TLSCertKey, corev1.TLSPrivateKeyKey)
		o.StringData = nil
	case *corev1.ConfigMap:
		o.BinaryData = only(o.BinaryData, caCertificateKey, crlKey)
		o.Data = only(o.Data, caCertificateKey, crlKey)
	case *corev1.Namespace:
		// allowedRoutes selectors read a namespace's name and labels only.
		o.Spec, o.Status = corev1.NamespaceSpec{}, corev1.NamespaceStatus{}
	}
	return obj, nil
}

// only keeps keys of data, or returns nil when none is present.
func only[V any](data map[string]V, keys ...string) map[string]V {
	var out map[string]V
	for _, k := range keys {
		if v, ok := data[k]; ok {
			if out == nil {
				out = make(map[string]V, len(keys))
			}
			out[k] = v
		}
	}
	return out
}

package informers

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// caCertificateKey is the only ConfigMap/Secret key the translator reads
// (translator/cabundle.go): everything else need not stay in memory.
const caCertificateKey = "ca.crt"

// lastApplied can hold a whole copy of the object, Secret data included.
const lastApplied = "kubectl.kubernetes.io/last-applied-configuration"

// slim is the informers' transform: it runs before an object enters the
// cache and drops what translation never reads. Cluster-wide Secrets and
// ConfigMaps are the bulk of the memory, and keeping only ca.crt also means
// no private key (tls.key) is ever held by this process.
func slim(obj any) (any, error) {
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
		o.Data = onlyCA(o.Data)
		o.StringData = nil
	case *corev1.ConfigMap:
		o.BinaryData = onlyCA(o.BinaryData)
		if v, ok := o.Data[caCertificateKey]; ok {
			o.Data = map[string]string{caCertificateKey: v}
		} else {
			o.Data = nil
		}
	}
	return obj, nil
}

func onlyCA(data map[string][]byte) map[string][]byte {
	if v, ok := data[caCertificateKey]; ok {
		return map[string][]byte{caCertificateKey: v}
	}
	return nil
}

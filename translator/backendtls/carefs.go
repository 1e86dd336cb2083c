package backendtls

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/tlsplane/tlsplane/translator/input"
)

// CARef names a CA ConfigMap or Secret: what a policy's verdict depends on
// besides the policy.
type CARef struct {
	Kind input.Kind
	Name types.NamespacedName
}

// CARefOf is the object a caCertificateRef names; false for a kind that
// is not a core ConfigMap or Secret.
func CARefOf(namespace string, ref gwv1.LocalObjectReference) (CARef, bool) {
	if ref.Group != "" || (ref.Kind != "ConfigMap" && ref.Kind != "Secret") {
		return CARef{}, false
	}
	return CARef{Kind: input.Kind(ref.Kind), Name: input.NameOf(namespace, string(ref.Name))}, true
}

// CAObject is the object a caCertificateRef names, or nil when missing.
func CAObject(namespace string, ref gwv1.LocalObjectReference, ix *input.Index) metav1.Object {
	key, ok := CARefOf(namespace, ref)
	if !ok {
		return nil
	}
	if key.Kind == input.KindConfigMap {
		if cm, ok := ix.ConfigMaps[key.Name]; ok {
			return cm
		}
	} else if s, ok := ix.Secrets[key.Name]; ok {
		return s
	}
	return nil
}

package informers

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
)

func TestRefsOf(t *testing.T) {
	p := &gwv1.BackendTLSPolicy{
		ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "pay"},
		Spec: gwv1.BackendTLSPolicySpec{Validation: gwv1.BackendTLSPolicyValidation{
			CACertificateRefs: []gwv1.LocalObjectReference{
				{Kind: "ConfigMap", Name: "ca"},
				{Kind: "Secret", Name: "ca-secret"},
				{Group: "example.com", Kind: "ConfigMap", Name: "not-core"},
			},
		}},
	}
	r := refsOf([]*gwv1.BackendTLSPolicy{p})
	nn := func(name string) types.NamespacedName { return types.NamespacedName{Namespace: "shop", Name: name} }
	if !r.configMaps[nn("ca")] || !r.secrets[nn("ca-secret")] {
		t.Errorf("refs = %+v, want ConfigMap shop/ca and Secret shop/ca-secret", r)
	}
	if r.configMaps[nn("not-core")] || r.configMaps[types.NamespacedName{Namespace: "other", Name: "ca"}] {
		t.Errorf("refs = %+v: a non-core kind or another namespace must not count", r)
	}
}

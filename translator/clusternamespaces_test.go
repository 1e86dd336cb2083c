package translator_test

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/tlsplane/tlsplane/translator"
)

// Every cluster carries its Service's namespace, which fleets restricted
// to namespaces are filtered by.
func TestClustersCarryTheirServiceNamespace(t *testing.T) {
	svc := func(ns, name string, port int32) *corev1.Service {
		return &corev1.Service{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
			Spec:       corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "p", Port: port, Protocol: corev1.ProtocolTCP}}},
		}
	}
	out := translator.Translate(translator.Inputs{Services: []*corev1.Service{svc("shop", "web", 80), svc("bank", "ledger", 443)}},
		nil, time.Unix(0, 0), translator.Options{})
	want := map[string]string{"shop/web/80": "shop", "bank/ledger/443": "bank"}
	if len(out.Clusters) != len(want) {
		t.Fatalf("%d clusters, want %d", len(out.Clusters), len(want))
	}
	for _, c := range out.Clusters {
		if got := out.ClusterNamespaces[c.GetName()]; got != want[c.GetName()] {
			t.Errorf("cluster %s: namespace %q, want %q", c.GetName(), got, want[c.GetName()])
		}
	}
}

package informers

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kubefake "k8s.io/client-go/kubernetes/fake"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
	gwfake "sigs.k8s.io/gateway-api/pkg/client/clientset/versioned/fake"

	"github.com/tlsplane/tlsplane/translator"
)

// TestChangesNameWhatChanged: after the first (whole) view, Changes lists
// each changed object once with its latest state, and a CA ConfigMap
// arrives when a policy starts referring to it and leaves when none does.
func TestChangesNameWhatChanged(t *testing.T) {
	ca := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "pay-ca"}, Data: map[string]string{"ca.crt": "PEM"}}
	kube := kubefake.NewClientset(ca)
	gw := gwfake.NewClientset()
	src, signals := runSource(t, kube, gw, map[string][]string{"gateway.networking.k8s.io/v1": {"backendtlspolicies"}})
	if c := src.Changes(); !c.Resync || len(c.Objects) != 0 {
		t.Fatalf("first Changes = %+v, want Resync alone", c)
	}
	ctx := context.Background()
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "pay"}, Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "https", Port: 443}}}}
	if _, err := kube.CoreV1().Services("shop").Create(ctx, svc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	svc.Spec.Ports[0].Port = 8443
	if _, err := kube.CoreV1().Services("shop").Update(ctx, svc, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	pol := &gwv1.BackendTLSPolicy{
		ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "pay"},
		Spec: gwv1.BackendTLSPolicySpec{Validation: gwv1.BackendTLSPolicyValidation{
			CACertificateRefs: []gwv1.LocalObjectReference{{Kind: "ConfigMap", Name: "pay-ca"}}, Hostname: "pay.example",
		}},
	}
	if _, err := gw.GatewayV1().BackendTLSPolicies("shop").Create(ctx, pol, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// Informers of different kinds deliver in no common order.
	byKind := map[translator.Kind]translator.Change{}
	for _, c := range waitChanges(t, src, signals, 3) {
		byKind[c.Kind] = c
	}
	if s, ok := byKind[translator.KindService].Object.(*corev1.Service); !ok || s.Spec.Ports[0].Port != 8443 {
		t.Errorf("Service change %v, want the Service once, at its latest port 8443", byKind[translator.KindService].Object)
	}
	if byKind[translator.KindBackendTLSPolicy].Object == nil || byKind[translator.KindConfigMap].Object == nil {
		t.Errorf("changes %v, want the policy and its newly referenced ConfigMap", byKind)
	}
	if err := gw.GatewayV1().BackendTLSPolicies("shop").Delete(ctx, "pay", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	got := waitChanges(t, src, signals, 2)
	for _, c := range got {
		if c.Object != nil {
			t.Errorf("%s %s after the policy's deletion: %v, want deleted", c.Kind, c.Key, c.Object)
		}
	}
}

// waitChanges waits for want changes to accumulate, then drains them.
func waitChanges(t *testing.T, src *Source, signals interface{ Load() int32 }, want int) []translator.Change {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		src.mu.Lock()
		n := len(src.changeLog.order)
		src.mu.Unlock()
		if n >= want {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	c := src.Changes()
	if len(c.Objects) != want || c.Resync || signals.Load() == 0 {
		t.Fatalf("changes = %+v (signals %d), want %d", c, signals.Load(), want)
	}
	return c.Objects
}

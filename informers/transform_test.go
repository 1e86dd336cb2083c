package informers

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestSlimKeepsOnlyWhatTranslationReads(t *testing.T) {
	meta := func() metav1.ObjectMeta {
		return metav1.ObjectMeta{
			Name: "ca", Namespace: "shop",
			Annotations:   map[string]string{lastApplied: "{huge}", "keep": "me"},
			ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "kubectl"}},
		}
	}
	sec := &corev1.Secret{ObjectMeta: meta(), Data: map[string][]byte{"ca.crt": []byte("CA"), "tls.key": []byte("KEY"), "password": []byte("P")}}
	if _, err := (slimmer{}).slim(sec); err != nil {
		t.Fatal(err)
	}
	if len(sec.Data) != 2 || string(sec.Data["ca.crt"]) != "CA" || string(sec.Data["tls.key"]) != "KEY" {
		t.Errorf("secret data = %v, want ca.crt and tls.key", sec.Data)
	}
	if sec.ManagedFields != nil || sec.Annotations[lastApplied] != "" || sec.Annotations["keep"] != "me" {
		t.Errorf("secret meta = %+v, want managedFields and last-applied dropped, other annotations kept", sec.ObjectMeta)
	}

	cm := &corev1.ConfigMap{ObjectMeta: meta(), Data: map[string]string{"other": "x"}, BinaryData: map[string][]byte{"ca.crt": []byte("B")}}
	if _, err := (slimmer{}).slim(cm); err != nil {
		t.Fatal(err)
	}
	if cm.Data != nil || string(cm.BinaryData["ca.crt"]) != "B" {
		t.Errorf("configmap = %v / %v, want no data and binary ca.crt", cm.Data, cm.BinaryData)
	}

	emptied := &corev1.ConfigMap{ObjectMeta: meta(), Data: map[string]string{"ca.crt": ""}}
	if _, err := (slimmer{}).slim(emptied); err != nil {
		t.Fatal(err)
	}
	if v, ok := emptied.Data["ca.crt"]; !ok || v != "" {
		t.Errorf("emptied ca.crt must stay present and empty, got %v", emptied.Data)
	}
}

// Key pairs and CRLs stay whether Gateways are watched or not: a policy's
// tlsplane.io/clientCertificateRef and tlsplane.io/crlRef read them.
func TestSlimKeepsKeyPairsAndCRLs(t *testing.T) {
	sec := &corev1.Secret{Data: map[string][]byte{"ca.crt": []byte("CA"), "ca.crl": []byte("CRL"), "tls.crt": []byte("CHAIN"), "tls.key": []byte("KEY"), "other": []byte("X")}}
	if _, err := (slimmer{}).slim(sec); err != nil {
		t.Fatal(err)
	}
	if len(sec.Data) != 4 || string(sec.Data["tls.key"]) != "KEY" || string(sec.Data["tls.crt"]) != "CHAIN" || string(sec.Data["ca.crl"]) != "CRL" {
		t.Errorf("secret data = %q, want ca.crt, ca.crl, tls.crt and tls.key", sec.Data)
	}
	cm := &corev1.ConfigMap{Data: map[string]string{"ca.crt": "CA", "ca.crl": "CRL", "other": "X"}, BinaryData: map[string][]byte{"ca.crl": []byte("B")}}
	if _, err := (slimmer{}).slim(cm); err != nil {
		t.Fatal(err)
	}
	if len(cm.Data) != 2 || cm.Data["ca.crl"] != "CRL" || string(cm.BinaryData["ca.crl"]) != "B" {
		t.Errorf("configmap = %v / %v, want ca.crt and ca.crl", cm.Data, cm.BinaryData)
	}

	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "shop", Labels: map[string]string{"team": "a"}},
		Spec: corev1.NamespaceSpec{Finalizers: []corev1.FinalizerName{"kubernetes"}}, Status: corev1.NamespaceStatus{Phase: corev1.NamespaceActive}}
	if _, err := (slimmer{}).slim(ns); err != nil {
		t.Fatal(err)
	}
	if ns.Labels["team"] != "a" || len(ns.Spec.Finalizers) != 0 || ns.Status.Phase != "" {
		t.Errorf("namespace = %+v, want labels only", ns)
	}
}

func TestSameContentIgnoresBookkeepingOnly(t *testing.T) {
	a := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "ca", ResourceVersion: "1"}, Data: map[string]string{"ca.crt": "A"}}
	b := a.DeepCopy()
	b.ResourceVersion = "2"
	if !sameContent(a, b) {
		t.Error("objects differing only in resourceVersion must be the same content")
	}
	b.Data["ca.crt"] = "B"
	if sameContent(a, b) {
		t.Error("a changed ca.crt must not be the same content")
	}
	if a.ResourceVersion != "1" {
		t.Error("sameContent mutated its input")
	}
}

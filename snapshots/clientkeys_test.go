package snapshots

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"testing"
	"time"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/tlsplane/tlsplane/translator"
	"github.com/tlsplane/tlsplane/translator/translatortest"
)

// A policy's client certificate key goes only to the fleets served the
// policy's clusters: a fleet restricted to its namespaces never receives
// another namespace's key. The translation is the real one.
func TestClientKeysGoOnlyToFleetsServedTheirClusters(t *testing.T) {
	var in translator.Inputs
	for _, ns := range []string{"shop", "bank"} {
		in.Add(&corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "api"},
			Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "https", Port: 443}}}})
		in.Add(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "ca"}, Data: map[string]string{"ca.crt": translatortest.CA}})
		in.Add(clientSecret(t, ns, "envoy-client"))
		in.Add(&gwv1.BackendTLSPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "api"},
			Spec: gwv1.BackendTLSPolicySpec{
				TargetRefs: []gwv1.LocalPolicyTargetReferenceWithSectionName{{LocalPolicyTargetReference: gwv1.LocalPolicyTargetReference{Kind: "Service", Name: "api"}}},
				Validation: gwv1.BackendTLSPolicyValidation{Hostname: "api.example", CACertificateRefs: []gwv1.LocalObjectReference{{Kind: "ConfigMap", Name: "ca"}}},
				Options:    map[gwv1.AnnotationKey]gwv1.AnnotationValue{"tlsplane.io/clientCertificateRef": "envoy-client"},
			}})
	}
	out := translator.Translate(in, nil, time.Now(), translator.Options{})
	p := New(Options{FleetNamespaces: map[string][]string{"shop-edge": {"shop"}, "bank-edge": {"bank"}}})
	for _, fleet := range []string{"shop-edge", "bank-edge", "mesh"} {
		p.NodeStreamOpened(&corev3.Node{Id: fleet, Cluster: fleet})
	}
	if _, err := p.Publish(out); err != nil {
		t.Fatal(err)
	}
	for fleet, want := range map[string][]string{
		"shop-edge": {"ca/shop/configmap/ca", "client/shop/envoy-client"},
		"bank-edge": {"ca/bank/configmap/ca", "client/bank/envoy-client"},
		"mesh":      {"ca/bank/configmap/ca", "ca/shop/configmap/ca", "client/bank/envoy-client", "client/shop/envoy-client"},
	} {
		got := sortedNames(served(t, p, fleet).GetResources(resource.SecretType))
		if len(got) != len(want) {
			t.Errorf("fleet %s is served secrets %v, want %v", fleet, got, want)
			continue
		}
		for i := range want {
			if got[i] != want[i] {
				t.Errorf("fleet %s is served secrets %v, want %v", fleet, got, want)
				break
			}
		}
	}
}

// clientSecret is a kubernetes.io/tls Secret with a fresh self-signed
// client certificate.
func clientSecret(t *testing.T, namespace, name string) *corev1.Secret {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: name + "." + namespace},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name},
		Type:       corev1.SecretTypeTLS,
		Data: map[string][]byte{
			corev1.TLSCertKey:       pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
			corev1.TLSPrivateKeyKey: pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}),
		},
	}
}

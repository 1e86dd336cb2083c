package snapshots

import (
	"slices"
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
		in.Add(translatortest.TLSSecret(t, ns, "envoy-client", "envoy-client."+ns))
		in.Add(&gwv1.BackendTLSPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "api"},
			Spec: gwv1.BackendTLSPolicySpec{
				TargetRefs: []gwv1.LocalPolicyTargetReferenceWithSectionName{{LocalPolicyTargetReference: gwv1.LocalPolicyTargetReference{Kind: "Service", Name: "api"}}},
				Validation: gwv1.BackendTLSPolicyValidation{Hostname: "api.example", CACertificateRefs: []gwv1.LocalObjectReference{{Kind: "ConfigMap", Name: "ca"}}},
				Options:    map[gwv1.AnnotationKey]gwv1.AnnotationValue{"tlsplane.io/clientCertificateRef": "envoy-client"},
			}})
	}
	out := translator.Translate(in, nil, time.Now(), translator.Options{})
	for _, tc := range []struct {
		scope FleetScope
		mesh  []string // what the fleet with no grant and no Gateway is served
	}{
		// By default it is served no cluster that reads a private key, so
		// neither these nor the CAs only they read.
		{ScopeReached, nil},
		{ScopeAll, []string{"CA/bank/configmap/ca", "CA/shop/configmap/ca", "Client/bank/envoy-client", "Client/shop/envoy-client"}},
	} {
		t.Run(string(tc.scope), func(t *testing.T) {
			p := New(Options{Scope: tc.scope, FleetNamespaces: map[string][]string{"shop-edge": {"shop"}, "bank-edge": {"bank"}}})
			for _, fleet := range []string{"shop-edge", "bank-edge", "mesh"} {
				p.NodeStreamOpened(&corev3.Node{Id: fleet, Cluster: fleet})
			}
			if _, err := p.Publish(out); err != nil {
				t.Fatal(err)
			}
			for fleet, want := range map[string][]string{
				"shop-edge": {"CA/shop/configmap/ca", "Client/shop/envoy-client"},
				"bank-edge": {"CA/bank/configmap/ca", "Client/bank/envoy-client"},
				"mesh":      tc.mesh,
			} {
				got := sortedNames(served(t, p, fleet).GetResources(resource.SecretType))
				if !slices.Equal(got, want) {
					t.Errorf("fleet %s is served secrets %v, want %v", fleet, got, want)
				}
			}
			wantWithheld := []string{"bank/api/443", "shop/api/443"}
			if tc.scope == ScopeAll {
				wantWithheld = nil
			}
			if got := p.WithheldClusters(); !slices.Equal(got, wantWithheld) {
				t.Errorf("withheld clusters %v, want %v", got, wantWithheld)
			}
			clusters := sortedNames(served(t, p, "mesh").GetResources(resource.ClusterType))
			if tc.scope == ScopeReached && len(clusters) != 0 {
				t.Errorf("fleet mesh is served clusters %v that read a client key", clusters)
			}
		})
	}
}

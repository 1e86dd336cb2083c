package translator_test

import (
	"bytes"
	"testing"
	"time"

	adminv3 "github.com/envoyproxy/go-control-plane/envoy/admin/v3"
	tlsv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/transport_sockets/tls/v3"
	"google.golang.org/protobuf/encoding/protojson"
	corev1 "k8s.io/api/core/v1"

	"github.com/tlsplane/tlsplane/manifests"
	"github.com/tlsplane/tlsplane/snapshots"
	"github.com/tlsplane/tlsplane/translator"
	"github.com/tlsplane/tlsplane/translator/plan"
	"github.com/tlsplane/tlsplane/translator/translatortest"
)

// The world of issue 33: in namespace client, a Gateway listener's
// certificate Secret is named client and a BackendTLSPolicy presents the
// client certificate Secret named certificate. Their SDS names must differ
// (they once were both Certificate/client/client, and the publish of every
// fleet failed); a second tenant's Gateway is served beside them.
const clientNamespaceWorld = `
apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: tlsplane, generation: 1}
spec: {controllerName: tlsplane.io/controller}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: edge, namespace: client, generation: 1}
spec:
  gatewayClassName: tlsplane
  listeners:
  - {name: https, protocol: HTTPS, port: 443, tls: {certificateRefs: [{name: client}]}}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: pay, namespace: client, generation: 1}
spec:
  parentRefs: [{name: edge}]
  rules: [{backendRefs: [{name: pay, port: 443}]}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: BackendTLSPolicy
metadata: {name: pay, namespace: client, generation: 1}
spec:
  targetRefs: [{group: "", kind: Service, name: pay}]
  validation:
    hostname: pay.client.example
    caCertificateRefs: [{group: "", kind: ConfigMap, name: pay-ca}]
  options:
    tlsplane.io/clientCertificateRef: certificate
---
apiVersion: v1
kind: Service
metadata: {name: pay, namespace: client}
spec:
  ports: [{name: https, port: 443, protocol: TCP}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: edge, namespace: other, generation: 1}
spec:
  gatewayClassName: tlsplane
  listeners:
  - {name: http, protocol: HTTP, port: 80}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: web, namespace: other, generation: 1}
spec:
  parentRefs: [{name: edge}]
  rules: [{backendRefs: [{name: web, port: 80}]}]
---
apiVersion: v1
kind: Service
metadata: {name: web, namespace: other}
spec:
  ports: [{name: http, port: 80, protocol: TCP}]
`

func TestListenerAndClientCertificatesOfOneNamespaceNeverShareAName(t *testing.T) {
	in, err := manifests.Parse("client-namespace.yaml", []byte(clientNamespaceWorld), nil)
	if err != nil {
		t.Fatal(err)
	}
	listenerCert := translatortest.TLSSecret(t, "client", "client", "edge.client.example")
	clientCert := translatortest.TLSSecret(t, "client", "certificate", "envoy.client.example")
	in.Secrets = append(in.Secrets, listenerCert, clientCert)
	in.ConfigMaps = append(in.ConfigMaps, &corev1.ConfigMap{Data: map[string]string{"ca.crt": translatortest.CA}})
	in.ConfigMaps[len(in.ConfigMaps)-1].Namespace, in.ConfigMaps[len(in.ConfigMaps)-1].Name = "client", "pay-ca"

	out := translator.Translate(in, nil, time.Now(), translator.Options{})
	p := snapshots.New(snapshots.Options{})
	if _, err := p.Publish(out); err != nil {
		t.Fatalf("Publish: %v", err)
	}
	// Nothing is refused: both fleets are served, and the publisher is ready.
	if r := p.Refusals(); len(r) != 0 || !p.Ready() {
		t.Fatalf("refusals %v, ready %v; want none, ready", r, p.Ready())
	}

	listenerName := plan.CertificateSecretName("client", "client")
	clientName := plan.ClientCertificateSecretName("client", "certificate")
	if listenerName == clientName {
		t.Fatalf("the listener certificate client/client and the client certificate client/certificate are both SDS secret %q", listenerName)
	}
	served := fleetSecrets(t, p, "client/edge")
	for name, want := range map[string]*corev1.Secret{listenerName: listenerCert, clientName: clientCert} {
		got, ok := served[name]
		if !ok {
			t.Errorf("fleet client/edge is not served secret %q; it is served %v", name, keysOf(served))
			continue
		}
		chain := got.GetTlsCertificate().GetCertificateChain().GetInlineBytes()
		if !bytes.Equal(chain, want.Data[corev1.TLSCertKey]) {
			t.Errorf("fleet client/edge: secret %q holds another certificate than Secret %s/%s", name, want.Namespace, want.Name)
		}
	}
	// The second tenant's fleet is published too, with its own listener.
	dump, err := p.DebugSnapshot("other/edge")
	if err != nil {
		t.Fatalf("fleet other/edge: %v", err)
	}
	if !bytes.Contains(dump, []byte(`"other/edge/80"`)) {
		t.Errorf("fleet other/edge is not served its listener other/edge/80:\n%s", dump)
	}
}

// fleetSecrets are the SDS secrets the publisher serves fleet, by name.
func fleetSecrets(t *testing.T, p *snapshots.Publisher, fleet string) map[string]*tlsv3.Secret {
	t.Helper()
	raw, err := p.DebugSnapshot(fleet)
	if err != nil {
		t.Fatalf("fleet %s: %v", fleet, err)
	}
	var dump adminv3.ConfigDump
	if err := protojson.Unmarshal(raw, &dump); err != nil {
		t.Fatalf("fleet %s: %v", fleet, err)
	}
	out := map[string]*tlsv3.Secret{}
	for _, c := range dump.GetConfigs() {
		var secrets adminv3.SecretsConfigDump
		if !c.MessageIs(&secrets) {
			continue
		}
		if err := c.UnmarshalTo(&secrets); err != nil {
			t.Fatal(err)
		}
		for _, s := range secrets.GetDynamicActiveSecrets() {
			var secret tlsv3.Secret
			if err := s.GetSecret().UnmarshalTo(&secret); err != nil {
				t.Fatal(err)
			}
			out[secret.GetName()] = &secret
		}
	}
	return out
}

func keysOf[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

// A Gateway listener may be named unmatched: on a port that also has a
// TLS listener, its HTTPS filter chain and the chain refusing unmatched
// SNI still have two names (a filter chain's name is its identity in
// Envoy's config dump and for a filter chain matcher; Envoy's validation
// alone accepts two of one name).
func TestFilterChainsOfAListenerNamedLikeTheUnmatchedChain(t *testing.T) {
	in, err := manifests.Parse("unmatched.yaml", []byte(`apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: tlsplane, generation: 1}
spec: {controllerName: tlsplane.io/controller}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: edge, namespace: shop, generation: 1}
spec:
  gatewayClassName: tlsplane
  listeners:
  - {name: unmatched, protocol: HTTPS, port: 443, hostname: web.shop.example, tls: {certificateRefs: [{name: web-cert}]}}
  - {name: passthrough, protocol: TLS, port: 443, hostname: "*.tls.shop.example", tls: {mode: Passthrough}}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: web, namespace: shop, generation: 1}
spec:
  parentRefs: [{name: edge, sectionName: unmatched}]
  rules: [{backendRefs: [{name: web, port: 80}]}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: TLSRoute
metadata: {name: pass, namespace: shop, generation: 1}
spec:
  parentRefs: [{name: edge, sectionName: passthrough}]
  hostnames: [abc.tls.shop.example]
  rules: [{backendRefs: [{name: web, port: 8443}]}]
---
apiVersion: v1
kind: Service
metadata: {name: web, namespace: shop}
spec:
  ports: [{name: http, port: 80, protocol: TCP}, {name: https, port: 8443, protocol: TCP}]`), nil)
	if err != nil {
		t.Fatal(err)
	}
	in.Secrets = append(in.Secrets, translatortest.TLSSecret(t, "shop", "web-cert", "web.shop.example"))
	out := translator.Translate(in, nil, time.Now(), translator.Options{})
	for _, l := range out.Fleets["shop/edge"].Listeners {
		seen := map[string]bool{}
		for _, c := range l.GetFilterChains() {
			if seen[c.GetName()] {
				t.Errorf("listener %s: two filter chains are named %q", l.GetName(), c.GetName())
			}
			seen[c.GetName()] = true
		}
		if len(seen) != 3 {
			t.Errorf("listener %s: filter chains %v, want the HTTPS listener's, the TLS route's and the unmatched one", l.GetName(), keysOf(seen))
		}
	}
	if !testing.Short() {
		envoyValidatesFleet(t, in, "shop/edge")
	}
}

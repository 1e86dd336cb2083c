package snapshots

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"strings"
	"testing"
	"time"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	"google.golang.org/protobuf/proto"
	corev1 "k8s.io/api/core/v1"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/tlsplane/tlsplane/manifests"
	"github.com/tlsplane/tlsplane/translator"
	"github.com/tlsplane/tlsplane/translator/plan"
	"github.com/tlsplane/tlsplane/translator/translatortest"
)

// A fault stays with its objects, as a property: from a valid world of two
// tenants (tenant-a, tenant-b), each with a Gateway (an HTTPS listener and
// a backend client certificate), HTTPRoutes, Services with EndpointSlices
// and BackendTLSPolicies (CA ConfigMaps, tlsplane.io/clientCertificateRef),
// any single mutation of tenant B's objects leaves what the Publisher
// serves tenant A's fleet byte for byte as it was, and never fails the
// publish.

const (
	tenantA = "tenant-a"
	tenantB = "tenant-b"
	// fleetA is plan.GatewayFleet(tenantA, "edge").
	fleetA = tenantA + "/edge"
)

var tenantNow = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// tenantKeys are the key pairs of a world: both tenants' objects, and
// every mutation of B, read the very same bytes.
func tenantKeys(tb testing.TB) map[string]*corev1.Secret {
	keys := map[string]*corev1.Secret{}
	for _, name := range []string{"edge-cert", "envoy-client", "gw-client"} {
		keys[name] = translatortest.TLSSecret(tb, "x", name, name+".example")
	}
	return keys
}

// tenantManifest is one tenant's objects in namespace ns.
func tenantManifest(ns string, keys map[string]*corev1.Secret) string {
	secret := func(name string) string {
		s := keys[name]
		return fmt.Sprintf(`apiVersion: v1
kind: Secret
metadata: {name: %s, namespace: %s}
type: kubernetes.io/tls
data:
  tls.crt: %s
  tls.key: %s
---
`, name, ns, base64.StdEncoding.EncodeToString(s.Data["tls.crt"]), base64.StdEncoding.EncodeToString(s.Data["tls.key"]))
	}
	ca := "    " + strings.ReplaceAll(strings.TrimSpace(translatortest.CA), "\n", "\n    ")
	return fmt.Sprintf(`apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: edge, namespace: %[1]s, generation: 1}
spec:
  gatewayClassName: tlsplane
  addresses: [{value: 192.0.2.40}]
  listeners:
  - {name: https, protocol: HTTPS, port: 443, hostname: %[1]s.example, tls: {certificateRefs: [{name: edge-cert}]}}
  - {name: http, protocol: HTTP, port: 80}
  tls:
    backend:
      clientCertificateRef: {name: gw-client}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: app, namespace: %[1]s, generation: 1, creationTimestamp: "2026-01-01T00:00:00Z"}
spec:
  parentRefs: [{name: edge}]
  hostnames: [%[1]s.example]
  rules:
  - matches: [{path: {type: PathPrefix, value: /own}}]
    backendRefs: [{name: own, port: 443}]
  - backendRefs: [{name: app, port: 443}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: plain, namespace: %[1]s, generation: 1, creationTimestamp: "2026-01-01T00:00:00Z"}
spec:
  parentRefs: [{name: edge, sectionName: http}]
  rules:
  - backendRefs: [{name: plain, port: 80}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: BackendTLSPolicy
metadata: {name: app, namespace: %[1]s, generation: 1, creationTimestamp: "2026-01-01T00:00:00Z"}
spec:
  targetRefs: [{group: "", kind: Service, name: app}]
  validation:
    hostname: app.%[1]s.example
    caCertificateRefs: [{group: "", kind: ConfigMap, name: app-ca}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: BackendTLSPolicy
metadata: {name: own, namespace: %[1]s, generation: 1, creationTimestamp: "2026-01-01T00:00:00Z"}
spec:
  targetRefs: [{group: "", kind: Service, name: own}]
  validation:
    hostname: own.%[1]s.example
    caCertificateRefs: [{group: "", kind: ConfigMap, name: app-ca}]
  options:
    tlsplane.io/clientCertificateRef: envoy-client
---
apiVersion: v1
kind: ConfigMap
metadata: {name: app-ca, namespace: %[1]s}
data:
  ca.crt: |
%[2]s
---
apiVersion: v1
kind: Service
metadata: {name: app, namespace: %[1]s}
spec: {ports: [{name: https, port: 443}]}
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: {name: app-1, namespace: %[1]s, labels: {kubernetes.io/service-name: app}}
addressType: IPv4
endpoints: [{addresses: [10.0.1.1], conditions: {ready: true}}]
ports: [{name: https, port: 8443, protocol: TCP}]
---
apiVersion: v1
kind: Service
metadata: {name: own, namespace: %[1]s}
spec: {ports: [{name: https, port: 443}]}
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: {name: own-1, namespace: %[1]s, labels: {kubernetes.io/service-name: own}}
addressType: IPv4
endpoints: [{addresses: [10.0.1.2], conditions: {ready: true}}]
ports: [{name: https, port: 8443, protocol: TCP}]
---
apiVersion: v1
kind: Service
metadata: {name: plain, namespace: %[1]s}
spec: {ports: [{name: http, port: 80}]}
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: {name: plain-1, namespace: %[1]s, labels: {kubernetes.io/service-name: plain}}
addressType: IPv4
endpoints: [{addresses: [10.0.1.3], conditions: {ready: true}}]
ports: [{name: http, port: 8080, protocol: TCP}]
---
%[3]s%[4]s%[5]s`, ns, ca, secret("edge-cert"), secret("envoy-client"), secret("gw-client"))
}

const tenantClass = `apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: tlsplane, generation: 1}
spec: {controllerName: tlsplane.io/controller}
`

// tenantWorld parses the class and tenant A's objects, and tenant B's
// (which mutations change), from their manifests.
func tenantWorld(tb testing.TB) (shared, b translator.Inputs) {
	tb.Helper()
	keys := tenantKeys(tb)
	shared, err := manifests.Parse("shared.yaml", []byte(tenantClass+"---\n"+tenantManifest(tenantA, keys)), nil)
	if err != nil {
		tb.Fatal(err)
	}
	if b, err = manifests.Parse("tenant-b.yaml", []byte(tenantManifest(tenantB, keys)), nil); err != nil {
		tb.Fatal(err)
	}
	return shared, b
}

// fleetABytes publishes the world and returns what tenant A's fleet is
// served, each resource's deterministic bytes in type then name order.
func fleetABytes(t *testing.T, in translator.Inputs) []byte {
	t.Helper()
	// The default options: A's Gateway fleet is served what its routes
	// reach (--fleet-scope=reached), so nothing of B's is A's to see.
	p := New(Options{})
	p.NodeStreamOpened(&corev3.Node{Id: "a-1", Cluster: fleetA})
	out := translator.Translate(in, nil, tenantNow, translator.Options{})
	if _, err := p.Publish(out); err != nil {
		t.Fatalf("Publish failed: %v", err)
	}
	for _, r := range p.Refusals() {
		if r.Fleet == fleetA || r.Namespace == tenantA {
			t.Fatalf("tenant A refused: %s", r)
		}
	}
	snap := served(t, p, fleetA)
	if snap == nil {
		t.Fatal("tenant A's fleet is served nothing")
	}
	var buf bytes.Buffer
	for _, typeURL := range servedTypes {
		for _, name := range sortedNames(snap.GetResources(typeURL)) {
			b, err := proto.MarshalOptions{Deterministic: true}.Marshal(snap.GetResources(typeURL)[name])
			if err != nil {
				t.Fatal(err)
			}
			fmt.Fprintf(&buf, "%s %s %d\n", typeURL, name, len(b))
			buf.Write(b)
		}
	}
	return buf.Bytes()
}

// mutateB applies one mutation, chosen by op, to a copy of tenant B's
// objects: arg is a name, a namespace, a reference or bytes.
func mutateB(b translator.Inputs, op, index uint8, arg string) translator.Inputs {
	m := b
	switch op % 14 {
	case 0: // delete an object
		m.Secrets = without(m.Secrets, index)
		m.Policies = without(m.Policies, index/4)
	case 1: // rename a Secret (a name equal to A's, to a prefix, anything)
		m.Secrets = edited(m.Secrets, index, func(s *corev1.Secret) { s.Name = arg })
	case 2: // duplicate names: a second Gateway, policy and Secret of the same name
		m.Gateways = append(m.Gateways, m.Gateways[0].DeepCopy())
		m.Policies = append(m.Policies, m.Policies[int(index)%len(m.Policies)].DeepCopy())
		m.Secrets = append(m.Secrets, m.Secrets[int(index)%len(m.Secrets)].DeepCopy())
	case 3: // the listener certificate reference
		m.Gateways = edited(m.Gateways, 0, func(g *gwv1.Gateway) {
			g.Spec.Listeners[0].TLS.CertificateRefs[0].Name = gwv1.ObjectName(arg)
			if index%2 == 1 {
				ns := gwv1.Namespace(tenantA)
				g.Spec.Listeners[0].TLS.CertificateRefs[0].Namespace = &ns
			}
		})
	case 4: // the policy's client certificate option, or any option
		m.Policies = edited(m.Policies, index, func(p *gwv1.BackendTLSPolicy) {
			key := gwv1.AnnotationKey("tlsplane.io/clientCertificateRef")
			if index%3 == 2 {
				key = gwv1.AnnotationKey(arg)
			}
			if p.Spec.Options == nil {
				p.Spec.Options = map[gwv1.AnnotationKey]gwv1.AnnotationValue{}
			}
			p.Spec.Options[key] = gwv1.AnnotationValue(arg)
		})
	case 5: // malformed Secret data (PEM, keys)
		m.Secrets = edited(m.Secrets, index, func(s *corev1.Secret) {
			key := []string{"tls.crt", "tls.key", "ca.crt", arg}[index%4]
			s.Data[key] = []byte(arg)
		})
	case 6: // wrong key names
		m.Secrets = edited(m.Secrets, index, func(s *corev1.Secret) {
			s.Data = map[string][]byte{arg: s.Data["tls.crt"]}
		})
	case 7: // the CA ConfigMap
		m.ConfigMaps = edited(m.ConfigMaps, index, func(c *corev1.ConfigMap) { c.Data = map[string]string{"ca.crt": arg} })
	case 8: // the Gateway's backend client certificate
		m.Gateways = edited(m.Gateways, 0, func(g *gwv1.Gateway) {
			g.Spec.TLS.Backend.ClientCertificateRef.Name = gwv1.ObjectName(arg)
			if index%2 == 1 {
				ns := gwv1.Namespace(tenantA)
				g.Spec.TLS.Backend.ClientCertificateRef.Namespace = &ns
			}
		})
	case 9: // a route that reaches into A: its Gateway, its Services
		m.HTTPRoutes = edited(m.HTTPRoutes, index, func(r *gwv1.HTTPRoute) {
			ns := gwv1.Namespace(tenantA)
			if index%2 == 0 {
				r.Spec.ParentRefs[0].Namespace = &ns
			} else {
				r.Spec.Rules[0].BackendRefs[0].Namespace = &ns
				r.Spec.Rules[0].BackendRefs[0].Name = gwv1.ObjectName(arg)
			}
		})
	case 10: // a policy that targets another Service, by name
		m.Policies = edited(m.Policies, index, func(p *gwv1.BackendTLSPolicy) {
			p.Spec.TargetRefs[0].Name = gwv1.ObjectName(arg)
		})
	case 11: // rename the Gateway or a Service
		if index%2 == 0 {
			m.Gateways = edited(m.Gateways, 0, func(g *gwv1.Gateway) { g.Name = arg })
		} else {
			m.Services = edited(m.Services, index, func(s *corev1.Service) { s.Name = arg })
		}
	case 12: // every object of B in another namespace (never A's: B cannot write there)
		if arg == tenantA || arg == "" {
			return b
		}
		m = inNamespace(b, arg)
	case 13: // the case: in namespace client, listener Secret "client" and
		// clientCertificateRef "certificate" (once one SDS name)
		m = inNamespace(b, "client")
		m.Secrets = edited(m.Secrets, 0, func(s *corev1.Secret) { s.Name = "client" }) // edge-cert
		m.Secrets = edited(m.Secrets, 1, func(s *corev1.Secret) { s.Name = "certificate" })
		m.Gateways = edited(m.Gateways, 0, func(g *gwv1.Gateway) { g.Spec.Listeners[0].TLS.CertificateRefs[0].Name = "client" })
		m.Policies = edited(m.Policies, 1, func(p *gwv1.BackendTLSPolicy) {
			p.Spec.Options["tlsplane.io/clientCertificateRef"] = "certificate"
		})
	}
	return m
}

// without is items but the one at i (mod len).
func without[T any](items []T, i uint8) []T {
	if len(items) == 0 {
		return items
	}
	k := int(i) % len(items)
	out := append([]T{}, items[:k]...)
	return append(out, items[k+1:]...)
}

// edited is items with a deep copy of the one at i (mod len) edited.
func edited[T interface{ DeepCopy() T }](items []T, i uint8, edit func(T)) []T {
	if len(items) == 0 {
		return items
	}
	out := append([]T{}, items...)
	k := int(i) % len(out)
	out[k] = out[k].DeepCopy()
	edit(out[k])
	return out
}

// inNamespace is b with every object moved to namespace ns.
func inNamespace(b translator.Inputs, ns string) translator.Inputs {
	move := func(o interface{ SetNamespace(string) }) { o.SetNamespace(ns) }
	var m translator.Inputs
	for _, o := range b.Gateways {
		c := o.DeepCopy()
		move(c)
		m.Gateways = append(m.Gateways, c)
	}
	for _, o := range b.HTTPRoutes {
		c := o.DeepCopy()
		move(c)
		m.HTTPRoutes = append(m.HTTPRoutes, c)
	}
	for _, o := range b.Policies {
		c := o.DeepCopy()
		move(c)
		m.Policies = append(m.Policies, c)
	}
	for _, o := range b.ConfigMaps {
		c := o.DeepCopy()
		move(c)
		m.ConfigMaps = append(m.ConfigMaps, c)
	}
	for _, o := range b.Services {
		c := o.DeepCopy()
		move(c)
		m.Services = append(m.Services, c)
	}
	for _, o := range b.EndpointSlices {
		c := o.DeepCopy()
		move(c)
		m.EndpointSlices = append(m.EndpointSlices, c)
	}
	for _, o := range b.Secrets {
		c := o.DeepCopy()
		move(c)
		m.Secrets = append(m.Secrets, c)
	}
	return m
}

// withB is the world: the shared objects and A's, then B's.
func withB(shared, b translator.Inputs) translator.Inputs {
	in := shared
	in.Gateways = append(append([]*gwv1.Gateway{}, shared.Gateways...), b.Gateways...)
	in.HTTPRoutes = append(append([]*gwv1.HTTPRoute{}, shared.HTTPRoutes...), b.HTTPRoutes...)
	in.Policies = append(append([]*gwv1.BackendTLSPolicy{}, shared.Policies...), b.Policies...)
	in.ConfigMaps = append(append([]*corev1.ConfigMap{}, shared.ConfigMaps...), b.ConfigMaps...)
	in.Services = append(append([]*corev1.Service{}, shared.Services...), b.Services...)
	in.EndpointSlices = append(append(in.EndpointSlices[:0:0], shared.EndpointSlices...), b.EndpointSlices...)
	in.Secrets = append(append([]*corev1.Secret{}, shared.Secrets...), b.Secrets...)
	return in
}

// FuzzTenantFaultStaysWithItsObjects: one mutation of tenant B's objects
// never changes, nor stops, what tenant A's fleet is served.
func FuzzTenantFaultStaysWithItsObjects(f *testing.F) {
	seeds := []struct {
		op, index uint8
		arg       string
	}{
		{0, 0, ""}, {0, 5, ""},
		{1, 0, "edge-cert"}, {1, 1, "client"}, {1, 2, "tenant-a"}, {1, 0, "certificate"},
		{2, 0, ""}, {2, 1, ""},
		{3, 0, "envoy-client"}, {3, 1, "edge-cert"}, {3, 0, "no-such"},
		{4, 0, "edge-cert"}, {4, 1, "gw-client"}, {4, 2, "tlsplane.io/ciphers"}, {4, 0, "../tenant-a/edge-cert"},
		{5, 0, "-----BEGIN CERTIFICATE-----\nnot base64\n-----END CERTIFICATE-----\n"}, {5, 1, "garbage"}, {5, 2, ""},
		{6, 0, "tls.pem"},
		{7, 0, "not a CA"}, {7, 0, translatortest.CA2},
		{8, 0, "edge-cert"}, {8, 1, "gw-client"}, {8, 0, "missing"},
		{9, 0, ""}, {9, 1, "app"},
		{10, 0, "plain"}, {10, 1, "no-such"},
		{11, 0, "edge"}, {11, 1, "app"}, {11, 0, "a"},
		{12, 0, "client"}, {12, 0, "tenant"}, {12, 0, "ca"}, {12, 0, "gateway-client"},
		{13, 0, ""},
	}
	for _, s := range seeds {
		f.Add(s.op, s.index, s.arg)
	}
	shared, b := tenantWorld(f)
	want := map[bool][]byte{}
	f.Fuzz(func(t *testing.T, op, index uint8, arg string) {
		if want[true] == nil {
			want[true] = fleetABytes(t, withB(shared, b))
			// The unmutated world is valid: A is served its listeners, its
			// clusters, its certificate and its client keys.
			for _, name := range []string{plan.ListenerName(tenantA, "edge", 443), plan.ClusterName(tenantA, "app", 443),
				plan.ClusterName(tenantA, "own", 443), plan.ClusterName(tenantA, "plain", 80),
				plan.CertificateSecretName(tenantA, "edge-cert"), plan.ClientCertificateSecretName(tenantA, "envoy-client"),
				plan.GatewayClientCertificateSecretName(tenantA, "edge")} {
				if !bytes.Contains(want[true], []byte(" "+name+" ")) {
					t.Fatalf("tenant A's fleet lacks %s", name)
				}
			}
		}
		got := fleetABytes(t, withB(shared, mutateB(b, op, index, arg)))
		if !bytes.Equal(got, want[true]) {
			t.Fatalf("mutation %d/%d %q of tenant B changed tenant A's fleet (%d bytes, want %d)", op%14, index, arg, len(got), len(want[true]))
		}
	})
}

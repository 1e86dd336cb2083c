package xds

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	tlsv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/transport_sockets/tls/v3"
	discoveryv3 "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/tlsplane/tlsplane/manifests"
	"github.com/tlsplane/tlsplane/snapshots"
	"github.com/tlsplane/tlsplane/translator"
	"github.com/tlsplane/tlsplane/translator/translatortest"
)

// tenantDocs is one tenant's world: a Gateway with an HTTP and an HTTPS
// listener (its certificate), frontend client validation (a CA), a backend
// client certificate, and an HTTPRoute to two Services, each governed by
// a BackendTLSPolicy, one of which presents a client certificate of its
// own (tlsplane.io/clientCertificateRef).
func tenantDocs(ns, gw, x string) string {
	return fmt.Sprintf(`apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: %[2]s, namespace: %[1]s}
spec:
  gatewayClassName: tlsplane
  addresses: [{value: 192.0.2.40}]
  tls:
    backend:
      clientCertificateRef: {name: gateway-client-%[3]s}
    frontend:
      default:
        validation:
          caCertificateRefs: [{group: "", kind: ConfigMap, name: clients-ca}]
  listeners:
  - {name: http, protocol: HTTP, port: 80}
  - {name: https, protocol: HTTPS, port: 443, hostname: %[3]s.example, tls: {certificateRefs: [{name: listener-cert-%[3]s}]}}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: route-%[3]s, namespace: %[1]s}
spec:
  parentRefs: [{name: %[2]s}]
  rules:
  - matches: [{path: {type: PathPrefix, value: /own}}]
    backendRefs: [{name: policy-client, port: 443}]
  - backendRefs: [{name: api, port: 443}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: BackendTLSPolicy
metadata: {name: api, namespace: %[1]s}
spec:
  targetRefs: [{group: "", kind: Service, name: api}]
  validation:
    hostname: api.%[1]s.example
    caCertificateRefs: [{group: "", kind: ConfigMap, name: backend-ca}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: BackendTLSPolicy
metadata: {name: policy-client, namespace: %[1]s}
spec:
  targetRefs: [{group: "", kind: Service, name: policy-client}]
  validation:
    hostname: pc.%[1]s.example
    caCertificateRefs: [{group: "", kind: ConfigMap, name: backend-ca}]
  options:
    tlsplane.io/clientCertificateRef: policy-client-%[3]s
---
apiVersion: v1
kind: Service
metadata: {name: api, namespace: %[1]s}
spec:
  ports: [{name: https, port: 443}]
---
apiVersion: v1
kind: Service
metadata: {name: policy-client, namespace: %[1]s}
spec:
  ports: [{name: https, port: 443}]
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: {name: api-1, namespace: %[1]s, labels: {kubernetes.io/service-name: api}}
addressType: IPv4
ports: [{name: https, port: 8443}]
endpoints: [{addresses: [10.0.1.1]}]
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: {name: policy-client-1, namespace: %[1]s, labels: {kubernetes.io/service-name: policy-client}}
addressType: IPv4
ports: [{name: https, port: 8443}]
endpoints: [{addresses: [10.0.1.2]}]
`, ns, gw, x)
}

// tenant is what a tenant's world makes: its fleet and the private keys
// of its three certificates (listener, Gateway backend client, policy
// client), which must reach no other fleet.
type tenant struct {
	ns, fleet string
	keys      [][]byte
}

// twoTenants translates the worlds of team-a/gw-a and team-b/gw-b, served
// by one control plane.
func twoTenants(t *testing.T) (translator.Output, tenant, tenant) {
	t.Helper()
	docs := "apiVersion: gateway.networking.k8s.io/v1\nkind: GatewayClass\nmetadata: {name: tlsplane}\nspec: {controllerName: tlsplane.io/controller}\n---\n" +
		tenantDocs("team-a", "gw-a", "a") + "---\n" + tenantDocs("team-b", "gw-b", "b")
	in, err := manifests.Parse("tenants.yaml", []byte(docs), func(w string) { t.Logf("manifest: %s", w) })
	if err != nil {
		t.Fatal(err)
	}
	tenants := []tenant{{ns: "team-a", fleet: "team-a/gw-a"}, {ns: "team-b", fleet: "team-b/gw-b"}}
	for i, x := range []string{"a", "b"} {
		ns := tenants[i].ns
		for _, name := range []string{"listener-cert-" + x, "gateway-client-" + x, "policy-client-" + x} {
			s := translatortest.TLSSecret(t, ns, name, name+"."+ns+".example")
			in.Add(s)
			tenants[i].keys = append(tenants[i].keys, s.Data["tls.key"])
		}
		for _, name := range []string{"backend-ca", "clients-ca"} {
			in.Add(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Data: map[string]string{"ca.crt": translatortest.CA}})
		}
	}
	out := translator.Translate(in, nil, time.Now(), translator.Options{})
	for _, tn := range tenants {
		if out.Fleets[tn.fleet] == nil {
			t.Fatalf("no fleet %s in the translation; warnings %q", tn.fleet, out.Warnings)
		}
	}
	return out, tenants[0], tenants[1]
}

// tenantNames are the names of every resource the translation made of
// ns, per type: its Gateway's listeners, route configurations and
// secrets, and the clusters, load assignments and secrets of its Services.
func tenantNames(out translator.Output, tn tenant) map[string][]string {
	names := map[string][]string{}
	own := out.Fleets[tn.fleet]
	for _, l := range own.Listeners {
		names[resource.ListenerType] = append(names[resource.ListenerType], l.GetName())
	}
	for _, r := range own.Routes {
		names[resource.RouteType] = append(names[resource.RouteType], r.GetName())
	}
	for _, s := range own.Secrets {
		names[resource.SecretType] = append(names[resource.SecretType], s.GetName())
	}
	for _, c := range out.Clusters {
		if out.ClusterNamespaces[c.GetName()] == tn.ns {
			names[resource.ClusterType] = append(names[resource.ClusterType], c.GetName())
		}
	}
	for _, e := range out.Endpoints {
		if out.ClusterNamespaces[e.GetClusterName()] == tn.ns {
			names[resource.EndpointType] = append(names[resource.EndpointType], e.GetClusterName())
		}
	}
	for _, s := range out.Secrets {
		if strings.Contains(s.GetName(), "/"+tn.ns+"/") {
			names[resource.SecretType] = append(names[resource.SecretType], s.GetName())
		}
	}
	return names
}

// received is what one subscription got: each resource's name and bytes.
type received map[string][]byte

// TestFleetIsServedOnlyItsTenantsResources: an ADS client authenticated
// as fleet team-a/gw-a (xDS mutual TLS, its SPIFFE identity) subscribes
// to every served type, SotW and delta, by wildcard and by name (naming
// tenant B's resources explicitly, with its own). It receives its own
// listeners, route configurations, clusters, load assignments and keys,
// and none of tenant B's: no name of B's, and no byte of B's private keys
// anywhere in what it is sent.
func TestFleetIsServedOnlyItsTenantsResources(t *testing.T) {
	out, a, b := twoTenants(t)
	s := startSecureWith(t, DefaultFleetIdentity, snapshots.Options{}, Options{})
	s.publish(t, out, true)
	cert, key := s.ca.issue(t, leafSpec{uri: "spiffe://cluster.local/fleet/" + a.fleet})
	conn := s.dial(t, cert, key, nil)
	mine, theirs := tenantNames(out, a), tenantNames(out, b)
	for _, typeURL := range snapshots.ServedTypes() {
		if len(mine[typeURL]) == 0 || len(theirs[typeURL]) == 0 {
			t.Fatalf("%s: the world has no resource of each tenant (A %q, B %q)", typeURL, mine[typeURL], theirs[typeURL])
		}
	}
	for _, delta := range []bool{false, true} {
		for _, byName := range []bool{false, true} {
			for _, typeURL := range snapshots.ServedTypes() {
				mode := map[bool]string{false: "sotw", true: "delta"}[delta] + "/" + map[bool]string{false: "wildcard", true: "by-name"}[byName]
				t.Run(mode+"/"+typeURL[strings.LastIndex(typeURL, ".")+1:], func(t *testing.T) {
					var names []string
					if byName {
						names = append(slices.Clone(mine[typeURL]), theirs[typeURL]...)
					}
					got := subscribe(t, conn, a.fleet, typeURL, names, delta)
					for _, name := range mine[typeURL] {
						// Its routes reach both its Services: all of A's is its own.
						if _, ok := got[name]; !ok {
							t.Errorf("fleet A was not sent its own %s", name)
						}
					}
					for name, raw := range got {
						if slices.Contains(theirs[typeURL], name) || strings.Contains(name, b.ns) {
							t.Errorf("fleet A was sent tenant B's %s", name)
						}
						for _, k := range b.keys {
							if bytes.Contains(raw, k) {
								t.Errorf("fleet A was sent tenant B's private key in %s", name)
							}
						}
					}
				})
			}
		}
	}
}

// subscribe opens a stream as fleet and subscribes to typeURL's names
// (nil: the wildcard), returning what the first response carried.
func subscribe(t *testing.T, conn *grpc.ClientConn, fleet, typeURL string, names []string, delta bool) received {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), patience)
	defer cancel()
	ads := discoveryv3.NewAggregatedDiscoveryServiceClient(conn)
	got := received{}
	if delta {
		stream, err := ads.DeltaAggregatedResources(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if err := stream.Send(&discoveryv3.DeltaDiscoveryRequest{Node: node("envoy-a", fleet), TypeUrl: typeURL, ResourceNamesSubscribe: names}); err != nil {
			t.Fatal(err)
		}
		resp, err := stream.Recv()
		if err != nil {
			t.Fatalf("delta %s: %v", typeURL, err)
		}
		for _, r := range resp.GetResources() {
			got[r.GetName()] = wire(t, r.GetResource())
		}
		return got
	}
	stream, err := ads.StreamAggregatedResources(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := stream.Send(&discoveryv3.DiscoveryRequest{Node: node("envoy-a", fleet), TypeUrl: typeURL, ResourceNames: names}); err != nil {
		t.Fatal(err)
	}
	resp, err := stream.Recv()
	if err != nil {
		t.Fatalf("sotw %s: %v", typeURL, err)
	}
	for _, r := range resp.GetResources() {
		got[nameOf(t, r)] = wire(t, r)
	}
	return got
}

// wire is a resource's bytes as sent; nameOf its name, decoded.
func wire(t *testing.T, a *anypb.Any) []byte {
	t.Helper()
	if a == nil {
		t.Fatal("a resource without a body")
	}
	return a.GetValue()
}

func nameOf(t *testing.T, a *anypb.Any) string {
	t.Helper()
	m, err := a.UnmarshalNew()
	if err != nil {
		t.Fatalf("%s: %v", a.GetTypeUrl(), err)
	}
	type named interface{ GetName() string }
	type assignment interface{ GetClusterName() string }
	switch r := m.(type) {
	case named:
		return r.GetName()
	case assignment:
		return r.GetClusterName()
	}
	t.Fatalf("%s has no name", a.GetTypeUrl())
	return ""
}

// A fleet with no Gateway that --fleet-namespaces does not list is served
// every cluster but those presenting a policy's client certificate, and
// no secret but CA bundles; one the flag grants team-b is served team-b's
// policy client key, and the clusters that present it.
func TestFleetWithoutAGatewayGetsNoKeyUnlessGranted(t *testing.T) {
	out, _, _ := twoTenants(t)
	s := startSecureWith(t, DefaultFleetIdentity, snapshots.Options{FleetNamespaces: map[string][]string{"team-b-mesh": {"team-b"}}}, Options{})
	s.publish(t, out, true)
	for _, tc := range []struct {
		fleet   string
		granted bool
	}{{"mesh", false}, {"team-b-mesh", true}} {
		cert, key := s.ca.issue(t, leafSpec{uri: "spiffe://cluster.local/fleet/" + tc.fleet})
		conn := s.dial(t, cert, key, nil)
		for _, delta := range []bool{false, true} {
			clusters := subscribe(t, conn, tc.fleet, resource.ClusterType, nil, delta)
			secrets := subscribe(t, conn, tc.fleet, resource.SecretType, nil, delta)
			keyed := 0
			for name, raw := range secrets {
				s := &tlsv3.Secret{}
				if err := proto.Unmarshal(raw, s); err != nil {
					t.Fatal(err)
				}
				if s.GetValidationContext() == nil {
					keyed++
					if !tc.granted || name != "Client/team-b/policy-client-b" {
						t.Errorf("fleet %s (delta %v) is served key %s", tc.fleet, delta, name)
					}
				}
			}
			_, presents := clusters["team-b/policy-client/443"]
			if presents != tc.granted || (tc.granted && keyed != 1) {
				t.Errorf("fleet %s (delta %v): served the cluster presenting B's policy key %v, %d keys; want %v", tc.fleet, delta, presents, keyed, tc.granted)
			}
			if _, ok := clusters["team-b/api/443"]; !ok {
				t.Errorf("fleet %s (delta %v) is not served team-b/api/443, which reads no key: %v", tc.fleet, delta, keysOf(clusters))
			}
		}
	}
}

func keysOf(r received) []string {
	out := make([]string, 0, len(r))
	for k := range r {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// --fleet-scope=all restores serving every fleet everything: fleet A is
// then sent tenant B's clusters and B's policy client key.
func TestFleetScopeAllServesEveryTenantsClusters(t *testing.T) {
	out, a, _ := twoTenants(t)
	s := startSecureWith(t, DefaultFleetIdentity, snapshots.Options{Scope: snapshots.ScopeAll}, Options{})
	s.publish(t, out, true)
	cert, key := s.ca.issue(t, leafSpec{uri: "spiffe://cluster.local/fleet/" + a.fleet})
	conn := s.dial(t, cert, key, nil)
	for _, delta := range []bool{false, true} {
		if got := subscribe(t, conn, a.fleet, resource.ClusterType, nil, delta); got["team-b/policy-client/443"] == nil {
			t.Errorf("delta %v: fleet A is not sent team-b/policy-client/443 under ScopeAll: %v", delta, keysOf(got))
		}
		if got := subscribe(t, conn, a.fleet, resource.SecretType, nil, delta); got["Client/team-b/policy-client-b"] == nil {
			t.Errorf("delta %v: fleet A is not sent client/team-b/policy-client-b under ScopeAll: %v", delta, keysOf(got))
		}
	}
}

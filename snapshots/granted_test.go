package snapshots

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"
	"k8s.io/apimachinery/pkg/types"

	"github.com/tlsplane/tlsplane/manifests"
	"github.com/tlsplane/tlsplane/translator"
)

// grantedWorld is Services with policies in namespaces a, b and c, and a
// Gateway a/edge routing to two of a's; edits changes it.
type grantedWorld struct {
	services map[string]int // namespace → Services svc-0..n-1
	hostname map[string]string
	ca       map[string]string
	endpoint map[string]int
}

func (w grantedWorld) yaml() string {
	var b strings.Builder
	b.WriteString(`apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: tlsplane}
spec: {controllerName: tlsplane.io/gateway-controller}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: edge, namespace: a}
spec:
  gatewayClassName: tlsplane
  listeners: [{name: http, protocol: HTTP, port: 80}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: web, namespace: a}
spec:
  parentRefs: [{name: edge}]
  rules:
  - backendRefs: [{name: svc-0, port: 443}, {name: svc-1, port: 443}]
`)
	for _, ns := range slices.Sorted(maps.Keys(w.services)) {
		fmt.Fprintf(&b, "---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: ca, namespace: %s}\ndata: {ca.crt: %q}\n", ns, w.ca[ns])
		for i := range w.services[ns] {
			key := fmt.Sprintf("%s/svc-%d", ns, i)
			fmt.Fprintf(&b, `---
apiVersion: v1
kind: Service
metadata: {name: svc-%[2]d, namespace: %[1]s}
spec: {ports: [{name: https, port: 443}]}
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: {name: svc-%[2]d-x, namespace: %[1]s, labels: {kubernetes.io/service-name: svc-%[2]d}}
addressType: IPv4
ports: [{name: https, port: 8443}]
endpoints: [{addresses: ["10.0.%[2]d.%[3]d"]}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: BackendTLSPolicy
metadata: {name: svc-%[2]d, namespace: %[1]s}
spec:
  targetRefs: [{group: "", kind: Service, name: svc-%[2]d}]
  validation:
    hostname: %[4]s
    caCertificateRefs: [{group: "", kind: ConfigMap, name: ca}]
`, ns, i, 1+w.endpoint[key], w.hostnameOf(key))
		}
	}
	return b.String()
}

func (w grantedWorld) hostnameOf(key string) string {
	if h := w.hostname[key]; h != "" {
		return h
	}
	return strings.ReplaceAll(key, "/", "-") + ".example"
}

// changesTo are the Changes of the objects named (kind/ns/name) as they
// are in in, or deleted when in lacks them.
func changesTo(in translator.Inputs, names ...string) []translator.Change {
	var out []translator.Change
	for _, n := range names {
		kind, rest, _ := strings.Cut(n, "/")
		ns, name, _ := strings.Cut(rest, "/")
		c := translator.Change{Key: types.NamespacedName{Namespace: ns, Name: name}}
		switch kind {
		case "Service":
			c.Kind = translator.KindService
			for _, o := range in.Services {
				if o.Namespace == ns && o.Name == name {
					c.Object = o
				}
			}
		case "EndpointSlice":
			c.Kind = translator.KindEndpointSlice
			for _, o := range in.EndpointSlices {
				if o.Namespace == ns && o.Name == name {
					c.Object = o
				}
			}
		case "ConfigMap":
			c.Kind = translator.KindConfigMap
			for _, o := range in.ConfigMaps {
				if o.Namespace == ns && o.Name == name {
					c.Object = o
				}
			}
		case "BackendTLSPolicy":
			c.Kind = translator.KindBackendTLSPolicy
			for _, o := range in.Policies {
				if o.Namespace == ns && o.Name == name {
					c.Object = o
				}
			}
		}
		out = append(out, c)
	}
	return out
}

// A fleet --fleet-namespaces lists, with a Gateway or without, is patched
// publish after publish (its scope is kept, not made again), and serves
// after each edit exactly what a publisher that never saw the edits
// serves: the same resources, per-resource versions and type versions.
func TestGrantedFleetsArePatchedAsAFreshPublisherServesThem(t *testing.T) {
	pem, err := manifests.ReadFile("../examples/quickstart/certs/ca.crt")
	if err != nil {
		t.Fatal(err)
	}
	ca := string(pem)
	w := grantedWorld{
		services: map[string]int{"a": 3, "b": 3, "c": 2},
		hostname: map[string]string{},
		ca:       map[string]string{"a": ca, "b": ca, "c": ca},
		endpoint: map[string]int{},
	}
	grants := map[string][]string{"plain": {"a", "b"}, "a/edge": {"a"}}
	fleets := slices.Sorted(maps.Keys(grants))
	open := func(p *Publisher) {
		for _, f := range fleets {
			p.NodeStreamOpened(&corev3.Node{Id: f, Cluster: f})
		}
	}
	parse := func() translator.Inputs {
		in, err := manifests.Parse("world.yaml", []byte(w.yaml()), func(string) {})
		if err != nil {
			t.Fatal(err)
		}
		return in
	}
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	tr := translator.New()
	patched := New(Options{FleetNamespaces: grants})
	open(patched)
	if _, err := patched.Publish(tr.Translate(parse(), nil, now, translator.Options{})); err != nil {
		t.Fatal(err)
	}
	kept := patched.granted["plain"]
	if kept == nil {
		t.Fatal("fleet plain has no granted scope")
	}
	edits := []struct {
		name    string
		edit    func()
		changed []string
		served  map[string]bool // fleets whose served resources must change
	}{
		{"endpoints in b", func() { w.endpoint["b/svc-1"]++ }, []string{"EndpointSlice/b/svc-1-x"}, map[string]bool{"plain": true}},
		{"endpoints in c, granted to no fleet", func() { w.endpoint["c/svc-0"]++ }, []string{"EndpointSlice/c/svc-0-x"}, nil},
		{"a routed policy's hostname", func() { w.hostname["a/svc-0"] = "renamed.example" }, []string{"BackendTLSPolicy/a/svc-0"}, map[string]bool{"plain": true, "a/edge": true}},
		{"a new Service in b", func() { w.services["b"] = 4 }, []string{"Service/b/svc-3", "EndpointSlice/b/svc-3-x", "BackendTLSPolicy/b/svc-3"}, map[string]bool{"plain": true}},
		{"a Service of b deleted", func() { w.services["b"] = 2 }, []string{"Service/b/svc-3", "EndpointSlice/b/svc-3-x", "BackendTLSPolicy/b/svc-3", "Service/b/svc-2", "EndpointSlice/b/svc-2-x", "BackendTLSPolicy/b/svc-2"}, map[string]bool{"plain": true}},
		{"a's CA", func() { w.ca["a"] = ca + "\n" }, []string{"ConfigMap/a/ca"}, nil},
	}
	for _, e := range edits {
		before := map[string]string{}
		for _, f := range fleets {
			before[f] = fmt.Sprint(served(t, patched, f).VersionMap)
		}
		e.edit()
		in := parse()
		out, ok := tr.Update(changesTo(in, e.changed...), nil, now, translator.Options{})
		if !ok {
			t.Fatalf("%s: Update refused the change", e.name)
		}
		if _, err := patched.Publish(out); err != nil {
			t.Fatalf("%s: %v", e.name, err)
		}
		if patched.granted["plain"] != kept {
			t.Errorf("%s: fleet plain's scope was made again, not patched", e.name)
		}
		fresh := New(Options{FleetNamespaces: grants})
		open(fresh)
		if _, err := fresh.Publish(out); err != nil {
			t.Fatal(err)
		}
		for _, f := range fleets {
			got, want := served(t, patched, f), served(t, fresh, f)
			for _, typeURL := range servedTypes {
				if !maps.Equal(got.VersionMap[typeURL], want.VersionMap[typeURL]) {
					t.Errorf("%s: fleet %s %s:\n got %v\nwant %v", e.name, f, typeURL, got.VersionMap[typeURL], want.VersionMap[typeURL])
				}
				if got.GetVersion(typeURL) != want.GetVersion(typeURL) {
					t.Errorf("%s: fleet %s %s version %q, a fresh publisher's %q", e.name, f, typeURL, got.GetVersion(typeURL), want.GetVersion(typeURL))
				}
			}
			for name := range got.GetResources(resource.ClusterType) {
				if ns, _, _ := strings.Cut(name, "/"); !slices.Contains(grants[f], ns) {
					t.Errorf("%s: fleet %s granted %v is served cluster %s", e.name, f, grants[f], name)
				}
			}
			if changed := fmt.Sprint(got.VersionMap) != before[f]; changed != e.served[f] && e.served != nil {
				t.Errorf("%s: fleet %s's resources changed=%v, want %v", e.name, f, changed, e.served[f])
			}
		}
	}
}

package snapshots

import (
	"reflect"
	"strings"
	"testing"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	"github.com/envoyproxy/go-control-plane/pkg/cache/types"
	"github.com/envoyproxy/go-control-plane/pkg/cache/v3"
	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"

	st "github.com/tlsplane/tlsplane/snapshots/snapshotstest"
	"github.com/tlsplane/tlsplane/translator"
)

var (
	edge  = st.Gateway{Namespace: "shop", Name: "edge", HTTPPort: 80, HTTPSPort: 443, Hostname: "shop.example", Backend: payments}
	vault = st.Gateway{Namespace: "bank", Name: "vault", HTTPSPort: 8443, Hostname: "vault.bank.example", Backend: ledger}
)

func names(s *servedSnapshot, typeURL string) string {
	return strings.Join(sortedNames(s.GetResources(typeURL)), ",")
}

func samePointer(a, b any) bool {
	return reflect.ValueOf(a).UnsafePointer() == reflect.ValueOf(b).UnsafePointer()
}

// By default a Gateway fleet is served the clusters its routes reach
// (shop/payments), what they read, and its own resources; under ScopeAll
// every fleet's clusters too, maps and versions shared with them.
func TestGatewayFleetIsServedWhatItsRoutesReach(t *testing.T) {
	for _, scope := range []FleetScope{ScopeReached, ScopeAll} {
		t.Run(string(scope), func(t *testing.T) { testGatewayFleetServed(t, scope) })
	}
}

func testGatewayFleetServed(t *testing.T, scope FleetScope) {
	p := New(Options{Scope: scope})
	for _, fleet := range []string{edge.Fleet(), "mesh", "mesh-2"} {
		p.NodeStreamOpened(&corev3.Node{Id: fleet + "-envoy", Cluster: fleet})
	}
	if _, err := p.Publish(st.WithGateways(st.Output(payments, ledger), edge)); err != nil {
		t.Fatal(err)
	}
	gw, mesh := served(t, p, edge.Fleet()), served(t, p, "mesh")
	if served(t, p, "mesh-2") != mesh {
		t.Error("two fleets without a Gateway do not share one snapshot")
	}
	want := map[string][2]string{
		resource.ClusterType:  {"shop/payments/8443", "bank/ledger/443,shop/payments/8443"},
		resource.EndpointType: {"shop/payments/8443", "bank/ledger/443,shop/payments/8443"},
		resource.ListenerType: {"shop/edge/443,shop/edge/80", ""},
		resource.RouteType:    {"shop/edge/443/https,shop/edge/80", ""},
		resource.SecretType:   {"Certificate/shop/edge-cert,shop/payments/8443/ca", "bank/ledger/443/ca,shop/payments/8443/ca"},
	}
	if scope == ScopeAll {
		want[resource.ClusterType] = [2]string{"bank/ledger/443,shop/payments/8443", "bank/ledger/443,shop/payments/8443"}
		want[resource.EndpointType] = want[resource.ClusterType]
		want[resource.SecretType] = [2]string{"Certificate/shop/edge-cert,bank/ledger/443/ca,shop/payments/8443/ca", "bank/ledger/443/ca,shop/payments/8443/ca"}
	}
	for typeURL, want := range want {
		if got := names(gw, typeURL); got != want[0] {
			t.Errorf("Gateway fleet %s: %s, want %s", typeURL, got, want[0])
		}
		if got := names(mesh, typeURL); got != want[1] {
			t.Errorf("fleet mesh %s: %s, want %s", typeURL, got, want[1])
		}
	}
	// Under ScopeAll the clusters and endpoints every fleet is served are
	// shared, maps and versions, not copied per Gateway fleet.
	for _, typeURL := range []string{resource.ClusterType, resource.EndpointType} {
		if scope == ScopeAll && (!samePointer(gw.GetResources(typeURL), mesh.GetResources(typeURL)) ||
			!samePointer(gw.VersionMap[typeURL], mesh.VersionMap[typeURL]) ||
			gw.GetVersion(typeURL) != mesh.GetVersion(typeURL)) {
			t.Errorf("%s: the Gateway fleet does not share every fleet's maps and version", typeURL)
		}
	}
	// go-control-plane's own check agrees with ours, and its per-resource
	// versions are the ones the feed sends.
	byType := map[resource.Type][]types.Resource{}
	for _, typeURL := range servedTypes {
		for _, r := range gw.GetResources(typeURL) {
			byType[typeURL] = append(byType[typeURL], r)
		}
	}
	ref, err := cache.NewSnapshot("v", byType)
	if err != nil {
		t.Fatal(err)
	}
	if err := ref.Consistent(); err != nil {
		t.Errorf("go-control-plane finds the Gateway fleet's snapshot inconsistent: %v", err)
	}
	for _, typeURL := range servedTypes {
		if len(gw.VersionMap[typeURL]) != len(gw.GetResources(typeURL)) {
			t.Errorf("%s: %d versions for %d resources", typeURL, len(gw.VersionMap[typeURL]), len(gw.GetResources(typeURL)))
		}
		for name, r := range gw.GetResources(typeURL) {
			b, err := cache.MarshalResource(r)
			if err != nil {
				t.Fatal(err)
			}
			want := cache.HashResource(b)
			if typeURL == resource.RouteType {
				want = versionFromBytes(t, b) // hashed per virtual host (routeversion.go)
			}
			if typeURL != resource.EndpointType && gw.VersionMap[typeURL][name] != want {
				t.Errorf("%s %s: version %q is not the hash of its bytes", typeURL, name, gw.VersionMap[typeURL][name])
			}
		}
	}
}

// A listener certificate's private key is in its fleet's snapshot and
// feed only: not in another Gateway's, not in a fleet without a Gateway,
// not in a namespace-restricted fleet of the same namespace.
func TestListenerCertificateReachesItsFleetOnly(t *testing.T) {
	p := New(Options{FleetNamespaces: map[string][]string{"shop-only": {"shop"}}})
	fleets := []string{edge.Fleet(), vault.Fleet(), "mesh", "shop-only", "shop/edge2", "shop", ""}
	for _, fleet := range fleets {
		p.NodeStreamOpened(&corev3.Node{Id: fleet + "-envoy", Cluster: fleet})
	}
	if _, err := p.Publish(st.WithGateways(st.Output(payments, ledger), edge, vault)); err != nil {
		t.Fatal(err)
	}
	for _, fleet := range fleets {
		snap := served(t, p, fleet)
		for _, g := range []st.Gateway{edge, vault} {
			_, inSnapshot := snap.GetResources(resource.SecretType)[g.CertificateName()]
			var inFeed bool
			p.Feed(fleet).Read(resource.SecretType, func(v FeedView) { inFeed = v.Entry(g.CertificateName()) != nil })
			want := fleet == g.Fleet()
			if inSnapshot != want || inFeed != want {
				t.Errorf("fleet %q: %s's certificate in snapshot %v, in feed %v; want %v",
					fleet, g.Fleet(), inSnapshot, inFeed, want)
			}
			if want {
				continue
			}
			for _, typeURL := range servedTypes {
				for name, r := range snap.GetResources(typeURL) {
					b, err := cache.MarshalResource(r)
					if err != nil {
						t.Fatal(err)
					}
					if strings.Contains(string(b), g.PrivateKey()) {
						t.Errorf("fleet %q: %s %s holds %s's private key", fleet, typeURL, name, g.Fleet())
					}
				}
			}
		}
	}
}

func TestGatewayFleetVersionsFollowWhatChanged(t *testing.T) {
	p := New(Options{})
	p.NodeStreamOpened(&corev3.Node{Id: "gw", Cluster: edge.Fleet()})
	p.NodeStreamOpened(&corev3.Node{Id: "m", Cluster: "mesh"})
	out := st.WithGateways(st.Output(payments, ledger), edge)
	if _, err := p.Publish(out); err != nil {
		t.Fatal(err)
	}
	first := served(t, p, edge.Fleet())
	if changed, err := p.Publish(st.WithGateways(st.Output(payments, ledger), edge)); err != nil || changed {
		t.Fatalf("same content (new pointers): changed=%v err=%v", changed, err)
	}
	if served(t, p, edge.Fleet()) != first {
		t.Error("same content replaced the Gateway fleet's snapshot")
	}

	rotated := edge
	rotated.Key = "rotated"
	movedRoute := edge
	movedRoute.Hostname = "www.shop.example"
	newCA, otherCA := payments, ledger
	newCA.CA = "-----BEGIN CERTIFICATE-----\nrotated\n-----END CERTIFICATE-----\n"
	otherCA.CA = newCA.CA
	for name, tc := range map[string]struct {
		out         translator.Output
		changed     []string // types whose version changes for the Gateway fleet
		meshChanged bool
	}{
		"certificate rotated": {st.WithGateways(st.Output(payments, ledger), rotated), []string{resource.SecretType}, false},
		"hostname changed":    {st.WithGateways(st.Output(payments, ledger), movedRoute), []string{resource.ListenerType, resource.RouteType, resource.SecretType}, false},
		"backend CA rotated":  {st.WithGateways(st.Output(newCA, ledger), edge), []string{resource.SecretType}, true},
		// A backend its routes do not reach is not the fleet's.
		"other backend CA rotated": {st.WithGateways(st.Output(payments, otherCA), edge), nil, true},
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := p.Publish(out); err != nil { // back to the first content
				t.Fatal(err)
			}
			mesh := served(t, p, "mesh")
			if _, err := p.Publish(tc.out); err != nil {
				t.Fatal(err)
			}
			now := served(t, p, edge.Fleet())
			for _, typeURL := range servedTypes {
				want := false
				for _, c := range tc.changed {
					want = want || c == typeURL
				}
				if got := now.GetVersion(typeURL) != first.GetVersion(typeURL); got != want {
					t.Errorf("%s: version changed %v, want %v", typeURL, got, want)
				}
			}
			if got := served(t, p, "mesh") != mesh; got != tc.meshChanged {
				t.Errorf("fleet mesh's snapshot replaced: %v, want %v", got, tc.meshChanged)
			}
		})
	}
}

// Gateway fleets restricted to namespaces keep the restriction on what
// every fleet is served, and still get their own resources.
func TestRestrictedGatewayFleet(t *testing.T) {
	p := New(Options{FleetNamespaces: map[string][]string{edge.Fleet(): {"shop"}}})
	p.NodeStreamOpened(&corev3.Node{Id: "gw", Cluster: edge.Fleet()})
	if _, err := p.Publish(st.WithGateways(st.Output(payments, ledger), edge)); err != nil {
		t.Fatal(err)
	}
	gw := served(t, p, edge.Fleet())
	if got := names(gw, resource.ClusterType); got != "shop/payments/8443" {
		t.Errorf("clusters %s", got)
	}
	if got := names(gw, resource.SecretType); got != "Certificate/shop/edge-cert,shop/payments/8443/ca" {
		t.Errorf("secrets %s", got)
	}
	if got := names(gw, resource.ListenerType); got != "shop/edge/443,shop/edge/80" {
		t.Errorf("listeners %s", got)
	}
}

func TestGatewayFleetFeed(t *testing.T) {
	p := New(Options{})
	p.NodeStreamOpened(&corev3.Node{Id: "gw", Cluster: edge.Fleet()})
	if _, err := p.Publish(st.WithGateways(st.Output(payments), edge)); err != nil {
		t.Fatal(err)
	}
	f := p.Feed(edge.Fleet())
	for typeURL, want := range map[string][]string{
		resource.ListenerType: {"shop/edge/443", "shop/edge/80"},
		resource.RouteType:    {"shop/edge/443/https", "shop/edge/80"},
		resource.SecretType:   {"Certificate/shop/edge-cert", "shop/payments/8443/ca"},
	} {
		names, _, _ := changedSince(t, f, typeURL, 0)
		wantList(t, typeURL, names, want...)
	}
	rotated := edge
	rotated.Key = "rotated"
	if _, err := p.Publish(st.WithGateways(st.Output(payments), rotated)); err != nil {
		t.Fatal(err)
	}
	for typeURL, want := range map[string][]string{
		resource.ListenerType: nil,
		resource.RouteType:    nil,
		resource.SecretType:   {"Certificate/shop/edge-cert"},
	} {
		names, _, _ := changedSince(t, f, typeURL, 1)
		wantList(t, typeURL+" after the rotation", names, want...)
	}
}

func TestBrokenGatewayFleetIsRefused(t *testing.T) {
	for name, tc := range map[string]struct {
		edit    func(*translator.FleetResources)
		wantErr string
	}{
		"missing route configuration": {
			edit:    func(f *translator.FleetResources) { f.Routes = f.Routes[:1] }, // shop/edge/80 is gone
			wantErr: `fleet "shop/edge": listener shop/edge/80: references route configuration "shop/edge/80", which is not in the snapshot`,
		},
		"orphan route configuration": {
			edit: func(f *translator.FleetResources) {
				f.Routes = append(f.Routes, edge.RouteConfiguration("shop/edge/81"))
			},
			wantErr: `fleet "shop/edge": route configuration shop/edge/81: referenced by no listener`,
		},
		"missing certificate": {
			edit:    func(f *translator.FleetResources) { f.Secrets = nil },
			wantErr: `fleet "shop/edge": listener shop/edge/443: references secret "Certificate/shop/edge-cert", which is not in the snapshot`,
		},
		"orphan certificate": {
			edit:    func(f *translator.FleetResources) { f.Secrets = append(f.Secrets, vault.Certificate()) },
			wantErr: `fleet "shop/edge": secret Certificate/bank/vault-cert: referenced by no cluster and no listener`,
		},
		"listener twice": {
			edit:    func(f *translator.FleetResources) { f.Listeners = append(f.Listeners, edge.HTTPListener()) },
			wantErr: `fleet "shop/edge": listener shop/edge/80: twice`,
		},
		"certificate named like a CA secret": {
			edit: func(f *translator.FleetResources) {
				clash := edge
				clash.CertificateSecret = payments.SecretName()
				*f = *clash.Resources()
			},
			wantErr: `fleet "shop/edge": secret shop/payments/8443/ca: is both a listener certificate and a secret the clusters read`,
		},
	} {
		for _, connected := range []bool{true, false} {
			t.Run(name+map[bool]string{true: "/connected", false: "/no stream"}[connected], func(t *testing.T) {
				p := New(Options{})
				p.NodeStreamOpened(&corev3.Node{Id: "m", Cluster: "mesh"})
				if connected {
					p.NodeStreamOpened(&corev3.Node{Id: "gw", Cluster: edge.Fleet()})
				}
				good := st.WithGateways(st.Output(payments), edge)
				if _, err := p.Publish(good); err != nil {
					t.Fatal(err)
				}
				before, beforeMesh := p.fleets[edge.Fleet()], served(t, p, "mesh")
				var beforeGW *servedSnapshot
				if before != nil {
					beforeGW = before.snapshot
				}
				broken := st.WithGateways(st.Output(payments, ledger), edge)
				own := broken.Fleets[edge.Fleet()]
				tc.edit(own)
				// The fleet is refused alone, as data; every other fleet
				// is served the new translation.
				if _, err := p.Publish(broken); err != nil {
					t.Fatalf("Publish: %v, want the fleet refused alone", err)
				}
				refusals := p.Refusals()
				if len(refusals) != 1 || refusals[0].Fleet != edge.Fleet() || !strings.Contains(refusals[0].Message, tc.wantErr) {
					t.Fatalf("refusals = %v, want fleet %s refused: %q", refusals, edge.Fleet(), tc.wantErr)
				}
				if got := refusals[0].Objects; len(got) == 0 || got[0].String() != "Gateway shop/edge" {
					t.Errorf("refusal names %v, want Gateway shop/edge first", got)
				}
				if connected && served(t, p, edge.Fleet()) != beforeGW {
					t.Error("the Gateway fleet's served snapshot was replaced")
				}
				if mesh := served(t, p, "mesh"); mesh == beforeMesh || mesh.GetResources(resource.ClusterType)[ledger.ClusterName()] == nil {
					t.Error("another fleet was not served the new translation")
				}
				if got := metricValue(t, p.metrics.refused); got != 1 {
					t.Errorf("refused fleets gauge = %v, want 1", got)
				}
				// Broken from the first publish: the publisher is ready,
				// the other fleet served, the broken one given nothing.
				first := New(Options{})
				first.NodeStreamOpened(&corev3.Node{Id: "m", Cluster: "mesh"})
				if connected {
					first.NodeStreamOpened(&corev3.Node{Id: "gw", Cluster: edge.Fleet()})
				}
				if _, err := first.Publish(broken); err != nil || !first.Ready() {
					t.Fatalf("first Publish: %v, ready %v; want ready with the fleet refused", err, first.Ready())
				}
				if r := first.Refusals(); len(r) != 1 || r[0].Fleet != edge.Fleet() {
					t.Errorf("first publish: refusals = %v, want fleet %s", r, edge.Fleet())
				}
				if mesh := served(t, first, "mesh"); mesh.GetResources(resource.ClusterType)[ledger.ClusterName()] == nil {
					t.Error("first publish: the mesh fleet was not served")
				}
				if st := first.fleets[edge.Fleet()]; st != nil && st.snapshot != nil {
					t.Error("first publish: the refused fleet was given a snapshot")
				}
			})
		}
	}
}

// The debug config dump of a Gateway fleet shows its listeners and routes,
// and its certificate without the private key.
func TestDebugSnapshotOfAGatewayFleet(t *testing.T) {
	p := New(Options{})
	if _, err := p.Publish(st.WithGateways(st.Output(payments), edge)); err != nil {
		t.Fatal(err)
	}
	dump, err := p.DebugSnapshot(edge.Fleet())
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"name": "shop/edge/80"`, `"name": "shop/edge/443/https"`, `"routeConfigName": "shop/edge/80"`, "fixture for shop.example", `"name": "Certificate/shop/edge-cert"`} {
		if !strings.Contains(string(dump), want) {
			t.Errorf("dump lacks %s", want)
		}
	}
	if strings.Contains(string(dump), "PRIVATE KEY") {
		t.Errorf("dump shows the private key:\n%s", dump)
	}
	other, err := p.DebugSnapshot("mesh")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(other), "shop/edge") {
		t.Errorf("fleet mesh's dump shows the Gateway's resources:\n%s", other)
	}
}

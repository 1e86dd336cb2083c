package snapshots

import (
	"strings"
	"testing"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"
	"github.com/prometheus/client_golang/prometheus"

	st "github.com/tlsplane/tlsplane/snapshots/snapshotstest"
)

var (
	payments = st.Backend{Namespace: "shop", Service: "payments", Port: 8443, SNI: "payments.shop"}
	ledger   = st.Backend{Namespace: "bank", Service: "ledger", Port: 443, SNI: "ledger.bank"}
)

// served is the snapshot fleet's feed serves.
func served(t *testing.T, p *Publisher, fleet string) *servedSnapshot {
	t.Helper()
	p.mu.Lock()
	defer p.mu.Unlock()
	st := p.fleets[fleet]
	if st == nil || st.snapshot == nil {
		t.Fatalf("fleet %q: no snapshot served", fleet)
	}
	return st.snapshot
}

func TestPublishSetsChangedContentOnly(t *testing.T) {
	reg := prometheus.NewRegistry()
	p := New(Options{Registerer: reg})
	p.NodeStreamOpened(&corev3.Node{Id: "envoy-1", Cluster: "edge"})
	if p.Ready() {
		t.Fatal("ready before the first publish")
	}
	changed, err := p.Publish(st.Output(payments))
	if err != nil || !changed {
		t.Fatalf("first publish: changed=%v err=%v", changed, err)
	}
	if !p.Ready() {
		t.Fatal("not ready after the first publish")
	}
	first := served(t, p, "edge")

	changed, err = p.Publish(st.Output(payments))
	if err != nil || changed {
		t.Fatalf("same content: changed=%v err=%v, want false", changed, err)
	}
	if served(t, p, "edge") != first {
		t.Fatal("same content replaced the snapshot")
	}

	moved := payments
	moved.Address = "10.0.0.2"
	changed, err = p.Publish(st.Output(moved))
	if err != nil || !changed {
		t.Fatalf("new endpoints: changed=%v err=%v", changed, err)
	}
	second := served(t, p, "edge")
	for typeURL, wantSame := range map[string]bool{resource.ClusterType: true, resource.SecretType: true, resource.EndpointType: false} {
		if same := first.GetVersion(typeURL) == second.GetVersion(typeURL); same != wantSame {
			t.Errorf("%s: version %q -> %q, want unchanged=%v", typeURL, first.GetVersion(typeURL), second.GetVersion(typeURL), wantSame)
		}
	}
	if got := metricValue(t, p.metrics.publishes.WithLabelValues("unchanged")); got != 1 {
		t.Errorf("unchanged publishes = %v, want 1", got)
	}
	if got := metricValue(t, p.metrics.resources.WithLabelValues(resource.ClusterType)); got != 1 {
		t.Errorf("cluster gauge = %v, want 1", got)
	}
}

func TestPublishErrorKeepsServedSnapshot(t *testing.T) {
	p := New(Options{})
	p.NodeStreamOpened(&corev3.Node{Id: "envoy-1"})
	if _, err := p.Publish(st.Output(payments)); err != nil {
		t.Fatal(err)
	}
	before := served(t, p, "")
	broken := st.Output(payments, ledger)
	broken.Secrets = broken.Secrets[:1] // shop/payments/8443/ca is missing
	if _, err := p.Publish(broken); err != nil {
		t.Fatalf("Publish: %v, want namespace shop refused alone", err)
	}
	if r := p.Refusals(); len(r) != 1 || r[0].Namespace != "shop" || !strings.Contains(r[0].Message, "shop/payments/8443/ca") {
		t.Fatalf("refusals = %v, want namespace shop refused, naming the missing secret", r)
	}
	// shop keeps what it was served; bank's new cluster is served.
	now := served(t, p, "")
	for _, want := range []string{payments.ClusterName(), ledger.ClusterName()} {
		if now.GetResources(resource.ClusterType)[want] == nil {
			t.Errorf("cluster %s is not served", want)
		}
	}
	if now.GetResources(resource.SecretType)["shop/payments/8443/ca"] != before.GetResources(resource.SecretType)["shop/payments/8443/ca"] {
		t.Error("namespace shop's secret is not the one served before")
	}
}

func TestTwoPublishersGiveIdenticalVersions(t *testing.T) {
	a, b := New(Options{}), New(Options{})
	for _, p := range []*Publisher{a, b} {
		p.NodeStreamOpened(&corev3.Node{Id: "n", Cluster: edge.Fleet()})
		if _, err := p.Publish(st.WithGateways(st.Output(ledger, payments), edge)); err != nil {
			t.Fatal(err)
		}
	}
	sa, sb := served(t, a, edge.Fleet()), served(t, b, edge.Fleet())
	for _, typeURL := range servedTypes {
		if sa.GetVersion(typeURL) == "" || sa.GetVersion(typeURL) != sb.GetVersion(typeURL) {
			t.Errorf("%s: %q vs %q", typeURL, sa.GetVersion(typeURL), sb.GetVersion(typeURL))
		}
	}
	for _, typeURL := range servedTypes {
		va, vb := sa.VersionMap[typeURL], sb.VersionMap[typeURL]
		if len(va) == 0 || len(va) != len(vb) {
			t.Fatalf("%s: per-resource versions %v vs %v", typeURL, va, vb)
		}
		for name, v := range va {
			if vb[name] != v {
				t.Errorf("%s %s: %q vs %q", typeURL, name, v, vb[name])
			}
		}
	}
}

func TestFleetNamespacesFilterConsistently(t *testing.T) {
	p := New(Options{FleetNamespaces: map[string][]string{"shop-edge": {"shop"}}})
	p.NodeStreamOpened(&corev3.Node{Id: "a", Cluster: "shop-edge"})
	if _, err := p.Publish(st.Output(payments, ledger)); err != nil {
		t.Fatal(err)
	}
	// A fleet that connects after the publish is served at once.
	p.NodeStreamOpened(&corev3.Node{Id: "b", Cluster: "mesh"})

	for fleet, want := range map[string][]string{
		"shop-edge": {"shop/payments/8443"},
		"mesh":      {"bank/ledger/443", "shop/payments/8443"},
	} {
		s := served(t, p, fleet)
		for _, typeURL := range []string{resource.ListenerType, resource.RouteType} {
			if n := len(s.GetResources(typeURL)); n != 0 {
				t.Errorf("fleet %s without a Gateway: %d of %s", fleet, n, typeURL)
			}
		}
		for _, typeURL := range backendTypes {
			var got []string
			for _, name := range sortedNames(s.GetResources(typeURL)) {
				got = append(got, strings.TrimSuffix(name, "/ca"))
			}
			if strings.Join(got, ",") != strings.Join(want, ",") {
				t.Errorf("fleet %s %s: %v, want %v", fleet, typeURL, got, want)
			}
		}
	}
}

func TestLastStreamOfFleetClearsItsSnapshot(t *testing.T) {
	p := New(Options{})
	node := &corev3.Node{Id: "a", Cluster: "edge"}
	p.NodeStreamOpened(node)
	p.NodeStreamOpened(node)
	if _, err := p.Publish(st.Output(payments)); err != nil {
		t.Fatal(err)
	}
	p.NodeStreamClosed(node)
	served(t, p, "edge")
	p.NodeStreamClosed(node)
	if p.Feed("edge") != nil {
		t.Fatal("snapshot and feed kept for a fleet without streams")
	}
}

func TestOriginsNamePolicies(t *testing.T) {
	p := New(Options{})
	if _, err := p.Publish(st.Output(payments, ledger)); err != nil {
		t.Fatal(err)
	}
	got := p.Origins([]string{"shop/payments/8443", "shop/payments/8443/ca", "bank/ledger/443", "unknown"})
	if len(got) != 2 || got[0] != ledger.Policy() || got[1] != payments.Policy() {
		t.Fatalf("origins = %v", got)
	}
}

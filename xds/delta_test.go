package xds

import (
	"slices"
	"testing"

	discoveryv3 "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"
	rpcstatus "google.golang.org/genproto/googleapis/rpc/status"

	"github.com/tlsplane/tlsplane/snapshots"
	st "github.com/tlsplane/tlsplane/snapshots/snapshotstest"
)

// deltaNames lists a delta response's resources with their versions.
func deltaNames(resp *discoveryv3.DeltaDiscoveryResponse) (names []string, versions map[string]string) {
	versions = map[string]string{}
	for _, r := range resp.GetResources() {
		names = append(names, r.GetName())
		versions[r.GetName()] = r.GetVersion()
	}
	slices.Sort(names)
	return names, versions
}

// subscribe asks for typeURL (by names, or wildcard without), checks the
// answer's type, ACKs it, and returns it.
func (s *deltaStream) subscribe(t *testing.T, id, fleet, typeURL string, names ...string) *discoveryv3.DeltaDiscoveryResponse {
	t.Helper()
	s.send(t, &discoveryv3.DeltaDiscoveryRequest{Node: node(id, fleet), TypeUrl: typeURL, ResourceNamesSubscribe: names})
	resp := s.next(t)
	if resp.GetTypeUrl() != typeURL {
		t.Fatalf("asked %s, got %s", typeURL, resp.GetTypeUrl())
	}
	s.ack(t, resp)
	return resp
}

func (s *deltaStream) ack(t *testing.T, resp *discoveryv3.DeltaDiscoveryResponse) {
	t.Helper()
	s.send(t, &discoveryv3.DeltaDiscoveryRequest{TypeUrl: resp.GetTypeUrl(), ResponseNonce: resp.GetNonce()})
}

// initial subscribes like Envoy: CDS wildcard, then EDS and SDS by name.
func (s *deltaStream) initial(t *testing.T, id, fleet string) (cds, eds, sds *discoveryv3.DeltaDiscoveryResponse) {
	t.Helper()
	cds = s.subscribe(t, id, fleet, resource.ClusterType)
	clusters, _ := deltaNames(cds)
	eds = s.subscribe(t, id, fleet, resource.EndpointType, clusters...)
	var secrets []string
	for _, c := range clusters {
		secrets = append(secrets, c+"/ca")
	}
	sds = s.subscribe(t, id, fleet, resource.SecretType, secrets...)
	return cds, eds, sds
}

func TestDeltaInitialFetchUpdateAndUnchanged(t *testing.T) {
	h := start(t, snapshots.Options{})
	h.publish(t, st.Output(payments, ledger), true)
	s := openDelta(t, h)
	cds, eds, sds := s.initial(t, "envoy-1", "edge")
	for _, c := range []struct {
		resp *discoveryv3.DeltaDiscoveryResponse
		want []string
	}{
		{cds, []string{"bank/ledger/443", "shop/payments/8443"}},
		{eds, []string{"bank/ledger/443", "shop/payments/8443"}},
		{sds, []string{"bank/ledger/443/ca", "shop/payments/8443/ca"}},
	} {
		names, versions := deltaNames(c.resp)
		wantNames(t, c.resp.GetTypeUrl(), names, c.want...)
		for name, v := range versions {
			if v == "" {
				t.Errorf("%s: no version", name)
			}
		}
	}

	h.publish(t, st.Output(ledger, payments), false)
	s.none(t)

	// Only the resource that changed is sent, with a new version.
	moved := payments
	moved.Address = "10.0.0.9"
	h.publish(t, st.Output(moved, ledger), true)
	update := s.next(t)
	names, versions := deltaNames(update)
	if update.GetTypeUrl() != resource.EndpointType {
		t.Fatalf("update of %s, want EDS", update.GetTypeUrl())
	}
	wantNames(t, "EDS update", names, "shop/payments/8443")
	_, before := deltaNames(eds)
	if versions["shop/payments/8443"] == before["shop/payments/8443"] {
		t.Error("changed resource kept its version")
	}
	s.ack(t, update)
	s.none(t)

	// A removed backend is reported removed.
	h.publish(t, st.Output(moved), true)
	removed := map[string][]string{}
	for range 3 {
		resp := s.next(t)
		removed[resp.GetTypeUrl()] = resp.GetRemovedResources()
		s.ack(t, resp)
	}
	wantNames(t, "CDS removed", removed[resource.ClusterType], "bank/ledger/443")
	wantNames(t, "SDS removed", removed[resource.SecretType], "bank/ledger/443/ca")
}

func TestDeltaNACKIsNotAnsweredWithALoop(t *testing.T) {
	h := start(t, snapshots.Options{})
	h.publish(t, st.Output(payments, ledger), true)
	s := openDelta(t, h)
	s.initial(t, "envoy-1", "edge")

	bad := payments
	bad.SNI = "rejected.example"
	h.publish(t, st.Output(bad, ledger), true)
	rejected := s.next(t)
	names, _ := deltaNames(rejected)
	wantNames(t, "CDS update", names, "shop/payments/8443")
	s.expectWarmingEDS(t, "shop/payments/8443")
	s.send(t, &discoveryv3.DeltaDiscoveryRequest{
		TypeUrl: resource.ClusterType, ResponseNonce: rejected.GetNonce(),
		ErrorDetail: &rpcstatus.Status{Code: 3, Message: "Error adding/updating cluster(s) shop/payments/8443: bad SNI"},
	})
	s.none(t)

	nack := h.expectNACK(t)
	if nack.NodeID != "envoy-1" || nack.TypeURL != resource.ClusterType || nack.Nonce != rejected.GetNonce() || nack.Version != rejected.GetSystemVersionInfo() {
		t.Errorf("NACK = %+v", nack)
	}
	if len(nack.Policies) != 1 || nack.Policies[0] != payments.Policy() {
		t.Errorf("policies = %v", nack.Policies)
	}

	fixed := bad
	fixed.SNI = "payments.shop"
	h.publish(t, st.Output(fixed, ledger), true)
	next := s.next(t)
	names, _ = deltaNames(next)
	wantNames(t, "CDS after fix", names, "shop/payments/8443")
	s.ack(t, next)
	s.expectWarmingEDS(t, "shop/payments/8443")
	s.none(t)
	if got := counterValue(t, h.metrics.nacks.WithLabelValues(resource.ClusterType)); got != 1 {
		t.Errorf("NACK counter = %v, want 1", got)
	}
}

func TestDeltaFleetNamespacesAndIdenticalVersions(t *testing.T) {
	opts := snapshots.Options{FleetNamespaces: map[string][]string{"shop-edge": {"shop"}}}
	a, b := start(t, opts), start(t, opts)
	a.publish(t, st.Output(payments, ledger), true)
	b.publish(t, st.Output(ledger, payments), true)
	sa, sb := openDelta(t, a), openDelta(t, b)
	ca, ea, xa := sa.initial(t, "envoy-1", "shop-edge")
	cb, eb, xb := sb.initial(t, "envoy-2", "shop-edge")
	for _, pair := range [][2]*discoveryv3.DeltaDiscoveryResponse{{ca, cb}, {ea, eb}, {xa, xb}} {
		na, va := deltaNames(pair[0])
		_, vb := deltaNames(pair[1])
		if pair[0].GetSystemVersionInfo() != pair[1].GetSystemVersionInfo() {
			t.Errorf("%s: system versions %q vs %q", pair[0].GetTypeUrl(), pair[0].GetSystemVersionInfo(), pair[1].GetSystemVersionInfo())
		}
		for _, name := range na {
			if va[name] != vb[name] {
				t.Errorf("%s: %q vs %q", name, va[name], vb[name])
			}
		}
		if !slices.Equal(na, []string{"shop/payments/8443"}) && !slices.Equal(na, []string{"shop/payments/8443/ca"}) {
			t.Errorf("fleet shop-edge got %s %v", pair[0].GetTypeUrl(), na)
		}
	}
}

// expectWarmingEDS checks that an updated cluster's load assignment (and
// only it) is sent again: Envoy keeps the cluster warming until it is.
func (s *deltaStream) expectWarmingEDS(t *testing.T, cluster string) {
	t.Helper()
	resp := s.next(t)
	names, _ := deltaNames(resp)
	if resp.GetTypeUrl() != resource.EndpointType || !slices.Equal(names, []string{cluster}) {
		t.Fatalf("after a cluster update: %s %v, want EDS [%s]", resp.GetTypeUrl(), names, cluster)
	}
	s.ack(t, resp)
}

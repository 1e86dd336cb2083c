package xds

import (
	"context"
	"slices"
	"testing"
	"time"

	clusterv3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	discoveryv3 "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	sotwclient "github.com/envoyproxy/go-control-plane/pkg/client/sotw/v3"
	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"

	"github.com/tlsplane/tlsplane/snapshots"
	st "github.com/tlsplane/tlsplane/snapshots/snapshotstest"
)

// adsClient wraps go-control-plane's SotW client, whose Fetch blocks: a
// Fetch that timed out stays pending and delivers the next response.
type adsClient struct {
	client  sotwclient.ADSClient
	pending chan fetched
	fetches int
}

type fetched struct {
	resp *sotwclient.Response
	err  error
}

func connectSotw(t *testing.T, h *harness, n *corev3.Node, typeURL string) *adsClient {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	c := &adsClient{client: sotwclient.NewADSClient(ctx, n, typeURL)}
	if err := c.client.InitConnect(h.conn); err != nil {
		t.Fatal(err)
	}
	return c
}

func (c *adsClient) startFetch() {
	if c.pending != nil {
		return
	}
	c.pending = make(chan fetched, 1)
	go func(out chan fetched) {
		resp, err := c.client.Fetch()
		out <- fetched{resp, err}
	}(c.pending)
}

// fetch returns the names in the next response.
func (c *adsClient) fetch(t *testing.T) []string {
	t.Helper()
	c.startFetch()
	select {
	case f := <-c.pending:
		c.pending = nil
		if f.err != nil {
			t.Fatal(f.err)
		}
		c.fetches++
		return anyNames(t, f.resp)
	case <-time.After(patience):
		t.Fatal("no SotW response")
		return nil
	}
}

func (c *adsClient) none(t *testing.T) {
	t.Helper()
	c.startFetch()
	select {
	case f := <-c.pending:
		c.pending = nil
		t.Fatalf("unexpected response (err %v): %v", f.err, anyNames(t, f.resp))
	case <-time.After(quiet):
	}
}

func (c *adsClient) ack(t *testing.T) {
	t.Helper()
	if err := c.client.Ack(); err != nil {
		t.Fatal(err)
	}
}

func anyNames(t *testing.T, resp *sotwclient.Response) []string {
	t.Helper()
	var names []string
	if resp == nil {
		return nil
	}
	for _, a := range resp.Resources {
		names = append(names, resourceName(a.GetValue()))
	}
	slices.Sort(names)
	return names
}

func wantNames(t *testing.T, what string, got []string, want ...string) {
	t.Helper()
	if !slices.Equal(got, want) {
		t.Fatalf("%s: got %v, want %v", what, got, want)
	}
}

func TestSotwInitialFetchUpdateAndUnchanged(t *testing.T) {
	h := start(t, snapshots.Options{})
	h.publish(t, st.Output(payments), true)
	n := node("envoy-1", "edge")
	cds := connectSotw(t, h, n, resource.ClusterType)
	eds := connectSotw(t, h, n, resource.EndpointType)
	sds := connectSotw(t, h, n, resource.SecretType)
	wantNames(t, "CDS", cds.fetch(t), "shop/payments/8443")
	wantNames(t, "EDS", eds.fetch(t), "shop/payments/8443")
	wantNames(t, "SDS", sds.fetch(t), "shop/payments/8443/ca")
	for _, c := range []*adsClient{cds, eds, sds} {
		c.ack(t)
	}

	// Same content: nothing is sent.
	h.publish(t, st.Output(payments), false)
	for _, c := range []*adsClient{cds, eds, sds} {
		c.none(t)
	}

	// A new backend changes every type; an edit to one type re-sends only
	// it. CDS carries every cluster in each response; EDS and SDS only
	// what changed (xDS protocol, "Grouping Resources into Responses").
	h.publish(t, st.Output(payments, ledger), true)
	wantNames(t, "CDS", cds.fetch(t), "bank/ledger/443", "shop/payments/8443")
	wantNames(t, "EDS", eds.fetch(t), "bank/ledger/443")
	wantNames(t, "SDS", sds.fetch(t), "bank/ledger/443/ca")
	for _, c := range []*adsClient{cds, eds, sds} {
		c.ack(t)
	}
	rotated := payments
	rotated.CA = "-----BEGIN CERTIFICATE-----\nrotated\n-----END CERTIFICATE-----\n"
	h.publish(t, st.Output(rotated, ledger), true)
	wantNames(t, "SDS after CA rotation", sds.fetch(t), "shop/payments/8443/ca")
	cds.none(t)
	eds.none(t)
	sds.ack(t)

	// A cluster edit re-sends its load assignment as well: Envoy warms an
	// updated cluster until its load assignment comes again.
	resni := rotated
	resni.SNI = "payments.internal"
	h.publish(t, st.Output(resni, ledger), true)
	wantNames(t, "CDS after a cluster edit", cds.fetch(t), "bank/ledger/443", "shop/payments/8443")
	wantNames(t, "EDS after a cluster edit", eds.fetch(t), "shop/payments/8443")
	sds.none(t)
}

func TestSotwNACKIsNotAnsweredWithALoop(t *testing.T) {
	h := start(t, snapshots.Options{})
	h.publish(t, st.Output(payments), true)
	cds := connectSotw(t, h, node("envoy-1", "edge"), resource.ClusterType)
	cds.fetch(t)
	cds.ack(t)

	bad := payments
	bad.SNI = "rejected.example"
	h.publish(t, st.Output(bad, ledger), true)
	cds.fetch(t)
	if err := cds.client.Nack("Error adding/updating cluster(s) shop/payments/8443: bad SNI"); err != nil {
		t.Fatal(err)
	}
	cds.none(t)

	nack := h.expectNACK(t)
	if nack.NodeID != "envoy-1" || nack.Fleet != "edge" || nack.TypeURL != resource.ClusterType || nack.Version == "" || nack.Nonce == "" {
		t.Errorf("NACK = %+v", nack)
	}
	wantNames(t, "rejected resources", nack.Resources, "shop/payments/8443")
	if len(nack.Policies) != 1 || nack.Policies[0] != payments.Policy() {
		t.Errorf("policies = %v, want [%v]", nack.Policies, payments.Policy())
	}

	// The next change is delivered as usual.
	fixed := bad
	fixed.SNI = "payments.shop"
	h.publish(t, st.Output(fixed, ledger), true)
	wantNames(t, "CDS after fix", cds.fetch(t), "bank/ledger/443", "shop/payments/8443")
	cds.ack(t)
	cds.none(t)
	if cds.fetches != 3 {
		t.Errorf("CDS responses = %d, want 3", cds.fetches)
	}
	if got := counterValue(t, h.metrics.nacks.WithLabelValues(resource.ClusterType)); got != 1 {
		t.Errorf("NACK counter = %v, want 1", got)
	}
}

// An Envoy asks EDS and SDS by name over one stream; in ADS mode the cache
// answers only if the snapshot holds exactly the named secrets.
func TestSotwSecretsMatchClusterReferences(t *testing.T) {
	h := start(t, snapshots.Options{})
	h.publish(t, st.Output(payments, ledger), true)
	s := openSotw(t, h)
	n := node("envoy-1", "edge")
	s.send(t, &discoveryv3.DiscoveryRequest{Node: n, TypeUrl: resource.ClusterType})
	cds := s.next(t)
	var secrets []string
	for _, a := range cds.GetResources() {
		c := &clusterv3.Cluster{}
		if err := a.UnmarshalTo(c); err != nil {
			t.Fatal(err)
		}
		tls := st.TLSContext(t, c)
		secrets = append(secrets, tls.GetCommonTlsContext().GetCombinedValidationContext().GetValidationContextSdsSecretConfig().GetName())
	}
	slices.Sort(secrets)
	s.send(t, &discoveryv3.DiscoveryRequest{Node: n, TypeUrl: resource.SecretType, ResourceNames: secrets})
	sds := s.next(t)
	var got []string
	for _, a := range sds.GetResources() {
		got = append(got, resourceName(a.GetValue()))
	}
	slices.Sort(got)
	wantNames(t, "SDS", got, secrets...)
	wantNames(t, "referenced", secrets, "bank/ledger/443/ca", "shop/payments/8443/ca")
}

func TestSotwFleetNamespaces(t *testing.T) {
	h := start(t, snapshots.Options{FleetNamespaces: map[string][]string{"shop-edge": {"shop"}}})
	shop := connectSotw(t, h, node("envoy-1", "shop-edge"), resource.SecretType)
	all := connectSotw(t, h, node("envoy-2", ""), resource.SecretType)
	// Connected before the first publish: served when it comes.
	h.publish(t, st.Output(payments, ledger), true)
	wantNames(t, "shop-edge SDS", shop.fetch(t), "shop/payments/8443/ca")
	wantNames(t, "default fleet SDS", all.fetch(t), "bank/ledger/443/ca", "shop/payments/8443/ca")
	if got := counterValue(t, h.metrics.streams.WithLabelValues("shop-edge", resource.SecretType)); got != 1 {
		t.Errorf("streams gauge = %v, want 1", got)
	}
}

func TestTwoServersServeIdenticalVersions(t *testing.T) {
	versions := func(h *harness) map[string]string {
		s := openSotw(t, h)
		n := node("envoy-1", "edge")
		out := map[string]string{}
		s.send(t, &discoveryv3.DiscoveryRequest{Node: n, TypeUrl: resource.ClusterType})
		out["cds"] = s.next(t).GetVersionInfo()
		s.send(t, &discoveryv3.DiscoveryRequest{Node: n, TypeUrl: resource.EndpointType, ResourceNames: []string{"bank/ledger/443", "shop/payments/8443"}})
		out["eds"] = s.next(t).GetVersionInfo()
		s.send(t, &discoveryv3.DiscoveryRequest{Node: n, TypeUrl: resource.SecretType, ResourceNames: []string{"bank/ledger/443/ca", "shop/payments/8443/ca"}})
		out["sds"] = s.next(t).GetVersionInfo()
		return out
	}
	a, b := start(t, snapshots.Options{}), start(t, snapshots.Options{})
	a.publish(t, st.Output(payments, ledger), true)
	b.publish(t, st.Output(ledger, payments), true)
	va, vb := versions(a), versions(b)
	for typ, v := range va {
		if v == "" || vb[typ] != v {
			t.Errorf("%s: %q vs %q", typ, v, vb[typ])
		}
	}
}

package xds

import (
	"bytes"
	"slices"
	"testing"
	"time"

	listenerv3 "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	tlsv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/transport_sockets/tls/v3"
	discoveryv3 "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"
	rpcstatus "google.golang.org/genproto/googleapis/rpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/tlsplane/tlsplane/snapshots"
	st "github.com/tlsplane/tlsplane/snapshots/snapshotstest"
)

var edge = st.Gateway{Namespace: "shop", Name: "edge", HTTPPort: 80, HTTPSPort: 443, Hostname: "shop.example", Backend: payments}

// holdsKey reports whether a response's bytes carry g's private key.
func holdsKey(t *testing.T, resp proto.Message, g st.Gateway) bool {
	t.Helper()
	b, err := proto.Marshal(resp)
	if err != nil {
		t.Fatal(err)
	}
	return bytes.Contains(b, []byte(g.PrivateKey()))
}

// ask sends req, checks the response's type, ACKs it and returns it.
func (s *sotwStream) ask(t *testing.T, req *discoveryv3.DiscoveryRequest) *discoveryv3.DiscoveryResponse {
	t.Helper()
	s.send(t, req)
	resp := s.next(t)
	if resp.GetTypeUrl() != req.GetTypeUrl() {
		t.Fatalf("asked %s, got %s", req.GetTypeUrl(), resp.GetTypeUrl())
	}
	// ACK, so the stream is ready for the type's next version.
	s.send(t, &discoveryv3.DiscoveryRequest{TypeUrl: resp.GetTypeUrl(), VersionInfo: resp.GetVersionInfo(), ResponseNonce: resp.GetNonce(), ResourceNames: req.GetResourceNames()})
	return resp
}

func sotwNames(resp *discoveryv3.DiscoveryResponse) []string {
	var names []string
	for _, a := range resp.GetResources() {
		names = append(names, resourceName(a.GetValue()))
	}
	slices.Sort(names)
	return names
}

// An Envoy of a Gateway fleet, over SotW, gets its listeners, their route
// configurations and the listener certificate, and the cluster its routes
// reach (not bank/ledger/443, which they do not); an Envoy of another
// fleet asking for the same names gets none of them.
func TestSotwGatewayFleetGetsListenersRoutesAndCertificate(t *testing.T) {
	h := start(t, snapshots.Options{})
	h.publish(t, st.WithGateways(st.Output(payments, ledger), edge), true)

	gw := openSotw(t, h)
	n := node("envoy-gw", edge.Fleet())
	wantNames(t, "CDS", sotwNames(gw.ask(t, &discoveryv3.DiscoveryRequest{Node: n, TypeUrl: resource.ClusterType})), "shop/payments/8443")
	lds := gw.ask(t, &discoveryv3.DiscoveryRequest{Node: n, TypeUrl: resource.ListenerType})
	wantNames(t, "LDS", sotwNames(lds), "shop/edge/443", "shop/edge/80")
	for _, a := range lds.GetResources() {
		if err := a.UnmarshalTo(&listenerv3.Listener{}); err != nil {
			t.Fatalf("LDS resource: %v", err)
		}
	}
	routes := []string{"shop/edge/443/https", "shop/edge/80"}
	rds := gw.ask(t, &discoveryv3.DiscoveryRequest{Node: n, TypeUrl: resource.RouteType, ResourceNames: routes})
	wantNames(t, "RDS", sotwNames(rds), routes...)
	rc := &routev3.RouteConfiguration{}
	if err := rds.GetResources()[0].UnmarshalTo(rc); err != nil || rc.GetVirtualHosts()[0].GetRoutes()[0].GetRoute().GetCluster() != "shop/payments/8443" {
		t.Fatalf("route configuration %v (%v), want a route to shop/payments/8443", rc, err)
	}
	secrets := []string{edge.CertificateName(), "bank/ledger/443/ca", "shop/payments/8443/ca"} // sorted
	sds := gw.ask(t, &discoveryv3.DiscoveryRequest{Node: n, TypeUrl: resource.SecretType, ResourceNames: secrets})
	wantNames(t, "SDS", sotwNames(sds), edge.CertificateName(), "shop/payments/8443/ca")
	if !holdsKey(t, sds, edge) {
		t.Fatal("the Gateway fleet's SDS response lacks its certificate's private key")
	}
	for _, a := range sds.GetResources() {
		s := &tlsv3.Secret{}
		if err := a.UnmarshalTo(s); err != nil {
			t.Fatal(err)
		}
		if s.GetName() == edge.CertificateName() && s.GetTlsCertificate().GetCertificateChain() == nil {
			t.Fatalf("certificate secret without a chain: %v", s)
		}
	}

	mesh := openSotw(t, h)
	m := node("envoy-mesh", "mesh")
	for _, req := range []*discoveryv3.DiscoveryRequest{
		{Node: m, TypeUrl: resource.ClusterType},
		{Node: m, TypeUrl: resource.ListenerType},
		{Node: m, TypeUrl: resource.SecretType, ResourceNames: secrets},
	} {
		resp := mesh.ask(t, req)
		if holdsKey(t, resp, edge) {
			t.Fatalf("fleet mesh, %s: the response holds shop/edge's private key", req.GetTypeUrl())
		}
		names := sotwNames(resp)
		switch req.GetTypeUrl() {
		case resource.ListenerType:
			wantNames(t, "mesh LDS", names)
		case resource.SecretType:
			wantNames(t, "mesh SDS", names, "bank/ledger/443/ca", "shop/payments/8443/ca")
		}
	}
	// A route configuration another fleet names is not answered with it.
	mesh.send(t, &discoveryv3.DiscoveryRequest{Node: m, TypeUrl: resource.RouteType, ResourceNames: routes})
	select {
	case resp := <-mesh.recv:
		if len(resp.GetResources()) != 0 {
			t.Fatalf("fleet mesh got route configurations %v", sotwNames(resp))
		}
	case <-time.After(quiet):
	}

	// A certificate rotation reaches the Gateway fleet, SDS only.
	rotated := edge
	rotated.Key = "rotated"
	h.publish(t, st.WithGateways(st.Output(payments, ledger), rotated), true)
	resp := gw.next(t)
	if resp.GetTypeUrl() != resource.SecretType || !holdsKey(t, resp, rotated) {
		t.Fatalf("after rotation: %s %v, want SDS with the new key", resp.GetTypeUrl(), sotwNames(resp))
	}
}

// The same over delta: the Gateway fleet is sent its listeners, routes and
// certificate; another fleet subscribing to the certificate by name is
// told it does not exist.
func TestDeltaGatewayFleetGetsListenersRoutesAndCertificate(t *testing.T) {
	h := start(t, snapshots.Options{})
	h.publish(t, st.WithGateways(st.Output(payments, ledger), edge), true)

	gw := openDelta(t, h)
	gw.initial(t, "envoy-gw", edge.Fleet())
	lds := gw.subscribe(t, "envoy-gw", edge.Fleet(), resource.ListenerType)
	names, versions := deltaNames(lds)
	wantNames(t, "LDS", names, "shop/edge/443", "shop/edge/80")
	for name, v := range versions {
		if v == "" {
			t.Errorf("listener %s: no version", name)
		}
	}
	routes := []string{"shop/edge/443/https", "shop/edge/80"}
	rds := gw.subscribe(t, "envoy-gw", edge.Fleet(), resource.RouteType, routes...)
	names, _ = deltaNames(rds)
	wantNames(t, "RDS", names, routes...)
	sds := gw.subscribe(t, "envoy-gw", edge.Fleet(), resource.SecretType, edge.CertificateName())
	names, _ = deltaNames(sds)
	wantNames(t, "SDS", names, edge.CertificateName())
	if !holdsKey(t, sds, edge) {
		t.Fatal("the Gateway fleet's SDS response lacks its certificate's private key")
	}

	mesh := openDelta(t, h)
	mesh.initial(t, "envoy-mesh", "mesh")
	resp := mesh.subscribe(t, "envoy-mesh", "mesh", resource.ListenerType)
	if len(resp.GetResources()) != 0 {
		t.Fatalf("fleet mesh got listeners %v", resp.GetResources())
	}
	resp = mesh.subscribe(t, "envoy-mesh", "mesh", resource.RouteType, routes...)
	wantNames(t, "mesh RDS removed", sortedCopy(resp.GetRemovedResources()), routes...)
	resp = mesh.subscribe(t, "envoy-mesh", "mesh", resource.SecretType, edge.CertificateName())
	if len(resp.GetResources()) != 0 || holdsKey(t, resp, edge) {
		t.Fatalf("fleet mesh subscribing to shop/edge's certificate got %v", resp.GetResources())
	}
	wantNames(t, "mesh SDS removed", resp.GetRemovedResources(), edge.CertificateName())

	// A rotation reaches the Gateway fleet only.
	rotated := edge
	rotated.Key = "rotated"
	h.publish(t, st.WithGateways(st.Output(payments, ledger), rotated), true)
	resp = gw.next(t)
	names, _ = deltaNames(resp)
	if resp.GetTypeUrl() != resource.SecretType || !holdsKey(t, resp, rotated) {
		t.Fatalf("after rotation: %s %v, want SDS with the new key", resp.GetTypeUrl(), names)
	}
	wantNames(t, "rotation", names, edge.CertificateName())
	mesh.none(t)
}

// A rejected listener is handled like a rejected cluster: reported once,
// not sent again until it changes. No policy produced a listener, so the
// NACK names the listener and no policy.
func TestSotwListenerNACK(t *testing.T) {
	h := start(t, snapshots.Options{})
	h.publish(t, st.WithGateways(st.Output(payments), edge), true)
	lds := connectSotw(t, h, node("envoy-gw", edge.Fleet()), resource.ListenerType)
	wantNames(t, "LDS", lds.fetch(t), "shop/edge/443", "shop/edge/80")
	lds.ack(t)

	moved := edge
	moved.Hostname = "bad..example"
	h.publish(t, st.WithGateways(st.Output(payments), moved), true)
	lds.fetch(t)
	if err := lds.client.Nack("Error adding/updating listener(s) shop/edge/443: invalid server name"); err != nil {
		t.Fatal(err)
	}
	lds.none(t)
	nack := h.expectNACK(t)
	if nack.Fleet != edge.Fleet() || nack.TypeURL != resource.ListenerType || nack.Version == "" {
		t.Errorf("NACK = %+v", nack)
	}
	wantNames(t, "rejected listeners", nack.Resources, "shop/edge/443")
	if len(nack.Policies) != 0 {
		t.Errorf("policies = %v, want none", nack.Policies)
	}
	if got := counterValue(t, h.metrics.nacks.WithLabelValues(resource.ListenerType)); got != 1 {
		t.Errorf("LDS NACK counter = %v, want 1", got)
	}

	h.publish(t, st.WithGateways(st.Output(payments), edge), true)
	wantNames(t, "LDS after the fix", lds.fetch(t), "shop/edge/443", "shop/edge/80")
}

func TestDeltaListenerNACK(t *testing.T) {
	h := start(t, snapshots.Options{})
	h.publish(t, st.WithGateways(st.Output(payments), edge), true)
	s := openDelta(t, h)
	s.subscribe(t, "envoy-gw", edge.Fleet(), resource.ListenerType)

	moved := edge
	moved.Hostname = "bad..example"
	h.publish(t, st.WithGateways(st.Output(payments), moved), true)
	resp := s.next(t)
	names, _ := deltaNames(resp)
	wantNames(t, "changed listeners", names, "shop/edge/443")
	s.send(t, &discoveryv3.DeltaDiscoveryRequest{TypeUrl: resource.ListenerType, ResponseNonce: resp.GetNonce(),
		ErrorDetail: &rpcstatus.Status{Code: 3, Message: "Error adding/updating listener(s) shop/edge/443: invalid server name"}})
	nack := h.expectNACK(t)
	if nack.Fleet != edge.Fleet() || nack.TypeURL != resource.ListenerType {
		t.Errorf("NACK = %+v", nack)
	}
	wantNames(t, "rejected listeners", nack.Resources, "shop/edge/443")
	s.none(t)
}

func sortedCopy(names []string) []string {
	out := slices.Clone(names)
	slices.Sort(out)
	return out
}

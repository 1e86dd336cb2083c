package xds

import (
	"fmt"
	"slices"
	"testing"

	discoveryv3 "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/tlsplane/tlsplane/snapshots"
	st "github.com/tlsplane/tlsplane/snapshots/snapshotstest"
)

// A reconnecting Envoy names what it holds (initial_resource_versions): it
// is sent only what differs, and the removal of what is gone, for every
// type (load assignments included).
func TestDeltaReconnectSendsOnlyWhatDiffers(t *testing.T) {
	h := start(t, snapshots.Options{})
	h.publish(t, st.Output(payments, ledger), true)
	first := openDelta(t, h)
	cds, eds, sds := first.initial(t, "envoy-1", "edge")

	moved := payments
	moved.Address = "10.0.0.9"
	h.publish(t, st.Output(moved), true) // ledger gone, payments' endpoints moved

	again := openDelta(t, h)
	for _, held := range []*discoveryv3.DeltaDiscoveryResponse{cds, eds, sds} {
		_, versions := deltaNames(held)
		names := slices.Sorted(func(yield func(string) bool) {
			for n := range versions {
				if !yield(n) {
					return
				}
			}
		})
		req := &discoveryv3.DeltaDiscoveryRequest{Node: node("envoy-1", "edge"), TypeUrl: held.GetTypeUrl(), InitialResourceVersions: versions}
		if held.GetTypeUrl() != resource.ClusterType {
			req.ResourceNamesSubscribe = names
		}
		again.send(t, req)
		resp := again.next(t)
		sent, _ := deltaNames(resp)
		switch resp.GetTypeUrl() {
		case resource.ClusterType:
			wantNames(t, "CDS after reconnect", sent)
			wantNames(t, "CDS removed", resp.GetRemovedResources(), "bank/ledger/443")
		case resource.EndpointType:
			wantNames(t, "EDS after reconnect", sent, "shop/payments/8443")
			wantNames(t, "EDS removed", resp.GetRemovedResources(), "bank/ledger/443")
		case resource.SecretType:
			wantNames(t, "SDS after reconnect", sent)
			wantNames(t, "SDS removed", resp.GetRemovedResources(), "bank/ledger/443/ca")
		}
		again.ack(t, resp)
	}
	again.none(t)
}

// Names asked for later, again after an unsubscription, or unsubscribed
// under a wildcard (the client drops them) are sent; a name not served is
// answered removed, so the client stops waiting for it.
func TestDeltaSubscriptionChanges(t *testing.T) {
	h := start(t, snapshots.Options{})
	h.publish(t, st.Output(payments, ledger), true)
	s := openDelta(t, h)
	s.initial(t, "envoy-1", "edge")

	s.send(t, &discoveryv3.DeltaDiscoveryRequest{TypeUrl: resource.EndpointType, ResourceNamesUnsubscribe: []string{"bank/ledger/443"}})
	s.none(t)
	resp := s.subscribe(t, "envoy-1", "edge", resource.EndpointType, "bank/ledger/443", "shop/missing/443")
	names, _ := deltaNames(resp)
	wantNames(t, "EDS resubscribed", names, "bank/ledger/443")
	wantNames(t, "EDS not served", resp.GetRemovedResources(), "shop/missing/443")

	// CDS is a wildcard: a cluster also named, then unsubscribed by name,
	// is still the wildcard's, so it is sent again.
	s.send(t, &discoveryv3.DeltaDiscoveryRequest{TypeUrl: resource.ClusterType, ResourceNamesSubscribe: []string{"*", "bank/ledger/443"}})
	resp = s.next(t)
	names, _ = deltaNames(resp)
	wantNames(t, "CDS named", names, "bank/ledger/443")
	s.ack(t, resp)
	s.send(t, &discoveryv3.DeltaDiscoveryRequest{TypeUrl: resource.ClusterType, ResourceNamesUnsubscribe: []string{"bank/ledger/443"}})
	resp = s.next(t)
	names, _ = deltaNames(resp)
	wantNames(t, "CDS unsubscribed under the wildcard", names, "bank/ledger/443")
	s.ack(t, resp)

	// Without the wildcard, only named clusters change the stream.
	s.send(t, &discoveryv3.DeltaDiscoveryRequest{TypeUrl: resource.ClusterType, ResourceNamesUnsubscribe: []string{"*"}, ResourceNamesSubscribe: []string{"shop/payments/8443"}})
	resp = s.next(t)
	names, _ = deltaNames(resp)
	wantNames(t, "CDS named after the wildcard", names, "shop/payments/8443")
	s.ack(t, resp)
	moved := ledger
	moved.Address = "10.0.0.7"
	moved.SNI = "moved.bank"
	h.publish(t, st.Output(payments, moved), true)
	for _, want := range []string{resource.EndpointType} { // its endpoints are still subscribed
		resp := s.next(t)
		names, _ := deltaNames(resp)
		if resp.GetTypeUrl() != want || !slices.Equal(names, []string{"bank/ledger/443"}) {
			t.Fatalf("after an unsubscribed cluster changed: %s %v, want %s [bank/ledger/443]", resp.GetTypeUrl(), names, want)
		}
		s.ack(t, resp)
	}
	s.none(t)
}

// A client that stops answering while more changes are published than the
// feed's log keeps is told to reconnect, not left holding stale resources.
func TestDeltaStreamTooFarBehindIsToldToReconnect(t *testing.T) {
	h := start(t, snapshots.Options{})
	h.publish(t, st.Output(payments), true)
	s := openDelta(t, h)
	s.send(t, &discoveryv3.DeltaDiscoveryRequest{Node: node("envoy-1", "edge"), TypeUrl: resource.ClusterType})
	held := s.next(t) // not ACKed: nothing more is sent meanwhile
	b := payments
	for i := range 5000 {
		b.SNI = fmt.Sprintf("sni-%d.shop", i)
		h.publish(t, st.Output(b), true)
	}
	s.ack(t, held)
	for resp := range s.recv {
		t.Fatalf("a stream behind the log was sent %s %v", resp.GetTypeUrl(), resp.GetResources())
	}
	_, err := s.stream.Recv()
	if status.Code(err) != codes.Unavailable {
		t.Fatalf("stream ended with %v, want Unavailable", err)
	}
}

// An Envoy that connects before the first translation is answered by it,
// not before: an empty answer would let it finish initialising without
// clusters.
func TestDeltaStreamWaitsForTheFirstTranslation(t *testing.T) {
	h := start(t, snapshots.Options{})
	s := openDelta(t, h)
	s.send(t, &discoveryv3.DeltaDiscoveryRequest{Node: node("envoy-1", "edge"), TypeUrl: resource.ClusterType})
	s.none(t)
	h.publish(t, st.Output(payments), true)
	resp := s.next(t)
	names, _ := deltaNames(resp)
	wantNames(t, "CDS after the first translation", names, "shop/payments/8443")
}

// A type tlsplane does not serve (runtime, say) is answered like an empty
// one: the first wildcard request gets an empty response, so Envoy's
// initialisation does not wait for it, and named resources are removed.
// Its metrics go under the type_url "other": a client cannot grow the
// label set.
func TestDeltaUnservedTypeIsEmpty(t *testing.T) {
	h := start(t, snapshots.Options{})
	h.publish(t, st.Output(payments), true)
	s := openDelta(t, h)
	s.send(t, &discoveryv3.DeltaDiscoveryRequest{Node: node("envoy-1", "edge"), TypeUrl: resource.RuntimeType})
	resp := s.next(t)
	if resp.GetTypeUrl() != resource.RuntimeType || len(resp.GetResources()) != 0 || len(resp.GetRemovedResources()) != 0 {
		t.Fatalf("wildcard RTDS: %s %v removed %v, want an empty RTDS response", resp.GetTypeUrl(), resp.GetResources(), resp.GetRemovedResources())
	}
	s.ack(t, resp)
	resp = s.subscribe(t, "envoy-1", "edge", "type.googleapis.com/made.up.Type", "anything")
	wantNames(t, "made-up type", resp.GetRemovedResources(), "anything")
	s.none(t)
	if got := counterValue(t, h.metrics.responses.WithLabelValues(otherTypes)); got != 2 {
		t.Errorf("responses of unserved types = %v, want 2 under %q", got, otherTypes)
	}
	if got := counterValue(t, h.metrics.streams.WithLabelValues("edge", otherTypes)); got != 1 {
		t.Errorf("streams gauge of unserved types = %v, want the one stream under %q", got, otherTypes)
	}
	if got := counterValue(t, h.metrics.responses.WithLabelValues(resource.RuntimeType)); got != 0 {
		t.Errorf("an unserved type has a label of its own (%v responses)", got)
	}
}

// Listeners and routes are served types: a fleet without a Gateway gets
// an empty LDS answer with a version, and named routes removed.
func TestDeltaFleetWithoutGatewayHasNoListenersOrRoutes(t *testing.T) {
	h := start(t, snapshots.Options{})
	h.publish(t, st.Output(payments), true)
	s := openDelta(t, h)
	s.send(t, &discoveryv3.DeltaDiscoveryRequest{Node: node("envoy-1", "edge"), TypeUrl: resource.ListenerType})
	resp := s.next(t)
	if resp.GetTypeUrl() != resource.ListenerType || len(resp.GetResources()) != 0 || resp.GetSystemVersionInfo() == "" {
		t.Fatalf("wildcard LDS: %s %v version %q, want an empty, versioned LDS response", resp.GetTypeUrl(), resp.GetResources(), resp.GetSystemVersionInfo())
	}
	s.ack(t, resp)
	resp = s.subscribe(t, "envoy-1", "edge", resource.RouteType, "shop-routes")
	wantNames(t, "RDS not served", resp.GetRemovedResources(), "shop-routes")
	s.none(t)
	if got := counterValue(t, h.metrics.responses.WithLabelValues(resource.ListenerType)); got != 1 {
		t.Errorf("LDS responses = %v, want 1 under its own type_url", got)
	}
}

package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	discoveryv3 "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"
)

// cdsDeltaStream is a raw incremental ADS stream subscribed to CDS by
// wildcard, as an Envoy with api_type DELTA_GRPC.
type cdsDeltaStream struct {
	stream discoveryv3.AggregatedDiscoveryService_DeltaAggregatedResourcesClient
}

func newCDSDeltaStream(t *testing.T, addr string) *cdsDeltaStream {
	t.Helper()
	conn, ctx := xdsConn(t, addr)
	stream, err := discoveryv3.NewAggregatedDiscoveryServiceClient(conn).DeltaAggregatedResources(ctx)
	if err != nil {
		t.Fatal(err)
	}
	s := &cdsDeltaStream{stream: stream}
	s.send(t, &discoveryv3.DeltaDiscoveryRequest{
		Node:    &corev3.Node{Id: "serve-test-delta", Cluster: "quickstart"},
		TypeUrl: resource.ClusterType,
	})
	return s
}

func (s *cdsDeltaStream) send(t *testing.T, req *discoveryv3.DeltaDiscoveryRequest) {
	t.Helper()
	if err := s.stream.Send(req); err != nil {
		t.Fatal(err)
	}
}

// next waits for the next CDS response, ACKs it, and returns the names it
// adds or changes and the names it removes, sorted.
func (s *cdsDeltaStream) next(t *testing.T) (changed, removed []string) {
	t.Helper()
	resp, err := s.stream.Recv()
	if err != nil {
		t.Fatalf("delta CDS: %v", err)
	}
	if resp.GetTypeUrl() != resource.ClusterType {
		t.Fatalf("delta response of type %s, want CDS", resp.GetTypeUrl())
	}
	for _, r := range resp.GetResources() {
		changed = append(changed, r.GetName())
	}
	removed = slices.Clone(resp.GetRemovedResources())
	slices.Sort(changed)
	slices.Sort(removed)
	s.send(t, &discoveryv3.DeltaDiscoveryRequest{TypeUrl: resource.ClusterType, ResponseNonce: resp.GetNonce()})
	return changed, removed
}

// TestServeDirectoryThroughDeltaADS is TestServeDirectoryThroughADS for
// incremental xDS: a file edit, a deleted file and a broken file, as the
// changed and removed resources of delta responses.
func TestServeDirectoryThroughDeltaADS(t *testing.T) {
	dir := copyQuickstart(t)
	p := startServe(t, dir)
	p.waitAdmin(t, "/readyz", 200, "ready")

	s := newCDSDeltaStream(t, p.xds)
	expect := func(step string, wantChanged, wantRemoved []string) {
		t.Helper()
		changed, removed := s.next(t)
		if !slices.Equal(changed, wantChanged) || !slices.Equal(removed, wantRemoved) {
			t.Fatalf("%s: delta CDS changed %v removed %v, want changed %v removed %v", step, changed, removed, wantChanged, wantRemoved)
		}
	}
	expect("initial", []string{"shop/catalog/8080", "shop/payments/8443"}, nil)

	catalog := filepath.Join(dir, "catalog.yaml")
	original, err := os.ReadFile(catalog)
	if err != nil {
		t.Fatal(err)
	}
	write(t, catalog, strings.ReplaceAll(string(original), "port: 8080", "port: 9090"))
	expect("after editing catalog.yaml", []string{"shop/catalog/9090"}, []string{"shop/catalog/8080"})

	if err := os.Remove(catalog); err != nil {
		t.Fatal(err)
	}
	expect("after deleting catalog.yaml", nil, []string{"shop/catalog/9090"})

	// payments.yaml broken: its cluster is neither changed nor removed by
	// the next update, which another file causes.
	write(t, filepath.Join(dir, "payments.yaml"), "kind: Service\nmetadata: [broken\n")
	p.waitAdmin(t, "/metrics", 200, "tlsplane_source_file_errors_total 1")
	write(t, catalog, string(original))
	expect("with payments.yaml broken", []string{"shop/catalog/8080"}, nil)
}

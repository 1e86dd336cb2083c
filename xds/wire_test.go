package xds

import (
	"testing"

	clusterv3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	discoveryv3 "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"

	"github.com/tlsplane/tlsplane/snapshots"
)

// The codec's concatenation of pre-encoded parts is the response protobuf
// would have marshalled, field by field.
func TestEncodedDeltaIsADeltaDiscoveryResponse(t *testing.T) {
	want := &discoveryv3.DeltaDiscoveryResponse{
		SystemVersionInfo: "v1", TypeUrl: resource.ClusterType, Nonce: "7",
		RemovedResources: []string{"old/gone/443", "old/gone/8443"},
	}
	entries, encoded := encodeClusters(t, (*snapshots.FeedEntry).Encoded, "shop/payments/8443", "bank/ledger/443")
	for _, e := range entries {
		value, err := anypb.New(e.Resource)
		if err != nil {
			t.Fatal(err)
		}
		want.Resources = append(want.Resources, &discoveryv3.Resource{Name: e.Name, Version: e.Version, Resource: value})
	}
	wantDecoded(t, newEncodedResponse("v1", resource.ClusterType, "7", want.RemovedResources, encoded), &discoveryv3.DeltaDiscoveryResponse{}, want)
}

// The codec's concatenation of pre-encoded parts is the DiscoveryResponse
// protobuf would have marshalled, field by field.
func TestEncodedSotwIsADiscoveryResponse(t *testing.T) {
	want := &discoveryv3.DiscoveryResponse{VersionInfo: "v1", TypeUrl: resource.ClusterType, Nonce: "7"}
	entries, encoded := encodeClusters(t, (*snapshots.FeedEntry).EncodedAny, "bank/ledger/443", "shop/payments/8443")
	for _, e := range entries {
		value, err := anypb.New(e.Resource)
		if err != nil {
			t.Fatal(err)
		}
		want.Resources = append(want.Resources, value)
	}
	wantDecoded(t, newEncodedResponse("v1", resource.ClusterType, "7", nil, encoded), &discoveryv3.DiscoveryResponse{}, want)
}

// encodeClusters encodes a cluster of each name, as the feed does.
func encodeClusters(t *testing.T, encode func(*snapshots.FeedEntry) ([]byte, error), names ...string) ([]*snapshots.FeedEntry, [][]byte) {
	t.Helper()
	var entries []*snapshots.FeedEntry
	var encoded [][]byte
	for _, name := range names {
		e := &snapshots.FeedEntry{Name: name, Version: "h-" + name, Resource: &clusterv3.Cluster{Name: name}}
		b, err := encode(e)
		if err != nil {
			t.Fatal(err)
		}
		entries, encoded = append(entries, e), append(encoded, b)
	}
	return entries, encoded
}

// wantDecoded marshals r with the server's codec, decodes it into got and
// compares it with want.
func wantDecoded(t *testing.T, r *encodedResponse, got, want proto.Message) {
	t.Helper()
	out, err := newCodec().Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	if err := proto.Unmarshal(out.Materialize(), got); err != nil {
		t.Fatal(err)
	}
	if !proto.Equal(want, got) {
		t.Errorf("decoded response\n%v\nwant\n%v", got, want)
	}
}

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
	clusters := []*clusterv3.Cluster{{Name: "shop/payments/8443"}, {Name: "bank/ledger/443"}}
	var encoded [][]byte
	want := &discoveryv3.DeltaDiscoveryResponse{
		SystemVersionInfo: "v1", TypeUrl: resource.ClusterType, Nonce: "7",
		RemovedResources: []string{"old/gone/443", "old/gone/8443"},
	}
	for _, c := range clusters {
		e := &snapshots.FeedEntry{Name: c.GetName(), Version: "h-" + c.GetName(), Resource: c}
		b, err := e.Encoded()
		if err != nil {
			t.Fatal(err)
		}
		encoded = append(encoded, b)
		value, err := anypb.New(c)
		if err != nil {
			t.Fatal(err)
		}
		want.Resources = append(want.Resources, &discoveryv3.Resource{Name: e.Name, Version: e.Version, Resource: value})
	}
	out, err := newCodec().Marshal(newEncodedResponse("v1", resource.ClusterType, "7", want.RemovedResources, encoded))
	if err != nil {
		t.Fatal(err)
	}
	got := &discoveryv3.DeltaDiscoveryResponse{}
	if err := proto.Unmarshal(out.Materialize(), got); err != nil {
		t.Fatal(err)
	}
	if !proto.Equal(want, got) {
		t.Errorf("decoded response\n%v\nwant\n%v", got, want)
	}
}

// The codec's concatenation of pre-encoded parts is the DiscoveryResponse
// protobuf would have marshalled, field by field.
func TestEncodedSotwIsADiscoveryResponse(t *testing.T) {
	clusters := []*clusterv3.Cluster{{Name: "bank/ledger/443"}, {Name: "shop/payments/8443"}}
	want := &discoveryv3.DiscoveryResponse{VersionInfo: "v1", TypeUrl: resource.ClusterType, Nonce: "7"}
	var encoded [][]byte
	for _, c := range clusters {
		e := &snapshots.FeedEntry{Name: c.GetName(), Version: "h-" + c.GetName(), Resource: c}
		b, err := e.EncodedAny()
		if err != nil {
			t.Fatal(err)
		}
		encoded = append(encoded, b)
		value, err := anypb.New(c)
		if err != nil {
			t.Fatal(err)
		}
		want.Resources = append(want.Resources, value)
	}
	out, err := newCodec().Marshal(newEncodedResponse("v1", resource.ClusterType, "7", nil, encoded))
	if err != nil {
		t.Fatal(err)
	}
	got := &discoveryv3.DiscoveryResponse{}
	if err := proto.Unmarshal(out.Materialize(), got); err != nil {
		t.Fatal(err)
	}
	if !proto.Equal(want, got) {
		t.Errorf("decoded response\n%v\nwant\n%v", got, want)
	}
}

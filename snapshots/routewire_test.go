package snapshots

import (
	"bytes"
	"fmt"
	"testing"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

func testRouteConfig(n int, path string) *routev3.RouteConfiguration {
	rc := &routev3.RouteConfiguration{
		Name:                     "edge/web/80",
		IgnorePortInHostMatching: true,
		ValidateClusters:         wrapperspb.Bool(false),
		RequestHeadersToAdd:      []*corev3.HeaderValueOption{{Header: &corev3.HeaderValue{Key: "x-gateway", Value: "web"}}},
	}
	for i := range n {
		rc.VirtualHosts = append(rc.VirtualHosts, &routev3.VirtualHost{
			Name: fmt.Sprintf("svc-%d.example", i), Domains: []string{fmt.Sprintf("svc-%d.example", i)},
			Routes: []*routev3.Route{{Name: fmt.Sprintf("shop/svc-%d/rule/0/match/0", i),
				Match:  &routev3.RouteMatch{PathSpecifier: &routev3.RouteMatch_Prefix{Prefix: path}},
				Action: &routev3.Route_Route{Route: &routev3.RouteAction{ClusterSpecifier: &routev3.RouteAction_Cluster{Cluster: fmt.Sprintf("shop/svc-%d/443", i)}}}}},
		})
	}
	return rc
}

// TestMarshalRouteConfigIsProtoMarshal: the bytes put together from the
// virtual hosts' are exactly proto's deterministic marshalling, first and
// from memoised virtual hosts after one of them is replaced.
func TestMarshalRouteConfigIsProtoMarshal(t *testing.T) {
	deterministic := proto.MarshalOptions{Deterministic: true}
	var v vhostBytes
	for _, rc := range []*routev3.RouteConfiguration{testRouteConfig(0, "/"), {Name: "only-name"}, {}, testRouteConfig(50, "/")} {
		got, err := v.marshalRouteConfig(rc)
		if err != nil {
			t.Fatal(err)
		}
		want, err := deterministic.Marshal(rc)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("%q with %d virtual hosts: %d bytes, proto marshals %d", rc.Name, len(rc.VirtualHosts), len(got), len(want))
		}
	}

	v = vhostBytes{}
	rc := testRouteConfig(50, "/")
	if _, err := v.marshalRouteConfig(rc); err != nil {
		t.Fatal(err)
	}
	v.rotate()
	edited := testRouteConfig(50, "/")
	copy(edited.VirtualHosts, rc.VirtualHosts)
	edited.VirtualHosts[7] = testRouteConfig(50, "/v2").VirtualHosts[7]
	got, err := v.marshalRouteConfig(edited)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := deterministic.Marshal(edited)
	if !bytes.Equal(got, want) {
		t.Fatal("after replacing one virtual host, the bytes differ from proto's")
	}
	if memo := v.byConfig[rc.Name]; len(memo) != 50 || memo["svc-7.example"].vh != edited.VirtualHosts[7] {
		t.Fatalf("memoised %d virtual hosts (want 50), the edited one from the new pointer: %v", len(memo), memo["svc-7.example"].vh == edited.VirtualHosts[7])
	}

	// Removing virtual hosts forgets theirs; a configuration not marshalled
	// for two rotations is forgotten.
	edited.VirtualHosts = edited.VirtualHosts[:10]
	got, err = v.marshalRouteConfig(edited)
	if err != nil {
		t.Fatal(err)
	}
	if want, _ := deterministic.Marshal(edited); !bytes.Equal(got, want) {
		t.Fatal("after removing virtual hosts, the bytes differ from proto's")
	}
	if len(v.byConfig[rc.Name]) != 10 {
		t.Fatalf("%d virtual hosts memoised after keeping 10", len(v.byConfig[rc.Name]))
	}
	v.rotate()
	v.rotate()
	if v.byConfig[rc.Name] == nil {
		t.Fatal("forgotten after one rotation without use")
	}
	v.rotate()
	if v.byConfig[rc.Name] != nil {
		t.Fatal("still memoised after two rotations without use")
	}
}

// TestFeedEntryFromRouteBytes: an entry built from the publisher's bytes
// encodes as one that marshals its resource.
func TestFeedEntryFromRouteBytes(t *testing.T) {
	rc := testRouteConfig(3, "/")
	var v vhostBytes
	b, err := v.marshalRouteConfig(rc)
	if err != nil {
		t.Fatal(err)
	}
	from := &FeedEntry{Name: rc.Name, Version: "1", Resource: rc, marshalled: b}
	plain := &FeedEntry{Name: rc.Name, Version: "1", Resource: rc}
	for what, enc := range map[string]func(*FeedEntry) ([]byte, error){"delta": (*FeedEntry).Encoded, "sotw": (*FeedEntry).EncodedAny} {
		got, err := enc(from)
		if err != nil {
			t.Fatal(err)
		}
		want, err := enc(plain)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s: the entry from the publisher's bytes encodes otherwise", what)
		}
	}
}

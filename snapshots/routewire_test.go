package snapshots

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"slices"
	"testing"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	"google.golang.org/protobuf/encoding/protowire"
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

// TestRouteWireIsProtoMarshal: the bytes put together from the virtual
// hosts' are exactly proto's deterministic marshalling, first, from
// memoised virtual hosts after one of them is replaced, and for a
// configuration whose virtual hosts a later one dropped.
func TestRouteWireIsProtoMarshal(t *testing.T) {
	w := newRouteWires()
	check := func(rc *routev3.RouteConfiguration) {
		t.Helper()
		_, wire, err := w.version(rc)
		if err != nil {
			t.Fatal(err)
		}
		got, err := wire.bytes()
		if err != nil {
			t.Fatal(err)
		}
		if want := protoBytes(t, rc); !bytes.Equal(got, want) {
			t.Fatalf("%q with %d virtual hosts: %d bytes, proto marshals %d", rc.Name, len(rc.VirtualHosts), len(got), len(want))
		}
	}
	for _, rc := range []*routev3.RouteConfiguration{testRouteConfig(0, "/"), {Name: "only-name"}, {}, testRouteConfig(50, "/")} {
		check(rc)
	}

	rc := testRouteConfig(50, "/")
	_, before, err := w.version(rc)
	if err != nil {
		t.Fatal(err)
	}
	edited := withVhost(rc, 7, testRouteConfig(50, "/v2").VirtualHosts[7])
	check(edited)
	if st := w.byConfig[rc.Name]; len(st.wires) != 50 || st.wires[edited.VirtualHosts[7]] == nil || st.wires[rc.VirtualHosts[7]] != nil {
		t.Fatalf("%d virtual hosts memoised (want 50, the edited one's new pointer only)", len(st.wires))
	}
	// rc's virtual host 7 is no longer memoised: its bytes still come out whole.
	got, err := before.bytes()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, protoBytes(t, rc)) {
		t.Fatal("a configuration versioned before the last: its bytes differ from proto's")
	}

	// Removing virtual hosts forgets theirs.
	edited.VirtualHosts = edited.VirtualHosts[:10]
	check(edited)
	if n := len(w.byConfig[rc.Name].wires); n != 10 {
		t.Fatalf("%d virtual hosts memoised after keeping 10", n)
	}
}

// TestRouteWireWhileVersioning: a stream puts a configuration's bytes
// together while the next publishes version its successors (go test -race).
func TestRouteWireWhileVersioning(t *testing.T) {
	w := newRouteWires()
	rc := testRouteConfig(200, "/")
	_, wire, err := w.version(rc)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan []byte)
	go func() {
		b, _ := wire.bytes()
		done <- b
	}()
	next := rc
	for i := range 50 {
		next = withVhost(next, i, testRouteConfig(200, fmt.Sprintf("/v%d", i)).VirtualHosts[i])
		if _, _, err := w.version(next); err != nil {
			t.Fatal(err)
		}
	}
	if got := <-done; !bytes.Equal(got, protoBytes(t, rc)) {
		t.Fatal("the bytes differ from proto's")
	}
}

// TestRoutesVersionedLastTwoPublishesAreKept: a configuration not
// versioned for two rotations (whole publishes) is forgotten.
func TestRoutesVersionedLastTwoPublishesAreKept(t *testing.T) {
	w := newRouteWires()
	rc := testRouteConfig(3, "/")
	if _, _, err := w.version(rc); err != nil {
		t.Fatal(err)
	}
	w.rotate()
	w.rotate()
	if w.byConfig[rc.Name] == nil {
		t.Fatal("forgotten after one rotation without use")
	}
	w.rotate()
	if w.byConfig[rc.Name] != nil {
		t.Fatal("still memoised after two rotations without use")
	}
}

// TestRouteVersionPerVirtualHost: the version kept up to date one virtual
// host at a time is, edit after edit, the version of the configuration's
// bytes computed from scratch; it changes when one virtual host changes,
// when the order changes, or when another field changes, and comes back
// with the content.
func TestRouteVersionPerVirtualHost(t *testing.T) {
	w := newRouteWires()
	rc := testRouteConfig(50, "/")
	other := testRouteConfig(50, "/v2").VirtualHosts
	extra := &routev3.VirtualHost{Name: "svc-3a.example", Domains: []string{"svc-3a.example"}}
	swapped := withVhost(withVhost(rc, 4, rc.VirtualHosts[5]), 5, rc.VirtualHosts[4])
	noPort := proto.Clone(rc).(*routev3.RouteConfiguration)
	noPort.VirtualHosts = rc.VirtualHosts
	noPort.IgnorePortInHostMatching = false

	steps := []struct {
		name string
		rc   *routev3.RouteConfiguration
	}{
		{"first", rc},
		{"one changed", withVhost(rc, 7, other[7])},
		{"back", rc},
		{"first changed", withVhost(rc, 0, other[0])},
		{"last changed", withVhost(rc, 49, other[49])},
		{"two apart changed", withVhost(withVhost(rc, 10, other[10]), 40, other[40])},
		{"inserted", &routev3.RouteConfiguration{Name: rc.Name, IgnorePortInHostMatching: true, ValidateClusters: rc.ValidateClusters, RequestHeadersToAdd: rc.RequestHeadersToAdd,
			VirtualHosts: slices.Insert(slices.Clone(rc.VirtualHosts), 4, extra)}},
		{"removed", &routev3.RouteConfiguration{Name: rc.Name, IgnorePortInHostMatching: true, ValidateClusters: rc.ValidateClusters, RequestHeadersToAdd: rc.RequestHeadersToAdd,
			VirtualHosts: slices.Delete(slices.Clone(rc.VirtualHosts), 20, 21)}},
		{"two swapped", swapped},
		{"other field", noPort},
		{"none", &routev3.RouteConfiguration{Name: rc.Name}},
		{"again", rc},
		{"all new pointers", testRouteConfig(50, "/")},
	}
	seen := map[string]string{}
	for _, step := range steps {
		got, _, err := w.version(step.rc)
		if err != nil {
			t.Fatal(err)
		}
		want := versionFromBytes(t, protoBytes(t, step.rc))
		if got != want {
			t.Errorf("%s: kept up to date %s, from scratch %s", step.name, got, want)
		}
		if fresh, _, _ := newRouteWires().version(step.rc); fresh != got {
			t.Errorf("%s: %s after the edits, %s versioned alone", step.name, got, fresh)
		}
		content := string(protoBytes(t, step.rc))
		if earlier, ok := seen[got]; ok && earlier != content {
			t.Errorf("%s: version %s of other content", step.name, got)
		}
		seen[got] = content
		if n := len(w.byConfig[rc.Name].wires); n != len(step.rc.VirtualHosts) {
			t.Errorf("%s: %d virtual hosts memoised, %d served", step.name, n, len(step.rc.VirtualHosts))
		}
	}
	if len(seen) != len(steps)-3 { // back, again and all new pointers are the first's content
		t.Errorf("%d versions for %d contents", len(seen), len(steps)-3)
	}
}

// withVhost is rc with virtual host i replaced, as the translator hands
// back a changed route: a new configuration and list, the other pointers kept.
func withVhost(rc *routev3.RouteConfiguration, i int, vh *routev3.VirtualHost) *routev3.RouteConfiguration {
	out := &routev3.RouteConfiguration{Name: rc.Name, IgnorePortInHostMatching: rc.IgnorePortInHostMatching, ValidateClusters: rc.ValidateClusters,
		RequestHeadersToAdd: rc.RequestHeadersToAdd, VirtualHosts: slices.Clone(rc.VirtualHosts)}
	out.VirtualHosts[i] = vh
	return out
}

func protoBytes(t *testing.T, rc *routev3.RouteConfiguration) []byte {
	t.Helper()
	b, err := proto.MarshalOptions{Deterministic: true}.Marshal(rc)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// versionFromBytes is a route configuration's version from its bytes
// alone: every field but the virtual hosts, and a term per virtual host
// of its hash and the one before's.
func versionFromBytes(t *testing.T, b []byte) string {
	t.Helper()
	var head []byte
	var sum contentSum
	var before [sha256.Size]byte
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			t.Fatal(protowire.ParseError(n))
		}
		size := protowire.ConsumeFieldValue(num, typ, b[n:])
		if size < 0 {
			t.Fatal(protowire.ParseError(size))
		}
		if num == virtualHostsField {
			vh, _ := protowire.ConsumeBytes(b[n:])
			own := sha256.Sum256(vh)
			sum.add(vhostTerm(before, own), 1)
			before = own
		} else {
			head = append(head, b[:n+size]...)
		}
		b = b[n+size:]
	}
	return routeVersion(head, sum)
}

// TestFeedEntryFromRouteBytes: an entry built from the publisher's bytes
// encodes as one that marshals its resource.
func TestFeedEntryFromRouteBytes(t *testing.T) {
	rc := testRouteConfig(3, "/")
	_, wire, err := newRouteWires().version(rc)
	if err != nil {
		t.Fatal(err)
	}
	from := &FeedEntry{Name: rc.Name, Version: "1", Resource: rc, route: wire}
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

package snapshots

import (
	"fmt"
	"slices"
	"testing"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	discoveryv3 "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"
	"google.golang.org/protobuf/proto"

	st "github.com/tlsplane/tlsplane/snapshots/snapshotstest"
)

// changedSince reads typeURL's changes after gen from fleet "edge"'s feed.
func changedSince(t *testing.T, f *Feed, typeURL string, gen uint64) (names []string, now uint64, ok bool) {
	t.Helper()
	f.Read(typeURL, func(v FeedView) {
		names, ok = v.ChangedSince(gen)
		now = v.Gen
	})
	slices.Sort(names)
	return names, now, ok
}

func TestFeedLogsWhatEachPublishChanged(t *testing.T) {
	p := New(Options{})
	p.NodeStreamOpened(&corev3.Node{Id: "envoy-1", Cluster: "edge"})
	f := p.Feed("edge")
	if f == nil {
		t.Fatal("no feed for a fleet with a stream")
	}
	if _, err := p.Publish(st.Output(payments, ledger)); err != nil {
		t.Fatal(err)
	}
	names, first, _ := changedSince(t, f, resource.ClusterType, 0)
	wantList(t, "clusters of the first publish", names, "bank/ledger/443", "shop/payments/8443")

	woken := f.Changed()
	moved := payments
	moved.Address = "10.0.0.2"
	if _, err := p.Publish(st.Output(moved)); err != nil {
		t.Fatal(err)
	}
	select {
	case <-woken:
	default:
		t.Fatal("an update did not close Changed")
	}
	for typeURL, want := range map[string][]string{
		resource.ClusterType:  {"bank/ledger/443"},                       // removed
		resource.EndpointType: {"bank/ledger/443", "shop/payments/8443"}, // removed, moved
		resource.SecretType:   {"bank/ledger/443/ca"},                    // removed
	} {
		names, _, ok := changedSince(t, f, typeURL, first)
		if !ok {
			t.Fatalf("%s: log does not reach generation %d", typeURL, first)
		}
		wantList(t, typeURL, names, want...)
	}
	f.Read(resource.ClusterType, func(v FeedView) {
		if v.Entry("bank/ledger/443") != nil || v.Entry("shop/payments/8443") == nil {
			t.Error("entries do not follow the publish")
		}
	})
}

func TestFeedLogIsBoundedAndSaysWhenItNoLongerReaches(t *testing.T) {
	p := New(Options{})
	p.NodeStreamOpened(&corev3.Node{Id: "envoy-1", Cluster: "edge"})
	f := p.Feed("edge")
	b := payments
	for i := range 3 * minLog {
		b.SNI = fmt.Sprintf("sni-%d.shop", i)
		if _, err := p.Publish(st.Output(b)); err != nil {
			t.Fatal(err)
		}
	}
	f.Read(resource.ClusterType, func(v FeedView) {
		if n := len(v.table.log); n > minLog {
			t.Errorf("log holds %d changes, bound %d", n, minLog)
		}
		if _, ok := v.ChangedSince(1); ok {
			t.Error("the log claims to reach the first generation after trimming")
		}
		names, ok := v.ChangedSince(v.Gen - 1)
		if !ok || !slices.Equal(names, []string{"shop/payments/8443"}) {
			t.Errorf("last change: %v, %v", names, ok)
		}
	})
}

func wantList(t *testing.T, what string, got []string, want ...string) {
	t.Helper()
	if !slices.Equal(got, want) {
		t.Errorf("%s: got %v, want %v", what, got, want)
	}
}

func TestFeedFullAnswerIsSharedWithinAGeneration(t *testing.T) {
	p := New(Options{})
	p.NodeStreamOpened(&corev3.Node{Id: "envoy-1", Cluster: "edge"})
	f := p.Feed("edge")
	if _, err := p.Publish(st.Output(payments, ledger)); err != nil {
		t.Fatal(err)
	}
	full := func() *FullAnswer {
		var a *FullAnswer
		f.Read(resource.SecretType, func(v FeedView) {
			var err error
			if a, err = v.Full(); err != nil {
				t.Fatal(err)
			}
			var want []byte
			for _, name := range a.Names {
				b, err := v.Entry(name).Encoded()
				if err != nil {
					t.Fatal(err)
				}
				want = append(want, b...)
			}
			if string(a.Encoded) != string(want) {
				t.Error("the full answer is not its entries encoded in name order")
			}
		})
		return a
	}
	first := full()
	wantList(t, "full answer", first.Names, "bank/ledger/443/ca", "shop/payments/8443/ca")
	if full() != first {
		t.Error("a second stream at the same generation got a new encoding")
	}
	rotated := payments
	rotated.CA = "-----BEGIN CERTIFICATE-----\nrotated\n-----END CERTIFICATE-----\n"
	if _, err := p.Publish(st.Output(rotated, ledger)); err != nil {
		t.Fatal(err)
	}
	if full() == first {
		t.Error("a new generation kept the old encoding")
	}
}

// FullAny is the SotW answer of every entry: DiscoveryResponse resources,
// each an Any of the entry's resource, in name order, with their versions;
// one encoding per content of the type, whatever the number of streams.
func TestFeedFullAnyIsSharedAndDecodesAsResponseResources(t *testing.T) {
	p := New(Options{})
	p.NodeStreamOpened(&corev3.Node{Id: "envoy-1", Cluster: "edge"})
	f := p.Feed("edge")
	if _, err := p.Publish(st.Output(payments, ledger)); err != nil {
		t.Fatal(err)
	}
	fullAny := func() *FullAnswer {
		var a *FullAnswer
		f.Read(resource.ClusterType, func(v FeedView) {
			var err error
			if a, err = v.FullAny(); err != nil {
				t.Fatal(err)
			}
			resp := &discoveryv3.DiscoveryResponse{}
			if err := proto.Unmarshal(a.Encoded, resp); err != nil {
				t.Fatal(err)
			}
			if len(resp.GetResources()) != len(a.Names) {
				t.Fatalf("%d resources for %d names", len(resp.GetResources()), len(a.Names))
			}
			for i, element := range resp.GetResources() {
				e := v.Entry(a.Names[i])
				got, err := element.UnmarshalNew()
				if err != nil {
					t.Fatal(err)
				}
				if !proto.Equal(got, e.Resource) || a.Versions[i] != e.Version {
					t.Errorf("resource %d is not entry %s at version %s", i, e.Name, e.Version)
				}
				one, err := e.EncodedAny()
				if err != nil {
					t.Fatal(err)
				}
				single := &discoveryv3.DiscoveryResponse{}
				if err := proto.Unmarshal(one, single); err != nil || len(single.GetResources()) != 1 || !proto.Equal(single.GetResources()[0], element) {
					t.Errorf("EncodedAny of %s is not the response element the full answer holds (%v)", e.Name, err)
				}
			}
		})
		return a
	}
	first := fullAny()
	wantList(t, "full SotW answer", first.Names, "bank/ledger/443", "shop/payments/8443")
	if fullAny() != first {
		t.Error("a second stream at the same content got a new encoding")
	}
	moved := payments
	moved.SNI = "moved.shop"
	if _, err := p.Publish(st.Output(moved, ledger)); err != nil {
		t.Fatal(err)
	}
	if fullAny() == first {
		t.Error("new clusters kept the old encoding")
	}
}

package snapshots

import (
	"fmt"
	"slices"
	"testing"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"

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

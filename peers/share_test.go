package peers

import (
	"context"
	"crypto/sha256"
	"fmt"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/tlsplane/tlsplane/handshakes"
)

// fakeTracker exports what it is given and records what peers set.
type fakeTracker struct {
	mu     sync.Mutex
	export handshakes.Shared
	peers  map[string]handshakes.Shared
}

func (f *fakeTracker) Export() handshakes.Shared {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.export
}
func (f *fakeTracker) SetPeer(r string, s handshakes.Shared) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.peers[r] = s
}
func (f *fakeTracker) ForgetPeer(r string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.peers, r)
}
func (f *fakeTracker) Window() time.Duration { return time.Minute }
func (f *fakeTracker) peer(r string) (handshakes.Shared, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	s, ok := f.peers[r]
	return s, ok
}

func window(cluster string, failed time.Time) handshakes.SharedWindow {
	return handshakes.SharedWindow{Fleet: "edge", Cluster: cluster, LastReport: failed, LastFailure: failed, Cause: "ssl.fail_verify_san",
		Buckets: []handshakes.SharedBucket{{Start: failed.Truncate(10 * time.Second), Counts: map[string]uint64{"ssl.fail_verify_san": 3}}}}
}

func TestObjectNamesAreValid(t *testing.T) {
	for _, id := range []string{"tlsplane-7d9f-abc_0a1b2c3d", "Host.Name_with CAPS", string(make([]byte, 300))} {
		name := objectName("tlsplane-status-writer", "handshakes", id)
		if errs := validation.IsDNS1123Subdomain(name); len(errs) > 0 {
			t.Errorf("identity %q: object name %q: %v", id, name, errs)
		}
	}
	if objectName("g", "handshakes", "a_1") == objectName("g", "handshakes", "a-1") {
		t.Error("two identities share an object")
	}
	if l := groupLabel(fmt.Sprintf("g%0100d", 0)); len(validation.IsValidLabelValue(l)) > 0 {
		t.Errorf("group label %q is not a label value: %v", l, validation.IsValidLabelValue(l))
	}
}

// Too many windows for one object: the failing ones are kept.
func TestEncodeKeepsFailingWindowsWhenTooLarge(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	var s handshakes.Shared
	for i := range 60_000 {
		// Names as varied as real ones: gzip must not shrink them away.
		w := window(fmt.Sprintf("ns-%x/svc-%x/443", sha256.Sum256([]byte{byte(i), byte(i >> 8), byte(i >> 16)}), i), now)
		if i%100 != 0 { // 1 in 100 failing
			w.LastSuccess, w.LastFailure, w.Cause = now, time.Time{}, ""
		}
		s.Windows = append(s.Windows, w)
	}
	data, err := encode(s)
	if err != nil {
		t.Fatal(err)
	}
	if len(data) > maxPublishedBytes {
		t.Fatalf("encoded %d bytes, over %d", len(data), maxPublishedBytes)
	}
	got, err := decode(data)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Windows) == 0 || len(got.Windows) == len(s.Windows) {
		t.Fatalf("kept %d of %d windows", len(got.Windows), len(s.Windows))
	}
	for _, w := range got.Windows {
		if w.LastFailure.IsZero() {
			t.Fatalf("kept a succeeding window %s over failing ones", w.Cluster)
		}
	}
}

// Two replicas against one API server (a fake clientset here; the e2e
// test uses a real one): each hands the other's windows to its tracker,
// and a silent replica's object is deleted once its windows are over.
func TestReplicasSeeEachOther(t *testing.T) {
	client := fake.NewClientset()
	now := time.Now()
	var clockMu sync.Mutex
	clock := func() time.Time { clockMu.Lock(); defer clockMu.Unlock(); return now }
	a := &fakeTracker{peers: map[string]handshakes.Shared{}}
	b := &fakeTracker{peers: map[string]handshakes.Shared{}, export: handshakes.Shared{Window: time.Minute, Windows: []handshakes.SharedWindow{window("shop/pay/443", now)}}}
	start := func(id string, tr *fakeTracker) context.CancelFunc {
		s, err := New(Options{Client: client, Namespace: "tlsplane", Group: "tlsplane-status-writer", Identity: id, Tracker: tr, Interval: 20 * time.Millisecond, Now: clock})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() { defer close(done); _ = s.Run(ctx) }()
		return func() { cancel(); <-done }
	}
	stopA := start("replica-a_1", a)
	defer stopA()
	stopB := start("replica-b_2", b)

	waitFor(t, "a to see b's failure", func() bool {
		s, ok := a.peer("replica-b_2")
		return ok && len(s.Windows) == 1 && s.Windows[0].Buckets[0].Counts["ssl.fail_verify_san"] == 3
	})
	if _, ok := b.peer("replica-a_1"); ok {
		t.Fatal("a replica with no windows published some")
	}
	// b dies: its object stays while its windows may count.
	stopB()
	time.Sleep(100 * time.Millisecond)
	if _, ok := a.peer("replica-b_2"); !ok {
		t.Fatal("a dead replica's windows went before the window did")
	}
	// A window later, a deletes b's object and forgets it.
	clockMu.Lock()
	now = now.Add(2 * time.Minute)
	clockMu.Unlock()
	waitFor(t, "a to forget b", func() bool { _, ok := a.peer("replica-b_2"); return !ok })
	list, err := client.CoreV1().ConfigMaps("tlsplane").List(context.Background(), metav1.ListOptions{})
	if err != nil || len(list.Items) != 0 {
		t.Fatalf("objects left: %d (%v)", len(list.Items), err)
	}
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

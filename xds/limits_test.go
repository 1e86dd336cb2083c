package xds

import (
	"fmt"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	clusterv3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	discoveryv3 "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/tlsplane/tlsplane/snapshots"
	st "github.com/tlsplane/tlsplane/snapshots/snapshotstest"
)

func TestOversizedRequestIsRejected(t *testing.T) {
	h := start(t, snapshots.Options{})
	h.publish(t, st.Output(payments), true)
	s := openSotw(t, h)
	s.send(t, &discoveryv3.DiscoveryRequest{
		Node: node("envoy-1", "edge"), TypeUrl: resource.ClusterType,
		ResourceNames: []string{strings.Repeat("x", MaxRecvMsgSize+1)},
	})
	select {
	case resp, ok := <-s.recv:
		if ok {
			t.Fatalf("oversized request answered: %v", resp)
		}
	case <-time.After(patience):
		t.Fatal("stream still open after an oversized request")
	}
	if _, err := s.stream.Recv(); status.Code(err) != codes.ResourceExhausted {
		t.Fatalf("stream error %v, want ResourceExhausted", err)
	}

	// A request just under the limit is still read.
	s2 := openSotw(t, h)
	s2.send(t, &discoveryv3.DiscoveryRequest{Node: node("envoy-2", "edge"), TypeUrl: resource.ClusterType,
		ResourceNames: []string{strings.Repeat("x", MaxRecvMsgSize/2)}})
	s2.send(t, &discoveryv3.DiscoveryRequest{TypeUrl: resource.EndpointType})
	if resp := s2.next(t); resp.GetTypeUrl() != resource.EndpointType {
		t.Fatalf("got %s, want the endpoints after a large request", resp.GetTypeUrl())
	}
}

// heapAfterGC is the live heap, for bounds far above noise.
func heapAfterGC() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// A client that never ACKs gets one response per request it made, however
// many snapshots are published: a type's next response waits for the last
// one's ACK or NACK, and stale-nonce requests are ignored.
func TestClientThatNeverACKsIsBounded(t *testing.T) {
	const publishes = 500
	h := start(t, snapshots.Options{})
	h.publish(t, st.Output(payments), true)

	// One client reads but only ever re-sends its first request (no nonce:
	// not an ACK); another never reads at all.
	spammer := openSotw(t, h)
	first := &discoveryv3.DiscoveryRequest{Node: node("spammer", "edge"), TypeUrl: resource.ClusterType}
	spammer.send(t, first)
	initial := spammer.next(t)
	silent := openSotw(t, h)
	for _, typeURL := range []string{resource.ClusterType, resource.EndpointType, resource.SecretType} {
		silent.send(t, &discoveryv3.DiscoveryRequest{Node: node("silent", "edge"), TypeUrl: typeURL})
	}
	time.Sleep(quiet) // let the silent client's first responses go out

	heapBefore, goroutinesBefore := heapAfterGC(), runtime.NumGoroutine()
	sentBefore := counterValue(t, h.metrics.responses.WithLabelValues(resource.ClusterType))
	publishSNIs(t, h, publishes, func() { spammer.send(t, first) })
	time.Sleep(quiet)

	select {
	case resp := <-spammer.recv:
		t.Fatalf("a client that never ACKed was sent version %s", resp.GetVersionInfo())
	default:
	}
	if sent := counterValue(t, h.metrics.responses.WithLabelValues(resource.ClusterType)) - sentBefore; sent != 0 {
		t.Errorf("%v cluster responses during %d publishes to clients that never ACK, want none", sent, publishes)
	}
	if grown := runtime.NumGoroutine() - goroutinesBefore; grown > 10 {
		t.Errorf("%d more goroutines after %d publishes", grown, publishes)
	}
	// Each snapshot is a few KiB: 500 of them kept would show; the bound
	// leaves room for the runtime's noise.
	if heapAfter := heapAfterGC(); heapAfter > heapBefore+8<<20 {
		t.Errorf("heap grew from %d to %d bytes", heapBefore, heapAfter)
	}

	// Once it ACKs, the client gets the latest version at once.
	spammer.send(t, &discoveryv3.DiscoveryRequest{TypeUrl: resource.ClusterType, VersionInfo: initial.GetVersionInfo(), ResponseNonce: initial.GetNonce()})
	latest := spammer.next(t)
	if got := st.TLSContext(t, decodeCluster(t, latest)).GetSni(); got != fmt.Sprintf("payments-%d.shop", publishes-1) {
		t.Fatalf("after the ACK: SNI %q, want the last publish's", got)
	}
}

// publishSNIs publishes n versions of payments, SNIs payments-0.shop to
// payments-<n-1>.shop, calling after each; 30 s bound the whole, so a
// Publish blocked on a client that does not read fails the test.
func publishSNIs(t *testing.T, h *harness, n int, after func()) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for i := range n {
		if time.Now().After(deadline) {
			t.Fatalf("only %d publishes in 30s: Publish blocked on a client that does not read", i)
		}
		b := payments
		b.SNI = fmt.Sprintf("payments-%d.shop", i)
		h.publish(t, st.Output(b), true)
		after()
	}
}

func decodeCluster(t *testing.T, resp *discoveryv3.DiscoveryResponse) *clusterv3.Cluster {
	t.Helper()
	if len(resp.GetResources()) != 1 {
		t.Fatalf("%d clusters, want 1", len(resp.GetResources()))
	}
	c := &clusterv3.Cluster{}
	if err := resp.GetResources()[0].UnmarshalTo(c); err != nil {
		t.Fatal(err)
	}
	return c
}

// The same for incremental xDS: a delta client that reads but never ACKs,
// and one that stops reading, must neither block publishing for everyone
// nor grow the server's memory, and are sent nothing more.
func TestDeltaClientThatNeverACKsIsBounded(t *testing.T) {
	const publishes = 500
	h := start(t, snapshots.Options{})
	h.publish(t, st.Output(payments), true)

	reader := openDelta(t, h)
	reader.send(t, &discoveryv3.DeltaDiscoveryRequest{Node: node("reader", "edge"), TypeUrl: resource.ClusterType})
	reader.next(t)
	// The reader's responses are read and dropped, never ACKed.
	var read atomic.Int64
	go func() {
		for range reader.recv {
			read.Add(1)
		}
	}()
	silent := openDelta(t, h) // its 16-deep buffer fills, then it reads no more
	silent.send(t, &discoveryv3.DeltaDiscoveryRequest{Node: node("silent", "edge"), TypeUrl: resource.ClusterType})
	time.Sleep(quiet)

	heapBefore, goroutinesBefore := heapAfterGC(), runtime.NumGoroutine()
	publishSNIs(t, h, publishes, func() {})
	time.Sleep(quiet)

	if grown := runtime.NumGoroutine() - goroutinesBefore; grown > 10 {
		t.Errorf("%d more goroutines after %d publishes", grown, publishes)
	}
	if heapAfter := heapAfterGC(); heapAfter > heapBefore+8<<20 {
		t.Errorf("heap grew from %d to %d bytes", heapBefore, heapAfter)
	}
	// The delta server, like the SotW one, answers a
	// stream's type again only after its next request.
	if n := read.Load(); n != 0 {
		t.Errorf("the reader that never ACKed was sent %d responses during %d publishes, want none", n, publishes)
	}
}

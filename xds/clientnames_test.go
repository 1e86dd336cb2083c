package xds

import (
	"fmt"
	"syscall"
	"testing"
	"time"

	discoveryv3 "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"
	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	"github.com/tlsplane/tlsplane/snapshots"
	st "github.com/tlsplane/tlsplane/snapshots/snapshotstest"
)

// processCPU is the CPU time the test process has used.
func processCPU(t *testing.T) time.Duration {
	t.Helper()
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		t.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// A SotW stream naming thousands of made-up type URLs is ended after
// MaxUnservedTypes of them, at a cost that does not grow with their
// number (go-control-plane's loop would cost each request every watched
// type: 4,000 types took 2.2 s of CPU before the bound).
func TestSotwStreamNamingManyUnservedTypesIsEnded(t *testing.T) {
	const types = 4000
	h := start(t, snapshots.Options{})
	h.publish(t, st.Output(payments), true)

	// Up to the limit, unserved types cost nothing and CDS is answered.
	ok := openSotw(t, h)
	for i := range MaxUnservedTypes {
		ok.send(t, &discoveryv3.DiscoveryRequest{Node: node("envoy-1", "edge"), TypeUrl: fmt.Sprintf("type.googleapis.com/made.up.T%d", i)})
	}
	ok.send(t, &discoveryv3.DiscoveryRequest{TypeUrl: resource.ClusterType})
	if resp := ok.next(t); resp.GetTypeUrl() != resource.ClusterType {
		t.Fatalf("got %s, want CDS after %d unserved types", resp.GetTypeUrl(), MaxUnservedTypes)
	}

	s := openSotw(t, h)
	before := processCPU(t)
	for i := range types {
		if err := s.stream.Send(&discoveryv3.DiscoveryRequest{Node: node("envoy-2", "edge"), TypeUrl: fmt.Sprintf("type.googleapis.com/made.up.T%d", i)}); err != nil {
			break // the server ended the stream
		}
	}
	_ = s.stream.Send(&discoveryv3.DiscoveryRequest{TypeUrl: resource.ClusterType})
	select {
	case resp, open := <-s.recv:
		if open {
			t.Fatalf("a stream naming %d unserved types was answered: %s", types, resp.GetTypeUrl())
		}
	case <-time.After(patience):
		t.Fatalf("a stream naming %d unserved types is still open", types)
	}
	if _, err := s.stream.Recv(); status.Code(err) != codes.ResourceExhausted {
		t.Fatalf("stream error %v, want ResourceExhausted", err)
	}
	if cpu := processCPU(t) - before; cpu > 500*time.Millisecond {
		t.Errorf("%d unserved types cost %v of CPU, want well under 500ms", types, cpu)
	}
}

// Delta streams have the same bound.
func TestDeltaStreamNamingManyUnservedTypesIsEnded(t *testing.T) {
	h := start(t, snapshots.Options{})
	h.publish(t, st.Output(payments), true)
	s := openDelta(t, h)
	for i := range MaxUnservedTypes + 1 {
		if err := s.stream.Send(&discoveryv3.DeltaDiscoveryRequest{Node: node("envoy-1", "edge"), TypeUrl: fmt.Sprintf("type.googleapis.com/made.up.T%d", i)}); err != nil {
			break
		}
	}
	deadline := time.After(patience)
	for {
		select {
		case _, open := <-s.recv:
			if open {
				continue // the empty answers to the first types
			}
			if _, err := s.stream.Recv(); status.Code(err) != codes.ResourceExhausted {
				t.Fatalf("stream error %v, want ResourceExhausted", err)
			}
			return
		case <-deadline:
			t.Fatalf("a delta stream naming %d unserved types is still open", MaxUnservedTypes+1)
		}
	}
}

// Every label of tlsplane_xds_streams comes from a bounded set, and the
// series of closed streams go: 150 fleets and 1,000 made-up type URLs
// leave at most MaxFleetLabels+1 fleet values while open, and no series
// once closed.
func TestStreamMetricLabelsAreBoundedAndGoWithTheirStreams(t *testing.T) {
	const fleets = 150
	h := start(t, snapshots.Options{})
	h.publish(t, st.Output(payments), true)
	// A connection serves at most MaxConcurrentStreams streams.
	second, err := grpc.NewClient(h.addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer second.Close()
	var streams []*sotwStream
	for i := range fleets {
		if i == fleets/2 {
			h = &harness{metrics: h.metrics, conn: second}
		}
		s := openSotw(t, h)
		s.send(t, &discoveryv3.DiscoveryRequest{Node: node(fmt.Sprintf("envoy-%d", i), fmt.Sprintf("fleet-%d", i)), TypeUrl: resource.ClusterType})
		for j := range 7 {
			s.send(t, &discoveryv3.DiscoveryRequest{TypeUrl: fmt.Sprintf("type.googleapis.com/made.up.F%dT%d", i, j)})
		}
		s.next(t)
		streams = append(streams, s)
	}
	// Each stream counts once under CDS and once under "other".
	eventually(t, func() bool { return seriesCount(h.metrics.streams) == 2*(MaxFleetLabels+1) },
		func() string {
			return fmt.Sprintf("%d streams series, want %d (%d fleets and \"other\", CDS and \"other\")",
				seriesCount(h.metrics.streams), 2*(MaxFleetLabels+1), MaxFleetLabels)
		})
	if got := counterValue(t, h.metrics.streams.WithLabelValues(otherFleets, resource.ClusterType)); got != fleets-MaxFleetLabels {
		t.Errorf("streams{fleet=other} = %v, want %d", got, fleets-MaxFleetLabels)
	}
	for _, s := range streams {
		if err := s.stream.CloseSend(); err != nil {
			t.Fatal(err)
		}
	}
	eventually(t, func() bool { return seriesCount(h.metrics.streams) == 0 },
		func() string {
			return fmt.Sprintf("%d streams series left after every stream closed", seriesCount(h.metrics.streams))
		})
	// The fleet label goes after the streams series, on the stream's
	// goroutine: read under the metrics' lock, once it has.
	heldFleets := func() int {
		h.metrics.mu.Lock()
		defer h.metrics.mu.Unlock()
		return len(h.metrics.fleets)
	}
	eventually(t, func() bool { return heldFleets() == 0 },
		func() string { return fmt.Sprintf("%d fleet labels still held", heldFleets()) })
}

func eventually(t *testing.T, cond func() bool, why func() string) {
	t.Helper()
	deadline := time.Now().Add(patience)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal(why())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// seriesCount is how many series c exports.
func seriesCount(c prometheus.Collector) int {
	ch := make(chan prometheus.Metric)
	go func() { c.Collect(ch); close(ch) }()
	n := 0
	for range ch {
		n++
	}
	return n
}

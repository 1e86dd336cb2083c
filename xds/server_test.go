package xds

import (
	"context"
	"log/slog"
	"testing"
	"time"

	discoveryv3 "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"

	"github.com/tlsplane/tlsplane/snapshots"
	st "github.com/tlsplane/tlsplane/snapshots/snapshotstest"
)

func discard() *slog.Logger { return slog.New(slog.DiscardHandler) }

func TestStopEndsOpenStreams(t *testing.T) {
	h := start(t, snapshots.Options{})
	h.publish(t, st.Output(payments), true)
	s := openSotw(t, h)
	s.send(t, &discoveryv3.DiscoveryRequest{Node: node("envoy-1", "edge"), TypeUrl: resource.ClusterType})
	s.next(t)
	if got := counterValue(t, h.metrics.streams.WithLabelValues("edge", resource.ClusterType)); got != 1 {
		t.Fatalf("streams gauge = %v, want 1", got)
	}

	ctx, cancel := context.WithTimeout(context.Background(), patience)
	defer cancel()
	began := time.Now()
	h.server.Stop(ctx)
	if took := time.Since(began); took > time.Second {
		t.Errorf("Stop took %v with an open ADS stream", took)
	}
	select {
	case _, open := <-s.recv:
		if open {
			t.Fatal("response after Stop")
		}
	case <-time.After(patience):
		t.Fatal("stream still open after Stop")
	}
	deadline := time.Now().Add(patience)
	for counterValue(t, h.metrics.streams.WithLabelValues("edge", resource.ClusterType)) != 0 {
		if time.Now().After(deadline) {
			t.Fatal("streams gauge not back to 0")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

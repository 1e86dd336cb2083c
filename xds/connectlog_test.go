package xds

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	discoveryv3 "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/tlsplane/tlsplane/snapshots"
)

// lockedBuffer is a log sink written by stream goroutines.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

// records returns the JSON log records with message msg.
func (l *lockedBuffer) records(t *testing.T, msg string) []map[string]any {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(l.b.String()), "\n") {
		var r map[string]any
		if line == "" {
			continue
		}
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		if r["msg"] == msg {
			out = append(out, r)
		}
	}
	return out
}

// An operator sees at info level each Envoy that connects and disconnects:
// node, fleet, SotW or delta, and the peer address.
func TestConnectAndDisconnectLoggedAtInfo(t *testing.T) {
	var logs lockedBuffer
	srv := NewServer(snapshots.New(snapshots.Options{}), Options{
		Logger: slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelInfo})),
	})
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(lis)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		srv.Stop(ctx)
	})
	conn, err := grpc.NewClient(lis.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ads := discoveryv3.NewAggregatedDiscoveryServiceClient(conn)

	waitFor := func(msg string, n int) []map[string]any {
		t.Helper()
		deadline := time.Now().Add(patience)
		for {
			if r := logs.records(t, msg); len(r) >= n || time.Now().After(deadline) {
				return r
			}
			time.Sleep(10 * time.Millisecond)
		}
	}

	sotwCtx, closeSotw := context.WithCancel(context.Background())
	sotw, err := ads.StreamAggregatedResources(sotwCtx)
	if err != nil {
		t.Fatal(err)
	}
	if err := sotw.Send(&discoveryv3.DiscoveryRequest{Node: node("envoy-a", "edge"), TypeUrl: resource.ClusterType}); err != nil {
		t.Fatal(err)
	}
	deltaCtx, closeDelta := context.WithCancel(context.Background())
	delta, err := ads.DeltaAggregatedResources(deltaCtx)
	if err != nil {
		t.Fatal(err)
	}
	if err := delta.Send(&discoveryv3.DeltaDiscoveryRequest{Node: node("envoy-b", "internal"), TypeUrl: resource.ClusterType}); err != nil {
		t.Fatal(err)
	}
	connected := waitFor("Envoy connected", 2)
	closeSotw()
	closeDelta()
	disconnected := waitFor("Envoy disconnected", 2)

	for _, c := range []struct {
		records           []map[string]any
		what              string
		node, fleet, kind string
	}{
		{connected, "connected", "envoy-a", "edge", "sotw"},
		{connected, "connected", "envoy-b", "internal", "delta"},
		{disconnected, "disconnected", "envoy-a", "edge", "sotw"},
		{disconnected, "disconnected", "envoy-b", "internal", "delta"},
	} {
		found := false
		for _, r := range c.records {
			if r["node"] != c.node {
				continue
			}
			found = true
			peer, _ := r["peer"].(string)
			if r["level"] != "INFO" || r["fleet"] != c.fleet || r["xds"] != c.kind || !strings.HasPrefix(peer, "127.0.0.1:") {
				t.Errorf("%s %s: %v, want level INFO, fleet %s, xds %s, peer 127.0.0.1:PORT", c.node, c.what, r, c.fleet, c.kind)
			}
		}
		if !found {
			t.Errorf("no %q log for %s; logs:\n%s", "Envoy "+c.what, c.node, logs.b.String())
		}
	}
}

package xds

import (
	"context"
	"errors"
	"net"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/tlsplane/tlsplane/snapshots"
	st "github.com/tlsplane/tlsplane/snapshots/snapshotstest"
)

// partialClientHello is a TLS record header announcing a 512-byte
// handshake record, and the first bytes of a ClientHello: the server
// waits for the rest.
var partialClientHello = []byte{0x16, 0x03, 0x01, 0x02, 0x00, 0x01, 0x00, 0x01, 0xfc, 0x03, 0x03}

// dialFrom connects to addr from the loopback address source (any of
// 127.0.0.0/8 on Linux), so tests can be several clients.
func dialFrom(t *testing.T, source, addr string) net.Conn {
	t.Helper()
	d := net.Dialer{Timeout: patience, LocalAddr: &net.TCPAddr{IP: net.ParseIP(source)}}
	c, err := d.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// stall opens a connection from source that sends a partial ClientHello
// and nothing more.
func stall(t *testing.T, source, addr string) net.Conn {
	t.Helper()
	c := dialFrom(t, source, addr)
	if _, err := c.Write(partialClientHello); err != nil {
		t.Fatal(err)
	}
	return c
}

// closedWithin reports whether the server closed c within d.
func closedWithin(c net.Conn, d time.Duration) bool {
	_ = c.SetReadDeadline(time.Now().Add(d))
	buf := make([]byte, 512)
	for {
		if _, err := c.Read(buf); err != nil {
			var ne net.Error
			return !(errors.As(err, &ne) && ne.Timeout())
		}
	}
}

func (h *harness) refusedCount(t *testing.T, reason string) float64 {
	t.Helper()
	return counterValue(t, h.server.refused.counter.WithLabelValues(reason))
}

// waitRefused waits for the refusals of reason to reach want: a refusal
// is counted just after the connection is closed.
func waitRefused(t *testing.T, h *harness, reason string, want float64) {
	t.Helper()
	deadline := time.Now().Add(patience)
	for {
		got := h.refusedCount(t, reason)
		if got == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s refusals %v, want %v", reason, got, want)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func waitCounts(t *testing.T, h *harness, open, handshaking int) {
	t.Helper()
	deadline := time.Now().Add(patience)
	for {
		o, hs := h.server.adm.counts()
		if o == open && hs == handshaking {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("open %d, handshaking %d; want %d, %d", o, hs, open, handshaking)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// A client that sends part of a ClientHello and stalls is closed at the
// handshake deadline (gRPC's own default waits 120 s), and counted.
func TestHandshakeDeadlineClosesAStalledClient(t *testing.T) {
	s := startSecureWith(t, DefaultFleetIdentity, snapshots.Options{}, Options{
		Registerer: prometheus.NewRegistry(), HandshakeTimeout: 300 * time.Millisecond,
	})
	c := stall(t, "127.0.0.1", s.addr)
	idle := dialFrom(t, "127.0.0.1", s.addr) // sends nothing at all
	for name, conn := range map[string]net.Conn{"partial ClientHello": c, "idle": idle} {
		if !closedWithin(conn, patience) {
			t.Fatalf("%s: still open after %s with a 300ms handshake deadline", name, patience)
		}
	}
	waitRefused(t, s.harness, RefusedHandshakeTimeout, 2)
	waitCounts(t, s.harness, 0, 0)
}

// Stalled handshakes from other addresses, far more than the limits,
// never keep an authenticated client out: the oldest handshake gives its
// slot to the newcomer, and established connections are never evicted.
func TestStalledHandshakesLeaveRoomForAuthenticatedClients(t *testing.T) {
	s := startSecureWith(t, DefaultFleetIdentity, snapshots.Options{}, Options{
		Registerer: prometheus.NewRegistry(),
		Limits:     ConnectionLimits{Connections: 6, PerSource: 4, Handshakes: 3, HandshakesPerSource: 2},
	})
	s.publish(t, st.Output(payments), true)
	certPEM, keyPEM := s.ca.issue(t, leafSpec{uri: "spiffe://cluster.local/fleet/edge"})

	established := s.dial(t, certPEM, keyPEM, nil)
	if n, err := sotwOutcome(t, established, "edge"); err != nil || n == 0 {
		t.Fatalf("before the flood: %d responses, %v", n, err)
	}
	var flood []net.Conn
	for i := range 12 {
		flood = append(flood, stall(t, []string{"127.0.0.2", "127.0.0.3", "127.0.0.4"}[i%3], s.addr))
	}
	waitCounts(t, s.harness, 4, 3)                        // the Envoy and 3 handshakes
	waitRefused(t, s.harness, RefusedHandshakeEvicted, 9) // 12 stalled, 3 kept
	// The established client was not evicted, and a new one gets in.
	if n, err := sotwOutcome(t, established, "edge"); err != nil || n == 0 {
		t.Fatalf("established client during the flood: %d responses, %v", n, err)
	}
	newcomer := s.dial(t, certPEM, keyPEM, nil)
	if n, err := sotwOutcome(t, newcomer, "edge"); err != nil || n == 0 {
		t.Fatalf("new client during the flood: %d responses, %v", n, err)
	}
	closed := 0
	for _, c := range flood {
		if closedWithin(c, 10*time.Millisecond) {
			closed++
		}
	}
	if closed < 10 {
		t.Errorf("%d of 12 stalled connections closed, want at least 10 (3 handshake slots, one taken by the newcomer)", closed)
	}
}

// Established connections fill a source's budget: the next connection
// from it is reset at accept, before any TLS; closing one frees its slot.
func TestPerSourceLimitRefusesAtAcceptAndReleasesOnClose(t *testing.T) {
	s := startSecureWith(t, DefaultFleetIdentity, snapshots.Options{}, Options{
		Registerer: prometheus.NewRegistry(),
		Limits:     ConnectionLimits{PerSource: 1},
	})
	s.publish(t, st.Output(payments), true)
	certPEM, keyPEM := s.ca.issue(t, leafSpec{uri: "spiffe://cluster.local/fleet/edge"})
	first := s.dial(t, certPEM, keyPEM, nil)
	if n, err := sotwOutcome(t, first, "edge"); err != nil || n == 0 {
		t.Fatalf("first client: %d responses, %v", n, err)
	}
	waitCounts(t, s.harness, 1, 0)
	// The reset may come before the dial returns.
	refused, err := (&net.Dialer{Timeout: patience}).Dial("tcp", s.addr)
	if err == nil {
		defer refused.Close()
		if !closedWithin(refused, patience) {
			t.Fatal("a connection over the per-source limit was not closed")
		}
	}
	waitRefused(t, s.harness, RefusedPerSource, 1)
	// Another address is not counted against the first.
	if c := stall(t, "127.0.0.2", s.addr); closedWithin(c, quiet) {
		t.Error("a connection from another address was closed")
	}
	first.Close()
	waitCounts(t, s.harness, 1, 1) // only the other address's handshake
	second := s.dial(t, certPEM, keyPEM, nil)
	if n, err := sotwOutcome(t, second, "edge"); err != nil || n == 0 {
		t.Fatalf("after the first client closed: %d responses, %v", n, err)
	}
}

// Without TLS a connection's handshake completes with the client's HTTP/2
// preface: connections that send nothing stay evictable handshakes, and
// never fill the connections an Envoy needs.
func TestPlaintextIdleConnectionsStayHandshakes(t *testing.T) {
	h := &harness{pub: snapshots.New(snapshots.Options{})}
	srv := NewServer(h.pub, Options{
		Registerer: prometheus.NewRegistry(),
		Limits:     ConnectionLimits{Connections: 4, Handshakes: 2},
		// Longer than the test: only evictions close the idle connections.
		HandshakeTimeout: time.Minute,
	})
	h.server, h.metrics = srv, srv.metrics
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	h.addr = lis.Addr().String()
	go srv.Serve(lis)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		srv.Stop(ctx)
	})
	h.publish(t, st.Output(payments), true)
	for range 6 {
		dialFrom(t, "127.0.0.2", h.addr)
	}
	waitCounts(t, h, 2, 2)
	conn, err := grpc.NewClient(h.addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	if n, err := sotwOutcome(t, conn, "edge"); err != nil || n == 0 {
		t.Fatalf("a plaintext client among idle connections: %d responses, %v", n, err)
	}
	waitCounts(t, h, 2, 1) // the client, and the idle connection it did not evict
	waitRefused(t, h, RefusedHandshakeEvicted, 5)
}

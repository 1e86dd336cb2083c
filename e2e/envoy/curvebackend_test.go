package envoy

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"log"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tlsplane/tlsplane/e2e/harness"
)

// curveBackend is a Go crypto/tls server inside the test that tells what
// each connection negotiated: the key-exchange group (ConnectionState's
// CurveID: X25519MLKEM768, X25519, P-256...), the version and the cipher,
// in its JSON answer, and it keeps one record per connection.
type curveBackend struct {
	name string
	port int

	mu    sync.Mutex
	conns []negotiatedKeyExchange // one per connection, in order
	// offered are the ClientHellos' groups and suites by client address,
	// until the connection's request takes them.
	offered map[string]clientOffer
	// handshakeErrors are the server's log lines (failed handshakes).
	handshakeErrors []string
}

// clientOffer is what a ClientHello offered: Envoy's lists, as sent.
type clientOffer struct {
	Curves  []string `json:"curves"`
	Ciphers []string `json:"ciphers"`
}

// negotiatedKeyExchange is the answer's body: what one connection
// negotiated with Envoy.
type negotiatedKeyExchange struct {
	Name       string `json:"name"`
	Path       string `json:"path"`
	SNI        string `json:"sni"`
	TLSVersion string `json:"tls_version"`
	Curve      string `json:"curve"`
	Cipher     string `json:"cipher"`
	// Offered is what the client's hello offered on this connection.
	Offered clientOffer `json:"offered"`
}

func (n negotiatedKeyExchange) String() string {
	return n.TLSVersion + " " + n.Cipher + " " + n.Curve
}

// curveBackendOpts: the groups the backend accepts, in its preference
// order, and the highest version.
type curveBackendOpts struct {
	curves []tls.CurveID
	maxTLS uint16
}

func startCurveBackend(t *testing.T, name string, leaf *harness.Leaf, o curveBackendOpts) *curveBackend {
	t.Helper()
	pair, err := tls.X509KeyPair(leaf.CertPEM, leaf.KeyPEM)
	if err != nil {
		t.Fatal(err)
	}
	b := &curveBackend{name: name, port: harness.FreePort(t), offered: map[string]clientOffer{}}
	ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(b.port)))
	if err != nil {
		t.Fatal(err)
	}
	cfg := &tls.Config{
		Certificates:     []tls.Certificate{pair},
		MinVersion:       tls.VersionTLS12,
		MaxVersion:       o.maxTLS,
		CurvePreferences: o.curves,
		NextProtos:       []string{"http/1.1"},
		// A full handshake every time: each connection negotiates anew.
		SessionTicketsDisabled: true,
		GetConfigForClient: func(hello *tls.ClientHelloInfo) (*tls.Config, error) {
			b.recordOffer(hello)
			return nil, nil
		},
	}
	srv := &http.Server{Handler: http.HandlerFunc(b.serve), ReadHeaderTimeout: 10 * time.Second,
		ErrorLog: log.New(serverLog{b}, "", 0)}
	go func() {
		if err := srv.Serve(tls.NewListener(ln, cfg)); err != nil && !errors.Is(err, http.ErrServerClosed) {
			t.Errorf("backend %s: %v", name, err)
		}
	}()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
	})
	return b
}

func (b *curveBackend) serve(w http.ResponseWriter, r *http.Request) {
	n := negotiatedKeyExchange{Name: b.name, Path: r.URL.Path}
	b.mu.Lock()
	n.Offered = b.offered[r.RemoteAddr]
	delete(b.offered, r.RemoteAddr)
	b.mu.Unlock()
	if s := r.TLS; s != nil {
		n.SNI, n.TLSVersion = s.ServerName, tls.VersionName(s.Version)
		n.Curve, n.Cipher = s.CurveID.String(), tls.CipherSuiteName(s.CipherSuite)
	}
	b.mu.Lock()
	b.conns = append(b.conns, n)
	b.mu.Unlock()
	// Each request on its own connection, so each answer is a handshake.
	w.Header().Set("Connection", "close")
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(n)
}

// serverLog keeps the http.Server's log lines: a refused handshake is
// one ("TLS handshake error from ...: tls: no key exchanges supported ...").
type serverLog struct{ b *curveBackend }

func (l serverLog) Write(p []byte) (int, error) {
	l.b.mu.Lock()
	defer l.b.mu.Unlock()
	if len(l.b.handshakeErrors) < 1024 {
		l.b.handshakeErrors = append(l.b.handshakeErrors, strings.TrimSpace(string(p)))
	}
	return len(p), nil
}

// refusedHandshakes are the failed handshakes the server logged.
func (b *curveBackend) refusedHandshakes() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return slices.Clone(b.handshakeErrors)
}

func (b *curveBackend) recordOffer(hello *tls.ClientHelloInfo) {
	var o clientOffer
	for _, c := range hello.SupportedCurves {
		o.Curves = append(o.Curves, c.String())
	}
	for _, c := range hello.CipherSuites {
		o.Ciphers = append(o.Ciphers, tls.CipherSuiteName(c))
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	// Bounded: a hello whose connection never sends a request is dropped
	// once many are waiting.
	if len(b.offered) < 1024 {
		b.offered[hello.Conn.RemoteAddr().String()] = o
	}
}

// connections are the records of every connection that asked for path.
func (b *curveBackend) connections(path string) []negotiatedKeyExchange {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []negotiatedKeyExchange
	for _, n := range b.conns {
		if n.Path == path {
			out = append(out, n)
		}
	}
	return out
}

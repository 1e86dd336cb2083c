package envoy

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tlsplane/tlsplane/e2e/harness"
)

// gatewayListeners: Envoy holds exactly the Gateway's four ports, named
// <ns>/<gateway>/<port>, active and bound where --listener-address says.
func gatewayListeners(t *testing.T, e *gwEnv, s *summary) {
	want := map[string]int{
		fmt.Sprintf("%s/%d", gwFleet, e.ports.http):  e.ports.http,
		fmt.Sprintf("%s/%d", gwFleet, e.ports.https): e.ports.https,
		fmt.Sprintf("%s/%d", gwFleet, e.ports.tls):   e.ports.tls,
		fmt.Sprintf("%s/%d", gwFleet, e.ports.tcp):   e.ports.tcp,
	}
	var last map[string]harness.ListenerState
	err := harness.Eventually(applyTimeout, 100*time.Millisecond, func() error {
		ls, err := e.gwEnvoy.Listeners()
		if err != nil {
			return err
		}
		last = ls
		for name, port := range want {
			l, ok := ls[name]
			switch {
			case !ok:
				return fmt.Errorf("no listener %s", name)
			case !l.Active:
				return fmt.Errorf("listener not active: %s", l)
			case l.Address != "127.0.0.1" || l.Port != port:
				return fmt.Errorf("listener bound to %s:%d, want 127.0.0.1:%d", l.Address, l.Port, port)
			}
		}
		if len(ls) != len(want) {
			return fmt.Errorf("%d listeners, want %d", len(ls), len(want))
		}
		return nil
	})
	var seen []string
	for _, l := range last {
		seen = append(seen, l.Name)
	}
	sort.Strings(seen)
	s.note("gateway-listeners-on-loopback", "%s", strings.Join(seen, ", "))
	if err != nil {
		t.Fatalf("Envoy's Gateway listeners: %v; it holds %v", err, last)
	}
}

// routesByHost: two routes told apart by hostname alone; a hostname no
// route names matches no virtual host (404).
func routesByHost(t *testing.T, e *gwEnv, b *gatewayBackends, s *summary) {
	ra := e.await(t, "host-a.example", func() (response, error) { return e.httpGet("host-a.example", "/") }, from(b.a))
	rb := e.await(t, "host-b.example", func() (response, error) { return e.httpGet("host-b.example", "/") }, from(b.b))
	r, err := e.httpGet("nobody.example", "/")
	if err != nil {
		t.Fatal(err)
	}
	s.note("http-routes-by-host", "host-a -> %s, host-b -> %s, nobody.example -> %d", ra.Echo.Name, rb.Echo.Name, r.Status)
	if r.Status != 404 {
		t.Errorf("a hostname no route names: want 404 from Envoy, got %s", r)
	}
	if ra.Echo.Host != "host-a.example" {
		t.Errorf("backend saw Host %q, want host-a.example", ra.Echo.Host)
	}
}

// routesByPath: PathPrefix matches whole path elements, Exact only its
// path, and the rule without a match takes the rest.
func routesByPath(t *testing.T, e *gwEnv, b *gatewayBackends, s *summary) {
	get := func(path string) func() (response, error) {
		return func() (response, error) { return e.httpGet("paths.example", path) }
	}
	e.await(t, "paths.example/prefix", get("/prefix"), from(b.a))
	var seen []string
	for _, c := range []struct {
		path string
		be   *backend
	}{
		{"/prefix", b.a},
		{"/prefix/", b.a},
		{"/prefix/deeper/still", b.a},
		{"/prefixed", b.c}, // not an element of /prefix
		{"/exact", b.b},
		{"/exact/more", b.c}, // Exact is not a prefix
		{"/exactly", b.c},
		{"/", b.c},
		{"/anything/else", b.c},
	} {
		r, err := e.httpGet("paths.example", c.path)
		if err != nil {
			t.Fatalf("%s: %v", c.path, err)
		}
		seen = append(seen, fmt.Sprintf("%s->%s", c.path, strings.TrimPrefix(r.Echo.Name, "gw-")))
		if err := from(c.be)(r); err != nil {
			t.Errorf("paths.example%s: %v", c.path, err)
		} else if r.Echo.Path != c.path {
			t.Errorf("paths.example%s: backend saw path %q", c.path, r.Echo.Path)
		}
	}
	s.note("http-routes-by-path-prefix-and-exact", "%s", strings.Join(seen, " "))
}

// httpsBySNI: one HTTPS port, two listeners with their own hostnames and
// certificates; the SNI picks the certificate (verified by the client
// against the Gateway's CA for that name) and the routes behind it. A name
// no listener has gets no handshake.
func httpsBySNI(t *testing.T, e *gwEnv, b *gatewayBackends, s *summary) {
	var seen []string
	for _, c := range []struct {
		host string
		be   *backend
	}{{hostAbcGW, b.a}, {hostOtherGW, b.b}} {
		r := e.await(t, "https "+c.host, func() (response, error) {
			return e.get(e.ports.https, c.host, "/secure", nil, c.host)
		}, from(c.be))
		cert := r.PeerCertificate
		if cert == nil || len(cert.DNSNames) != 1 || cert.DNSNames[0] != c.host {
			t.Errorf("SNI %s: Envoy presented %v, want the certificate of %s", c.host, certNames(cert), c.host)
		}
		seen = append(seen, fmt.Sprintf("%s: cert %v -> %s", c.host, certNames(cert), r.Echo.Name))
	}
	// The Host header does not choose the chain: the SNI does. A Host
	// that belongs to the port's other HTTPS listener is a misdirected
	// request (GatewayHTTPSListenerDetectMisdirectedRequests): 421, never
	// that listener's routes through this listener's certificate.
	r, err := e.get(e.ports.https, hostOtherGW, "/secure", nil, hostAbcGW)
	if err != nil {
		t.Fatal(err)
	}
	seen = append(seen, fmt.Sprintf("SNI abc, Host other: %d", r.Status))
	if r.Status != 421 {
		t.Errorf("SNI %s with Host %s: want 421 Misdirected Request (the Host is the other listener's), got %s", hostAbcGW, hostOtherGW, r)
	}
	err = handshake(e.pki.gwCA, e.ports.https, "nope.gw.example")
	seen = append(seen, fmt.Sprintf("SNI nope.gw.example: %v", shortErr(err)))
	if err == nil {
		t.Errorf("SNI nope.gw.example: the handshake succeeded; no listener has that hostname")
	}
	s.note("https-two-certificates-one-port-by-sni", "%s", strings.Join(seen, "; "))
}

// handshake dials the port with sni, verifying against ca.
func handshake(ca *harness.Authority, port int, sni string) error {
	roots := x509.NewCertPool()
	roots.AddCert(ca.Cert)
	conn, err := tls.DialWithDialer(&net.Dialer{Timeout: 5 * time.Second}, "tcp", "127.0.0.1:"+strconv.Itoa(port),
		&tls.Config{RootCAs: roots, ServerName: sni, MinVersion: tls.VersionTLS12})
	if err != nil {
		return err
	}
	return conn.Close()
}

func certNames(c *x509.Certificate) []string {
	if c == nil {
		return nil
	}
	return c.DNSNames
}

func shortErr(err error) string {
	if err == nil {
		return "handshake ok"
	}
	return shorten(err.Error())
}

// Weights: how many requests, and how far from 80 % the share of a may be.
// At n = 400 one standard deviation is 2 points, so 7.5 points is beyond
// 3.7 of them: a correct split fails about once in 5,000 runs.
const (
	weightRequests  = 400
	weightTolerance = 0.075
)

// weights: backendRefs weighted 80 and 20, each request a new connection.
func weights(t *testing.T, e *gwEnv, b *gatewayBackends, s *summary) {
	e.await(t, "weights.example", func() (response, error) { return e.httpGet("weights.example", "/w") },
		func(r response) error {
			if r.Status != 200 || (r.Echo.Name != b.a.name && r.Echo.Name != b.b.name) {
				return fmt.Errorf("want 200 from %s or %s, got %s", b.a.name, b.b.name, r)
			}
			return nil
		})
	counts := map[string]int{}
	for i := 0; i < weightRequests; i++ {
		r, err := e.httpGet("weights.example", "/w")
		if err != nil {
			t.Fatalf("request %d: %v", i, err)
		}
		if r.Status != 200 {
			t.Fatalf("request %d: %s", i, r)
		}
		counts[r.Echo.Name]++
	}
	share := float64(counts[b.a.name]) / weightRequests
	s.note("weights-80-20", "%d requests: %s %d, %s %d (%.1f %%, want 80 ± %.1f)",
		weightRequests, b.a.name, counts[b.a.name], b.b.name, counts[b.b.name], 100*share, 100*weightTolerance)
	if counts[b.a.name]+counts[b.b.name] != weightRequests {
		t.Errorf("answers from other backends: %v", counts)
	}
	if share < 0.8-weightTolerance || share > 0.8+weightTolerance {
		t.Errorf("%s got %.1f %% of %d requests, want 80 ± %.1f %%: %v", b.a.name, 100*share, weightRequests, 100*weightTolerance, counts)
	}
}

// headerFilter: a RequestHeaderModifier adds, overwrites and removes
// request headers before the backend sees them.
func headerFilter(t *testing.T, e *gwEnv, b *gatewayBackends, s *summary) {
	sent := map[string]string{"X-Gateway-Set": "original", "X-Gateway-Remove": "please", "X-Untouched": "kept"}
	r := e.await(t, "headers.example", func() (response, error) {
		return e.get(e.ports.http, "headers.example", "/h", sent, "")
	}, from(b.a))
	h := r.Echo.Headers
	s.note("request-header-modifier", "backend saw X-Gateway-Added=%v X-Gateway-Set=%v X-Gateway-Remove=%v X-Untouched=%v",
		h["X-Gateway-Added"], h["X-Gateway-Set"], h["X-Gateway-Remove"], h["X-Untouched"])
	for name, want := range map[string]string{"X-Gateway-Added": gwName, "X-Gateway-Set": "overwritten", "X-Untouched": "kept"} {
		if got := h[name]; len(got) != 1 || got[0] != want {
			t.Errorf("backend saw %s: %q, want exactly %q", name, got, want)
		}
	}
	if got, ok := h["X-Gateway-Remove"]; ok {
		t.Errorf("backend saw X-Gateway-Remove: %q; the filter removes it", got)
	}
}

package envoy

import (
	"bufio"
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/tlsplane/tlsplane/e2e/harness"
)

// TLSRoutes and TCPRoutes: the Gateway's TLS port has a Passthrough
// listener (pass.gw.example) and a Terminate one (term.gw.example); its
// TCP port proxies connections. Each carries an HTTP/1.1 request the
// echo backends answer, so the test sees what the backend saw.
const (
	fileStreams = "gw-streams"
	hostPassGW  = "pass.gw.example"
	hostTermGW  = "term.gw.example"
)

// tlsRoute and tcpRoute are stream routes of one listener to one Service
// port; a TCPRoute has no hostnames.
func streamRoute(kind, name, section string, hostnames []string, backends ...backendRef) object {
	var refs []object
	for _, b := range backends {
		ref := object{"group": "", "kind": "Service", "name": b.name, "port": b.port}
		if b.weight != 0 {
			ref["weight"] = b.weight
		}
		refs = append(refs, ref)
	}
	spec := object{
		"parentRefs": []object{{"group": "gateway.networking.k8s.io", "kind": "Gateway", "name": gwName, "sectionName": section}},
		"rules":      []object{{"backendRefs": refs}},
	}
	if len(hostnames) > 0 {
		spec["hostnames"] = hostnames
	}
	return object{
		"apiVersion": gatewayAPIVersion, "kind": kind,
		"metadata": object{"namespace": gwNS, "name": name, "generation": 1},
		"spec":     spec,
	}
}

// streamObjects: Passthrough to the TLS backend secure (its policy must
// not apply: the client's TLS reaches it), Terminate to the same Service
// (the policy re-encrypts), TCP to plain backends a and b by weight.
func streamObjects(b *gatewayBackends) []object {
	return inNamespace(gwNS,
		streamRoute("TLSRoute", "pass", "tls-pass", []string{hostPassGW}, backendRef{name: svcSecure, port: securePort}),
		streamRoute("TLSRoute", "term", "tls-term", []string{hostTermGW}, backendRef{name: svcSecure, port: securePort}),
		streamRoute("TCPRoute", "tcp", "tcp", nil, backendRef{name: b.a.name, port: plainPort, weight: 1}, backendRef{name: b.b.name, port: plainPort, weight: 1}),
	)
}

// streamGet sends one HTTP/1.1 request over a connection to port: TLS with
// sni when tlsConf is set. It returns the echo and the certificate the
// server presented (nil over TCP).
func streamGet(port int, tlsConf *tls.Config, path string) (response, *x509.Certificate, error) {
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	var conn net.Conn
	var err error
	dialer := &net.Dialer{Timeout: 3 * time.Second}
	if tlsConf != nil {
		conn, err = tls.DialWithDialer(dialer, "tcp", addr, tlsConf)
	} else {
		conn, err = dialer.Dial("tcp", addr)
	}
	if err != nil {
		return response{}, nil, err
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(5 * time.Second))
	var peer *x509.Certificate
	if tc, ok := conn.(*tls.Conn); ok && len(tc.ConnectionState().PeerCertificates) > 0 {
		peer = tc.ConnectionState().PeerCertificates[0]
	}
	if _, err := fmt.Fprintf(conn, "GET %s HTTP/1.1\r\nHost: stream.example\r\nConnection: close\r\n\r\n", path); err != nil {
		return response{}, peer, err
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		return response{}, peer, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return response{}, peer, err
	}
	r := response{Status: resp.StatusCode}
	if err := json.Unmarshal(body, &r.Echo); err != nil {
		return r, peer, fmt.Errorf("not an echo: %q", body)
	}
	return r, peer, nil
}

// awaitStream repeats streamGet until want accepts it.
func awaitStream(t *testing.T, what string, port int, tlsConf *tls.Config, want func(response, *x509.Certificate) error) (response, *x509.Certificate) {
	t.Helper()
	var last response
	var lastPeer *x509.Certificate
	var lastErr error
	err := harness.Eventually(applyTimeout, 100*time.Millisecond, func() error {
		last, lastPeer, lastErr = streamGet(port, tlsConf, "/"+what)
		if lastErr != nil {
			return lastErr
		}
		return want(last, lastPeer)
	})
	if err != nil {
		t.Fatalf("%s: %v (last: %s)", what, err, last)
	}
	return last, lastPeer
}

// tlsPassthrough: the client's TLS goes through to the backend: it sees
// the backend's own certificate and the backend sees the client's SNI
// (not the policy's, which does not apply to a client's TLS).
func tlsPassthrough(t *testing.T, e *gwEnv, b *gatewayBackends, s *summary) {
	conf := &tls.Config{ServerName: hostPassGW, InsecureSkipVerify: true} //nolint:gosec // the test compares the certificate itself
	r, peer := awaitStream(t, "tls-passthrough", e.ports.tls, conf, func(r response, peer *x509.Certificate) error {
		if err := from(b.secure)(r); err != nil {
			return err
		}
		if peer == nil || !bytes.Equal(peer.Raw, e.pki.backend.Cert.Raw) {
			return fmt.Errorf("the client saw another certificate than the backend's")
		}
		return nil
	})
	if r.Echo.SNI != hostPassGW {
		t.Errorf("backend saw SNI %q, want the client's %q", r.Echo.SNI, hostPassGW)
	}
	s.note("tlsroute-passthrough", "%s; client saw the backend's own certificate (%s, issued by %s)", r, peer.Subject.CommonName, peer.Issuer.CommonName)
}

// tlsTerminate: the Gateway ends the client's TLS with its listener
// certificate, then the policy of the Service re-encrypts: the backend
// sees the policy's SNI.
func tlsTerminate(t *testing.T, e *gwEnv, b *gatewayBackends, s *summary) {
	roots := x509.NewCertPool()
	roots.AddCert(e.pki.gwCA.Cert)
	conf := &tls.Config{ServerName: hostTermGW, RootCAs: roots, MinVersion: tls.VersionTLS12}
	r, peer := awaitStream(t, "tls-terminate", e.ports.tls, conf, func(r response, _ *x509.Certificate) error { return from(b.secure)(r) })
	if r.Echo.SNI != sniRouted || r.Echo.TLSVersion == "" {
		t.Errorf("backend saw SNI %q TLS %q, want the policy's %q over TLS (re-encrypted)", r.Echo.SNI, r.Echo.TLSVersion, sniRouted)
	}
	s.note("tlsroute-terminate-reencrypts", "%s; client saw the listener certificate %s", r, peer.Subject.CommonName)
}

// tcpProxy: connections to the TCP port reach the two plain backends by
// weight, as they are (the request is the client's).
func tcpProxy(t *testing.T, e *gwEnv, b *gatewayBackends, s *summary) {
	awaitStream(t, "tcp", e.ports.tcp, nil, func(r response, _ *x509.Certificate) error {
		if r.Status != 200 {
			return fmt.Errorf("status %d", r.Status)
		}
		return nil
	})
	seen := map[string]int{}
	for range 40 {
		r, _, err := streamGet(e.ports.tcp, nil, "/tcp-weights")
		if err != nil {
			t.Fatal(err)
		}
		seen[r.Echo.Name]++
	}
	if seen[b.a.name] == 0 || seen[b.b.name] == 0 || seen[b.a.name]+seen[b.b.name] != 40 {
		t.Errorf("40 connections reached %v, want both %s and %s and nothing else", seen, b.a.name, b.b.name)
	}
	s.note("tcproute-weights", "40 connections: %v", seen)
}

// streamUnmatchedSNI: a TLS connection whose SNI no TLS listener takes is
// refused, never sent anywhere.
func streamUnmatchedSNI(t *testing.T, e *gwEnv, s *summary) {
	_, _, err := streamGet(e.ports.tls, &tls.Config{ServerName: "nobody.gw.example", InsecureSkipVerify: true}, "/unmatched") //nolint:gosec // refused before any certificate
	if err == nil {
		t.Fatal("a connection with an SNI no listener takes was answered")
	}
	s.note("tls-unmatched-sni-refused", "%v", err)
}

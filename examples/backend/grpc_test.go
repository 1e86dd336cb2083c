package main

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
)

// serverName is the name the backend's test certificate is for; clients
// send it as SNI and verify it, as Envoy does.
const serverName = "payments.shop.example"

// writeCAAndLeaf writes a CA and a leaf for serverName it signed, so clients
// verify the backend for real instead of skipping verification.
func writeCAAndLeaf(t *testing.T, dir string) (caFile, certFile, keyFile string) {
	t.Helper()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	ca, _ := x509.ParseCertificate(caDER)
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: serverName},
		DNSNames: []string{serverName}, NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, _ := x509.MarshalECPrivateKey(key)
	write := func(name, typ string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: b}), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	return write("ca.crt", "CERTIFICATE", caDER), write("tls.crt", "CERTIFICATE", der), write("tls.key", "EC PRIVATE KEY", keyDER)
}

// startBackend runs the backend main runs, on 127.0.0.1:0.
func startBackend(t *testing.T, o options) (*http.Server, string, *counters) {
	t.Helper()
	counts := &counters{}
	srv, err := newServer(o, counts)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = serve(srv, ln, o.plain) }()
	t.Cleanup(func() { _ = srv.Close() })
	return srv, ln.Addr().String(), counts
}

// tlsBackend starts a TLS backend and returns the client TLS settings that
// verify it.
func tlsBackend(t *testing.T, o options) (*http.Server, string, *counters, *tls.Config) {
	t.Helper()
	caFile, certFile, keyFile := writeCAAndLeaf(t, t.TempDir())
	o.certFile, o.keyFile, o.minTLS, o.maxTLS = certFile, keyFile, "1.2", "1.3"
	srv, addr, counts := startBackend(t, o)
	pemData, err := os.ReadFile(caFile)
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(pemData)
	return srv, addr, counts, &tls.Config{RootCAs: roots, ServerName: serverName}
}

func healthClient(t *testing.T, addr string, creds credentials.TransportCredentials) healthpb.HealthClient {
	t.Helper()
	conn, err := grpc.NewClient("passthrough:///"+addr, grpc.WithTransportCredentials(creds))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	return healthpb.NewHealthClient(conn)
}

// check makes a unary Check and returns the response's header metadata.
func check(t *testing.T, client healthpb.HealthClient, service string) metadata.MD {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var header metadata.MD
	resp, err := client.Check(ctx, &healthpb.HealthCheckRequest{Service: service}, grpc.Header(&header))
	if err != nil {
		t.Fatalf("Check(%q): %v", service, err)
	}
	if resp.GetStatus() != healthpb.HealthCheckResponse_SERVING {
		t.Errorf("Check(%q): %v, want SERVING", service, resp.GetStatus())
	}
	return header
}

// wantHeaders compares the header metadata with want; every key must be
// present, even when its value is empty.
func wantHeaders(t *testing.T, got metadata.MD, want map[string]string) {
	t.Helper()
	for k, v := range want {
		if vs := got.Get(k); len(vs) != 1 || vs[0] != v {
			t.Errorf("header %s: %q, want [%q]", k, vs, v)
		}
	}
}

// sameValues reports whether got has want's values for want's keys.
func sameValues(got, want metadata.MD) bool {
	for k, v := range want {
		if !slices.Equal(got.Get(k), v) {
			return false
		}
	}
	return true
}

func getEcho(t *testing.T, c *http.Client, url string) Echo {
	t.Helper()
	resp, err := c.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var e Echo
	if err := json.NewDecoder(resp.Body).Decode(&e); err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	return e
}

func TestGRPCCheckOverTLSReportsWhatWasNegotiated(t *testing.T) {
	_, addr, _, clientTLS := tlsBackend(t, options{name: "payments"})
	client := healthClient(t, addr, credentials.NewTLS(clientTLS))
	header := check(t, client, "")
	wantHeaders(t, header, map[string]string{
		HeaderBackend: "payments", HeaderSNI: serverName, HeaderALPN: "h2",
		HeaderTLSVersion: "TLS 1.3", HeaderProtocol: "HTTP/2.0", HeaderClientCertificate: "",
	})
	check(t, client, "payments") // the --name service is SERVING too

	// The echo writes the same facts the same way.
	h2 := &http.Client{Transport: &http.Transport{TLSClientConfig: clientTLS, ForceAttemptHTTP2: true}}
	e := getEcho(t, h2, "https://"+addr+"/")
	if got := (metadata.Pairs(HeaderTLSVersion, e.TLSVersion, HeaderSNI, e.SNI, HeaderALPN, e.ALPN)); !sameValues(header, got) {
		t.Errorf("echo says %v, the gRPC header metadata %v", got, header)
	}
}

func TestGRPCWatchStreamsServing(t *testing.T) {
	_, addr, _, clientTLS := tlsBackend(t, options{name: "payments"})
	client := healthClient(t, addr, credentials.NewTLS(clientTLS))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	stream, err := client.Watch(ctx, &healthpb.HealthCheckRequest{Service: "payments"})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := stream.Recv()
	if err != nil {
		t.Fatalf("Watch: %v", err)
	}
	if resp.GetStatus() != healthpb.HealthCheckResponse_SERVING {
		t.Errorf("Watch: %v, want SERVING", resp.GetStatus())
	}
	header, err := stream.Header()
	if err != nil {
		t.Fatal(err)
	}
	wantHeaders(t, header, map[string]string{HeaderBackend: "payments", HeaderSNI: serverName, HeaderALPN: "h2"})
}

// An open Watch must not hold a graceful shutdown until its deadline.
func TestShutdownEndsWatchStreams(t *testing.T) {
	srv, addr, _, clientTLS := tlsBackend(t, options{name: "payments"})
	client := healthClient(t, addr, credentials.NewTLS(clientTLS))
	stream, err := client.Watch(context.Background(), &healthpb.HealthCheckRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := stream.Recv(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	if err := srv.Shutdown(ctx); err != nil {
		t.Errorf("Shutdown with a Watch open: %v", err)
	}
}

func TestGRPCNamesTheClientCertificate(t *testing.T) {
	clientCert, clientKey := writePair(t, t.TempDir(), "envoy-client") // self-signed: its own CA
	_, addr, _, clientTLS := tlsBackend(t, options{name: "payments", clientCA: clientCert})
	pair, err := tls.LoadX509KeyPair(clientCert, clientKey)
	if err != nil {
		t.Fatal(err)
	}
	clientTLS.Certificates = []tls.Certificate{pair}
	header := check(t, healthClient(t, addr, credentials.NewTLS(clientTLS)), "")
	wantHeaders(t, header, map[string]string{HeaderClientCertificate: "envoy-client", HeaderBackend: "payments"})
}

func TestGRPCOverH2CWhenPlain(t *testing.T) {
	_, addr, _ := startBackend(t, options{name: "catalog", plain: true})
	header := check(t, healthClient(t, addr, insecure.NewCredentials()), "catalog")
	wantHeaders(t, header, map[string]string{
		HeaderBackend: "catalog", HeaderProtocol: "HTTP/2.0",
		HeaderSNI: "", HeaderTLSVersion: "", HeaderALPN: "", HeaderClientCertificate: "",
	})
}

// The JSON echo answers as before beside gRPC, and /_count counts both.
func TestEchoBesideGRPCAndCountsBoth(t *testing.T) {
	_, plainAddr, plainCounts := startBackend(t, options{name: "catalog", plain: true})
	if e := getEcho(t, http.DefaultClient, "http://"+plainAddr+"/a"); e.Name != "catalog" || e.Proto != "HTTP/1.1" || e.Path != "/a" || e.TLSVersion != "" {
		t.Errorf("plain HTTP/1.1 echo: %+v", e)
	}
	check(t, healthClient(t, plainAddr, insecure.NewCredentials()), "")
	if n := plainCounts.requests.Load(); n != 2 {
		t.Errorf("plain: counted %d requests, want 2 (an echo and a gRPC call)", n)
	}

	_, addr, _, clientTLS := tlsBackend(t, options{name: "payments"})
	http1TLS := clientTLS.Clone()
	http1TLS.NextProtos = []string{"http/1.1"}
	http1 := &http.Client{Transport: &http.Transport{TLSClientConfig: http1TLS}}
	if e := getEcho(t, http1, "https://"+addr+"/b"); e.Proto != "HTTP/1.1" || e.ALPN != "http/1.1" || e.SNI != serverName || e.Path != "/b" {
		t.Errorf("HTTPS HTTP/1.1 echo: %+v", e)
	}
	h2 := &http.Client{Transport: &http.Transport{TLSClientConfig: clientTLS, ForceAttemptHTTP2: true}}
	if e := getEcho(t, h2, "https://"+addr+"/c"); e.Proto != "HTTP/2.0" || e.ALPN != "h2" {
		t.Errorf("HTTPS HTTP/2 echo: %+v", e)
	}
	client := healthClient(t, addr, credentials.NewTLS(clientTLS))
	check(t, client, "")
	check(t, client, "payments")
	resp, err := http1.Get("https://" + addr + CountPath)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var c Counts
	if err := json.NewDecoder(resp.Body).Decode(&c); err != nil {
		t.Fatal(err)
	}
	if c.Requests != 4 {
		t.Errorf("%s: %d requests, want 4 (two echoes, two gRPC calls)", CountPath, c.Requests)
	}
}

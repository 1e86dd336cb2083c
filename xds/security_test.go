package xds

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"math/big"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	discoveryv3 "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/status"

	"github.com/tlsplane/tlsplane/snapshots"
	st "github.com/tlsplane/tlsplane/snapshots/snapshotstest"
)

// testCA issues the certificates of a mutual TLS test.
type testCA struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	pem  []byte
}

var serial atomic.Int64

func newTestCA(t *testing.T) *testCA {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(serial.Add(1)), Subject: pkix.Name{CommonName: "tlsplane test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	return &testCA{cert: cert, key: key, pem: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})}
}

type leafSpec struct {
	uri      string
	dns      string
	ip       net.IP
	server   bool
	notAfter time.Time // zero: an hour from now
}

// issue returns a leaf certificate and its key, PEM encoded.
func (ca *testCA) issue(t *testing.T, spec leafSpec) (certPEM, keyPEM []byte) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	notAfter := spec.notAfter
	if notAfter.IsZero() {
		notAfter = time.Now().Add(time.Hour)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(serial.Add(1)), Subject: pkix.Name{CommonName: "tlsplane test leaf"},
		NotBefore: time.Now().Add(-2 * time.Hour), NotAfter: notAfter,
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	if spec.server {
		tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}
	}
	if spec.uri != "" {
		u, err := url.Parse(spec.uri)
		if err != nil {
			t.Fatal(err)
		}
		tmpl.URIs = []*url.URL{u}
	}
	if spec.dns != "" {
		tmpl.DNSNames = []string{spec.dns}
	}
	if spec.ip != nil {
		tmpl.IPAddresses = []net.IP{spec.ip}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER})
}

func writeFile(t *testing.T, path string, data []byte) {
	t.Helper()
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
}

// secureServer is a harness's publisher served with mutual TLS.
type secureServer struct {
	*harness
	ca                       *testCA
	certFile, keyFile, caPEM string
}

func startSecure(t *testing.T, template string) *secureServer {
	t.Helper()
	return startSecureWith(t, template, snapshots.Options{}, Options{})
}

// startSecureWith adds publisher and server options; Security is set here.
func startSecureWith(t *testing.T, template string, pubOpts snapshots.Options, opts Options) *secureServer {
	t.Helper()
	dir := t.TempDir()
	ca := newTestCA(t)
	s := &secureServer{ca: ca, certFile: filepath.Join(dir, "tls.crt"), keyFile: filepath.Join(dir, "tls.key"), caPEM: filepath.Join(dir, "ca.crt")}
	certPEM, keyPEM := ca.issue(t, leafSpec{ip: net.IPv4(127, 0, 0, 1), server: true})
	writeFile(t, s.certFile, certPEM)
	writeFile(t, s.keyFile, keyPEM)
	writeFile(t, s.caPEM, ca.pem)
	sec, err := MutualTLS(s.certFile, s.keyFile, s.caPEM, template, func(err error) { t.Logf("reload: %v", err) })
	if err != nil {
		t.Fatal(err)
	}
	if opts.Security.Fleet != nil {
		sec.Fleet = opts.Security.Fleet // the test's own rule (a WithMesh)
	}
	h := &harness{pub: snapshots.New(pubOpts), nacks: make(chan NACK, 16)}
	opts.Security = sec
	srv := NewServer(h.pub, opts)
	h.server, h.metrics = srv, srv.metrics
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	h.addr = lis.Addr().String()
	served := make(chan error, 1)
	go func() { served <- srv.Serve(lis) }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		srv.Stop(ctx)
		select {
		case <-served:
		case <-time.After(patience):
			t.Error("Serve did not return after Stop")
		}
	})
	s.harness = h
	return s
}

// dial connects with the server's CA trusted and the given client
// certificate (none when certPEM is nil).
func (s *secureServer) dial(t *testing.T, certPEM, keyPEM []byte, pinned func(*x509.Certificate)) *grpc.ClientConn {
	t.Helper()
	roots := x509.NewCertPool()
	roots.AddCert(s.ca.cert)
	cfg := &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12}
	if certPEM != nil {
		pair, err := tls.X509KeyPair(certPEM, keyPEM)
		if err != nil {
			t.Fatal(err)
		}
		cfg.Certificates = []tls.Certificate{pair}
	}
	if pinned != nil {
		cfg.VerifyConnection = func(cs tls.ConnectionState) error {
			pinned(cs.PeerCertificates[0])
			return nil
		}
	}
	conn, err := grpc.NewClient(s.addr, grpc.WithTransportCredentials(credentials.NewTLS(cfg)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

// sotwOutcome opens a SotW stream, sends one request for fleet, and
// returns the responses received and the stream's final error, waiting
// at most patience.
func sotwOutcome(t *testing.T, conn *grpc.ClientConn, fleet string) (int, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), patience)
	defer cancel()
	stream, err := discoveryv3.NewAggregatedDiscoveryServiceClient(conn).StreamAggregatedResources(ctx)
	if err != nil {
		return 0, err
	}
	if err := stream.Send(&discoveryv3.DiscoveryRequest{Node: node("envoy-1", fleet), TypeUrl: resource.ClusterType}); err != nil && !errors.Is(err, context.DeadlineExceeded) {
		// A failed Send is reported by Recv.
		t.Logf("send: %v", err)
	}
	responses := 0
	for {
		resp, err := stream.Recv()
		if err != nil {
			return responses, err
		}
		if len(resp.GetResources()) > 0 {
			responses++
			return responses, nil
		}
		responses++
	}
}

func TestMutualTLSRefusesClientsOfOtherFleets(t *testing.T) {
	s := startSecure(t, DefaultFleetIdentity)
	s.publish(t, st.Output(payments), true)
	stranger := newTestCA(t)

	edgeCert, edgeKey := s.ca.issue(t, leafSpec{uri: "spiffe://cluster.local/fleet/edge"})
	otherCert, otherKey := s.ca.issue(t, leafSpec{uri: "spiffe://cluster.local/fleet/internal"})
	expiredCert, expiredKey := s.ca.issue(t, leafSpec{uri: "spiffe://cluster.local/fleet/edge", notAfter: time.Now().Add(-time.Minute)})
	strangerCert, strangerKey := stranger.issue(t, leafSpec{uri: "spiffe://cluster.local/fleet/edge"})
	dnsCert, dnsKey := s.ca.issue(t, leafSpec{dns: "edge"})

	refused := []struct {
		name      string
		cert, key []byte
		fleet     string
		code      codes.Code // Unavailable: the handshake failed
	}{
		{"no client certificate", nil, nil, "edge", codes.Unavailable},
		{"certificate of another fleet", otherCert, otherKey, "edge", codes.PermissionDenied},
		{"expired certificate", expiredCert, expiredKey, "edge", codes.Unavailable},
		{"certificate of another CA", strangerCert, strangerKey, "edge", codes.Unavailable},
		{"DNS SAN where the template is a SPIFFE ID", dnsCert, dnsKey, "edge", codes.PermissionDenied},
		{"empty node cluster", edgeCert, edgeKey, "", codes.PermissionDenied},
	}
	for _, tc := range refused {
		t.Run(tc.name, func(t *testing.T) {
			got, err := sotwOutcome(t, s.dial(t, tc.cert, tc.key, nil), tc.fleet)
			if got != 0 {
				t.Fatalf("received %d DiscoveryResponses, want none", got)
			}
			if status.Code(err) != tc.code {
				t.Fatalf("stream error %v, want code %v", err, tc.code)
			}
		})
	}
	if n := counterValue(t, s.metrics.responses.WithLabelValues(resource.ClusterType)); n != 0 {
		t.Fatalf("server sent %v cluster responses to refused clients", n)
	}
	if n := counterValue(t, s.metrics.refused); n != 3 {
		t.Errorf("tlsplane_xds_streams_refused_total = %v, want 3", n)
	}

	t.Run("the fleet's own certificate is served", func(t *testing.T) {
		got, err := sotwOutcome(t, s.dial(t, edgeCert, edgeKey, nil), "edge")
		if err != nil || got != 1 {
			t.Fatalf("responses %d, error %v: want the clusters", got, err)
		}
	})
}

func TestMutualTLSRefusesSwitchingFleetMidStream(t *testing.T) {
	s := startSecure(t, DefaultFleetIdentity)
	s.publish(t, st.Output(payments), true)
	edgeCert, edgeKey := s.ca.issue(t, leafSpec{uri: "spiffe://cluster.local/fleet/edge"})
	ctx, cancel := context.WithTimeout(context.Background(), patience)
	defer cancel()
	stream, err := discoveryv3.NewAggregatedDiscoveryServiceClient(s.dial(t, edgeCert, edgeKey, nil)).StreamAggregatedResources(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := stream.Send(&discoveryv3.DiscoveryRequest{Node: node("envoy-1", "edge"), TypeUrl: resource.ClusterType}); err != nil {
		t.Fatal(err)
	}
	first, err := stream.Recv()
	if err != nil {
		t.Fatal(err)
	}
	// A second subscription naming another fleet must not be served.
	if err := stream.Send(&discoveryv3.DiscoveryRequest{Node: node("envoy-1", "internal"), TypeUrl: resource.EndpointType}); err != nil {
		t.Fatal(err)
	}
	resp, err := stream.Recv()
	if status.Code(err) != codes.PermissionDenied {
		t.Fatalf("after switching fleet: response %v, error %v; want PermissionDenied", resp, err)
	}
	_ = first
}

func TestMutualTLSDeltaAndDNSTemplate(t *testing.T) {
	s := startSecure(t, "{cluster}.fleet.example.org")
	s.publish(t, st.Output(payments), true)
	edgeCert, edgeKey := s.ca.issue(t, leafSpec{dns: "edge.fleet.example.org"})
	for _, tc := range []struct {
		fleet string
		code  codes.Code
	}{{"internal", codes.PermissionDenied}, {"EDGE", codes.PermissionDenied}, {"edge", codes.OK}} {
		ctx, cancel := context.WithTimeout(context.Background(), patience)
		stream, err := discoveryv3.NewAggregatedDiscoveryServiceClient(s.dial(t, edgeCert, edgeKey, nil)).DeltaAggregatedResources(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if err := stream.Send(&discoveryv3.DeltaDiscoveryRequest{Node: node("envoy-1", tc.fleet), TypeUrl: resource.ClusterType}); err != nil {
			t.Fatal(err)
		}
		resp, err := stream.Recv()
		cancel()
		if status.Code(err) != tc.code {
			t.Fatalf("fleet %s: error %v, want %v", tc.fleet, err, tc.code)
		}
		if tc.code != codes.OK && resp != nil {
			t.Fatalf("fleet %s: received %v", tc.fleet, resp)
		}
		if tc.code == codes.OK && len(resp.GetResources()) != 1 {
			t.Fatalf("fleet %s: got %d clusters, want 1", tc.fleet, len(resp.GetResources()))
		}
	}
}

func TestMutualTLSReloadsRotatedServerCertificate(t *testing.T) {
	s := startSecure(t, DefaultFleetIdentity)
	s.publish(t, st.Output(payments), true)
	edgeCert, edgeKey := s.ca.issue(t, leafSpec{uri: "spiffe://cluster.local/fleet/edge"})
	servedSerial := func() *big.Int {
		var got *big.Int
		if _, err := sotwOutcome(t, s.dial(t, edgeCert, edgeKey, func(c *x509.Certificate) { got = c.SerialNumber }), "edge"); err != nil {
			t.Fatal(err)
		}
		return got
	}
	before := servedSerial()

	certPEM, keyPEM := s.ca.issue(t, leafSpec{ip: net.IPv4(127, 0, 0, 1), server: true})
	block, _ := pem.Decode(certPEM)
	rotated, _ := x509.ParseCertificate(block.Bytes)
	// Key first, as a careless rotation might: a mismatched pair keeps the
	// last good one.
	writeFile(t, s.keyFile, keyPEM)
	if got := servedSerial(); got.Cmp(before) != 0 {
		t.Fatalf("half-rotated files: served serial %v, want the last good %v", got, before)
	}
	writeFile(t, s.certFile, certPEM)
	if got := servedSerial(); got.Cmp(rotated.SerialNumber) != 0 {
		t.Fatalf("after rotation: served serial %v, want %v (before %v)", got, rotated.SerialNumber, before)
	}
}

func TestParseFleetIdentity(t *testing.T) {
	for _, tc := range []struct {
		template, fleet, want string
		wantErr               bool
	}{
		{DefaultFleetIdentity, "edge", "spiffe://cluster.local/fleet/edge", false},
		{"{cluster}.fleet.example.org", "edge", "edge.fleet.example.org", false},
		{"spiffe://example.org/fleet", "", "", true},
		{"{cluster}/{cluster}", "", "", true},
	} {
		f, err := ParseFleetIdentity(tc.template)
		if (err != nil) != tc.wantErr {
			t.Fatalf("%q: error %v, want error %v", tc.template, err, tc.wantErr)
		}
		if err == nil && f.For(tc.fleet) != tc.want {
			t.Fatalf("%q: For(%q) = %q, want %q", tc.template, tc.fleet, f.For(tc.fleet), tc.want)
		}
	}
}

func TestMutualTLSNeedsAllFiles(t *testing.T) {
	if _, err := MutualTLS("a.crt", "", "ca.crt", DefaultFleetIdentity, nil); err == nil {
		t.Fatal("no key: want an error")
	}
	if _, err := MutualTLS(filepath.Join(t.TempDir(), "missing.crt"), "k", "ca", DefaultFleetIdentity, nil); err == nil {
		t.Fatal("missing files: want an error")
	}
}

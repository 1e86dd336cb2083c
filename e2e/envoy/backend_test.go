package envoy

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/tlsplane/tlsplane/e2e/harness"
)

// backend is one running examples/backend echo server on loopback.
type backend struct {
	name  string
	ip    string
	port  int
	plain bool
	proc  *harness.Process
	// client asks for the counters: with a client certificate when the
	// backend requires one.
	client *http.Client
}

// backendOpts are the flags that make one backend differ from another.
type backendOpts struct {
	leaf           *harness.Leaf
	minTLS, maxTLS string
	curves         string
	plain          bool
	// clientCA, when set, makes the backend require a client certificate
	// it signed (mutual TLS); probe is the one the test's own requests use.
	clientCA *harness.Authority
	probe    *harness.Leaf
	// port is where to listen, as a restarted backend keeps its port;
	// 0 picks a free one.
	port int
	// ip is the loopback address to listen on; 127.0.0.1 when empty.
	ip string
}

func startBackend(t *testing.T, e *env, name string, o backendOpts) *backend {
	t.Helper()
	port := o.port
	if port == 0 {
		port = harness.FreePort(t)
	}
	ip := o.ip
	if ip == "" {
		ip = "127.0.0.1"
	}
	args := []string{"--listen", net.JoinHostPort(ip, strconv.Itoa(port)), "--name", name}
	if o.plain {
		args = append(args, "--plain")
	} else {
		args = append(args, "--cert", o.leaf.CertFile, "--key", o.leaf.KeyFile)
	}
	if o.minTLS != "" {
		args = append(args, "--min-tls", o.minTLS)
	}
	if o.maxTLS != "" {
		args = append(args, "--max-tls", o.maxTLS)
	}
	if o.curves != "" {
		args = append(args, "--curves", o.curves)
	}
	b := &backend{name: name, ip: ip, port: port, plain: o.plain, client: countClient}
	if o.clientCA != nil {
		caFile := filepath.Join(e.pkiDir, name+"-client-ca.crt")
		if err := os.WriteFile(caFile, o.clientCA.PEM, 0o600); err != nil {
			t.Fatal(err)
		}
		args = append(args, "--client-ca", caFile)
		b.client = clientWith(t, o.probe)
	}
	b.proc = harness.Start(t, e.logDir, "backend-"+name, e.backendBin, args...)
	harness.WaitProbe(t, b.proc, 10*time.Second, func() error { _, err := b.tryCounts(); return err })
	return b
}

func (b *backend) baseURL() string {
	scheme := "https"
	if b.plain {
		scheme = "http"
	}
	return scheme + "://" + net.JoinHostPort(b.ip, strconv.Itoa(b.port))
}

// backendCounts is what the backend's /_count answers.
type backendCounts struct {
	Requests   int64 `json:"requests"`
	Plaintext  int64 `json:"plaintext"`
	Handshakes int64 `json:"handshakes"`
}

// The harness asks a backend for its counters without verifying it: the
// question is what the backend received, not who it is.
var countClient = &http.Client{
	Timeout:   5 * time.Second,
	Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}},
}

// clientWith is countClient presenting leaf as its client certificate.
func clientWith(t *testing.T, leaf *harness.Leaf) *http.Client {
	t.Helper()
	pair, err := tls.X509KeyPair(leaf.CertPEM, leaf.KeyPEM)
	if err != nil {
		t.Fatal(err)
	}
	return &http.Client{
		Timeout:   countClient.Timeout,
		Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true, Certificates: []tls.Certificate{pair}}},
	}
}

func (b *backend) counts(t *testing.T) backendCounts {
	t.Helper()
	c, err := b.tryCounts()
	if err != nil {
		t.Fatalf("backend %s counts: %v", b.name, err)
	}
	return c
}

// verifiesWith checks, from the test itself, that the backend now serves a
// certificate chaining to ca for hostAbc.
func (b *backend) verifiesWith(ca *harness.Authority) error {
	roots := x509.NewCertPool()
	roots.AddCert(ca.Cert)
	conn, err := tls.DialWithDialer(&net.Dialer{Timeout: 5 * time.Second}, "tcp", "127.0.0.1:"+strconv.Itoa(b.port),
		&tls.Config{RootCAs: roots, ServerName: hostAbc})
	if err != nil {
		return err
	}
	return conn.Close()
}

func (b *backend) tryCounts() (backendCounts, error) {
	var c backendCounts
	resp, err := b.client.Get(b.baseURL() + "/_count")
	if err != nil {
		return c, err
	}
	defer resp.Body.Close()
	err = json.NewDecoder(resp.Body).Decode(&c)
	return c, err
}

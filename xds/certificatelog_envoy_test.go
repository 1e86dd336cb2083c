package xds

import (
	"bufio"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"io"
	"math/big"
	mathrand "math/rand/v2"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"

	"github.com/tlsplane/tlsplane/manifests"
	"github.com/tlsplane/tlsplane/snapshots"
	"github.com/tlsplane/tlsplane/translator"
	"github.com/tlsplane/tlsplane/translator/plan"
	"github.com/tlsplane/tlsplane/translator/translatortest"
)

// The scene of the certificate log tests: Gateway shop/edge with an HTTP
// listener (an HTTPRoute to Service web) and a TLS listener terminating
// term.shop.test (a TLSRoute to Service vault); one BackendTLSPolicy has
// Envoy speak TLS to both, whose endpoints are one real TLS backend. The
// HTTPRoute sends /plain to Service plain, a plaintext backend.
const (
	sceneNamespace = "shop"
	sceneHost      = "backend.shop.test" // the backend certificate's SAN, the policy's hostname
	sceneTermHost  = "term.shop.test"
	scenePort      = 8443
)

var sceneFleet = translator.GatewayFleet(types.NamespacedName{Namespace: sceneNamespace, Name: "edge"})

// tlsBackend is a real TLS server answering HTTP/1.1, and what it
// negotiated.
type tlsBackend struct {
	port   int
	leaf   *x509.Certificate
	caPEM  string
	mu     sync.Mutex
	cipher map[string]bool // suites negotiated, as Go names them
}

// startTLSBackend serves HTTPS on 127.0.0.1 with a leaf for sceneHost
// issued by a fresh CA; the leaf's serial and notAfter are distinctive.
func startTLSBackend(t testing.TB) *tlsBackend {
	t.Helper()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "certificate log test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(48 * time.Hour),
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
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(0x5eed1e55), Subject: pkix.Name{CommonName: sceneHost, Organization: []string{"shop"}},
		DNSNames:  []string{sceneHost},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(30 * time.Hour).Truncate(time.Second).UTC(),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	leaf, _ := x509.ParseCertificate(der)
	b := &tlsBackend{leaf: leaf, cipher: map[string]bool{},
		caPEM: string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}))}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	b.port = lis.Addr().(*net.TCPAddr).Port
	srv := &http.Server{
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.TLS != nil {
				b.mu.Lock()
				b.cipher[tls.CipherSuiteName(r.TLS.CipherSuite)] = true
				b.mu.Unlock()
			}
			io.WriteString(w, "backend\n")
		}),
		ReadHeaderTimeout: 5 * time.Second,
		TLSConfig: &tls.Config{
			Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key, Leaf: leaf}},
			NextProtos:   []string{"http/1.1"},
		},
		ErrorLog: nil,
	}
	go srv.Serve(tls.NewListener(lis, srv.TLSConfig))
	t.Cleanup(func() { srv.Close() })
	return b
}

// negotiated reports whether the backend negotiated cipher (Envoy's name).
func (b *tlsBackend) negotiated(cipher string) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.cipher[cipher]
}

// sceneInputs are the scene's objects; the Gateway listens on httpPort
// and tlsPort of 127.0.0.1; its HTTPRoute sends /plain to Service plain,
// a plaintext backend on plainPort.
func sceneInputs(t testing.TB, b *tlsBackend, httpPort, tlsPort, plainPort int) translator.Inputs {
	t.Helper()
	service := func(name string) string {
		return fmt.Sprintf(`apiVersion: v1
kind: Service
metadata: {namespace: shop, name: %[1]s}
spec:
  ports: [{name: https, port: %[2]d, targetPort: %[3]d, protocol: TCP}]
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: {namespace: shop, name: %[1]s-1, labels: {kubernetes.io/service-name: %[1]s}}
addressType: IPv4
ports: [{name: https, port: %[3]d, protocol: TCP}]
endpoints: [{addresses: [127.0.0.1], conditions: {ready: true}}]
`, name, scenePort, b.port)
	}
	plain := fmt.Sprintf(`apiVersion: v1
kind: Service
metadata: {namespace: shop, name: plain}
spec:
  ports: [{name: http, port: 8080, targetPort: %[1]d, protocol: TCP}]
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: {namespace: shop, name: plain-1, labels: {kubernetes.io/service-name: plain}}
addressType: IPv4
ports: [{name: http, port: %[1]d, protocol: TCP}]
endpoints: [{addresses: [127.0.0.1], conditions: {ready: true}}]
`, plainPort)
	yaml := fmt.Sprintf(`apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: tlsplane}
spec: {controllerName: tlsplane.io/controller}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {namespace: shop, name: edge}
spec:
  gatewayClassName: tlsplane
  listeners:
  - {name: http, protocol: HTTP, port: %[1]d}
  - name: tls
    protocol: TLS
    port: %[2]d
    hostname: %[3]s
    tls: {mode: Terminate, certificateRefs: [{kind: Secret, name: edge-cert}]}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {namespace: shop, name: web}
spec:
  parentRefs: [{name: edge, sectionName: http}]
  rules:
  - backendRefs: [{name: web, port: %[4]d}]
  - matches: [{path: {type: PathPrefix, value: /plain}}]
    backendRefs: [{name: plain, port: 8080}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: TLSRoute
metadata: {namespace: shop, name: vault}
spec:
  parentRefs: [{name: edge, sectionName: tls}]
  hostnames: [%[3]s]
  rules: [{backendRefs: [{name: vault, port: %[4]d}]}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: BackendTLSPolicy
metadata: {namespace: shop, name: backends-tls}
spec:
  targetRefs: [{group: "", kind: Service, name: web}, {group: "", kind: Service, name: vault}]
  validation:
    hostname: %[5]s
    caCertificateRefs: [{group: "", kind: ConfigMap, name: backend-ca}]
---
apiVersion: v1
kind: ConfigMap
metadata: {namespace: shop, name: backend-ca}
data:
  ca.crt: |
%[6]s
---
%[7]s---
%[8]s---
%[9]s`, httpPort, tlsPort, sceneTermHost, scenePort, sceneHost, indent(b.caPEM, "    "), service("web"), service("vault"), plain)
	in, err := manifests.Limits{}.Parse("scene.yaml", []byte(yaml), func(w string) { t.Errorf("manifest warning: %s", w) })
	if err != nil {
		t.Fatal(err)
	}
	in.Secrets = append(in.Secrets, translatortest.TLSSecret(t, sceneNamespace, "edge-cert", sceneTermHost))
	return in
}

// indent prefixes every line of s, for a YAML block scalar.
func indent(s, prefix string) string {
	return prefix + strings.ReplaceAll(strings.TrimSuffix(s, "\n"), "\n", "\n"+prefix)
}

// sceneOutput translates the scene with the certificate log at percent,
// sent through the bootstrap's cluster "xds".
func sceneOutput(t testing.TB, in translator.Inputs, percent float64) translator.Output {
	t.Helper()
	out := translator.Translate(in, nil, time.Now(), translator.Options{
		ListenerAddress:     "127.0.0.1",
		BackendCertificates: translator.BackendCertificates{SamplePercent: percent, XDSCluster: "xds"},
	})
	if len(out.Warnings) > 0 {
		t.Fatalf("translation warnings: %q", out.Warnings)
	}
	if out.Fleets[sceneFleet] == nil || len(out.Fleets[sceneFleet].Listeners) != 2 {
		t.Fatalf("fleet %s: %+v, want two listeners", sceneFleet, out.Fleets[sceneFleet])
	}
	return out
}

// loopbackPort is a free port of 127.0.0.1 below the kernel's ephemeral
// range, so no outgoing connection takes it before Envoy binds it.
func loopbackPort(t testing.TB) int {
	t.Helper()
	for range 100 {
		port := 20000 + mathrand.IntN(12000)
		if l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port))); err == nil {
			l.Close()
			return port
		}
	}
	t.Fatal("no free loopback port")
	return 0
}

// startPlainBackend serves plaintext HTTP on 127.0.0.1 and returns its port.
func startPlainBackend(t testing.TB) int {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "plain\n") }),
		ReadHeaderTimeout: 5 * time.Second}
	go srv.Serve(lis)
	t.Cleanup(func() { srv.Close() })
	return lis.Addr().(*net.TCPAddr).Port
}

// httpGetOK asks Envoy's HTTP listener for path until it answers 200.
func httpGetOK(t testing.TB, client *http.Client, port int, path string) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	var last string
	for time.Now().Before(deadline) {
		resp, err := client.Get(fmt.Sprintf("http://127.0.0.1:%d%s", port, path))
		if err == nil {
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return
			}
			last = resp.Status
		} else {
			last = err.Error()
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("Envoy's HTTP listener never answered 200; last: %s", last)
}

// tlsGetOK sends one HTTP/1.1 request through the TLS listener (Envoy
// terminates, then re-encrypts to the backend) until it is answered 200.
func tlsGetOK(t testing.TB, port int) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	var last string
	for time.Now().Before(deadline) {
		conn, err := tls.DialWithDialer(&net.Dialer{Timeout: 2 * time.Second}, "tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)),
			&tls.Config{ServerName: sceneTermHost, InsecureSkipVerify: true}) // the listener's self-signed certificate
		if err == nil {
			conn.SetDeadline(time.Now().Add(3 * time.Second))
			fmt.Fprintf(conn, "GET / HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n", sceneTermHost)
			resp, rerr := http.ReadResponse(bufio.NewReader(conn), nil)
			conn.Close()
			if rerr == nil && resp.StatusCode == 200 {
				return
			}
			last = fmt.Sprint(rerr)
		} else {
			last = err.Error()
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("Envoy's TLS listener never answered 200; last: %s", last)
}

// A real Envoy 1.40 whose listeners tlsplane gave the certificate log
// reports, through the access log service, the certificate the backend
// presented on an HTTP route (the router's upstream log) and on a TLS
// route (the TCP proxy's log, on connect), with what was negotiated and
// the cluster and host it went to.
func TestCertificateLogReportsWhatEnvoySaw(t *testing.T) {
	bin := translatortest.EnvoyBinary(t)
	sightings := make(chan CertificateSighting, 256)
	h := startWith(t, snapshots.Options{}, Options{OnCertificateSighting: func(s CertificateSighting) {
		select {
		case sightings <- s:
		default:
		}
	}})
	b := startTLSBackend(t)
	plain := startPlainBackend(t)
	httpPort, tlsPort := loopbackPort(t), loopbackPort(t)
	h.publish(t, sceneOutput(t, sceneInputs(t, b, httpPort, tlsPort, plain), 100), true)
	admin, _ := runEnvoyOf(t, bin, "GRPC", h.addr, sceneFleet)
	waitFor(t, admin, "/listeners", fmt.Sprint(tlsPort))
	select {
	case n := <-h.nacks:
		t.Fatalf("Envoy refused %s: %s", n.TypeURL, n.Message)
	default:
	}

	client := &http.Client{Timeout: 3 * time.Second}
	httpGetOK(t, client, httpPort, "/plain") // a plaintext upstream: nothing to report
	httpGetOK(t, client, httpPort, "/")
	tlsGetOK(t, tlsPort)

	web := plan.ClusterName(sceneNamespace, "web", scenePort)
	vault := plan.ClusterName(sceneNamespace, "vault", scenePort)
	host := net.JoinHostPort("127.0.0.1", strconv.Itoa(b.port))
	seen := map[string]CertificateSighting{}
	deadline := time.After(10 * time.Second) // entries are flushed every second
	for seen[web].Leaf == nil || seen[vault].Leaf == nil {
		select {
		case s := <-sightings:
			seen[s.Cluster] = s
		case <-deadline:
			t.Fatalf("sightings of %s and %s never both came; got %v", web, vault, seen)
		}
	}
	for _, cluster := range []string{web, vault} {
		s := seen[cluster]
		if s.NodeID != "envoy-test" || s.Fleet != sceneFleet || s.UpstreamHost != host {
			t.Errorf("%s: node %q fleet %q host %q; want envoy-test, %s, %s", cluster, s.NodeID, s.Fleet, s.UpstreamHost, sceneFleet, host)
		}
		if s.Leaf.Subject.CommonName != sceneHost || s.Leaf.SerialNumber.Cmp(b.leaf.SerialNumber) != 0 || !s.Leaf.NotAfter.Equal(b.leaf.NotAfter) {
			t.Errorf("%s: leaf %s serial %x notAfter %s; want %s serial %x notAfter %s", cluster,
				s.Leaf.Subject, s.Leaf.SerialNumber, s.Leaf.NotAfter, b.leaf.Subject, b.leaf.SerialNumber, b.leaf.NotAfter)
		}
		if s.Version != "TLSv1.3" || !b.negotiated(s.Cipher) {
			t.Errorf("%s: version %q cipher %q; want TLSv1.3 and a suite the backend negotiated", cluster, s.Version, s.Cipher)
		}
		if s.Seen.IsZero() || time.Since(s.Seen) > time.Minute {
			t.Errorf("%s: seen at %s", cluster, s.Seen)
		}
	}
	// Only TLS upstreams are logged: the plaintext one sent no entry
	// (the service would have dropped it as without a certificate).
	if len(seen) != 2 {
		t.Errorf("sightings of %d clusters, want 2: %v", len(seen), seen)
	}
	if n := counterValue(t, h.metrics.sightingsDropped.WithLabelValues(DroppedNoCertificate)); n != 0 {
		t.Errorf("%v entries without a certificate reached the service: the plaintext upstream was logged", n)
	}
	t.Logf("HTTP route: %+v", seen[web])
	t.Logf("TLS route: %+v", seen[vault])
}

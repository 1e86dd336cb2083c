package envoy

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tlsplane/tlsplane/e2e/harness"
)

// The inventory's world: Gateway e2e/edge with an HTTP listener (an
// HTTPRoute for inv.example to Service inv, whose two endpoints are
// backends A and B) and a TLS listener terminating term.inv.example (a
// TLSRoute to Service inv-stream, whose endpoint is B). Policy inv
// governs Service inv, policy inv-stream Service inv-stream; both trust
// the inventory's CA and verify invHost.
const (
	invSvc       = "inv"
	invStreamSvc = "inv-stream"
	invHost      = "backend.inv.example" // the backends' SAN, the policies' hostname
	invRouteHost = "inv.example"
	invTermHost  = "term.inv.example"
	invFleet     = ns + "/" + gwName // translator.GatewayFleet of e2e/edge
	invPort      = 8443
)

// invRequests bounds the requests of each step; invPause spaces them, so
// a step lasts at most ~30 s (sightings are flushed every second).
const (
	invRequests = 60
	invPause    = 500 * time.Millisecond
)

// certBackend is a Go crypto/tls HTTPS server on 127.0.0.1 answering
// {"name": name}; it closes every connection after one answer, so each
// request through Envoy is a new handshake, and serves whatever
// certificate cert holds at that handshake.
type certBackend struct {
	name string
	port int
	cert atomic.Pointer[tls.Certificate]
}

func (b *certBackend) host() string { return "127.0.0.1:" + strconv.Itoa(b.port) }

// serve swaps the certificate new handshakes get.
func (b *certBackend) serve(t *testing.T, leaf *harness.Leaf) {
	t.Helper()
	c, err := tls.X509KeyPair(leaf.CertPEM, leaf.KeyPEM)
	if err != nil {
		t.Fatal(err)
	}
	b.cert.Store(&c)
}

// startCertBackend listens with TLS up to maxVersion (0: Go's highest).
func startCertBackend(t *testing.T, name string, leaf *harness.Leaf, maxVersion uint16) *certBackend {
	t.Helper()
	b := &certBackend{name: name}
	b.serve(t, leaf)
	ln, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{
		MinVersion: tls.VersionTLS12, MaxVersion: maxVersion,
		GetCertificate: func(*tls.ClientHelloInfo) (*tls.Certificate, error) { return b.cert.Load(), nil },
	})
	if err != nil {
		t.Fatal(err)
	}
	b.port = ln.Addr().(*net.TCPAddr).Port
	srv := &http.Server{ReadHeaderTimeout: 5 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"name":%q}`, name)
	})}
	srv.SetKeepAlivesEnabled(false)
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	return b
}

// invService is a Service whose port https (invPort) has one
// EndpointSlice per backend, each on 127.0.0.1 at the backend's port.
func invService(svc string, backends ...*certBackend) []object {
	objs := []object{{
		"apiVersion": "v1", "kind": "Service",
		"metadata": object{"namespace": ns, "name": svc},
		"spec":     object{"type": "ClusterIP", "ports": []object{{"name": "https", "port": invPort, "protocol": "TCP"}}},
	}}
	for _, b := range backends {
		objs = append(objs, object{
			"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
			"metadata":    object{"namespace": ns, "name": svc + "-" + b.name, "labels": object{"kubernetes.io/service-name": svc}},
			"addressType": "IPv4",
			"endpoints":   []object{{"addresses": []string{"127.0.0.1"}, "conditions": object{"ready": true}}},
			"ports":       []object{{"name": "https", "port": b.port, "protocol": "TCP"}},
		})
	}
	return objs
}

// invEntry is one entry of /debug/status backendCertificates.
type invEntry struct {
	Fleet, Cluster, Host, Node    string
	Subject, Issuer, Serial       string
	NotBefore, NotAfter, LastSeen time.Time
	Version, Cipher, State        string
}

// inventory reads /debug/status backendCertificates.
func inventory(e *env) ([]invEntry, error) {
	body, err := harness.HTTPGet(e.tlsplaneURL("/debug/status"))
	if err != nil {
		return nil, err
	}
	var doc struct {
		BackendCertificates []invEntry `json:"backendCertificates"`
	}
	if err := json.Unmarshal(body, &doc); err != nil {
		return nil, fmt.Errorf("/debug/status: %w", err)
	}
	return doc.BackendCertificates, nil
}

func entryOf(entries []invEntry, cluster, host string) *invEntry {
	for i := range entries {
		if entries[i].Cluster == cluster && entries[i].Host == host {
			return &entries[i]
		}
	}
	return nil
}

// serialOf is how the inventory writes a serial: lower-case hex.
func serialOf(l *harness.Leaf) string { return fmt.Sprintf("%x", l.Cert.SerialNumber) }

// TestBackendCertificateInventory proves the backend certificate
// inventory end to end: a real Envoy of a Gateway's fleet, configured by
// `tlsplane serve --dir --backend-certificate-sample 100`, reports over
// tlsplane's access log service the certificates two real TLS backends of
// an HTTPRoute present (A: expiring in 10 days, TLS 1.3; B: valid a year,
// TLS 1.2 at most). /debug/status, `tlsplane status policy` and /metrics
// show both, and the policy's tlsplane.io/BackendCertificatesValid is
// Expiring, naming A. A renewed, it is BelowPreferredVersion, naming B;
// the policy's maximumVersion lowered to TLSv1_2, it is Valid. A TLSRoute
// terminating at the Gateway reports its backend through the TCP proxy's
// access log.
func TestBackendCertificateInventory(t *testing.T) {
	e := &gwEnv{env: newEnvIn(t, "GRPC", "backend-certificates")}
	e.serveArgs = []string{"--listener-address", "127.0.0.1", "--backend-certificate-sample", "100"}
	ca := harness.NewAuthorityUntil(t, "tlsplane e2e inventory CA", time.Now().Add(2*365*24*time.Hour))
	gwCA := harness.NewAuthority(t, "tlsplane e2e inventory Gateway CA")
	year := time.Now().Add(365 * 24 * time.Hour)
	leafA := ca.Issue(t, harness.LeafSpec{CommonName: "backend-a.inv.example", Organization: "inventory", DNSNames: []string{invHost}, NotAfter: time.Now().Add(10 * 24 * time.Hour)})
	renewedA := ca.Issue(t, harness.LeafSpec{CommonName: "backend-a.inv.example", Organization: "inventory", DNSNames: []string{invHost}, NotAfter: year})
	leafB := ca.Issue(t, harness.LeafSpec{CommonName: "backend-b.inv.example", Organization: "inventory", DNSNames: []string{invHost}, NotAfter: year})
	termCert := gwCA.Issue(t, harness.LeafSpec{CommonName: invTermHost, DNSNames: []string{invTermHost}})
	a := startCertBackend(t, "a", leafA, 0)
	b := startCertBackend(t, "b", leafB, tls.VersionTLS12)

	e.ports = gatewayPorts{http: harness.FreePort(t), tls: harness.FreePort(t)}
	pol := policy{name: invSvc, targets: []target{{svc: invSvc}}, caRefs: []caRef{{name: "ca-inv"}}, hostname: invHost, options: map[string]string{}}
	streamPol := policy{name: invStreamSvc, targets: []target{{svc: invStreamSvc}}, caRefs: []caRef{{name: "ca-inv"}}, hostname: invHost}
	world := func() []object {
		objs := []object{
			gatewayClass(gwClass, controller),
			gateway(ns, gwName, gwClass,
				gwListener{name: "http", protocol: "HTTP", port: e.ports.http},
				gwListener{name: "tls-term", protocol: "TLS", port: e.ports.tls, hostname: invTermHost, certName: "inv-listener"}),
			tlsSecret(ns, "inv-listener", termCert),
			httpRoute{namespace: ns, name: invSvc, gateway: gwName, section: "http", hostnames: []string{invRouteHost},
				rules: []routeRule{{backends: []backendRef{{name: invSvc, port: invPort}}}}}.object(),
			caConfigMap("ca-inv", ca.PEM), pol.object(), streamPol.object(),
		}
		objs = append(objs, inNamespace(ns, streamRoute("TLSRoute", "inv-term", "tls-term", []string{invTermHost}, backendRef{name: invStreamSvc, port: invPort}))...)
		objs = append(objs, invService(invSvc, a, b)...)
		return append(objs, invService(invStreamSvc, b)...)
	}
	writeManifests(t, e.manifestDir, "inventory", world()...)
	e.startTLSPlane(t)
	e.gwEnvoy = harness.StartEnvoy(t, harness.EnvoyOptions{
		Bin: e.envoyBin, LogDir: e.logDir, Name: "envoy-gateway", APIType: "GRPC",
		NodeID: "inventory-envoy", Fleet: invFleet, XDSAddress: e.xdsAddress(),
		GatewayListeners: true, WaitReady: true,
	})
	t.Cleanup(func() { e.saveDiagnostics(t) })
	cluster := clusterName(invSvc, invPort)

	// Requests until both backends answered and the inventory has both.
	reached := map[string]int{}
	var entries []invEntry
	invDrive(t, e, "both backends in /debug/status backendCertificates", func() error {
		var err error
		if entries, err = inventory(e.env); err != nil {
			return err
		}
		if reached["a"] == 0 || reached["b"] == 0 {
			return fmt.Errorf("requests reached %v", reached)
		}
		for _, be := range []*certBackend{a, b} {
			if entryOf(entries, cluster, be.host()) == nil {
				return fmt.Errorf("no entry for %s of cluster %s in %+v", be.host(), cluster, entries)
			}
		}
		return nil
	}, reached)
	for _, want := range []struct {
		be      *certBackend
		leaf    *harness.Leaf
		version string
	}{{a, leafA, "TLSv1.3"}, {b, leafB, "TLSv1.2"}} {
		got := entryOf(entries, cluster, want.be.host())
		t.Logf("backend %s: %+v", want.be.name, *got)
		if got.Fleet != invFleet || got.Subject != want.leaf.Cert.Subject.String() || got.Issuer != ca.Cert.Subject.String() ||
			got.Serial != serialOf(want.leaf) || !got.NotAfter.Equal(want.leaf.Cert.NotAfter) || got.Version != want.version || got.Cipher == "" {
			t.Errorf("backend %s: entry %+v, want fleet %q, subject %q, issuer %q, serial %s, notAfter %s, version %s and a cipher",
				want.be.name, *got, invFleet, want.leaf.Cert.Subject, ca.Cert.Subject, serialOf(want.leaf), want.leaf.Cert.NotAfter.UTC().Format(time.RFC3339), want.version)
		}
	}

	c := awaitInvCondition(t, e, pol.name, "False", "Expiring")
	for _, want := range []string{`fleet "` + invFleet + `"`, "backend " + a.host(), "cluster " + cluster, strconv.Quote(leafA.Cert.Subject.String()),
		"serial " + serialOf(leafA), leafA.Cert.NotAfter.UTC().Format(time.RFC3339)} {
		if !strings.Contains(c.Message, want) {
			t.Errorf("Expiring: message %q lacks %q", c.Message, want)
		}
	}

	out := invStatusCommand(t, e, ns+"/"+pol.name)
	t.Logf("tlsplane status policy %s/%s:\n%s", ns, pol.name, out)
	section := out[strings.Index(out, "BACKEND CERTIFICATES"):]
	for _, be := range []struct {
		be   *certBackend
		leaf *harness.Leaf
		tls  string
	}{{a, leafA, "TLSv1.3"}, {b, leafB, "TLSv1.2"}} {
		row := lineWith(section, be.be.host())
		for _, want := range []string{invFleet, cluster, serialOf(be.leaf), be.leaf.Cert.NotAfter.UTC().Format(time.RFC3339), be.tls} {
			if !strings.Contains(row, want) {
				t.Errorf("tlsplane status policy: the row of %s (%q) lacks %q", be.be.host(), row, want)
			}
		}
	}
	if row := lineWith(section, a.host()); !strings.Contains(row, "Expiring") {
		t.Errorf("tlsplane status policy: the row of %s (%q) is not Expiring", a.host(), row)
	}

	gauge, err := expiryGauge(e.env, pol.name, cluster)
	if err != nil {
		t.Fatal(err)
	}
	if gauge != float64(leafA.Cert.NotAfter.Unix()) {
		t.Errorf("tlsplane_backend_certificate_expiry_timestamp_seconds of %s: %v, want A's notAfter %d", cluster, gauge, leafA.Cert.NotAfter.Unix())
	}

	// A renewed: B's TLS 1.2 is below the policy's preferred TLS 1.3.
	a.serve(t, renewedA)
	c = invDriveCondition(t, e, pol.name, "False", "BelowPreferredVersion")
	for _, want := range []string{`fleet "` + invFleet + `"`, "negotiated TLSv1.2", "backend " + b.host(), "below TLSv1.3", "serial " + serialOf(leafB)} {
		if !strings.Contains(c.Message, want) {
			t.Errorf("BelowPreferredVersion: message %q lacks %q", c.Message, want)
		}
	}
	if got := entryOf(mustInventory(t, e.env), cluster, a.host()); got == nil || got.Serial != serialOf(renewedA) {
		t.Errorf("after A's renewal, its entry is %+v, want serial %s", got, serialOf(renewedA))
	}

	// The policy prefers TLS 1.2 at most: every backend is where it should be.
	pol.options["maximumVersion"] = "TLSv1_2"
	writeManifests(t, e.manifestDir, "inventory", world()...)
	c = invDriveCondition(t, e, pol.name, "True", "Valid")
	if !strings.Contains(c.Message, "saw 2 backend(s) of cluster "+cluster) {
		t.Errorf("Valid: message %q does not count both backends of %s", c.Message, cluster)
	}

	// The TLSRoute: the TCP proxy's log reports B behind the Terminate listener.
	streamCluster := clusterName(invStreamSvc, invPort)
	roots := x509.NewCertPool()
	roots.AddCert(gwCA.Cert)
	var last error
	for i := range invRequests {
		if last = termGet(e.ports.tls, roots); last == nil {
			if got := entryOf(mustInventory(t, e.env), streamCluster, b.host()); got != nil {
				t.Logf("TLSRoute after %d connections: %+v", i+1, *got)
				if got.Serial != serialOf(leafB) || got.Version != "TLSv1.2" {
					t.Errorf("TLSRoute: entry %+v, want B's serial %s over TLSv1.2", *got, serialOf(leafB))
				}
				return
			}
		}
		time.Sleep(invPause)
	}
	t.Fatalf("after %d connections through the TLS listener, /debug/status has no entry for %s of cluster %s (last connection: %v)\n--- tlsplane log:\n%s",
		invRequests, b.host(), streamCluster, last, e.tlsplane.LogTail(15))
}

// invDrive sends up to invRequests requests through the HTTP listener,
// counting the backends that answered in reached, until done accepts.
func invDrive(t *testing.T, e *gwEnv, what string, done func() error, reached map[string]int) {
	t.Helper()
	var err error
	for i := range invRequests {
		r, rerr := stickyGet(e.ports.http, invRouteHost, nil)
		if rerr == nil && r.status == 200 {
			reached[r.backend]++
		}
		if err = done(); err == nil {
			t.Logf("%s after %d requests (backends reached: %v)", what, i+1, reached)
			return
		}
		time.Sleep(invPause)
	}
	t.Fatalf("%s: not after %d requests: %v\n--- tlsplane log:\n%s", what, invRequests, err, e.tlsplane.LogTail(15))
}

// invDriveCondition sends requests until the policy's
// BackendCertificatesValid has status and reason.
func invDriveCondition(t *testing.T, e *gwEnv, name, status, reason string) *condition {
	t.Helper()
	var c *condition
	invDrive(t, e, fmt.Sprintf("BackendCertificatesValid %s %s", status, reason), func() error {
		var err error
		if c, err = policyConditionOf(e.env, name, "tlsplane.io/BackendCertificatesValid"); err != nil {
			return err
		}
		if c == nil || c.Status != status || c.Reason != reason {
			return fmt.Errorf("condition %+v", c)
		}
		return nil
	}, map[string]int{})
	t.Logf("policy %s: %s %s: %s", name, c.Status, c.Reason, c.Message)
	return c
}

// awaitInvCondition waits, without traffic, for the condition.
func awaitInvCondition(t *testing.T, e *gwEnv, name, status, reason string) *condition {
	t.Helper()
	var c *condition
	err := harness.Eventually(applyTimeout, 200*time.Millisecond, func() error {
		var err error
		if c, err = policyConditionOf(e.env, name, "tlsplane.io/BackendCertificatesValid"); err != nil {
			return err
		}
		if c == nil || c.Status != status || c.Reason != reason {
			return fmt.Errorf("condition %+v", c)
		}
		return nil
	})
	if err != nil {
		t.Fatalf("policy %s: BackendCertificatesValid never %s %s: %v\n--- tlsplane log:\n%s", name, status, reason, err, e.tlsplane.LogTail(15))
	}
	t.Logf("policy %s: %s %s: %s", name, c.Status, c.Reason, c.Message)
	return c
}

func mustInventory(t *testing.T, e *env) []invEntry {
	t.Helper()
	entries, err := inventory(e)
	if err != nil {
		t.Fatal(err)
	}
	return entries
}

// invStatusCommand runs `tlsplane status policy ref` against the admin server.
func invStatusCommand(t *testing.T, e *gwEnv, ref string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, e.tlsplaneBin, "status", "policy", ref, "--admin", "127.0.0.1:"+strconv.Itoa(e.tlsplaneAdminPort)).CombinedOutput()
	if err != nil {
		t.Fatalf("tlsplane status policy %s: %v\n%s", ref, err, out)
	}
	if !strings.Contains(string(out), "BACKEND CERTIFICATES") {
		t.Fatalf("tlsplane status policy %s has no BACKEND CERTIFICATES section:\n%s", ref, out)
	}
	return string(out)
}

// lineWith is the first line of s containing sub, "" if none.
func lineWith(s, sub string) string {
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			return l
		}
	}
	return ""
}

var expirySample = regexp.MustCompile(`(?m)^tlsplane_backend_certificate_expiry_timestamp_seconds\{([^}]*)\} (\S+)$`)

// expiryGauge is the expiry gauge of policy ns/name and cluster in /metrics.
func expiryGauge(e *env, name, cluster string) (float64, error) {
	body, err := harness.HTTPGet(e.tlsplaneURL("/metrics"))
	if err != nil {
		return 0, err
	}
	for _, m := range expirySample.FindAllStringSubmatch(string(body), -1) {
		labels := m[1]
		if strings.Contains(labels, `cluster="`+cluster+`"`) && strings.Contains(labels, `namespace="`+ns+`"`) && strings.Contains(labels, `policy="`+name+`"`) {
			return strconv.ParseFloat(m[2], 64)
		}
	}
	return 0, fmt.Errorf("/metrics has no tlsplane_backend_certificate_expiry_timestamp_seconds for policy %s/%s, cluster %s: %v", ns, name, cluster, expirySample.FindAllString(string(body), -1))
}

// termGet sends one HTTP/1.1 request over TLS to the Gateway's Terminate
// listener and reads the status line.
func termGet(port int, roots *x509.CertPool) error {
	d := &net.Dialer{Timeout: 5 * time.Second}
	conn, err := tls.DialWithDialer(d, "tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)),
		&tls.Config{ServerName: invTermHost, RootCAs: roots, MinVersion: tls.VersionTLS12})
	if err != nil {
		return err
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := fmt.Fprintf(conn, "GET /term HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n", invTermHost); err != nil {
		return err
	}
	status, err := bufio.NewReader(conn).ReadString('\n')
	if err != nil {
		return err
	}
	if !strings.Contains(status, " 200 ") {
		return fmt.Errorf("status line %q", strings.TrimSpace(status))
	}
	return nil
}

package envoy

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tlsplane/tlsplane/e2e/harness"
)

// TestXBackend proves XBackends (GEP-4894) with real parts: `tlsplane
// serve --dir`, one Envoy of the Gateway xb/edge, and a CoreDNS that alone
// knows the XBackends' external hostnames (*.xb.test), answering
// 127.0.0.1 or 127.0.0.2 where the test's backends listen. Every case is
// asserted on traffic through Envoy and on what the backend saw; the cases
// run in parallel against the one Envoy and the one tlsplane.
func TestXBackend(t *testing.T) {
	w := startXBackendWorld(t)
	t.Run("cases", func(t *testing.T) {
		for _, c := range []struct {
			name string
			run  func(*testing.T, *xbWorld)
		}{
			{"none-plaintext", xbPlaintext},
			{"server-only-sni-is-validation-hostname", xbServerOnlySNI},
			{"server-only-without-validation-trusts-system", xbServerOnlySystem},
			{"server-only-without-validation-untrusted-fails-closed", xbSystemUntrusted},
			{"server-only-wrong-ca-fails-closed", xbWrongCA},
			{"server-only-san-mismatch-fails-closed", xbSANMismatch},
			{"client-and-server-presents-client-certificate", xbClientAndServer},
			{"client-and-server-missing-secret-refused", xbMissingClientSecret},
			{"hostname-off-the-allow-list-refused", xbOffAllowList},
			{"dns-change-followed", xbDNSChange},
			{"rotation-changes-secrets-only", xbRotation},
			{"protocol-http2-over-tls", xbHTTP2},
			{"protocol-http11-over-tls", xbHTTP11},
			{"protocol-h2c", xbH2C},
			{"tlsroute-terminate", xbTLSRouteTerminate},
			{"tcproute-originates-tls", xbTCPRoute},
			{"grpcroute-over-tls", xbGRPCRoute},
			{"traffic-policy-retry-budget", xbTrafficBudget},
			{"profile-annotation-sets-key-exchange", xbProfiles},
		} {
			t.Run(c.name, func(t *testing.T) {
				t.Parallel()
				c.run(t, w)
			})
		}
	})
	t.Run("handshake-failure-on-xbackend-status", func(t *testing.T) { xbHandshakeStatus(t, w) })
	t.Run("no-plaintext-to-tls-backends", func(t *testing.T) {
		for _, be := range []*backend{w.secure, w.sentinel, w.mtls, w.moveFirst, w.moveSecond, w.rotating} {
			if c := be.counts(t); c.Plaintext != 0 {
				t.Errorf("backend %s received %d plaintext requests", be.name, c.Plaintext)
			}
		}
		if c := w.sentinel.counts(t); c.Requests != 0 {
			t.Errorf("backend %s, which only fail-closed XBackends name, answered %d requests", w.sentinel.name, c.Requests)
		}
	})
	t.Run("envoy-rejected-nothing", func(t *testing.T) {
		st, err := w.gwEnvoy.Stats()
		if err != nil {
			t.Fatal(err)
		}
		for k, v := range filterSuffix(st, ".update_rejected") {
			if v != 0 {
				t.Errorf("Envoy rejected configuration from tlsplane: %s=%d", k, v)
			}
		}
	})
}

// xbAllowList is the world's egress allow-list, for serve and translate.
var xbAllowList = []string{"--xbackend-hostnames", "*.xb.test"}

// The XBackend world: namespace, Gateway, and the hostnames CoreDNS knows.
const (
	xbNS      = "xb"
	xbGateway = "edge"
	xbFleet   = xbNS + "/" + xbGateway
	// Listener hostnames of the Gateway (what clients ask for).
	xbTermHost = "term.xb.example"
	// External hostnames: .test, a name no real resolver answers.
	xbPlainHost    = "plain.xb.test"
	xbSecureHost   = "tls.xb.test"
	xbSNIHost      = "api.xb.example" // validation.hostname, not resolved
	xbSystemHost   = "sys.xb.test"
	xbSentinelHost = "sentinel.xb.test"
	xbMTLSHost     = "mtls.xb.test"
	xbMoveHost     = "move.xb.test"
	xbRotateHost   = "rot.xb.test"
	xbH2Host       = "h2.xb.test"
	xbH11Host      = "h11.xb.test"
	xbH2CHost      = "h2c.xb.test"
	xbTermBackend  = "term-backend.xb.test"
	xbGRPCHost     = "grpc.xb.test"
	xbTCPHost      = "tcp.xb.test"
	xbCurvesHost   = "curves.xb.test" // the Go backend that reports key exchanges
	// Resolved too, but off tlsplane's --xbackend-hostnames (*.xb.test).
	xbOffListHost = "sentinel.off-list.example"
	// Client certificates' subjects, as the mtls backends echo them.
	xbClientCN  = "xbackend-client"
	xbRotateCN1 = "xbackend-rotate-1"
	xbRotateCN2 = "xbackend-rotate-2"
	// Files of the directory; the rotation rewrites its own.
	xbFileWorld  = "xb-world"
	xbFileRotate = "xb-rotate"
)

// xbWorld is the running world the cases share.
type xbWorld struct {
	*gwEnv
	dns                                           *harness.DNS
	plain, secure, sentinel, mtls, rotating       *backend
	moveFirst, moveSecond                         *backend
	clientCA, rotCA1, rotCA2                      *harness.Authority
	rotLeafFiles                                  [2]string // the rotating backend's cert and key files
	rotateClient1, rotateClient2                  *harness.Leaf
	plainPort, securePort, sentinelPort, mtlsPort int
	movePort, rotatePort                          int
	failingPort                                   int // budget's backend (xbackend_traffic_test.go)
	curves                                        *curveBackend
}

func startXBackendWorld(t *testing.T) *xbWorld {
	t.Helper()
	e := newEnvIn(t, "GRPC", "xbackend")
	w := &xbWorld{gwEnv: &gwEnv{env: e}}
	ca := harness.NewAuthority(t, "tlsplane e2e XBackend CA")
	otherCA := harness.NewAuthority(t, "unrelated CA")
	gwCA := harness.NewAuthority(t, "tlsplane e2e Gateway CA")
	w.clientCA = harness.NewAuthority(t, "tlsplane e2e XBackend client CA")
	w.rotCA1 = harness.NewAuthority(t, "tlsplane e2e rotation CA 1")
	w.rotCA2 = harness.NewAuthority(t, "tlsplane e2e rotation CA 2")
	w.pki = &gatewayPKI{gwCA: gwCA}
	leaf := func(ca *harness.Authority, name string, hosts ...string) *harness.Leaf {
		return ca.IssueFiles(t, harness.LeafSpec{CommonName: hosts[0], Organization: "tlsplane e2e " + name, DNSNames: hosts},
			filepath.Join(e.pkiDir, name+".crt"), filepath.Join(e.pkiDir, name+".key"))
	}
	// The system bundle tlsplane hands Envoy for System trust (and for
	// an XBackend without validation) holds the test's CA only.
	systemBundle := filepath.Join(e.pkiDir, "system-ca-bundle.pem")
	if err := os.WriteFile(systemBundle, ca.PEM, 0o644); err != nil {
		t.Fatal(err)
	}
	// experimental: a case's HTTPRoute retries (a field only those CRDs keep).
	e.serveArgs = append([]string{"--listener-address", "127.0.0.1", "--system-ca-bundle", systemBundle, "--gateway-api-channel", "experimental"}, xbAllowList...)

	w.dns = harness.StartDNS(t, e.logDir, xbRecords("127.0.0.1"))
	secureLeaf := leaf(ca, "xb-secure", xbSecureHost, xbSNIHost, xbSystemHost, xbH2Host, xbH11Host, xbTermBackend, xbGRPCHost, xbTCPHost)
	w.plain = startBackend(t, e, "xb-plain", backendOpts{plain: true})
	w.secure = startBackend(t, e, "xb-secure", backendOpts{leaf: secureLeaf})
	// Only fail-closed XBackends name sentinel: it must answer nothing.
	w.sentinel = startBackend(t, e, "xb-sentinel", backendOpts{leaf: leaf(ca, "xb-sentinel", xbSentinelHost)})
	probe := w.clientCA.Issue(t, harness.LeafSpec{CommonName: "e2e-probe", Client: true})
	w.mtls = startBackend(t, e, "xb-mtls", backendOpts{leaf: leaf(ca, "xb-mtls", xbMTLSHost), clientCA: w.clientCA, probe: probe})
	moveLeaf := leaf(ca, "xb-move", xbMoveHost)
	w.movePort = harness.FreePort(t)
	w.moveFirst = startBackend(t, e, "xb-move-first", backendOpts{leaf: moveLeaf, port: w.movePort})
	w.moveSecond = startBackend(t, e, "xb-move-second", backendOpts{leaf: moveLeaf, port: w.movePort, ip: "127.0.0.2"})
	rotLeaf := leaf(w.rotCA1, "xb-rotate", xbRotateHost)
	w.rotLeafFiles = [2]string{rotLeaf.CertFile, rotLeaf.KeyFile}
	w.rotating = startBackend(t, e, "xb-rotating", backendOpts{leaf: rotLeaf, clientCA: w.clientCA, probe: probe})
	w.plainPort, w.securePort, w.sentinelPort, w.mtlsPort, w.rotatePort = w.plain.port, w.secure.port, w.sentinel.port, w.mtls.port, w.rotating.port
	w.failingPort = port(t, failingServer(t, 300*time.Millisecond))
	w.curves = startCurveBackend(t, "xb-curves", leaf(ca, "xb-curves", xbCurvesHost),
		curveBackendOpts{curves: []tls.CurveID{tls.X25519MLKEM768, tls.X25519, tls.CurveP256}, maxTLS: tls.VersionTLS13})
	w.rotateClient1 = w.clientCA.Issue(t, harness.LeafSpec{CommonName: xbRotateCN1, Client: true})
	w.rotateClient2 = w.clientCA.Issue(t, harness.LeafSpec{CommonName: xbRotateCN2, Client: true})

	w.ports = gatewayPorts{http: harness.FreePort(t), tls: harness.FreePort(t), tcp: harness.FreePort(t)}
	writeManifests(t, e.manifestDir, xbFileWorld, w.objects(t, ca, otherCA, gwCA, w.clientCA.Issue(t, harness.LeafSpec{CommonName: xbClientCN, Client: true}))...)
	w.writeRotation(t, w.rotCA1, w.rotateClient1)

	e.startTLSPlane(t)
	w.gwEnvoy = harness.StartEnvoy(t, harness.EnvoyOptions{
		Bin: e.envoyBin, LogDir: e.logDir, Name: "envoy-xbackend", APIType: e.apiType,
		NodeID: "xbackend-envoy", Fleet: xbFleet, XDSAddress: w.xdsAddress(),
		GatewayListeners: true, WaitReady: true, DNSResolver: w.dns.Addr,
		StatsFlush: time.Second, AllStats: true, // handshake conditions; the rotation reads cluster_manager's stats
	})
	t.Cleanup(func() { w.saveDiagnostics(t) })
	return w
}

// objects is the world but the rotation's file: the Gateway (an HTTP
// listener, a terminating TLS one and a TCP one), one XBackend per case
// and a route to each (HTTPRoutes by host <xbackend>.xb.example).
func (w *xbWorld) objects(t *testing.T, ca, otherCA, gwCA *harness.Authority, client *harness.Leaf) []object {
	serverOnly := func(caRef string) *xbTLS { return &xbTLS{mode: "ServerOnly", caRefs: []string{caRef}} }
	xbs := []xbackend{
		{name: "plain-none", hostname: xbPlainHost, port: w.plainPort, tls: &xbTLS{mode: "None"}},
		{name: "plain-absent", hostname: xbPlainHost, port: w.plainPort},
		{name: "sni", hostname: xbSecureHost, port: w.securePort, tls: &xbTLS{mode: "ServerOnly", caRefs: []string{"ca"}, hostname: xbSNIHost}},
		{name: "system", hostname: xbSystemHost, port: w.securePort, tls: &xbTLS{mode: "ServerOnly", noValidation: true}},
		// The rotating backend's CAs are not in the system bundle.
		{name: "system-untrusted", hostname: xbRotateHost, port: w.rotatePort, tls: &xbTLS{mode: "ServerOnly", noValidation: true}},
		{name: "wrong-ca", hostname: xbSentinelHost, port: w.sentinelPort, tls: serverOnly("other-ca")},
		{name: "san-mismatch", hostname: xbSentinelHost, port: w.sentinelPort,
			tls: &xbTLS{mode: "ServerOnly", caRefs: []string{"ca"}, sans: []string{"nothere.xb.example"}}},
		{name: "mtls", hostname: xbMTLSHost, port: w.mtlsPort, tls: &xbTLS{mode: "ClientAndServer", caRefs: []string{"ca"}, clientSecret: "client"}},
		{name: "mtls-missing", hostname: xbSentinelHost, port: w.sentinelPort,
			tls: &xbTLS{mode: "ClientAndServer", caRefs: []string{"ca"}, clientSecret: "no-such-client"}},
		// Plaintext to the sentinel: only the allow-list stands between.
		{name: "off-list", hostname: xbOffListHost, port: w.sentinelPort, tls: &xbTLS{mode: "None"}},
		{name: "move", hostname: xbMoveHost, port: w.movePort, tls: serverOnly("ca")},
		{name: "rotate", hostname: xbRotateHost, port: w.rotatePort, tls: &xbTLS{mode: "ClientAndServer", caRefs: []string{"rotate-ca"}, clientSecret: "rotate-client"}},
		{name: "h2", hostname: xbH2Host, port: w.securePort, protocol: "HTTP2", tls: serverOnly("ca")},
		{name: "h11", hostname: xbH11Host, port: w.securePort, protocol: "HTTP11", tls: serverOnly("ca")},
		{name: "h2c", hostname: xbH2CHost, port: w.plainPort, protocol: "H2C"},
		{name: "term", hostname: xbTermBackend, port: w.securePort, tls: serverOnly("ca")},
		{name: "grpc", hostname: xbGRPCHost, port: w.securePort, tls: serverOnly("ca")},
		{name: "tcp", hostname: xbTCPHost, port: w.securePort, protocol: "TCP", tls: serverOnly("ca")},
		{name: "post-quantum", hostname: xbCurvesHost, port: w.curves.port, tls: serverOnly("ca"), annotations: map[string]string{"tlsplane.io/profile": "post-quantum"}},
		{name: "intermediate", hostname: xbCurvesHost, port: w.curves.port, tls: serverOnly("ca"), annotations: map[string]string{"tlsplane.io/profile": "intermediate"}},
	}
	termCert := gwCA.Issue(t, harness.LeafSpec{CommonName: xbTermHost, DNSNames: []string{xbTermHost}})
	objs := []object{
		gatewayClass(gwClass, controller),
		addressed(gateway(xbNS, xbGateway, gwClass,
			gwListener{name: "http", protocol: "HTTP", port: w.ports.http},
			gwListener{name: "tls-term", protocol: "TLS", port: w.ports.tls, hostname: xbTermHost, certName: "term-cert"},
			gwListener{name: "tcp", protocol: "TCP", port: w.ports.tcp})),
		tlsSecret(xbNS, "term-cert", termCert),
		caConfigMapIn(xbNS, "ca", ca.PEM),
		caConfigMapIn(xbNS, "other-ca", otherCA.PEM),
		tlsSecret(xbNS, "client", client),
	}
	objs = append(objs, w.budgetObjects()...)
	for _, x := range xbs {
		objs = append(objs, x.object(xbNS))
		switch x.name {
		case "term":
			objs = append(objs, xbRoute("TLSRoute", xbNS, x.name, xbGateway, "tls-term", []string{xbTermHost}, xbRef(x.name, x.port)))
		case "tcp":
			objs = append(objs, xbRoute("TCPRoute", xbNS, x.name, xbGateway, "tcp", nil, xbRef(x.name, x.port)))
		case "grpc":
			objs = append(objs, xbRoute("GRPCRoute", xbNS, x.name, xbGateway, "http", []string{xbRouteHost(x.name)}, xbRef(x.name, x.port)))
		default:
			objs = append(objs, xbRoute("HTTPRoute", xbNS, x.name, xbGateway, "http", []string{xbRouteHost(x.name)}, xbRef(x.name, x.port)))
		}
	}
	return objs
}

// writeRotation (re)writes the rotating XBackend's CA ConfigMap and
// client certificate Secret, in one file of their own.
func (w *xbWorld) writeRotation(t *testing.T, ca *harness.Authority, client *harness.Leaf) {
	t.Helper()
	writeManifests(t, w.manifestDir, xbFileRotate, caConfigMapIn(xbNS, "rotate-ca", ca.PEM), tlsSecret(xbNS, "rotate-client", client))
}

// xbRecords are CoreDNS's answers: every external hostname on 127.0.0.1
// but the moving one, on moveTo.
func xbRecords(moveTo string) harness.DNSRecords {
	records := harness.DNSRecords{xbMoveHost: {moveTo}}
	for _, h := range []string{xbPlainHost, xbSecureHost, xbSystemHost, xbSentinelHost, xbMTLSHost, xbRotateHost,
		xbH2Host, xbH11Host, xbH2CHost, xbTermBackend, xbGRPCHost, xbTCPHost, xbBudgetHost, xbCurvesHost, xbOffListHost} {
		records[h] = []string{"127.0.0.1"}
	}
	return records
}

// xbRouteHost is the host an XBackend's HTTPRoute (or GRPCRoute) takes.
func xbRouteHost(xbackend string) string { return xbackend + ".xb.example" }

// xbCluster is tlsplane's cluster of an XBackend for HTTPRoutes (D2).
func xbCluster(name string, port int) string {
	return "XBackend/" + xbNS + "/" + name + "/" + strconv.Itoa(port)
}

// get is one request through the HTTP listener to an XBackend's route,
// asking the backend to close the connection after it (X-Echo-Close), so
// each request opens a new upstream connection: a new handshake, and the
// address Envoy resolved last.
func (w *xbWorld) get(xbackend string) func() (response, error) {
	return func() (response, error) {
		return w.gwEnv.get(w.ports.http, xbRouteHost(xbackend), "/"+xbackend, map[string]string{"X-Echo-Close": "1"}, "")
	}
}

// tlsEcho accepts a 200 from be over TLS with sni.
func tlsEcho(be *backend, sni string) func(response) error {
	return func(r response) error {
		if err := from(be)(r); err != nil {
			return err
		}
		if r.Echo.TLSVersion == "" || r.Echo.SNI != sni {
			return fmt.Errorf("backend saw TLS %q SNI %q, want TLS with SNI %q", r.Echo.TLSVersion, r.Echo.SNI, sni)
		}
		return nil
	}
}

// xbPlaintext: mode None, and tls left out, reach the plain backend in
// plaintext, over HTTP/1.1 (the protocol is unset).
func xbPlaintext(t *testing.T, w *xbWorld) {
	for _, name := range []string{"plain-none", "plain-absent"} {
		r := w.await(t, name, w.get(name), from(w.plain))
		if r.Echo.TLSVersion != "" || r.Echo.Proto != "HTTP/1.1" || r.Echo.Host != xbRouteHost(name) {
			t.Errorf("%s: backend saw %s, want plaintext HTTP/1.1 for host %s", name, r, xbRouteHost(name))
		}
		t.Logf("%s: %s", name, r)
	}
}

// xbServerOnlySNI: ServerOnly with caCertificateRefs: the backend sees the
// SNI validation.hostname (not the external hostname Envoy resolved), and
// Envoy verified the CA and that name.
func xbServerOnlySNI(t *testing.T, w *xbWorld) {
	r := w.await(t, "sni", w.get("sni"), tlsEcho(w.secure, xbSNIHost))
	t.Logf("%s", r)
}

// xbServerOnlySystem: ServerOnly without validation: the SNI (and SAN) is
// the external hostname and the trust the system bundle (tlsplane's
// --system-ca-bundle, here the test's CA).
func xbServerOnlySystem(t *testing.T, w *xbWorld) {
	r := w.await(t, "system", w.get("system"), tlsEcho(w.secure, xbSystemHost))
	t.Logf("%s", r)
}

// xbFailsClosed: a route to an XBackend whose certificate check cannot
// pass is answered 503, on Envoy's TLS counter failStat for its cluster,
// and the backend gets nothing, plaintext or not.
func xbFailsClosed(t *testing.T, w *xbWorld, name string, port int, failStat string) {
	cluster := xbCluster(name, port)
	w.await(t, name, w.get(name), func(r response) error {
		if r.Status == 200 {
			t.Fatalf("%s: answered 200 by %s: a certificate that cannot be verified let a request through", name, r.Echo.Name)
		}
		return status(503)(r)
	})
	before, err := w.gwEnvoy.Stats()
	if err != nil {
		t.Fatal(err)
	}
	r, err := w.get(name)()
	if err != nil {
		t.Fatal(err)
	}
	after, err := w.gwEnvoy.Stats()
	if err != nil {
		t.Fatal(err)
	}
	if r.Status != 503 {
		t.Errorf("want 503, got %s", r)
	}
	stat := "cluster." + cluster + "." + failStat
	if after[stat] <= before[stat] {
		t.Errorf("Envoy's %s did not move (%d -> %d): the request failed for another reason; TLS stats: %s", stat, before[stat], after[stat], sslStats(after, cluster))
	}
	t.Logf("%d from Envoy; cluster %s TLS counters: %s", r.Status, cluster, sslDelta(before, after, cluster))
}

func xbWrongCA(t *testing.T, w *xbWorld) { xbFailsClosed(t, w, "wrong-ca", w.sentinelPort, failChain) }
func xbSANMismatch(t *testing.T, w *xbWorld) {
	xbFailsClosed(t, w, "san-mismatch", w.sentinelPort, failSAN)
}

// xbSystemUntrusted: without validation, a backend whose CA is not in the
// system bundle fails closed: the system bundle is the only trust.
func xbSystemUntrusted(t *testing.T, w *xbWorld) {
	xbFailsClosed(t, w, "system-untrusted", w.rotatePort, failChain)
}

// xbClientAndServer: the backend requires a client certificate of the
// client CA and sees the one of clientCertificateRef.
func xbClientAndServer(t *testing.T, w *xbWorld) {
	r := w.await(t, "mtls", w.get("mtls"), func(r response) error {
		if err := tlsEcho(w.mtls, xbMTLSHost)(r); err != nil {
			return err
		}
		return clientSubject(w.mtls, xbClientCN)(r)
	})
	t.Logf("%s; client certificate %s", r, r.Echo.ClientSubject)
}

// awaitRefused waits for Envoy to answer the route of a refused XBackend
// 500 itself; a 200 from any backend fails at once (why says whose fault).
func (w *xbWorld) awaitRefused(t *testing.T, xbackend, why string) response {
	t.Helper()
	return w.await(t, xbackend, w.get(xbackend), func(r response) error {
		if r.Status == 200 {
			t.Fatalf("%s: answered 200 by %s %s", xbackend, r.Echo.Name, why)
		}
		return status(500)(r)
	})
}

// xbMissingClientSecret: ClientAndServer whose clientCertificateRef names
// no Secret is not Accepted (D5/D6): its route's share is answered 500
// by Envoy, nothing reaches the backend, and the XBackend's status names
// the field; the route's ResolvedRefs says InvalidBackend.
func xbMissingClientSecret(t *testing.T, w *xbWorld) {
	r := w.awaitRefused(t, "mtls-missing", "without its client certificate")
	st := w.translatedXBackend(t, "mtls-missing")
	if len(st.Parents) != 1 || st.Parents[0].ParentRef.Name != xbGateway {
		t.Fatalf("XBackend %s/mtls-missing: status.parents %+v, want one, the Gateway %s", xbNS, st.Parents, xbFleet)
	}
	conds := map[string]condition{}
	for _, c := range st.Parents[0].Conditions {
		conds[c.Type] = c
	}
	acc, res := conds["Accepted"], conds["ResolvedRefs"]
	if acc.Status != "False" || acc.Reason != "Invalid" || !strings.Contains(acc.Message, "spec.tls.clientCertificateRef") {
		t.Errorf("Accepted = %+v, want False Invalid naming spec.tls.clientCertificateRef", acc)
	}
	if res.Status != "False" || res.Reason != "InvalidCertificateRef" || !strings.Contains(res.Message, "no-such-client") {
		t.Errorf("ResolvedRefs = %+v, want False InvalidCertificateRef naming the Secret no-such-client", res)
	}
	rc := w.routeCondition(t, "mtls-missing", "ResolvedRefs")
	if rc.Status != "False" || rc.Reason != "InvalidBackend" {
		t.Errorf("HTTPRoute %s/mtls-missing: ResolvedRefs = %+v, want False InvalidBackend", xbNS, rc)
	}
	t.Logf("%s; XBackend Accepted %s %s: %s; ResolvedRefs %s %s; route ResolvedRefs %s %s: %s",
		r, acc.Status, acc.Reason, acc.Message, res.Status, res.Reason, rc.Status, rc.Reason, rc.Message)
}

// xbOffAllowList: an XBackend whose hostname resolves (to the sentinel,
// in plaintext) but is off tlsplane's --xbackend-hostnames is not
// Accepted: its route's share is answered 500 and the sentinel sees
// nothing (the world's no-plaintext check), the message naming the
// hostname, the flag and the list.
func xbOffAllowList(t *testing.T, w *xbWorld) {
	r := w.awaitRefused(t, "off-list", "for a hostname off the allow-list")
	st := w.translatedXBackend(t, "off-list")
	if len(st.Parents) != 1 {
		t.Fatalf("XBackend %s/off-list: status.parents %+v, want one, the Gateway %s", xbNS, st.Parents, xbFleet)
	}
	var acc condition
	for _, c := range st.Parents[0].Conditions {
		if c.Type == "Accepted" {
			acc = c
		}
	}
	want := fmt.Sprintf("%q is not among the hostnames this control plane allows (--xbackend-hostnames *.xb.test)", xbOffListHost)
	if acc.Status != "False" || acc.Reason != "Invalid" || !strings.Contains(acc.Message, want) {
		t.Errorf("Accepted = %+v, want False Invalid with %q", acc, want)
	}
	if rc := w.routeCondition(t, "off-list", "ResolvedRefs"); rc.Status != "False" || rc.Reason != "InvalidBackend" {
		t.Errorf("HTTPRoute %s/off-list: ResolvedRefs = %+v, want False InvalidBackend", xbNS, rc)
	}
	t.Logf("%s; XBackend Accepted %s %s: %s", r, acc.Status, acc.Reason, acc.Message)
}

// xbDNSChangeTimeout bounds how long new connections may keep going to
// the old address: the DNS cluster's smallest refresh (5 s, the TTL of 1 s
// is below it) and its jitter (1 s), with room for a loaded machine.
const xbDNSChangeTimeout = 15 * time.Second

// xbDNSChange: the external hostname's record moves from 127.0.0.1 to
// 127.0.0.2, where a second backend listens on the same port with the
// same certificate; new connections follow within xbDNSChangeTimeout.
func xbDNSChange(t *testing.T, w *xbWorld) {
	w.await(t, "move", w.get("move"), tlsEcho(w.moveFirst, xbMoveHost))
	w.dns.SetRecords(t, xbRecords("127.0.0.2"))
	w.dns.WaitAnswer(t, xbMoveHost, "127.0.0.2")
	changed := time.Now()
	var last response
	err := harness.Eventually(xbDNSChangeTimeout, 100*time.Millisecond, func() error {
		r, err := w.get("move")()
		if err != nil {
			return err
		}
		last = r
		return tlsEcho(w.moveSecond, xbMoveHost)(r)
	})
	if err != nil {
		t.Fatalf("after the DNS answer moved to 127.0.0.2: %v (last answer: %s)\n--- coredns log:\n%s", err, last, w.dns.LogTail(20))
	}
	t.Logf("new connections followed the DNS change in %s", time.Since(changed).Round(10*time.Millisecond))
	for i := range 3 {
		r, err := w.get("move")()
		if err != nil {
			t.Fatalf("request %d after the switch: %v", i, err)
		}
		if err := tlsEcho(w.moveSecond, xbMoveHost)(r); err != nil {
			t.Fatalf("request %d after the switch went back: %v", i, err)
		}
	}
}

// xbRotation: new content of the client certificate Secret, then of the
// CA ConfigMap (once the backend's certificate, reissued by the new CA,
// made Envoy fail closed), reaches Envoy as new SDS secrets only: the
// XBackend's cluster keeps its version and update time, Envoy counts no
// cluster added, modified or removed, and new connections present the new
// client certificate and verify with the new CA.
func xbRotation(t *testing.T, w *xbWorld) {
	cluster := xbCluster("rotate", w.rotatePort)
	w.await(t, "rotate", w.get("rotate"), clientSubject(w.rotating, xbRotateCN1))
	before, err := clusterVersion(w.gwEnvoy, cluster)
	if err != nil {
		t.Fatal(err)
	}
	statsBefore, err := w.gwEnvoy.Stats()
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	w.writeRotation(t, w.rotCA1, w.rotateClient2)
	w.await(t, "rotate, new client certificate", w.get("rotate"), clientSubject(w.rotating, xbRotateCN2))
	clientTook := time.Since(start)

	// The new CA: the backend's certificate first, which only the new CA
	// signed, so Envoy (trusting the old) fails closed; then the ConfigMap.
	leaf := w.rotCA2.Issue(t, harness.LeafSpec{CommonName: xbRotateHost, DNSNames: []string{xbRotateHost}})
	leaf.WriteFiles(t, w.rotLeafFiles[0], w.rotLeafFiles[1])
	if err := harness.Eventually(applyTimeout, 50*time.Millisecond, func() error { return w.rotating.servesIssuedBy(w.rotCA2, xbRotateHost) }); err != nil {
		t.Fatalf("the rotating backend did not take its new certificate: %v", err)
	}
	w.await(t, "rotate, backend certificate of a CA not trusted yet", w.get("rotate"), status(503))
	start = time.Now()
	w.writeRotation(t, w.rotCA2, w.rotateClient2)
	r := w.await(t, "rotate, new CA", w.get("rotate"), clientSubject(w.rotating, xbRotateCN2))
	caTook := time.Since(start)

	after, err := clusterVersion(w.gwEnvoy, cluster)
	if err != nil {
		t.Fatal(err)
	}
	statsAfter, err := w.gwEnvoy.Stats()
	if err != nil {
		t.Fatal(err)
	}
	if after != before {
		t.Errorf("cluster %s was rebuilt by a rotation: %+v, then %+v", cluster, before, after)
	}
	for _, stat := range []string{"cluster_manager.cluster_modified", "cluster_manager.cluster_added", "cluster_manager.cluster_removed"} {
		if statsAfter[stat] != statsBefore[stat] {
			t.Errorf("Envoy's %s moved during the rotation: %d -> %d", stat, statsBefore[stat], statsAfter[stat])
		}
	}
	t.Logf("%s; client certificate followed in %s, CA in %s; cluster %s kept version %q (updated %s); cluster_modified %d",
		r, clientTook.Round(10*time.Millisecond), caTook.Round(10*time.Millisecond), cluster, after.Version, after.Updated, statsAfter["cluster_manager.cluster_modified"])
}

// xbHTTP2: protocol HTTP2 over TLS: HTTP/2 negotiated by ALPN h2.
func xbHTTP2(t *testing.T, w *xbWorld) {
	r := w.await(t, "h2", w.get("h2"), tlsEcho(w.secure, xbH2Host))
	if r.Echo.Proto != "HTTP/2.0" || r.Echo.ALPN != "h2" {
		t.Errorf("backend saw %s ALPN %q, want HTTP/2.0 over ALPN h2", r.Echo.Proto, r.Echo.ALPN)
	}
	t.Logf("%s", r)
}

// xbHTTP11: protocol HTTP11 over TLS: HTTP/1.1, ALPN http/1.1.
func xbHTTP11(t *testing.T, w *xbWorld) {
	r := w.await(t, "h11", w.get("h11"), tlsEcho(w.secure, xbH11Host))
	if r.Echo.Proto != "HTTP/1.1" || r.Echo.ALPN != "http/1.1" {
		t.Errorf("backend saw %s ALPN %q, want HTTP/1.1 over ALPN http/1.1", r.Echo.Proto, r.Echo.ALPN)
	}
	t.Logf("%s", r)
}

// xbH2C: protocol H2C: plaintext HTTP/2 (prior knowledge).
func xbH2C(t *testing.T, w *xbWorld) {
	r := w.await(t, "h2c", w.get("h2c"), from(w.plain))
	if r.Echo.TLSVersion != "" || r.Echo.Proto != "HTTP/2.0" {
		t.Errorf("backend saw %s TLS %q, want plaintext HTTP/2.0", r.Echo.Proto, r.Echo.TLSVersion)
	}
	t.Logf("%s", r)
}

// xbTLSRouteTerminate: the Gateway ends the client's TLS, and the
// TLSRoute's XBackend (ServerOnly, protocol unset) re-encrypts without
// ALPN: the backend sees the external hostname as SNI over TLS, and the
// client's request as the client sent it.
func xbTLSRouteTerminate(t *testing.T, w *xbWorld) {
	roots := x509.NewCertPool()
	roots.AddCert(w.pki.gwCA.Cert)
	conf := &tls.Config{ServerName: xbTermHost, RootCAs: roots, MinVersion: tls.VersionTLS12}
	r, peer := awaitStream(t, "tls-terminate", w.ports.tls, conf, func(r response, _ *x509.Certificate) error {
		return tlsEcho(w.secure, xbTermBackend)(r)
	})
	// The client's stream is not HTTP Envoy knows of: no ALPN upstream,
	// else the backend may pick h2 for the client's HTTP/1.1 bytes.
	if r.Echo.ALPN != "" || r.Echo.Proto != "HTTP/1.1" {
		t.Errorf("backend negotiated ALPN %q and read %s, want no ALPN and the client's HTTP/1.1", r.Echo.ALPN, r.Echo.Proto)
	}
	t.Logf("%s; client saw the listener certificate %s", r, peer.Subject.CommonName)
}

// xbTCPRoute: a TCPRoute to an XBackend of protocol TCP in ServerOnly:
// the client's plaintext stream reaches the backend inside the TLS Envoy
// opened (SNI the external hostname, no ALPN).
func xbTCPRoute(t *testing.T, w *xbWorld) {
	r, _ := awaitStream(t, "tcp-originates-tls", w.ports.tcp, nil, func(r response, _ *x509.Certificate) error {
		return tlsEcho(w.secure, xbTCPHost)(r)
	})
	if r.Echo.ALPN != "" || r.Echo.Proto != "HTTP/1.1" {
		t.Errorf("backend negotiated ALPN %q and read %s, want no ALPN and the client's HTTP/1.1", r.Echo.ALPN, r.Echo.Proto)
	}
	t.Logf("%s", r)
}

// xbGRPCRoute: a GRPCRoute to an XBackend (protocol unset, ServerOnly) is
// carried over HTTP/2 negotiated by ALPN h2, with the external hostname
// as SNI.
func xbGRPCRoute(t *testing.T, w *xbWorld) {
	host := xbRouteHost("grpc")
	c := awaitGRPC(t, host, func() grpcCall { return w.check(t, host) }, servedBy(w.secure, xbGRPCHost))
	if alpn := strings.Join(c.header.Get("x-alpn"), ""); alpn != "h2" {
		t.Errorf("backend negotiated ALPN %q, want h2", alpn)
	}
	t.Logf("%s", c)
}

// servesIssuedBy: the backend now presents, for host, a certificate that
// ca verifies.
func (b *backend) servesIssuedBy(ca *harness.Authority, host string) error {
	roots := x509.NewCertPool()
	roots.AddCert(ca.Cert)
	conn, err := tls.Dial("tcp", b.ip+":"+strconv.Itoa(b.port), &tls.Config{RootCAs: roots, ServerName: host, MinVersion: tls.VersionTLS12})
	if err != nil {
		return fmt.Errorf("backend %s: %w", b.name, err)
	}
	return conn.Close()
}

// clusterState is when Envoy last built a cluster, from config_dump.
type clusterState struct{ Version, Updated string }

func clusterVersion(e *harness.Envoy, name string) (clusterState, error) {
	body, err := harness.HTTPGet(e.AdminURL("/config_dump?resource=dynamic_active_clusters"))
	if err != nil {
		return clusterState{}, err
	}
	var dump struct {
		Configs []struct {
			VersionInfo string `json:"version_info"`
			LastUpdated string `json:"last_updated"`
			Cluster     struct {
				Name string `json:"name"`
			} `json:"cluster"`
		} `json:"configs"`
	}
	if err := json.Unmarshal(body, &dump); err != nil {
		return clusterState{}, err
	}
	for _, c := range dump.Configs {
		if c.Cluster.Name == name {
			return clusterState{c.VersionInfo, c.LastUpdated}, nil
		}
	}
	return clusterState{}, fmt.Errorf("cluster %s is not active in Envoy", name)
}

// xbStatus is an XBackend's status as `tlsplane translate -o json` prints it.
type xbStatus struct {
	Parents []struct {
		ParentRef struct {
			Kind, Name string
		} `json:"parentRef"`
		Conditions []condition `json:"conditions"`
	} `json:"parents"`
}

// translatedXBackend runs `tlsplane translate` on the directory (the
// statuses serve computes; the status store does not list XBackends yet)
// and returns name's status.
func (w *xbWorld) translatedXBackend(t *testing.T, name string) xbStatus {
	t.Helper()
	systemBundle := filepath.Join(w.pkiDir, "system-ca-bundle.pem")
	args := append([]string{"translate", "-o", "json", "--system-ca-bundle", systemBundle, w.manifestDir}, xbAllowList...)
	out, err := exec.Command(w.tlsplaneBin, args...).Output()
	if err != nil && len(out) == 0 {
		t.Fatalf("tlsplane translate: %v", err)
	}
	var doc struct {
		XBackends []struct {
			Metadata struct{ Namespace, Name string } `json:"metadata"`
			Status   xbStatus                         `json:"status"`
		} `json:"xbackends"`
	}
	if err := json.Unmarshal(out, &doc); err != nil {
		t.Fatalf("tlsplane translate -o json: %v", err)
	}
	for _, x := range doc.XBackends {
		if x.Metadata.Namespace == xbNS && x.Metadata.Name == name {
			return x.Status
		}
	}
	t.Fatalf("tlsplane translate printed no XBackend %s/%s", xbNS, name)
	return xbStatus{}
}

// routeCondition is an HTTPRoute's condition typ for the Gateway, from
// tlsplane's /debug/status.
func (w *xbWorld) routeCondition(t *testing.T, route, typ string) condition {
	t.Helper()
	body, err := harness.HTTPGet(w.tlsplaneURL("/debug/status"))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		HTTPRoutes []struct {
			Namespace, Name string
			Status          struct {
				Parents []struct{ Conditions []condition }
			}
		} `json:"httpRoutes"`
	}
	if err := json.Unmarshal(body, &doc); err != nil {
		t.Fatalf("/debug/status: %v", err)
	}
	for _, r := range doc.HTTPRoutes {
		if r.Namespace != xbNS || r.Name != route {
			continue
		}
		for _, p := range r.Status.Parents {
			for _, c := range p.Conditions {
				if c.Type == typ {
					return c
				}
			}
		}
	}
	t.Fatalf("/debug/status has no condition %s of HTTPRoute %s/%s", typ, xbNS, route)
	return condition{}
}

// xbHandshakeStatus: the handshakes Envoy fails on an XBackend's cluster
// (its own TLS: a CA that did not sign the backend) show on the
// XBackend's status.parents as tlsplane.io/HandshakesSucceeding False,
// from Envoy's metrics service, naming the cluster; never on a policy.
func xbHandshakeStatus(t *testing.T, w *xbWorld) {
	cluster := xbCluster("wrong-ca", w.sentinelPort)
	deadline := time.Now().Add(30 * time.Second)
	var last string
	for time.Now().Before(deadline) {
		// A first report is a baseline: fail again after it.
		if _, err := w.get("wrong-ca")(); err != nil {
			t.Fatal(err)
		}
		c, err := w.xbackendCondition("wrong-ca", "tlsplane.io/HandshakesSucceeding")
		if err != nil {
			t.Fatal(err)
		}
		if c != nil && c.Status == "False" && c.Reason == "CertificateVerifyFailed" && strings.Contains(c.Message, "cluster "+cluster) {
			t.Logf("XBackend %s/wrong-ca: %s %s: %s", xbNS, c.Status, c.Reason, c.Message)
			return
		}
		if c != nil {
			last = fmt.Sprintf("%s %s: %s", c.Status, c.Reason, c.Message)
		}
		time.Sleep(500 * time.Millisecond)
	}
	t.Fatalf("XBackend %s/wrong-ca: no tlsplane.io/HandshakesSucceeding False CertificateVerifyFailed naming cluster %s within 30s (last: %q)", xbNS, cluster, last)
}

// xbackendCondition is condition typ of XBackend xb/name's parent, from
// tlsplane's /debug/status (xBackends); nil when absent.
func (w *xbWorld) xbackendCondition(name, typ string) (*condition, error) {
	body, err := harness.HTTPGet(w.tlsplaneURL("/debug/status"))
	if err != nil {
		return nil, err
	}
	var doc struct {
		XBackends []struct {
			Namespace, Name string
			Status          xbStatus
		} `json:"xBackends"`
	}
	if err := json.Unmarshal(body, &doc); err != nil {
		return nil, fmt.Errorf("/debug/status: %w", err)
	}
	for _, x := range doc.XBackends {
		if x.Namespace != xbNS || x.Name != name {
			continue
		}
		for _, p := range x.Status.Parents {
			for _, c := range p.Conditions {
				if c.Type == typ {
					return &c, nil
				}
			}
		}
		return nil, nil
	}
	return nil, fmt.Errorf("/debug/status lists no XBackend %s/%s", xbNS, name)
}

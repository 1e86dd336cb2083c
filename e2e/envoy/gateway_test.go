package envoy

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tlsplane/tlsplane/e2e/harness"
)

// TestGateway proves a Gateway through a real Envoy: an Envoy of fleet
// gw/edge, with no listener of its own, gets the Gateway's listeners,
// routes and certificates from `tlsplane serve --dir` and carries requests
// to real backends; once on state-of-the-world ADS, once on delta.
func TestGateway(t *testing.T) {
	for _, apiType := range []string{"GRPC", "DELTA_GRPC"} {
		t.Run(apiType, func(t *testing.T) { gatewayMode(t, apiType) })
	}
}

// gwEnv is the file-mode env with the Gateway's Envoy and ports.
type gwEnv struct {
	*env
	gwEnvoy *harness.Envoy
	ports   gatewayPorts
	pki     *gatewayPKI
}

func gatewayMode(t *testing.T, apiType string) {
	e := &gwEnv{env: newEnvIn(t, apiType, "gateway-"+strings.ToLower(apiType))}
	e.serveArgs = []string{"--listener-address", "127.0.0.1"}
	s := newSummary("Gateway "+gwFleet+", Envoy ADS "+apiType, e.root)
	var b *gatewayBackends // started below, once failures are summarized
	type scenario struct {
		name string
		run  func(t *testing.T)
	}
	scenarios := []scenario{
		{"gateway-listeners-on-loopback", func(t *testing.T) { gatewayListeners(t, e, s) }},
		{"http-routes-by-host", func(t *testing.T) { routesByHost(t, e, b, s) }},
		{"http-routes-by-path-prefix-and-exact", func(t *testing.T) { routesByPath(t, e, b, s) }},
		{"https-two-certificates-one-port-by-sni", func(t *testing.T) { httpsBySNI(t, e, b, s) }},
		{"weights-80-20", func(t *testing.T) { weights(t, e, b, s) }},
		{"request-header-modifier", func(t *testing.T) { headerFilter(t, e, b, s) }},
		{"cross-namespace-backend-needs-referencegrant", func(t *testing.T) { crossNamespaceBackend(t, e, b, s) }},
		{"cross-namespace-certificate-needs-referencegrant", func(t *testing.T) { crossNamespaceCertificate(t, e, b, s) }},
		{"backendtlspolicy-on-routed-service", func(t *testing.T) { routedPolicy(t, e, b, s) }},
		{"backendtlspolicy-wrong-ca-fails-closed", func(t *testing.T) {
			routedFailClosed(t, e, b, s, "backendtlspolicy-wrong-ca-fails-closed", "wrong-ca.example", svcWrongCA, failChain)
		}},
		{"backendtlspolicy-san-mismatch-fails-closed", func(t *testing.T) {
			routedFailClosed(t, e, b, s, "backendtlspolicy-san-mismatch-fails-closed", "san-mismatch.example", svcSANMismatch, failSAN)
		}},
		{"grpc-unary-over-tls", func(t *testing.T) { grpcUnaryOverTLS(t, e, b, s) }},
		{"grpc-stream-over-tls", func(t *testing.T) { grpcStreamOverTLS(t, e, b, s) }},
		{"grpc-san-mismatch-fails-closed", func(t *testing.T) {
			grpcFailsClosed(t, e, b, s, "grpc-san-mismatch-fails-closed", svcGRPCSAN, hostGRPCSAN, failSAN)
		}},
		{"grpc-wrong-ca-fails-closed", func(t *testing.T) {
			grpcFailsClosed(t, e, b, s, "grpc-wrong-ca-fails-closed", svcGRPCCA, hostGRPCCA, failChain)
		}},
		{"grpc-h2c-plaintext-backend", func(t *testing.T) { grpcPlaintextH2C(t, e, b, s) }},
		{"grpc-invalid-backend-unavailable", func(t *testing.T) { grpcInvalidBackendUnavailable(t, e, s) }},
		{"http-and-grpc-routes-one-service", func(t *testing.T) { grpcAndHTTPOneService(t, e, b, s) }},
		{"tlsroute-passthrough", func(t *testing.T) { tlsPassthrough(t, e, b, s) }},
		{"tlsroute-terminate-reencrypts", func(t *testing.T) { tlsTerminate(t, e, b, s) }},
		{"tcproute-weights", func(t *testing.T) { tcpProxy(t, e, b, s) }},
		{"tls-unmatched-sni-refused", func(t *testing.T) { streamUnmatchedSNI(t, e, s) }},
		{"gateway-client-certificate", func(t *testing.T) { gatewayClientCertificate(t, e, b, s) }},
		{"policy-client-certificate-wins-over-gateway", func(t *testing.T) { policyClientCertificateWins(t, e, b, s) }},
		{"gateway-client-certificate-rotation", func(t *testing.T) { gatewayClientRotation(t, e, b, s) }},
		{"gateway-client-certificate-unusable-fails-closed", func(t *testing.T) { gatewayClientUnusable(t, e, b, s) }},
		{"gateway-fleet-holds-only-reached-clusters", func(t *testing.T) { gatewayHoldsOnlyReachedClusters(t, e, s) }},
		{"envoy-rejected-nothing", func(t *testing.T) { envoyRejectedNothing(t, e.gwEnvoy, s) }},
		{"no-plaintext-to-tls-backends", func(t *testing.T) {
			for _, be := range []*backend{b.secure, b.sentinel, b.mtls, b.grpc, b.grpcSentinel} {
				if c := be.counts(t); c.Plaintext != 0 {
					t.Errorf("backend %s received %d plaintext requests", be.name, c.Plaintext)
				}
			}
		}},
	}
	// A setup that fails (t.Fatal) still leaves every scenario in the
	// summary, as not run.
	started := false
	defer func() {
		if !started {
			var names []string
			for _, sc := range scenarios {
				names = append(names, sc.name)
			}
			s.notRun("the Gateway setup failed, see the test log", names...)
		}
	}()

	e.pki = newGatewayPKI(t, e.pkiDir)
	b = startGatewayBackends(t, e.env, e.pki)
	e.ports = gatewayPorts{http: harness.FreePort(t), https: harness.FreePort(t), tls: harness.FreePort(t), tcp: harness.FreePort(t)}
	writeGatewayWorld(t, e.manifestDir, e.pki, b, e.ports)

	e.startTLSPlane(t)
	e.gwEnvoy = harness.StartEnvoy(t, harness.EnvoyOptions{
		Bin: e.envoyBin, LogDir: e.logDir, Name: "envoy-gateway", APIType: apiType,
		NodeID: "gateway-envoy", Fleet: gwFleet, XDSAddress: e.xdsAddress(),
		GatewayListeners: true, WaitReady: true,
	})
	// Registered after Envoy, so it runs before Envoy stops.
	t.Cleanup(func() { e.saveDiagnostics(t) })

	started = true
	for _, sc := range scenarios {
		s.run(t, sc.name, sc.run)
	}
}

// envoyRejectedNothing: no xDS subscription of the Envoy counts a rejected
// update.
func envoyRejectedNothing(t *testing.T, envoy *harness.Envoy, s *summary) {
	st, err := envoy.Stats()
	if err != nil {
		t.Fatal(err)
	}
	subscriptions := filterSuffix(st, ".update_rejected")
	var rejected []string
	for k, v := range subscriptions {
		if v != 0 {
			rejected = append(rejected, fmt.Sprintf("%s=%d", k, v))
		}
	}
	sort.Strings(rejected)
	s.note("envoy-rejected-nothing", "%d xDS subscriptions checked", len(subscriptions))
	if len(rejected) > 0 {
		t.Errorf("Envoy rejected configuration from tlsplane: %s", strings.Join(rejected, ", "))
	}
}

func (e *gwEnv) xdsAddress() string { return "127.0.0.1:" + strconv.Itoa(e.xdsPort) }

// get sends one request to a Gateway port; tlsHost, when set, makes it
// HTTPS with that SNI, trusting the Gateway's CA.
func (e *gwEnv) get(port int, host, path string, header map[string]string, tlsHost string) (response, error) {
	c := harness.GatewayCall{Port: port, Host: host, Path: path, Header: map[string][]string{}}
	for k, v := range header {
		c.Header.Set(k, v)
	}
	if tlsHost != "" {
		roots := x509.NewCertPool()
		roots.AddCert(e.pki.gwCA.Cert)
		c.TLS = &tls.Config{RootCAs: roots, ServerName: tlsHost, MinVersion: tls.VersionTLS12}
	}
	return harness.GatewayGet(c)
}

// httpGet is one request to the HTTP listener.
func (e *gwEnv) httpGet(host, path string) (response, error) {
	return e.get(e.ports.http, host, path, nil, "")
}

// await polls send until check accepts its answer: an edit, or the first
// configuration, reaches Envoy a little after it is written.
func (e *gwEnv) await(t *testing.T, what string, send func() (response, error), check func(response) error) response {
	t.Helper()
	var last response
	err := harness.Eventually(applyTimeout, 100*time.Millisecond, func() error {
		r, err := send()
		if err != nil {
			return err
		}
		last = r
		return check(r)
	})
	if err != nil {
		t.Fatalf("%s: %v (last answer: %s)\n--- tlsplane log:\n%s", what, err, last, e.tlsplane.LogTail(15))
	}
	return last
}

// from accepts a 200 answered by be.
func from(be *backend) func(response) error {
	return func(r response) error {
		if r.Status != 200 || r.Echo.Name != be.name {
			return fmt.Errorf("want 200 from %s, got %s", be.name, r)
		}
		return nil
	}
}

// status accepts an answer of Envoy's with that code.
func status(code int) func(response) error {
	return func(r response) error {
		if r.Status != code {
			return fmt.Errorf("want %d, got %s", code, r)
		}
		return nil
	}
}

// saveDiagnostics keeps, next to the logs, what Envoy holds and what the
// translator makes of the directory: the first things to read after a
// failure.
func (e *gwEnv) saveDiagnostics(t *testing.T) {
	dump := filepath.Join(e.logDir, "envoy-gateway-config_dump.json")
	if err := e.gwEnvoy.SaveConfigDump(dump); err != nil {
		t.Logf("saving Envoy's config_dump: %v", err)
	}
	out, err := exec.Command(e.tlsplaneBin, "translate", e.manifestDir).CombinedOutput()
	if err != nil {
		t.Logf("tlsplane translate %s: %v", e.manifestDir, err)
	}
	if err := os.WriteFile(filepath.Join(e.logDir, "translate.yaml"), out, 0o644); err != nil {
		t.Logf("saving the translate output: %v", err)
	}
	if t.Failed() {
		t.Logf("Envoy's config_dump: %s; tlsplane translate: %s", dump, filepath.Join(e.logDir, "translate.yaml"))
	}
}

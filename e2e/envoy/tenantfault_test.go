package envoy

import (
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tlsplane/tlsplane/e2e/harness"
)

// TestTenantFaultStaysWithItsFleet: tenant B (namespace client) holds the
// issue's collision, a listener certificate Secret "client" and a policy's
// tlsplane.io/clientCertificateRef "certificate", one SDS name
// (client/client/certificate). tlsplane still becomes ready on a fresh
// start and tenant A's Envoy is served; B is fixed and broken again, and an
// edit in tenant A (a new Service and route) still reaches A's Envoy;
// /readyz is 200 and /debug/status names B's refused fleet.
func TestTenantFaultStaysWithItsFleet(t *testing.T) {
	const (
		tenantA = "tenant-a"
		tenantB = "client" // the issue's namespace
		hostA   = "a.tenant.example"
	)
	e := newEnvIn(t, "GRPC", "tenant-fault")
	e.serveArgs = []string{"--listener-address", "127.0.0.1"}
	app := startBackend(t, e, "tenant-a-app", backendOpts{plain: true})
	added := startBackend(t, e, "tenant-a-new", backendOpts{plain: true})
	portA, portB := harness.FreePort(t), harness.FreePort(t)
	ca := harness.NewAuthority(t, "tenant fault CA")
	listenerLeaf := ca.Issue(t, harness.LeafSpec{CommonName: "b.example", DNSNames: []string{"b.example"}})
	clientLeaf := ca.Issue(t, harness.LeafSpec{CommonName: "b-client", Client: true})

	writeManifests(t, e.manifestDir, "class", gatewayClass(gwClass, controller))
	writeManifests(t, e.manifestDir, "tenant-a", inNamespace(tenantA,
		append(serviceWithEndpoints("app", svcPort{name: "http", port: plainPort, backendPort: app.port}),
			gateway(tenantA, "edge", gwClass, gwListener{name: "http", protocol: "HTTP", port: portA}),
			httpRoute{namespace: tenantA, name: "app", gateway: "edge", section: "http", hostnames: []string{hostA},
				rules: []routeRule{{backends: []backendRef{{name: "app", port: plainPort}}}}}.object())...)...)
	payPort := harness.FreePort(t)
	writeB := func(options map[string]string) {
		pol := policy{name: "pay", targets: []target{{svc: "pay"}}, caRefs: []caRef{{name: "pay-ca"}}, hostname: "pay.example", options: options}
		writeManifests(t, e.manifestDir, "tenant-b", inNamespace(tenantB,
			append(serviceWithEndpoints("pay", svcPort{name: "https", port: securePort, backendPort: payPort}),
				gateway(tenantB, "edge", gwClass, gwListener{name: "https", protocol: "HTTPS", port: portB, hostname: "b.example", certName: "client"}),
				tlsSecret(tenantB, "client", listenerLeaf),
				tlsSecret(tenantB, "certificate", clientLeaf),
				caConfigMap("pay-ca", ca.PEM),
				pol.object())...)...)
	}
	colliding := map[string]string{"clientCertificateRef": "certificate"}
	writeB(colliding)

	// A fresh start is ready although B's fleet cannot be served.
	e.tlsplane = harness.StartTLSPlane(t, harness.TLSPlaneOptions{
		Bin: e.tlsplaneBin, LogDir: e.logDir, XDSPort: e.xdsPort, AdminPort: e.tlsplaneAdminPort,
		Args: append([]string{"--dir", e.manifestDir}, e.serveArgs...), ReadyTimeout: 15 * time.Second,
	}).Process
	harness.StartEnvoy(t, harness.EnvoyOptions{
		Bin: e.envoyBin, LogDir: e.logDir, Name: "envoy-tenant-a", APIType: e.apiType,
		NodeID: "tenant-a-envoy", Fleet: tenantA + "/edge", XDSAddress: "127.0.0.1:" + strconv.Itoa(e.xdsPort),
		GatewayListeners: true, WaitReady: true,
	})
	g := &gwEnv{env: e}
	get := func(path string) func() (response, error) {
		return func() (response, error) {
			return harness.GatewayGet(harness.GatewayCall{Port: portA, Host: hostA, Path: path})
		}
	}
	g.await(t, "tenant A's route", get("/"), from(app))

	// B is fixed, then broken again (its fleet keeps what it was served):
	// an edit in tenant A still reaches A's Envoy.
	writeB(nil)
	waitAdmin(t, e.tlsplaneURL("/debug/status"), func(body string) bool { return !strings.Contains(body, "SecretNameConflict") })
	writeB(colliding)
	waitAdmin(t, e.tlsplaneURL("/debug/status"), func(body string) bool { return strings.Contains(body, "SecretNameConflict") })
	writeManifests(t, e.manifestDir, "tenant-a-new", inNamespace(tenantA,
		append(serviceWithEndpoints("new", svcPort{name: "http", port: plainPort, backendPort: added.port}),
			httpRoute{namespace: tenantA, name: "new", gateway: "edge", section: "http", hostnames: []string{hostA},
				rules: []routeRule{{matches: []pathMatch{{"PathPrefix", "/new"}}, backends: []backendRef{{name: "new", port: plainPort}}}}}.object())...)...)
	g.await(t, "tenant A's new route", get("/new"), from(added))

	if code, _ := adminGet(t, e.tlsplaneURL("/readyz")); code != 200 {
		t.Errorf("/readyz = %d, want 200", code)
	}
	_, body := adminGet(t, e.tlsplaneURL("/debug/status"))
	for _, want := range []string{`"fleet": "client/edge"`, "SecretNameConflict", "client/client/certificate", "BackendTLSPolicy client/pay"} {
		if !strings.Contains(body, want) {
			t.Errorf("/debug/status lacks %s", want)
		}
	}
}

func adminGet(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	return resp.StatusCode, string(b)
}

// waitAdmin polls url until ok accepts its body.
func waitAdmin(t *testing.T, url string, ok func(string) bool) {
	t.Helper()
	var last string
	err := harness.Eventually(applyTimeout, 100*time.Millisecond, func() error {
		_, last = adminGet(t, url)
		if !ok(last) {
			return errors.New("not yet")
		}
		return nil
	})
	if err != nil {
		t.Fatalf("%s: %v; last:\n%s", url, err, last)
	}
}

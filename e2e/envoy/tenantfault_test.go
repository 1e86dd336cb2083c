package envoy

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tlsplane/tlsplane/e2e/harness"
)

// TestTenantFaultStaysWithItsFleet: tenant B (namespace client) holds the
// issue's world, a listener certificate Secret "client" and a policy's
// tlsplane.io/clientCertificateRef "certificate" (once one SDS name, now
// two), beside faults that are refused: a listener whose certificate
// Secret is malformed, a policy whose CA ConfigMap is missing, a route to
// a missing Service. tlsplane becomes ready on a fresh start and tenant
// A's Envoy is served; B is fixed and broken again, and an edit in tenant
// A (a new Service and route) still reaches A's Envoy; /readyz is 200 and
// /debug/status shows B's faults on B's objects, and no fleet refused.
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
	portA, portB, portBroken := harness.FreePort(t), harness.FreePort(t), harness.FreePort(t)
	ca := harness.NewAuthority(t, "tenant fault CA")
	listenerLeaf := ca.Issue(t, harness.LeafSpec{CommonName: "b.example", DNSNames: []string{"b.example"}})
	clientLeaf := ca.Issue(t, harness.LeafSpec{CommonName: "b-client", Client: true})

	writeManifests(t, e.manifestDir, "class", gatewayClass(gwClass, controller))
	writeManifests(t, e.manifestDir, "tenant-a", inNamespace(tenantA,
		append(serviceWithEndpoints("app", svcPort{name: "http", port: plainPort, backendPort: app.port}),
			addressed(gateway(tenantA, "edge", gwClass, gwListener{name: "http", protocol: "HTTP", port: portA})),
			httpRoute{namespace: tenantA, name: "app", gateway: "edge", section: "http", hostnames: []string{hostA},
				rules: []routeRule{{backends: []backendRef{{name: "app", port: plainPort}}}}}.object())...)...)
	payPort := harness.FreePort(t)
	// writeB writes B's objects: the issue's world, and with faults, a
	// listener with a malformed certificate, a policy whose CA is
	// missing and a route to a Service that does not exist.
	writeB := func(faults bool) {
		listeners := []gwListener{{name: "https", protocol: "HTTPS", port: portB, hostname: "b.example", certName: "client"}}
		brokenCert := tlsSecret(tenantB, "broken-cert", listenerLeaf)
		ledgerCA := "ledger-ca"
		routeTo := "pay"
		if faults {
			listeners = append(listeners, gwListener{name: "broken", protocol: "HTTPS", port: portBroken, hostname: "broken.example", certName: "broken-cert"})
			brokenCert["data"].(object)["tls.crt"] = base64.StdEncoding.EncodeToString([]byte("-----BEGIN CERTIFICATE-----\nnot a certificate\n-----END CERTIFICATE-----\n"))
			ledgerCA = "no-such-ca"
			routeTo = "gone"
		}
		pay := policy{name: "pay", targets: []target{{svc: "pay"}}, caRefs: []caRef{{name: "pay-ca"}}, hostname: "pay.example",
			options: map[string]string{"clientCertificateRef": "certificate"}}
		ledger := policy{name: "ledger", targets: []target{{svc: "ledger"}}, caRefs: []caRef{{name: ledgerCA}}, hostname: "ledger.example"}
		objs := append(serviceWithEndpoints("pay", svcPort{name: "https", port: securePort, backendPort: payPort}),
			serviceWithEndpoints("ledger", svcPort{name: "https", port: securePort, backendPort: payPort})...)
		writeManifests(t, e.manifestDir, "tenant-b", inNamespace(tenantB,
			append(objs,
				addressed(gateway(tenantB, "edge", gwClass, listeners...)),
				httpRoute{namespace: tenantB, name: "pay", gateway: "edge", section: "https", hostnames: []string{"b.example"},
					rules: []routeRule{{backends: []backendRef{{name: routeTo, port: securePort}}}}}.object(),
				tlsSecret(tenantB, "client", listenerLeaf),
				tlsSecret(tenantB, "certificate", clientLeaf),
				brokenCert,
				caConfigMap("pay-ca", ca.PEM),
				caConfigMap("ledger-ca", ca.PEM),
				pay.object(), ledger.object())...)...)
	}
	writeB(true)

	// A fresh start is ready although B's objects are at fault.
	g, get := startTenantA(t, e, tenantA, portA, hostA)
	g.await(t, "tenant A's route", get("/"), from(app))

	// B is fixed, then broken again: an edit in tenant A still reaches
	// A's Envoy.
	wantFaults := []string{
		"Gateway client/edge listener broken: ResolvedRefs=False (InvalidCertificateRef)",
		"BackendTLSPolicy client/ledger: Accepted=False (NoValidCACertificate)",
		"HTTPRoute client/pay: ResolvedRefs=False (BackendNotFound)",
	}
	missing := func(body string) []string {
		faults := tenantBFaults(t, body)
		var out []string
		for _, want := range wantFaults {
			if !slices.ContainsFunc(faults, func(f string) bool { return strings.HasPrefix(f, want) }) {
				out = append(out, want)
			}
		}
		return out
	}
	faultsShown := func(body string) bool { return len(missing(body)) == 0 }
	waitAdmin(t, e.tlsplaneURL("/debug/status"), faultsShown)
	writeB(false)
	waitAdmin(t, e.tlsplaneURL("/debug/status"), func(body string) bool { return len(tenantBFaults(t, body)) == 0 })
	writeB(true)
	waitAdmin(t, e.tlsplaneURL("/debug/status"), faultsShown)
	writeManifests(t, e.manifestDir, "tenant-a-new", inNamespace(tenantA,
		append(serviceWithEndpoints("new", svcPort{name: "http", port: plainPort, backendPort: added.port}),
			httpRoute{namespace: tenantA, name: "new", gateway: "edge", section: "http", hostnames: []string{hostA},
				rules: []routeRule{{matches: []pathMatch{{"PathPrefix", "/new"}}, backends: []backendRef{{name: "new", port: plainPort}}}}}.object())...)...)
	g.await(t, "tenant A's new route", get("/new"), from(added))

	if code, _ := adminGet(t, e.tlsplaneURL("/readyz")); code != 200 {
		t.Errorf("/readyz = %d, want 200", code)
	}
	_, body := adminGet(t, e.tlsplaneURL("/debug/status"))
	if m := missing(body); len(m) != 0 {
		t.Errorf("/debug/status lacks %q; B's faults: %q", m, tenantBFaults(t, body))
	}
	t.Logf("B's faults in /debug/status:\n%s", strings.Join(tenantBFaults(t, body), "\n"))
	st := debugStatusOf(t, body)
	if len(st.Refusals) != 0 {
		t.Errorf("/debug/status refusals = %+v, want none: B's faults are judged on its objects", st.Refusals)
	}
	for _, want := range []string{"Gateway tenant-a/edge: Programmed=True", "Gateway client/edge: Programmed=True", "BackendTLSPolicy client/pay: Accepted=True"} {
		if !slices.ContainsFunc(st.conditions(), func(c string) bool { return strings.HasPrefix(c, want) }) {
			t.Errorf("/debug/status lacks %s", want)
		}
	}
}

// startTenantA starts tlsplane on e's directory (ready although other
// tenants' objects are at fault) and tenant A's Envoy of its Gateway
// edge; get builds a request to A's listener on port for host.
func startTenantA(t *testing.T, e *env, tenantA string, port int, host string) (g *gwEnv, get func(path string) func() (response, error)) {
	t.Helper()
	e.tlsplane = harness.StartTLSPlane(t, harness.TLSPlaneOptions{
		Bin: e.tlsplaneBin, LogDir: e.logDir, XDSPort: e.xdsPort, AdminPort: e.tlsplaneAdminPort,
		Args: append([]string{"--dir", e.manifestDir}, e.serveArgs...), ReadyTimeout: 15 * time.Second,
	}).Process
	harness.StartEnvoy(t, harness.EnvoyOptions{
		Bin: e.envoyBin, LogDir: e.logDir, Name: "envoy-tenant-a", APIType: e.apiType,
		NodeID: "tenant-a-envoy", Fleet: tenantA + "/edge", XDSAddress: "127.0.0.1:" + strconv.Itoa(e.xdsPort),
		GatewayListeners: true, WaitReady: true,
	})
	get = func(path string) func() (response, error) {
		return func() (response, error) {
			return harness.GatewayGet(harness.GatewayCall{Port: port, Host: host, Path: path})
		}
	}
	return &gwEnv{env: e}, get
}

// addressed is gw with the address its Envoy listens on, so that it is
// Programmed.
func addressed(gw object) object {
	gw["spec"].(object)["addresses"] = []object{{"value": "127.0.0.1"}}
	return gw
}

// debugCondition is a condition as /debug/status shows it.
type debugCondition struct {
	Type, Status, Reason, Message string
}

// debugStatus is the part of /debug/status this test reads.
type debugStatus struct {
	Policies []struct {
		Namespace, Name string
		Status          struct {
			Ancestors []struct{ Conditions []debugCondition }
		}
	}
	Gateways []struct {
		Namespace, Name string
		Status          struct {
			Conditions []debugCondition
			Listeners  []struct {
				Name       string
				Conditions []debugCondition
			}
		}
	}
	HTTPRoutes []struct {
		Namespace, Name string
		Status          struct {
			Parents []struct{ Conditions []debugCondition }
		}
	}
	Refusals []struct{ Fleet, Namespace, Reason, Message string }
}

func debugStatusOf(t *testing.T, body string) debugStatus {
	t.Helper()
	var st debugStatus
	if err := json.Unmarshal([]byte(body), &st); err != nil {
		t.Fatalf("/debug/status: %v", err)
	}
	return st
}

// conditions are every condition of the statuses, one a line:
// "<Kind> <ns>/<name>[ listener <l>]: <Type>=<Status> (<Reason>): <Message>".
func (st debugStatus) conditions() []string {
	var out []string
	add := func(what string, conds []debugCondition) {
		for _, c := range conds {
			out = append(out, fmt.Sprintf("%s: %s=%s (%s): %s", what, c.Type, c.Status, c.Reason, c.Message))
		}
	}
	for _, p := range st.Policies {
		for _, a := range p.Status.Ancestors {
			add("BackendTLSPolicy "+p.Namespace+"/"+p.Name, a.Conditions)
		}
	}
	for _, g := range st.Gateways {
		add("Gateway "+g.Namespace+"/"+g.Name, g.Status.Conditions)
		for _, l := range g.Status.Listeners {
			add("Gateway "+g.Namespace+"/"+g.Name+" listener "+l.Name, l.Conditions)
		}
	}
	for _, r := range st.HTTPRoutes {
		for _, p := range r.Status.Parents {
			add("HTTPRoute "+r.Namespace+"/"+r.Name, p.Conditions)
		}
	}
	return out
}

// tenantBFaults are the conditions of namespace client's objects that
// refuse them: Accepted, ResolvedRefs or Programmed False.
func tenantBFaults(t *testing.T, body string) []string {
	var out []string
	for _, c := range debugStatusOf(t, body).conditions() {
		if !strings.Contains(c, " client/") {
			continue
		}
		for _, refused := range []string{": Accepted=False", ": ResolvedRefs=False", ": Programmed=False"} {
			if strings.Contains(c, refused) {
				out = append(out, c)
			}
		}
	}
	return out
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

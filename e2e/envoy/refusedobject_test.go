package envoy

import (
	"strings"
	"testing"

	"github.com/tlsplane/tlsplane/e2e/harness"
)

// TestRefusedObjectLeavesItsFileServed: one file holds two tenants'
// objects, as a GitOps tool renders them, and tenant B's HTTPRoute is one
// the API server would refuse (17 rules). tlsplane starts ready, serves
// tenant A's route from that file to A's Envoy, names B's route in the
// refusal and counts the file failing; an edit of A's route in the same
// file reaches A's Envoy while B's stays refused.
func TestRefusedObjectLeavesItsFileServed(t *testing.T) {
	const (
		tenantA, tenantB = "tenant-a", "tenant-b"
		hostA            = "a.tenant.example"
	)
	e := newEnvIn(t, "GRPC", "refused-object")
	e.serveArgs = []string{"--listener-address", "127.0.0.1"}
	app := startBackend(t, e, "tenant-a-app", backendOpts{plain: true})
	added := startBackend(t, e, "tenant-a-new", backendOpts{plain: true})
	portA, portB := harness.FreePort(t), harness.FreePort(t)

	writeManifests(t, e.manifestDir, "class", gatewayClass(gwClass, controller))
	// writeShared writes both tenants' objects into one file; with
	// newRoute, A's route has a second rule.
	writeShared := func(newRoute bool) {
		rules := []routeRule{{backends: []backendRef{{name: "app", port: plainPort}}}}
		if newRoute {
			rules = append(rules, routeRule{matches: []pathMatch{{"PathPrefix", "/new"}}, backends: []backendRef{{name: "new", port: plainPort}}})
		}
		var tooMany []routeRule
		for range 17 { // the CRD's maxItems is 16
			tooMany = append(tooMany, routeRule{backends: []backendRef{{name: "b", port: plainPort}}})
		}
		objs := inNamespace(tenantA,
			append(append(serviceWithEndpoints("app", svcPort{name: "http", port: plainPort, backendPort: app.port}),
				serviceWithEndpoints("new", svcPort{name: "http", port: plainPort, backendPort: added.port})...),
				addressed(gateway(tenantA, "edge", gwClass, gwListener{name: "http", protocol: "HTTP", port: portA})),
				httpRoute{namespace: tenantA, name: "app", gateway: "edge", section: "http", hostnames: []string{hostA}, rules: rules}.object())...)
		objs = append(objs, inNamespace(tenantB,
			append(serviceWithEndpoints("b", svcPort{name: "http", port: plainPort, backendPort: app.port}),
				addressed(gateway(tenantB, "edge", gwClass, gwListener{name: "http", protocol: "HTTP", port: portB})),
				httpRoute{namespace: tenantB, name: "many", gateway: "edge", section: "http", hostnames: []string{"b.example"}, rules: tooMany}.object())...)...)
		writeManifests(t, e.manifestDir, "rendered", objs...)
	}
	writeShared(false)

	g, get := startTenantA(t, e, tenantA, portA, hostA)
	g.await(t, "tenant A's route from the file with a refused object", get("/"), from(app))

	waitAdmin(t, e.tlsplaneURL("/metrics"), func(body string) bool {
		return strings.Contains(body, "\ntlsplane_source_files_failing 1\n")
	})
	if log := e.tlsplane.Log(); !strings.Contains(log, "HTTPRoute tenant-b/many: spec.rules: Too many: 17: must have at most 16 items") {
		t.Errorf("the log does not name B's refused route at its field:\n%s", log)
	}
	_, body := adminGet(t, e.tlsplaneURL("/debug/status"))
	st := debugStatusOf(t, body)
	for _, r := range st.HTTPRoutes {
		if r.Namespace == tenantB {
			t.Errorf("B's refused route %s has a status: it is served", r.Name)
		}
	}

	writeShared(true)
	g.await(t, "tenant A's edit in the same file", get("/new"), from(added))
	if code, _ := adminGet(t, e.tlsplaneURL("/readyz")); code != 200 {
		t.Errorf("/readyz = %d, want 200", code)
	}
}

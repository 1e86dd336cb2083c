package envoy

import (
	"testing"

	"github.com/tlsplane/tlsplane/e2e/harness"
)

// The Gateway every scenario goes through, and what stands behind it.
const (
	gwNS        = "gw"
	gwName      = "edge"
	gwFleet     = gwNS + "/" + gwName // translator.GatewayFleet of gw/edge
	gwClass     = "tlsplane"
	controller  = "tlsplane.io/controller"
	shopNS      = "shop"  // backends of another namespace
	certsNS     = "certs" // listener certificates of another namespace
	plainPort   = 80      // Service port of the plain-HTTP backends
	securePort  = 443     // Service port of the HTTPS backends
	hostAbcGW   = "abc.gw.example"
	hostOtherGW = "other.gw.example"
	hostCrossGW = "cross.gw.example"
)

// gatewayPKI: the backends' CA (policies trust it), an unrelated CA, and
// the Gateway's own CA, which clients of the Gateway trust.
type gatewayPKI struct {
	ca, otherCA, gwCA           *harness.Authority
	backend, sentinel           *harness.Leaf
	abcCert, otherCert, xnsCert *harness.Leaf
	termCert                    *harness.Leaf // the TLS listener that terminates
	// clientCA signs the client certificates the mtls backend accepts:
	// the Gateway's, a policy's own, and the test's probe.
	clientCA                           *harness.Authority
	gatewayClient, policyClient, probe *harness.Leaf
}

func newGatewayPKI(t *testing.T, dir string) *gatewayPKI {
	p := &gatewayPKI{
		ca:      harness.NewAuthority(t, "tlsplane e2e backend CA"),
		otherCA: harness.NewAuthority(t, "unrelated CA"),
		gwCA:    harness.NewAuthority(t, "tlsplane e2e Gateway CA"),
	}
	p.backend = issue(t, p.ca, dir, "gw-backend", harness.LeafSpec{})
	p.sentinel = issue(t, p.ca, dir, "gw-sentinel", harness.LeafSpec{})
	listenerLeaf := func(host string) *harness.Leaf {
		return p.gwCA.Issue(t, harness.LeafSpec{CommonName: host, Organization: "tlsplane e2e listener " + host, DNSNames: []string{host}})
	}
	p.abcCert, p.otherCert, p.xnsCert = listenerLeaf(hostAbcGW), listenerLeaf(hostOtherGW), listenerLeaf(hostCrossGW)
	p.termCert = listenerLeaf(hostTermGW)
	p.clientCA = harness.NewAuthority(t, "tlsplane e2e client CA")
	client := func(cn string) *harness.Leaf {
		return p.clientCA.Issue(t, harness.LeafSpec{CommonName: cn, Client: true})
	}
	p.gatewayClient, p.policyClient, p.probe = client("gateway-client"), client("policy-client"), client("e2e-probe")
	return p
}

// gatewayBackends: plain-HTTP echo servers that routes tell apart by name,
// one in another namespace, and HTTPS ones for BackendTLSPolicy.
type gatewayBackends struct {
	a, b, c, shop    *backend
	secure, sentinel *backend
	mtls             *backend // requires a client certificate p.clientCA signed
	// gRPC (examples/backend serves it beside its echo): TLS, TLS that only
	// fail-closed routes reach, and plaintext (h2c).
	grpc, grpcSentinel, grpcPlain *backend
}

func startGatewayBackends(t *testing.T, e *env, p *gatewayPKI) *gatewayBackends {
	return &gatewayBackends{
		a:      startBackend(t, e, "gw-a", backendOpts{plain: true}),
		b:      startBackend(t, e, "gw-b", backendOpts{plain: true}),
		c:      startBackend(t, e, "gw-c", backendOpts{plain: true}),
		shop:   startBackend(t, e, "gw-shop", backendOpts{plain: true}),
		secure: startBackend(t, e, "gw-secure", backendOpts{leaf: p.backend}),
		// Only fail-closed routes lead to sentinel: it must receive nothing.
		sentinel:     startBackend(t, e, "gw-sentinel", backendOpts{leaf: p.sentinel}),
		mtls:         startBackend(t, e, "gw-mtls", backendOpts{leaf: p.backend, clientCA: p.clientCA, probe: p.probe}),
		grpc:         startBackend(t, e, "gw-grpc", backendOpts{leaf: p.backend}),
		grpcSentinel: startBackend(t, e, "gw-grpc-sentinel", backendOpts{leaf: p.sentinel}),
		grpcPlain:    startBackend(t, e, "gw-grpc-plain", backendOpts{plain: true}),
	}
}

// gatewayPorts are the Gateway's listener ports, free ports of this run.
type gatewayPorts struct{ http, https, tls, tcp int }

// The files of the world; the ReferenceGrant files come and go.
const (
	fileGateway    = "gw-gateway"
	fileBackends   = "gw-backends"
	fileRoutes     = "gw-routes"
	fileShop       = "gw-shop"
	fileCerts      = "gw-certs"
	fileGrantSvc   = "gw-grant-backend"
	fileGrantCert  = "gw-grant-certificate"
	svcSecure      = "secure"
	svcWrongCA     = "wrong-ca"
	svcSANMismatch = "san-mismatch"
	sniRouted      = "sni-only.example.com" // the SNI the routed policy sends
)

// writeGatewayWorld writes every file but the ReferenceGrants.
func writeGatewayWorld(t *testing.T, dir string, p *gatewayPKI, b *gatewayBackends, ports gatewayPorts) {
	writeManifests(t, dir, fileGateway,
		gatewayClass(gwClass, controller),
		withBackendClientCertificate(gateway(gwNS, gwName, gwClass,
			gwListener{name: "http", protocol: "HTTP", port: ports.http},
			gwListener{name: "https-abc", protocol: "HTTPS", port: ports.https, hostname: hostAbcGW, certName: "abc-cert"},
			gwListener{name: "https-other", protocol: "HTTPS", port: ports.https, hostname: hostOtherGW, certName: "other-cert"},
			gwListener{name: "https-cross", protocol: "HTTPS", port: ports.https, hostname: hostCrossGW, certNS: certsNS, certName: "cross-cert"},
			gwListener{name: "tls-pass", protocol: "TLS", port: ports.tls, hostname: hostPassGW, passthrough: true},
			gwListener{name: "tls-term", protocol: "TLS", port: ports.tls, hostname: hostTermGW, certName: "term-cert"},
			gwListener{name: "tcp", protocol: "TCP", port: ports.tcp},
		), gatewayClientName),
		tlsSecret(gwNS, "term-cert", p.termCert),
		tlsSecret(gwNS, "abc-cert", p.abcCert),
		tlsSecret(gwNS, "other-cert", p.otherCert),
	)
	writeManifests(t, dir, fileCerts, tlsSecret(certsNS, "cross-cert", p.xnsCert))
	writeManifests(t, dir, fileGatewayClient, tlsSecret(gwNS, gatewayClientName, p.gatewayClient))
	writeManifests(t, dir, fileMTLS, mtlsObjects(p, b.mtls)...)
	writeManifests(t, dir, fileGRPC, grpcObjects(p, b)...)
	writeManifests(t, dir, fileStreams, streamObjects(b)...)
	writeManifests(t, dir, fileShop, inNamespace(shopNS, serviceWithEndpoints("shop",
		svcPort{name: "http", port: plainPort, backendPort: b.shop.port})...)...)

	var objs []object
	for _, be := range []*backend{b.a, b.b, b.c} {
		objs = append(objs, serviceWithEndpoints(be.name, svcPort{name: "http", port: plainPort, backendPort: be.port})...)
	}
	policies := []struct {
		svc string
		be  *backend
		ca  *harness.Authority
		san string
	}{
		// SNI, CA and SAN all as the policy says: the backend is reached.
		{svcSecure, b.secure, p.ca, hostOther},
		// A CA that did not sign the backend's certificate: fail closed.
		{svcWrongCA, b.sentinel, p.otherCA, hostOther},
		// The right CA but a SAN the certificate lacks: fail closed.
		{svcSANMismatch, b.sentinel, p.ca, "nothere.example.com"},
	}
	for _, pol := range policies {
		objs = append(objs, serviceWithEndpoints(pol.svc, svcPort{name: "https", port: securePort, backendPort: pol.be.port})...)
		objs = append(objs, caConfigMap("ca-"+pol.svc, pol.ca.PEM))
		objs = append(objs, policy{name: pol.svc, targets: []target{{svc: pol.svc}},
			caRefs: []caRef{{name: "ca-" + pol.svc}}, hostname: sniRouted, sans: []san{{dns: pol.san}}}.object())
	}
	writeManifests(t, dir, fileBackends, inNamespace(gwNS, objs...)...)

	route := func(name, section string, hostnames []string, rules ...routeRule) object {
		return httpRoute{namespace: gwNS, name: name, gateway: gwName, section: section, hostnames: hostnames, rules: rules}.object()
	}
	to := func(be *backend) []backendRef { return []backendRef{{name: be.name, port: plainPort}} }
	toSvc := func(svc string) []backendRef { return []backendRef{{name: svc, port: securePort}} }
	writeManifests(t, dir, fileRoutes,
		route("host-a", "http", []string{"host-a.example"}, routeRule{backends: to(b.a)}),
		route("host-b", "http", []string{"host-b.example"}, routeRule{backends: to(b.b)}),
		route("paths", "http", []string{"paths.example"},
			routeRule{matches: []pathMatch{{"PathPrefix", "/prefix"}}, backends: to(b.a)},
			routeRule{matches: []pathMatch{{"Exact", "/exact"}}, backends: to(b.b)},
			routeRule{backends: to(b.c)}),
		route("weights", "http", []string{"weights.example"},
			routeRule{backends: []backendRef{{name: b.a.name, port: plainPort, weight: 80}, {name: b.b.name, port: plainPort, weight: 20}}}),
		route("cross-namespace", "http", []string{"cross-ns.example"},
			routeRule{backends: []backendRef{{namespace: shopNS, name: "shop", port: plainPort}}}),
		route("headers", "http", []string{"headers.example"},
			routeRule{filters: []object{headerModifier(
				map[string]string{"X-Gateway-Added": gwName},
				map[string]string{"X-Gateway-Set": "overwritten"},
				"X-Gateway-Remove")}, backends: to(b.a)}),
		route("backend-tls", "http", []string{"backend-tls.example"}, routeRule{backends: toSvc(svcSecure)}),
		route("wrong-ca", "http", []string{"wrong-ca.example"}, routeRule{backends: toSvc(svcWrongCA)}),
		route("san-mismatch", "http", []string{"san-mismatch.example"}, routeRule{backends: toSvc(svcSANMismatch)}),
		route("mtls", "http", []string{hostMTLS}, routeRule{backends: toSvc(svcMTLS)}),
		route("mtls-own", "http", []string{hostMTLSOwn}, routeRule{backends: toSvc(svcMTLSOwn)}),
		route("secure-abc", "https-abc", nil, routeRule{backends: to(b.a)}),
		route("secure-other", "https-other", nil, routeRule{backends: to(b.b)}),
		route("secure-cross", "https-cross", nil, routeRule{backends: to(b.c)}),
	)
}

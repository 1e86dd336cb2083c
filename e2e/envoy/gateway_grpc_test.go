package envoy

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
	grpcstatus "google.golang.org/grpc/status"

	"github.com/tlsplane/tlsplane/e2e/harness"
)

// GRPCRoutes through the Gateway's HTTP listener (h2c from the client) to
// gRPC backends: examples/backend serves grpc.health.v1.Health beside its
// echo and tells, in response metadata, what it saw.
const (
	fileGRPC        = "gw-grpc"
	svcGRPC         = "grpc"              // TLS, governed by a policy (SNI, CA, SAN)
	svcGRPCSAN      = "grpc-san-mismatch" // TLS, the policy's SAN is not in the certificate
	svcGRPCCA       = "grpc-wrong-ca"     // TLS, the policy's CA did not sign the certificate
	svcGRPCPlain    = "grpc-plain"        // no policy: h2c
	hostGRPC        = "grpc.gw.example"
	hostGRPCSAN     = "grpc-san.gw.example"
	hostGRPCCA      = "grpc-ca.gw.example"
	hostGRPCPlain   = "grpc-plain.gw.example"
	hostGRPCMissing = "grpc-missing.gw.example" // its backend Service does not exist
	hostGRPCAsHTTP  = "grpc-as-http.gw.example" // an HTTPRoute to the same Service port
	healthService   = "grpc.health.v1.Health"
	grpcCallTimeout = 5 * time.Second
)

// grpcRoute is a GRPCRoute with one rule per entry of methods (a
// service/method pair, "" for any), all to one Service port.
type grpcRoute struct {
	namespace, name, gateway, section string
	hostnames                         []string
	methods                           [][2]string
	backend                           backendRef
}

func (r grpcRoute) object() object {
	ref := object{"group": "", "kind": "Service", "name": r.backend.name, "port": r.backend.port}
	var rules []object
	for _, m := range r.methods {
		method := object{"type": "Exact"}
		if m[0] != "" {
			method["service"] = m[0]
		}
		if m[1] != "" {
			method["method"] = m[1]
		}
		rules = append(rules, object{"matches": []object{{"method": method}}, "backendRefs": []object{ref}})
	}
	spec := object{
		"parentRefs": []object{{"group": "gateway.networking.k8s.io", "kind": "Gateway", "name": r.gateway, "sectionName": r.section}},
		"hostnames":  r.hostnames,
		"rules":      rules,
	}
	return object{
		"apiVersion": gatewayAPIVersion, "kind": "GRPCRoute",
		"metadata": object{"namespace": r.namespace, "name": r.name, "generation": 1},
		"spec":     spec,
	}
}

// grpcObjects: the three gRPC Services, their policies and routes, and an
// HTTPRoute to the TLS one.
func grpcObjects(p *gatewayPKI, b *gatewayBackends) []object {
	var objs []object
	for _, s := range []struct {
		svc string
		be  *backend
		san string // "": no policy
		ca  string
	}{
		{svcGRPC, b.grpc, hostOther, "ca-" + svcGRPC},
		{svcGRPCSAN, b.grpcSentinel, "nothere.example.com", "ca-" + svcGRPC},
		{svcGRPCCA, b.grpcSentinel, hostOther, "ca-other-" + svcGRPC},
		{svcGRPCPlain, b.grpcPlain, "", ""},
	} {
		objs = append(objs, serviceWithEndpoints(s.svc, svcPort{name: "grpc", port: securePort, backendPort: s.be.port})...)
		if s.san == "" {
			continue
		}
		objs = append(objs, policy{name: s.svc, targets: []target{{svc: s.svc}}, caRefs: []caRef{{name: s.ca}},
			hostname: sniRouted, sans: []san{{dns: s.san}}}.object())
	}
	objs = append(objs, caConfigMap("ca-"+svcGRPC, p.ca.PEM), caConfigMap("ca-other-"+svcGRPC, p.otherCA.PEM))
	route := func(name, host, svc string, methods ...[2]string) object {
		return grpcRoute{namespace: gwNS, name: name, gateway: gwName, section: "http", hostnames: []string{host},
			methods: methods, backend: backendRef{name: svc, port: securePort}}.object()
	}
	objs = append(objs,
		route("grpc", hostGRPC, svcGRPC, [2]string{healthService, "Check"}, [2]string{healthService, "Watch"}),
		route("grpc-san-mismatch", hostGRPCSAN, svcGRPCSAN, [2]string{healthService, ""}),
		route("grpc-wrong-ca", hostGRPCCA, svcGRPCCA, [2]string{healthService, ""}),
		route("grpc-plain", hostGRPCPlain, svcGRPCPlain, [2]string{healthService, "Check"}),
		route("grpc-missing", hostGRPCMissing, "no-such-grpc-service", [2]string{healthService, ""}),
		httpRoute{namespace: gwNS, name: "grpc-as-http", gateway: gwName, section: "http", hostnames: []string{hostGRPCAsHTTP},
			rules: []routeRule{{backends: []backendRef{{name: svcGRPC, port: securePort}}}}}.object(),
	)
	return inNamespace(gwNS, objs...)
}

// grpcCall is one gRPC call's outcome: what the backend's metadata said.
type grpcCall struct {
	status   healthpb.HealthCheckResponse_ServingStatus
	header   metadata.MD
	code     codes.Code
	messages int // stream messages received
}

func (c grpcCall) String() string {
	get := func(k string) string { return strings.Join(c.header.Get(k), ",") }
	if c.code != codes.OK {
		return "gRPC " + c.code.String()
	}
	return fmt.Sprintf("gRPC OK %s backend=%s sni=%q alpn=%q tls=%q proto=%s", c.status, get("x-backend"), get("x-sni"), get("x-alpn"), get("x-tls-version"), get("x-protocol"))
}

// grpcConn is a client of the Gateway's HTTP listener for authority host,
// over h2c.
func (e *gwEnv) grpcConn(t *testing.T, host string) *grpc.ClientConn {
	t.Helper()
	cc, err := grpc.NewClient("127.0.0.1:"+strconv.Itoa(e.ports.http), grpc.WithTransportCredentials(insecure.NewCredentials()), grpc.WithAuthority(host))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cc.Close() })
	return cc
}

// check makes one unary Health/Check.
func (e *gwEnv) check(t *testing.T, host string) grpcCall {
	ctx, cancel := context.WithTimeout(context.Background(), grpcCallTimeout)
	defer cancel()
	var c grpcCall
	resp, err := healthpb.NewHealthClient(e.grpcConn(t, host)).Check(ctx, &healthpb.HealthCheckRequest{}, grpc.Header(&c.header))
	c.code = grpcstatus.Code(err)
	c.status = resp.GetStatus()
	return c
}

// awaitGRPC repeats call until want accepts it (Envoy applies the routes
// in its own time).
func awaitGRPC(t *testing.T, what string, call func() grpcCall, want func(grpcCall) error) grpcCall {
	t.Helper()
	var last grpcCall
	err := harness.Eventually(applyTimeout, 100*time.Millisecond, func() error {
		last = call()
		return want(last)
	})
	if err != nil {
		t.Fatalf("%s: %v (last: %s)", what, err, last)
	}
	return last
}

// servedBy: OK, SERVING, from be, which saw the policy's SNI over h2.
func servedBy(be *backend, sni string) func(grpcCall) error {
	return func(c grpcCall) error {
		switch {
		case c.code != codes.OK:
			return fmt.Errorf("gRPC %s", c.code)
		case c.status != healthpb.HealthCheckResponse_SERVING:
			return fmt.Errorf("status %s", c.status)
		case strings.Join(c.header.Get("x-backend"), "") != be.name:
			return fmt.Errorf("answered by %v, want %s", c.header.Get("x-backend"), be.name)
		case sni != "" && strings.Join(c.header.Get("x-sni"), "") != sni:
			return fmt.Errorf("backend saw SNI %v, want %q", c.header.Get("x-sni"), sni)
		}
		return nil
	}
}

// grpcUnaryOverTLS: a unary call through a GRPCRoute reaches the TLS
// backend with the policy's SNI, over HTTP/2 negotiated by ALPN h2, and
// Envoy's cluster for it is the Service port's gRPC cluster.
func grpcUnaryOverTLS(t *testing.T, e *gwEnv, b *gatewayBackends, s *summary) {
	c := awaitGRPC(t, hostGRPC, func() grpcCall { return e.check(t, hostGRPC) }, servedBy(b.grpc, sniRouted))
	if alpn := strings.Join(c.header.Get("x-alpn"), ""); alpn != "h2" {
		t.Errorf("backend negotiated ALPN %q, want h2", alpn)
	}
	cluster := clusterIn(gwNS, svcGRPC, securePort) + "/grpc"
	view, err := (&envoyProxy{e.gwEnvoy}).cluster(cluster)
	if err != nil {
		t.Fatal(err)
	}
	if !view.hasTLS || view.sni != sniRouted || view.caSecret == "" {
		t.Errorf("cluster %s: %s, CA secret %q; want the policy's TLS", cluster, view, view.caSecret)
	}
	s.note("grpc-unary-over-tls", "%s; cluster %s tls=%v ca=%s", c, cluster, view.hasTLS, view.caSecret)
}

// grpcStreamOverTLS: a server-streaming call (Health/Watch) through the
// same route receives its first message from the backend.
func grpcStreamOverTLS(t *testing.T, e *gwEnv, b *gatewayBackends, s *summary) {
	ctx, cancel := context.WithTimeout(context.Background(), grpcCallTimeout)
	defer cancel()
	var c grpcCall
	stream, err := healthpb.NewHealthClient(e.grpcConn(t, hostGRPC)).Watch(ctx, &healthpb.HealthCheckRequest{})
	if err != nil {
		t.Fatal(err)
	}
	msg, err := stream.Recv()
	c.code = grpcstatus.Code(err)
	if err == nil {
		c.status, c.messages = msg.GetStatus(), 1
		c.header, _ = stream.Header()
	}
	if err := servedBy(b.grpc, sniRouted)(c); err != nil {
		t.Fatalf("Watch: %v (%s)", err, c)
	}
	s.note("grpc-stream-over-tls", "Watch: first message %s after %d message(s); %s", c.status, c.messages, c)
}

// grpcFailsClosed: a GRPCRoute to a Service whose policy the backend's
// certificate cannot satisfy (a SAN it lacks, a CA that did not sign it)
// fails with UNAVAILABLE on Envoy's TLS counter failStat, and the backend
// receives nothing.
func grpcFailsClosed(t *testing.T, e *gwEnv, b *gatewayBackends, s *summary, name, svc, host, failStat string) {
	cluster := clusterIn(gwNS, svc, securePort) + "/grpc"
	before := b.grpcSentinel.counts(t)
	awaitGRPC(t, host, func() grpcCall { return e.check(t, host) }, func(c grpcCall) error {
		if c.code == codes.OK {
			t.Fatalf("%s: answered OK by %v: a policy that cannot be satisfied let a call through", host, c.header.Get("x-backend"))
		}
		if c.code != codes.Unavailable {
			return fmt.Errorf("gRPC %s, want Unavailable", c.code)
		}
		return nil
	})
	statsBefore, err := e.gwEnvoy.Stats()
	if err != nil {
		t.Fatal(err)
	}
	c := e.check(t, host)
	statsAfter, err := e.gwEnvoy.Stats()
	if err != nil {
		t.Fatal(err)
	}
	after := b.grpcSentinel.counts(t)
	s.note(name, "%s; cluster %s TLS counters: %s", c, cluster, sslDelta(statsBefore, statsAfter, cluster))
	if stat := "cluster." + cluster + "." + failStat; statsAfter[stat] <= statsBefore[stat] {
		t.Errorf("Envoy's %s did not move (%d -> %d); TLS stats: %s", stat, statsBefore[stat], statsAfter[stat], sslStats(statsAfter, cluster))
	}
	if after.Requests != before.Requests || after.Plaintext != before.Plaintext {
		t.Errorf("backend %s received traffic through a fail-closed route: before %+v, after %+v", b.grpcSentinel.name, before, after)
	}
}

// grpcPlaintextH2C: a Service port without a policy is reached over h2c.
func grpcPlaintextH2C(t *testing.T, e *gwEnv, b *gatewayBackends, s *summary) {
	c := awaitGRPC(t, hostGRPCPlain, func() grpcCall { return e.check(t, hostGRPCPlain) }, servedBy(b.grpcPlain, ""))
	if proto := strings.Join(c.header.Get("x-protocol"), ""); proto != "HTTP/2.0" {
		t.Errorf("backend saw %q, want HTTP/2.0 (h2c)", proto)
	}
	s.note("grpc-h2c-plaintext-backend", "%s", c)
}

// grpcAndHTTPOneService: an HTTPRoute to the same Service port is served
// over the port's own cluster (HTTP/1.1, the policy's ALPN), beside the
// gRPC one: two clusters, one set of endpoints.
func grpcAndHTTPOneService(t *testing.T, e *gwEnv, b *gatewayBackends, s *summary) {
	r := e.await(t, hostGRPCAsHTTP, func() (response, error) { return e.httpGet(hostGRPCAsHTTP, "/plain-http") }, from(b.grpc))
	if r.Echo.SNI != sniRouted || r.Echo.Proto != "HTTP/1.1" {
		t.Errorf("HTTPRoute to the gRPC Service: %s, want SNI %q over HTTP/1.1", r, sniRouted)
	}
	c := e.check(t, hostGRPC)
	if err := servedBy(b.grpc, sniRouted)(c); err != nil {
		t.Errorf("the gRPC route after the HTTP one: %v", err)
	}
	s.note("http-and-grpc-routes-one-service", "HTTPRoute: %s; GRPCRoute: %s", r, c)
}

// grpcInvalidBackendUnavailable: a GRPCRoute whose backend does not exist
// answers UNAVAILABLE, as the GRPCRoute spec asks (not UNKNOWN, which an
// HTTP 500 would read as).
func grpcInvalidBackendUnavailable(t *testing.T, e *gwEnv, s *summary) {
	c := awaitGRPC(t, hostGRPCMissing, func() grpcCall { return e.check(t, hostGRPCMissing) }, func(c grpcCall) error {
		if c.code == codes.OK {
			t.Fatalf("%s: answered OK by %v: its backend does not exist", hostGRPCMissing, c.header.Get("x-backend"))
		}
		if c.code != codes.Unavailable {
			return fmt.Errorf("gRPC %s, want Unavailable", c.code)
		}
		return nil
	})
	s.note("grpc-invalid-backend-unavailable", "%s", c)
}

package envoy

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tlsplane/tlsplane/e2e/harness"
)

// TestTrafficPolicy proves an XBackendTrafficPolicy through a real Envoy,
// configured by `tlsplane serve --dir`: session persistence keeps a client
// that carries the cookie or header Envoy set on one of a Service's two
// endpoints (without it, requests spread), and a retry budget of 0% (at
// least 1 retry) makes Envoy refuse the retries of concurrent failing
// requests (upstream_rq_retry_overflow), where a budget of 100% (at least
// 1000) lets them all retry.
func TestTrafficPolicy(t *testing.T) {
	e := &gwEnv{env: newEnvIn(t, "GRPC", "xtraffic")}
	// HTTPRoute's retry is a field of the experimental CRDs only: on the
	// standard channel a directory's route loses it, as a cluster's would.
	e.serveArgs = []string{"--listener-address", "127.0.0.1", "--gateway-api-channel", "experimental"}
	a, b := echoServer(t, "a"), echoServer(t, "b")
	failing := failingServer(t, 300*time.Millisecond)
	e.ports = gatewayPorts{http: harness.FreePort(t)}
	writeTrafficWorld(t, e.manifestDir, e.ports.http, map[string][]int{
		"sticky": {port(t, a), port(t, b)}, "stickyh": {port(t, a), port(t, b)},
		"tight": {port(t, failing)}, "loose": {port(t, failing)},
	})
	e.startTLSPlane(t)
	e.gwEnvoy = harness.StartEnvoy(t, harness.EnvoyOptions{
		Bin: e.envoyBin, LogDir: e.logDir, Name: "envoy-gateway", APIType: "GRPC",
		NodeID: "gateway-envoy", Fleet: "xt/edge", XDSAddress: e.xdsAddress(),
		GatewayListeners: true, WaitReady: true,
	})
	t.Cleanup(func() { e.saveDiagnostics(t) })

	t.Run("session-cookie", func(t *testing.T) { sessionKept(t, e, "sticky.example", "sid", true) })
	t.Run("session-header", func(t *testing.T) { sessionKept(t, e, "stickyh.example", "x-session", false) })
	t.Run("retry-budget", func(t *testing.T) { retryBudget(t, e) })
}

// sessionKept: without the session's cookie or header, 20 requests reach
// both endpoints; with what the first answer set, 10 more stay on its
// endpoint.
func sessionKept(t *testing.T, e *gwEnv, host, name string, cookie bool) {
	var first stickyAnswer
	err := harness.Eventually(applyTimeout, 100*time.Millisecond, func() error {
		r, err := stickyGet(e.ports.http, host, nil)
		if err != nil {
			return err
		}
		if r.status != 200 {
			return fmt.Errorf("status %d", r.status)
		}
		first = r
		return nil
	})
	if err != nil {
		t.Fatalf("%s: %v\n--- tlsplane log:\n%s", host, err, e.tlsplane.LogTail(15))
	}
	seen := map[string]int{}
	for range 20 {
		r, err := stickyGet(e.ports.http, host, nil)
		if err != nil {
			t.Fatal(err)
		}
		seen[r.backend]++
	}
	if len(seen) != 2 {
		t.Fatalf("%s without a session: 20 requests reached %v, want both endpoints", host, seen)
	}
	var session http.Header
	if cookie {
		c := first.cookies[name]
		if c == "" {
			t.Fatalf("%s: the first answer set no cookie %s (headers %v)", host, name, first.header)
		}
		session = http.Header{"Cookie": {name + "=" + c}}
	} else {
		v := first.header.Get(name)
		if v == "" {
			t.Fatalf("%s: the first answer has no header %s (headers %v)", host, name, first.header)
		}
		session = http.Header{http.CanonicalHeaderKey(name): {v}}
	}
	kept := map[string]int{}
	for range 10 {
		r, err := stickyGet(e.ports.http, host, session)
		if err != nil {
			t.Fatal(err)
		}
		kept[r.backend]++
	}
	t.Logf("%s: without a session %v; with the first answer's %s: %v", host, seen, name, kept)
	if len(kept) != 1 || kept[first.backend] != 10 {
		t.Fatalf("%s with %v: 10 requests reached %v, want all on %s", host, session, kept, first.backend)
	}
}

// retryBudget sends 20 concurrent requests to each of two Services on one
// failing backend (503 after 300 ms, retried twice by the route): the
// tight budget's cluster counts overflowing retries, the loose one's none.
func retryBudget(t *testing.T, e *gwEnv) {
	for _, host := range []string{"tight.example", "loose.example"} {
		if err := harness.Eventually(applyTimeout, 100*time.Millisecond, func() error {
			r, err := stickyGet(e.ports.http, host, nil)
			if err == nil && r.status != 503 {
				err = fmt.Errorf("status %d, want the failing backend's 503", r.status)
			}
			return err
		}); err != nil {
			t.Fatalf("%s: %v", host, err)
		}
	}
	before, err := e.gwEnvoy.Stats()
	if err != nil {
		t.Fatal(err)
	}
	for _, host := range []string{"tight.example", "loose.example"} {
		var wg sync.WaitGroup
		for range 20 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, _ = stickyGet(e.ports.http, host, nil)
			}()
		}
		wg.Wait()
	}
	after, err := e.gwEnvoy.Stats()
	if err != nil {
		t.Fatal(err)
	}
	overflow := func(svc string) int64 {
		name := "cluster.xt/" + svc + "/8080."
		return harness.SumStats(after, name, "upstream_rq_retry_overflow") - harness.SumStats(before, name, "upstream_rq_retry_overflow")
	}
	retried := func(svc string) int64 {
		name := "cluster.xt/" + svc + "/8080."
		return harness.SumStats(after, name, "upstream_rq_retry") - harness.SumStats(before, name, "upstream_rq_retry")
	}
	tight, loose := overflow("tight"), overflow("loose")
	t.Logf("20 concurrent failing requests: tight budget (0%%, at least 1): %d retries, %d refused; loose (100%%, at least 1000): %d retries, %d refused",
		retried("tight"), tight, retried("loose"), loose)
	if tight < 10 {
		t.Errorf("the 0%% budget refused %d retries of 20 concurrent failing requests, want most of them", tight)
	}
	if loose != 0 {
		t.Errorf("the 100%% budget refused %d retries, want none", loose)
	}
}

// stickyAnswer is one answer of an echo server through Envoy.
type stickyAnswer struct {
	status  int
	backend string
	header  http.Header
	cookies map[string]string
}

// stickyGet sends GET / with header on a new connection.
func stickyGet(port int, host string, header http.Header) (stickyAnswer, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://127.0.0.1:"+strconv.Itoa(port)+"/", nil)
	if err != nil {
		return stickyAnswer{}, err
	}
	req.Host = host
	for k, v := range header {
		req.Header[k] = v
	}
	transport := &http.Transport{DisableKeepAlives: true}
	defer transport.CloseIdleConnections()
	resp, err := (&http.Client{Transport: transport}).Do(req)
	if err != nil {
		return stickyAnswer{}, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<16))
	if err != nil {
		return stickyAnswer{}, err
	}
	r := stickyAnswer{status: resp.StatusCode, header: resp.Header, cookies: map[string]string{}}
	for _, c := range resp.Cookies() {
		r.cookies[c.Name] = c.Value
	}
	if r.status == 200 {
		var echo struct{ Name string }
		if err := json.Unmarshal(body, &echo); err != nil {
			return r, fmt.Errorf("200 without an echo: %q", body)
		}
		r.backend = echo.Name
	}
	return r, nil
}

// echoServer answers {"name": name} on loopback.
func echoServer(t *testing.T, name string) *httptest.Server {
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"name":%q}`, name)
	}))
	t.Cleanup(s.Close)
	return s
}

// failingServer answers 503 after delay, so concurrent requests' retries
// overlap.
func failingServer(t *testing.T, delay time.Duration) *httptest.Server {
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-time.After(delay):
		case <-r.Context().Done():
		}
		w.WriteHeader(http.StatusServiceUnavailable)
	}))
	t.Cleanup(s.Close)
	return s
}

func port(t *testing.T, s *httptest.Server) int {
	_, p, err := net.SplitHostPort(s.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	n, _ := strconv.Atoi(p)
	return n
}

// writeTrafficWorld writes the Gateway xt/edge (HTTP on port), a Service
// per name with an EndpointSlice per loopback endpoint port, a route per
// Service (<name>.example; tight and loose retry 503 twice), and the
// policies: a cookie session on sticky, a header session on stickyh, a
// 0% budget on tight, a 100% one on loose.
func writeTrafficWorld(t *testing.T, dir string, port int, endpoints map[string][]int) {
	var docs []string
	docs = append(docs, `apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: tlsplane}
spec: {controllerName: tlsplane.io/controller}`, fmt.Sprintf(`apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: edge, namespace: xt}
spec:
  gatewayClassName: tlsplane
  addresses: [{type: IPAddress, value: 127.0.0.1}]
  listeners:
  - {name: http, protocol: HTTP, port: %d}`, port))
	for svc, ports := range endpoints {
		docs = append(docs, fmt.Sprintf(`apiVersion: v1
kind: Service
metadata: {name: %s, namespace: xt}
spec:
  ports: [{name: http, port: 8080, protocol: TCP}]`, svc))
		for i, p := range ports {
			docs = append(docs, fmt.Sprintf(`apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: {name: %s-%d, namespace: xt, labels: {kubernetes.io/service-name: %s}}
addressType: IPv4
ports: [{name: http, port: %d, protocol: TCP}]
endpoints: [{addresses: [127.0.0.1], conditions: {ready: true}}]`, svc, i, svc, p))
		}
		retry := ""
		if svc == "tight" || svc == "loose" {
			retry = "\n    retry: {codes: [503], attempts: 2}"
		}
		docs = append(docs, fmt.Sprintf(`apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: %s, namespace: xt}
spec:
  parentRefs: [{name: edge}]
  hostnames: [%s.example]
  rules:
  - backendRefs: [{name: %s, port: 8080}]%s`, svc, svc, svc, retry))
	}
	policy := func(name, svc, spec string) string {
		return fmt.Sprintf(`apiVersion: gateway.networking.x-k8s.io/v1alpha1
kind: XBackendTrafficPolicy
metadata: {name: %s, namespace: xt}
spec:
  targetRefs: [{group: "", kind: Service, name: %s}]
%s`, name, svc, spec)
	}
	docs = append(docs,
		policy("cookie", "sticky", "  sessionPersistence: {sessionName: sid}"),
		policy("header", "stickyh", "  sessionPersistence: {type: Header, sessionName: x-session}"),
		policy("tight", "tight", "  retryConstraint: {budget: {percent: 0}, minRetryRate: {count: 1}}"),
		policy("loose", "loose", "  retryConstraint: {budget: {percent: 100}, minRetryRate: {count: 1000}}"),
	)
	if err := os.WriteFile(filepath.Join(dir, "traffic.yaml"), []byte(strings.Join(docs, "\n---\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
}

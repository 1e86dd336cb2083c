package envoy

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tlsplane/tlsplane/e2e/harness"
)

// The HTTPRoute retry features the Gateway API conformance suite has no
// test for at our pin (HTTPRouteRetryBackendTimeout,
// HTTPRouteRetryConnectionError), proven through a real Envoy: each
// Service has a healthy echo backend on 127.0.0.1 and a faulty endpoint
// on 127.0.0.2 at the same port, and a rule with a retry stanza answers
// every request while the same rule without one fails some.
const (
	retryNS      = "retry"
	retryTries   = 12                     // requests per case, round robin over both endpoints
	perTry       = 400 * time.Millisecond // timeouts.backendRequest
	hostTimeout  = "timeout.retry.example"
	hostTimeout0 = "timeout-no-retry.example"
	hostRefused  = "refused.retry.example"
	hostRefused0 = "refused-no-retry.example"
	hostOnce     = "once.retry.example"
	hostFlaky    = "flaky.retry.example"
	// burst is the concurrent requests of the load case: half stall, and
	// their retries stay within the cluster's default circuit breaker of 3
	// concurrent retries (more overflow it and are answered 504 untried).
	burst = 6
)

// TestHTTPRouteRetry: HTTPRouteRetryBackendTimeout (a try that outlives
// timeouts.backendRequest is retried on another endpoint; without the
// retry stanza it is answered 504) and HTTPRouteRetryConnectionError (a
// refused connection is retried; without the stanza it is answered 503);
// under concurrent requests a retry still avoids the endpoint that failed,
// and a Service of one endpoint still retries it (a reset connection).
func TestHTTPRouteRetry(t *testing.T) {
	e := newEnvIn(t, "GRPC", "retry")
	e.serveArgs = []string{"--listener-address", "127.0.0.1", "--gateway-api-channel", "experimental"}
	stallPort, refusedPort := harness.FreePort(t), harness.FreePort(t)
	healthyStall := startBackend(t, e, "retry-after-stall", backendOpts{plain: true, port: stallPort})
	healthyRefused := startBackend(t, e, "retry-after-refused", backendOpts{plain: true, port: refusedPort})
	stall := startStallingBackend(t, net.JoinHostPort("127.0.0.2", strconv.Itoa(stallPort)))
	flakyPort := harness.FreePort(t)
	flaky := startFlakyBackend(t, net.JoinHostPort("127.0.0.1", strconv.Itoa(flakyPort)))
	// Nothing listens on 127.0.0.2:refusedPort: every connection there is refused.

	listenerPort := harness.FreePort(t)
	backendRequest := object{"backendRequest": fmt.Sprintf("%dms", perTry.Milliseconds())}
	route := func(name, host, svc string, port int, retry, timeouts object) object {
		return httpRoute{namespace: retryNS, name: name, gateway: "edge", section: "http", hostnames: []string{host},
			rules: []routeRule{{backends: []backendRef{{name: svc, port: port}}, retry: retry, timeouts: timeouts}}}.object()
	}
	writeManifests(t, e.manifestDir, "retry",
		gatewayClass(gwClass, controller),
		addressed(gateway(retryNS, "edge", gwClass, gwListener{name: "http", protocol: "HTTP", port: listenerPort})),
		retryService("stall", stallPort), endpointSlice("stall", stallPort, "127.0.0.1", "127.0.0.2"),
		retryService("refused", refusedPort), endpointSlice("refused", refusedPort, "127.0.0.1", "127.0.0.2"),
		retryService("flaky", flakyPort), endpointSlice("flaky", flakyPort, "127.0.0.1"),
		route("timeout", hostTimeout, "stall", stallPort, object{"attempts": 2}, backendRequest),
		route("timeout-no-retry", hostTimeout0, "stall", stallPort, nil, backendRequest),
		route("once", hostOnce, "stall", stallPort, object{"attempts": 1}, backendRequest),
		// The stanza alone: the spec asks for retries on connection errors
		// whenever one is configured.
		route("refused", hostRefused, "refused", refusedPort, object{}, nil),
		route("refused-no-retry", hostRefused0, "refused", refusedPort, nil, nil),
		route("flaky", hostFlaky, "flaky", flakyPort, object{"attempts": 1}, nil),
	)
	e.startTLSPlane(t)
	envoy := harness.StartEnvoy(t, harness.EnvoyOptions{
		Bin: e.envoyBin, LogDir: e.logDir, Name: "envoy-retry", APIType: e.apiType,
		NodeID: "retry-envoy", Fleet: retryNS + "/edge", XDSAddress: fmt.Sprintf("127.0.0.1:%d", e.xdsPort),
		GatewayListeners: true, WaitReady: true,
	})
	t.Cleanup(func() {
		if err := envoy.SaveConfigDump(e.logDir + "/envoy-retry-config_dump.json"); err != nil {
			t.Logf("saving Envoy's config_dump: %v", err)
		}
	})
	g := &gwEnv{env: e}
	get := func(host string) func() (response, error) {
		return func() (response, error) {
			return harness.GatewayGet(harness.GatewayCall{Port: listenerPort, Host: host, Path: "/"})
		}
	}
	// Configured once the healthy backend answers on every route.
	for host, be := range map[string]*backend{hostTimeout: healthyStall, hostTimeout0: healthyStall, hostRefused: healthyRefused, hostRefused0: healthyRefused, hostOnce: healthyStall} {
		g.await(t, "the route of "+host, get(host), from(be))
	}
	g.await(t, "the route of "+hostFlaky, get(hostFlaky), from(&backend{name: flakyName}))

	t.Run("backend-timeout", func(t *testing.T) {
		cluster := clusterIn(retryNS, "stall", stallPort)
		before := clusterStats(t, envoy, cluster)
		accepted := stall.accepted.Load()
		tally := sendEach(t, get(hostTimeout), retryTries)
		after := clusterStats(t, envoy, cluster)
		t.Logf("with retry: %s; stalled endpoint accepted %d connections; Envoy: %s", tally, stall.accepted.Load()-accepted, statDelta(before, after))
		if tally.other() > 0 || tally.ok[healthyStall.name] != retryTries {
			t.Errorf("with a retry stanza every request must be answered by %s: %s", healthyStall.name, tally)
		}
		if n := after["upstream_rq_per_try_timeout"] - before["upstream_rq_per_try_timeout"]; n == 0 {
			t.Errorf("no try timed out: the stalled endpoint was never tried, the case proves nothing (%s)", statDelta(before, after))
		}
		if n := after["upstream_rq_retry_success"] - before["upstream_rq_retry_success"]; n == 0 {
			t.Errorf("no retry succeeded (%s)", statDelta(before, after))
		}

		start := time.Now()
		tally = sendEach(t, get(hostTimeout0), retryTries)
		t.Logf("without retry: %s in %s", tally, time.Since(start).Round(time.Millisecond))
		if tally.status[504] == 0 || tally.ok[healthyStall.name] == 0 {
			t.Errorf("without a retry stanza the stalled endpoint's requests must be answered 504 and the others 200: %s", tally)
		}
	})

	// Under concurrent requests round robin alone may send a retry back to
	// the endpoint that just stalled (another request took the healthy
	// pick in between): the retry must go to another endpoint.
	t.Run("retry-avoids-the-endpoint-that-failed", func(t *testing.T) {
		cluster := clusterIn(retryNS, "stall", stallPort)
		before := clusterStats(t, envoy, cluster)
		results := make(chan tally, burst)
		for range burst {
			go func() { results <- sendEach(t, get(hostOnce), 1) }()
		}
		all := tally{ok: map[string]int{}, status: map[int]int{}}
		for range burst {
			r := <-results
			for k, v := range r.ok {
				all.ok[k] += v
			}
			for k, v := range r.status {
				all.status[k] += v
			}
			all.errs = append(all.errs, r.errs...)
		}
		t.Logf("%d concurrent requests, one retry each: %s; Envoy: %s", burst, all, statDelta(before, clusterStats(t, envoy, cluster)))
		if all.other() > 0 || all.ok[healthyStall.name] != burst {
			t.Errorf("with one retry every request must be answered by %s: %s", healthyStall.name, all)
		}
	})

	t.Run("connection-error", func(t *testing.T) {
		cluster := clusterIn(retryNS, "refused", refusedPort)
		before := clusterStats(t, envoy, cluster)
		tally := sendEach(t, get(hostRefused), retryTries)
		after := clusterStats(t, envoy, cluster)
		t.Logf("with retry: %s; Envoy: %s", tally, statDelta(before, after))
		if tally.other() > 0 || tally.ok[healthyRefused.name] != retryTries {
			t.Errorf("with a retry stanza every request must be answered by %s: %s", healthyRefused.name, tally)
		}
		if n := after["upstream_cx_connect_fail"] - before["upstream_cx_connect_fail"]; n == 0 {
			t.Errorf("no connection was refused: the closed port was never tried, the case proves nothing (%s)", statDelta(before, after))
		}
		if n := after["upstream_rq_retry_success"] - before["upstream_rq_retry_success"]; n == 0 {
			t.Errorf("no retry succeeded (%s)", statDelta(before, after))
		}

		tally = sendEach(t, get(hostRefused0), retryTries)
		t.Logf("without retry: %s", tally)
		if tally.status[503] == 0 || tally.ok[healthyRefused.name] == 0 {
			t.Errorf("without a retry stanza the refused endpoint's requests must be answered 503 and the others 200: %s", tally)
		}
	})

	// A Service of one endpoint: a retry, finding no endpoint the request
	// has not tried, goes back to the same one (the conformance suite's
	// HTTPRouteRetry relies on it: its backend has one replica).
	t.Run("single-endpoint-retried", func(t *testing.T) {
		accepted := flaky.accepted.Load()
		tally := sendEach(t, get(hostFlaky), retryTries)
		t.Logf("with one retry: %s; the flaky endpoint accepted %d connections", tally, flaky.accepted.Load()-accepted)
		if tally.other() > 0 || tally.ok[flakyName] != retryTries {
			t.Errorf("every request must be answered by %s after one retry: %s", flakyName, tally)
		}
		if n := flaky.accepted.Load() - accepted; n < 2*retryTries-1 {
			t.Errorf("the flaky endpoint accepted %d connections for %d requests: their first tries were not reset and retried", n, retryTries)
		}
	})
}

// retryService is a ClusterIP Service of namespace retry whose port is the
// backends' port.
func retryService(name string, port int) object {
	return object{
		"apiVersion": "v1", "kind": "Service",
		"metadata": object{"namespace": retryNS, "name": name},
		"spec":     object{"type": "ClusterIP", "ports": []object{{"name": "http", "port": port, "protocol": "TCP"}}},
	}
}

// endpointSlice puts the Service's port on each address, every endpoint
// ready.
func endpointSlice(svc string, port int, addresses ...string) object {
	var endpoints []object
	for _, a := range addresses {
		endpoints = append(endpoints, object{"addresses": []string{a}, "conditions": object{"ready": true}})
	}
	return object{
		"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
		"metadata":    object{"namespace": retryNS, "name": svc + "-e2e", "labels": object{"kubernetes.io/service-name": svc}},
		"addressType": "IPv4",
		"endpoints":   endpoints,
		"ports":       []object{{"name": "http", "port": port, "protocol": "TCP"}},
	}
}

// flakyName is the name the flaky backend's answers echo.
const flakyName = "retry-flaky"

// flakyBackend resets every other connection it accepts (the first, the
// third, …) and answers the others with one 200 echo, closing them after.
type flakyBackend struct {
	accepted atomic.Int64
}

func startFlakyBackend(t *testing.T, addr string) *flakyBackend {
	t.Helper()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatalf("flaky backend on %s: %v", addr, err)
	}
	f := &flakyBackend{}
	body := `{"name":"` + flakyName + `"}`
	answer := "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nConnection: close\r\nContent-Length: " + strconv.Itoa(len(body)) + "\r\n\r\n" + body
	var conns sync.WaitGroup
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			n := f.accepted.Add(1)
			conns.Add(1)
			go func() {
				defer conns.Done()
				defer c.Close()
				_ = c.SetDeadline(time.Now().Add(5 * time.Second))
				if n%2 == 1 {
					_ = c.(*net.TCPConn).SetLinger(0) // Close sends RST
					return
				}
				if _, err := http.ReadRequest(bufio.NewReader(c)); err == nil {
					_, _ = io.WriteString(c, answer)
				}
			}()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		conns.Wait()
	})
	return f
}

// stallingBackend accepts connections and reads requests but never
// answers, until the test ends: a backend past any per-try timeout.
type stallingBackend struct {
	accepted atomic.Int64
}

func startStallingBackend(t *testing.T, addr string) *stallingBackend {
	t.Helper()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatalf("stalling backend on %s: %v", addr, err)
	}
	s := &stallingBackend{}
	var conns sync.WaitGroup
	done := make(chan struct{})
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s.accepted.Add(1)
			conns.Add(1)
			go func() {
				defer conns.Done()
				go func() { <-done; c.Close() }()
				_, _ = io.Copy(io.Discard, c) // until Envoy gives up or the test ends
				c.Close()
			}()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		close(done)
		conns.Wait()
	})
	return s
}

// tally counts answers: 200s by backend, others by status, failures to
// get an answer.
type tally struct {
	ok     map[string]int
	status map[int]int
	errs   []string
}

func (c tally) other() int {
	n := len(c.errs)
	for code, k := range c.status {
		if code != 200 {
			n += k
		}
	}
	return n
}

func (c tally) String() string {
	return fmt.Sprintf("200 by backend %v, statuses %v, errors %v", c.ok, c.status, c.errs)
}

// sendEach sends n requests one after the other (each bounded by
// GatewayGet's 10 s) and counts the answers.
func sendEach(t *testing.T, send func() (response, error), n int) tally {
	t.Helper()
	c := tally{ok: map[string]int{}, status: map[int]int{}}
	for range n {
		r, err := send()
		if err != nil {
			c.errs = append(c.errs, err.Error())
			continue
		}
		c.status[r.Status]++
		if r.Status == 200 {
			c.ok[r.Echo.Name]++
		}
	}
	return c
}

// clusterStats are Envoy's counters of one cluster, by their name after
// "cluster.<name>.".
func clusterStats(t *testing.T, envoy *harness.Envoy, cluster string) map[string]int64 {
	t.Helper()
	all, err := envoy.Stats()
	if err != nil {
		t.Fatal(err)
	}
	prefix := "cluster." + cluster + "."
	out := map[string]int64{}
	for k, v := range all {
		if len(k) > len(prefix) && k[:len(prefix)] == prefix {
			out[k[len(prefix):]] = v
		}
	}
	if len(out) == 0 {
		t.Fatal(errors.New("Envoy has no stats of cluster " + cluster))
	}
	return out
}

// statDelta names the retry and failure counters that moved.
func statDelta(before, after map[string]int64) string {
	var s string
	for _, k := range []string{"upstream_rq_retry", "upstream_rq_retry_success", "upstream_rq_retry_overflow", "upstream_rq_per_try_timeout", "upstream_rq_timeout", "upstream_cx_connect_fail", "upstream_rq_504", "upstream_rq_503"} {
		if d := after[k] - before[k]; d != 0 {
			s += fmt.Sprintf(" %s+%d", k, d)
		}
	}
	if s == "" {
		return "no retry or failure counter moved"
	}
	return s[1:]
}

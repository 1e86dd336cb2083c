package perf

import (
	"encoding/json"
	"flag"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tlsplane/tlsplane/e2e/harness"
)

var (
	routePropagation = flag.Bool("perf.routes", false, "run TestRoutePropagation: one HTTPRoute edited among n behind one Gateway, to a real delta Envoy of that Gateway")
	routeServices    = flag.Int("perf.routes.n", 10000, "Services, each with a policy and an HTTPRoute, behind one Gateway (TestRoutePropagation)")
	routesOut        = flag.String("perf.routes.out", "", "write TestRoutePropagation's result as JSON (a list of one) to this file")
)

// gatewayFleet is the Gateway TestRoutePropagation's Envoy serves.
const gatewayFleet = "edge/web"

// TestRoutePropagation is TestPropagation for routes: n Services with a
// policy each, one Gateway with an HTTP listener, an HTTPRoute per Service
// (svc-i.example: a redirect on the prefix /v<generation>, and the Service
// on /backend). Each edit moves one route's redirect to the next
// generation's prefix; it is applied when a request to that prefix, sent
// through Envoy's listener, is redirected. The request is answered by
// Envoy itself (no upstream connection), on its worker thread: the probe
// does not load the main thread that applies RDS, as reading stats would.
func TestRoutePropagation(t *testing.T) {
	if !*routePropagation {
		t.Skip("a measurement, not a test: run with -args -perf.routes (make bench does)")
	}
	tlsplaneBin, envoyBin := measuredBinaries(t)
	n := *routeServices
	dir := t.TempDir()
	manifests := filepath.Join(dir, "manifests")
	if err := os.Mkdir(manifests, 0o755); err != nil {
		t.Fatal(err)
	}
	ca := string(harness.NewAuthority(t, "perf-routes-ca").PEM)
	gen := make([]int, n)
	for i := range n {
		writeService(t, manifests, i, ca, 0, 0)
		writeRoute(t, manifests, i, 0)
	}
	port := harness.FreePort(t)
	writeAtomically(t, manifests, "gateway", gatewayManifest(port))

	start := time.Now()
	served := serveFleet(t, dir, manifests, tlsplaneBin, envoyBin, "DELTA_GRPC", n, gatewayFleet)
	probe := routeProbe{base: "http://127.0.0.1:" + strconv.Itoa(port)}
	if err := harness.Eventually(5*time.Minute, 50*time.Millisecond, func() error {
		if served.tp.Exited() || served.envoy.Exited() {
			return fmt.Errorf("tlsplane or Envoy exited")
		}
		return probe.redirected(n-1, 0)
	}); err != nil {
		t.Fatalf("Envoy never served the last route: %v\n%s\n%s", err, served.tp.LogTail(40), served.envoy.LogTail(40))
	}
	initial := time.Since(start)

	metricsURL := "http://127.0.0.1:" + strconv.Itoa(served.tlsplaneAdmin) + "/metrics"
	atStart, err := promMetrics(metricsURL)
	if err != nil {
		t.Fatal(err)
	}
	var latencies []float64
	var stalled string
	var probes int
	var mainThread []float64 // edit → RDS applied on Envoy's main thread
	for e := range *editCount {
		i := editedService(e, n)
		gen[i]++
		time.Sleep(*idle)
		// The probe must see the edit missing first, or it measures nothing.
		if err := probe.redirected(i, gen[i]); err == nil {
			t.Fatalf("edit %d: /v%d of svc-%d is redirected before the edit", e, gen[i], i)
		}
		written := writeRoute(t, manifests, i, gen[i])
		var applied time.Time
		if err := harness.Eventually(*patience, *pollEvery, func() error {
			probes++
			if err := probe.redirected(i, gen[i]); err != nil {
				return err
			}
			applied = time.Now()
			return nil
		}); err != nil {
			t.Logf("edit %d (route %d) not applied within %s: %v", e, i, *patience, err)
			stalled = fmt.Sprintf("edit %d of %d not applied within %s", e+1, *editCount, *patience)
			break
		}
		latencies = append(latencies, float64(applied.Sub(written).Microseconds())/1000)
		// Read after the edit is seen, so it does not load the main thread
		// while the edit propagates: when Envoy finished applying it there.
		if st, err := served.admin.stats(`^http\..*\.rds\..*\.config_reload_time_ms$`); err == nil {
			for _, ms := range st {
				mainThread = append(mainThread, float64(time.UnixMilli(ms).Sub(written).Microseconds())/1000)
			}
		}
	}
	slices.Sort(latencies)
	r := Result{
		Clusters: n, API: "DELTA_GRPC", Edits: len(latencies), Latencies: latencies, Stalled: stalled,
		P50: percentile(latencies, 50), P99: percentile(latencies, 99), Max: percentile(latencies, 100),
		InitialMs:   float64(initial.Milliseconds()),
		TLSPlaneRSS: rssMiB(served.tp.PID()), EnvoyRSS: rssMiB(served.envoy.PID()),
		LoadAverage: loadAverage(), StatsRead: "route probe",
	}
	if m, err := promMetrics(metricsURL); err == nil {
		r.TranslateMs = meanSince(atStart, m, "tlsplane_translation_duration_seconds") * 1000
		r.PublishMs = meanSince(atStart, m, "tlsplane_snapshot_publish_duration_seconds") * 1000
		r.SourceReadMs = meanSince(atStart, m, "tlsplane_source_read_duration_seconds") * 1000
		r.WaitMs = meanSince(atStart, m, "tlsplane_change_wait_seconds") * 1000
	}
	if body, err := served.admin.get("/stats?filter=" + url.QueryEscape(`\.rds\..*\.update_duration$`)); err == nil {
		t.Logf("Envoy's time to apply each RDS update on its main thread (ms): %s", strings.TrimSpace(body))
	}
	slices.Sort(mainThread)
	r.MainThreadP50, r.MainThreadP99 = percentile(mainThread, 50), percentile(mainThread, 99)
	t.Logf("edit → RDS applied on Envoy's main thread (config_reload_time_ms): p50=%.0fms p99=%.0fms over %d edits",
		r.MainThreadP50, r.MainThreadP99, len(mainThread))
	t.Logf("routes=%d edits=%d p50=%.1fms p99=%.1fms max=%.1fms initial=%.0fms tlsplane_rss=%.0fMiB envoy_rss=%.0fMiB wait_mean=%.3fms source_read_mean=%.2fms translate_mean=%.2fms publish_mean=%.2fms probes=%d load=%s stalled=%q",
		n, r.Edits, r.P50, r.P99, r.Max, r.InitialMs, r.TLSPlaneRSS, r.EnvoyRSS, r.WaitMs, r.SourceReadMs, r.TranslateMs, r.PublishMs, probes, r.LoadAverage, r.Stalled)
	if *routesOut != "" {
		b, err := json.MarshalIndent([]Result{r}, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(*routesOut, append(b, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// writeRoute writes Service i's HTTPRoute: a redirect on /v<generation>,
// the Service itself on /backend (never requested: its endpoints are not
// on loopback).
func writeRoute(t *testing.T, dir string, i, generation int) time.Time {
	return writeAtomically(t, dir, fmt.Sprintf("svc-%d-route", i), fmt.Sprintf(`apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {namespace: %[1]s, name: svc-%[2]d}
spec:
  parentRefs: [{namespace: edge, name: web}]
  hostnames: [svc-%[2]d.example]
  rules:
  - matches: [{path: {type: PathPrefix, value: /v%[3]d}}]
    filters: [{type: RequestRedirect, requestRedirect: {hostname: moved.example, statusCode: 302}}]
  - matches: [{path: {type: Exact, value: /backend}}]
    backendRefs: [{name: svc-%[2]d, port: 443}]
`, namespaceOf(i), i, generation))
}

// gatewayManifest is the GatewayClass and the Gateway edge/web, an HTTP
// listener on port admitting routes of every namespace.
func gatewayManifest(port int) string {
	return fmt.Sprintf(`apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: tlsplane}
spec: {controllerName: tlsplane.io/controller}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {namespace: edge, name: web}
spec:
  gatewayClassName: tlsplane
  listeners:
  - name: http
    protocol: HTTP
    port: %d
    allowedRoutes: {namespaces: {from: All}}
`, port)
}

// routeProbe sends requests through the Gateway's listener.
type routeProbe struct{ base string }

var probeClient = &http.Client{
	Timeout:       2 * time.Second,
	CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
}

// redirected: a request for svc-i.example/v<generation> is redirected,
// which only route i at that generation does.
func (p routeProbe) redirected(i, generation int) error {
	req, err := http.NewRequest(http.MethodGet, fmt.Sprintf("%s/v%d", p.base, generation), nil)
	if err != nil {
		return err
	}
	req.Host = fmt.Sprintf("svc-%d.example", i)
	resp, err := probeClient.Do(req)
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusFound || resp.Header.Get("Location") == "" {
		return fmt.Errorf("svc-%d.example/v%d: %s", i, generation, resp.Status)
	}
	return nil
}

package perf

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"

	"github.com/tlsplane/tlsplane/e2e/harness"
)

var (
	churnServices = flag.Int("churn.services", 10000, "policy-targeted Services of BenchmarkEndpointChurn")
	churnRate     = flag.Int("churn.rate", 200, "EndpointSlice updates written per second")
	churnDuration = flag.Duration("churn.duration", 60*time.Second, "how long updates are written")
	churnPatience = flag.Duration("churn.patience", 60*time.Second, "bound on the last updates' arrival after the churn, and on Envoy holding every final endpoint")
)

// churnBasePort is the endpoints' port at generation 0: an update to
// generation g moves a Service's endpoints to churnBasePort+g, which the
// load assignment that carries it shows.
const churnBasePort = 20000

// BenchmarkEndpointChurn is issue 15's endpoint churn row in file mode:
// tlsplane serve --dir over n policy-targeted Services (each with its
// Service, CA ConfigMap and BackendTLSPolicy in one file, its EndpointSlice
// in another), a real Envoy on delta ADS, and EndpointSlice files rewritten
// (atomic rename) at -churn.rate per second for -churn.duration, spread
// over the Services, each moving the slice's port. A delta ADS client over
// real gRPC, connected like the Envoy (same fleet), timestamps each load
// assignment's arrival: an update is applied when its Service's load
// assignment shows its port or a later one. The Envoy is checked at the
// end to hold every Service's final endpoints.
//
// Metrics: tlsplane-cpu-% (the tlsplane process's user+system CPU from the
// first write to the last, in % of one core), p50-ms, p99-ms, max-ms
// (update written → its load assignment received), updates (written),
// applied (seen applied), envoy-stale (Services whose final endpoints the
// Envoy does not hold), passes (tlsplane translations during the churn),
// write-lag-max-ms (how far the writer fell behind its schedule), and where
// a pass's time went during the churn (tlsplane's /metrics, means):
// source-read-ms (one read of the directory), translate-ms, publish-ms.
func BenchmarkEndpointChurn(b *testing.B) {
	b.Run(fmt.Sprintf("file/services=%d/rate=%d", *churnServices, *churnRate), func(b *testing.B) {
		tlsplaneBin, envoyBin := harness.TLSPlaneBin(b), harness.EnvoyBin(b)
		if *churnServices <= 0 || *churnRate <= 0 || *churnDuration <= 0 {
			b.Fatal("-churn.services, -churn.rate and -churn.duration must be positive")
		}
		for b.Loop() {
			fileChurn(b, tlsplaneBin, envoyBin, *churnServices, *churnRate, *churnDuration)
		}
	})
}

// update is one EndpointSlice file written.
type update struct {
	service, gen     int
	written, applied time.Time
}

// churnLedger matches load assignments received to the updates written.
type churnLedger struct {
	mu      sync.Mutex
	updates []update
	pending map[int][]int // service → indexes of its updates not yet applied
	seen    []int         // service → the latest generation received, -1 before any
	known   int           // services whose load assignment was received at all
}

func newChurnLedger(n int) *churnLedger {
	l := &churnLedger{pending: map[int][]int{}, seen: make([]int, n)}
	for i := range l.seen {
		l.seen[i] = -1
	}
	return l
}

// wrote records an update; written is taken before the rename, so the
// update cannot arrive before it is recorded.
func (l *churnLedger) wrote(service, gen int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.updates = append(l.updates, update{service: service, gen: gen, written: time.Now()})
	l.pending[service] = append(l.pending[service], len(l.updates)-1)
}

// received applies one load assignment: every update of its Service up to
// the generation it shows is applied now.
func (l *churnLedger) received(a harness.LoadAssignment) {
	service, gen, ok := churnOf(a)
	if !ok || service >= len(l.seen) {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.seen[service] < 0 {
		l.known++
	}
	if gen <= l.seen[service] {
		return
	}
	l.seen[service] = gen
	left := l.pending[service][:0]
	for _, idx := range l.pending[service] {
		if l.updates[idx].gen <= gen {
			l.updates[idx].applied = a.At
		} else {
			left = append(left, idx)
		}
	}
	if len(left) == 0 {
		delete(l.pending, service)
	} else {
		l.pending[service] = left
	}
}

// churnOf reads a load assignment of Service i's cluster (team-N/svc-i/443)
// as its Service and generation.
func churnOf(a harness.LoadAssignment) (service, gen int, ok bool) {
	parts := strings.Split(a.Cluster, "/")
	if len(parts) != 3 || !strings.HasPrefix(parts[1], "svc-") || len(a.Endpoints) == 0 {
		return 0, 0, false
	}
	service, err := strconv.Atoi(strings.TrimPrefix(parts[1], "svc-"))
	if err != nil {
		return 0, 0, false
	}
	_, port, ok := strings.Cut(a.Endpoints[0], ":")
	p, err := strconv.Atoi(port)
	if !ok || err != nil {
		return 0, 0, false
	}
	return service, p - churnBasePort, true
}

func (l *churnLedger) state() (known, pending int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.known, len(l.pending)
}

func fileChurn(b *testing.B, tlsplaneBin, envoyBin string, n, rate int, duration time.Duration) {
	b.StopTimer()
	defer b.StartTimer() // b.Loop needs it running
	dir := b.TempDir()
	manifests := filepath.Join(dir, "manifests")
	if err := os.Mkdir(manifests, 0o755); err != nil {
		b.Fatal(err)
	}
	ca := string(harness.NewAuthority(b, "perf-churn-ca").PEM)
	for i := range n {
		writeChurnService(b, manifests, i, ca)
		writeEndpointSlice(b, manifests, i, 0)
	}

	start := time.Now()
	served := serveDir(b, dir, manifests, tlsplaneBin, envoyBin, "DELTA_GRPC", n)
	tp, envoy, admin, xdsPort, tlsplaneAdmin := served.tp, served.envoy, served.admin, served.xdsPort, served.tlsplaneAdmin
	b.Logf("Envoy holds the %d clusters and their CA secrets after %v", n, time.Since(start).Round(time.Millisecond))

	ledger := newChurnLedger(n)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	watchDone, err := harness.WatchLoadAssignments(ctx, "127.0.0.1:"+strconv.Itoa(xdsPort), &corev3.Node{Id: "perf-churn-watch", Cluster: "perf"}, ledger.received)
	if err != nil {
		b.Fatal(err)
	}
	if err := harness.Eventually(*churnPatience, 50*time.Millisecond, func() error {
		if known, _ := ledger.state(); known < n {
			return fmt.Errorf("%d of %d load assignments received", known, n)
		}
		return nil
	}); err != nil {
		b.Fatalf("the delta ADS client never received every load assignment: %v", err)
	}

	metricsBefore := tlsplaneMetrics(b, tlsplaneAdmin)
	load := loadAverage()
	total := int(float64(rate) * duration.Seconds())
	gens := make([]int, n)
	cpuBefore := cpuTicks(b, tp.PID())
	var lag time.Duration
	b.StartTimer()
	t0 := time.Now()
	for k := range total {
		due := t0.Add(time.Duration(k) * time.Second / time.Duration(rate))
		if d := time.Until(due); d > 0 {
			time.Sleep(d)
		} else {
			lag = max(lag, -d)
		}
		i := k * 7919 % n
		gens[i]++
		writeEndpointSliceRecorded(b, manifests, i, gens[i], ledger)
	}
	t1 := time.Now()
	cpuAfter := cpuTicks(b, tp.PID())
	b.StopTimer()
	metricsAfter := tlsplaneMetrics(b, tlsplaneAdmin)
	passes := metricsAfter["tlsplane_translation_duration_seconds_count"] - metricsBefore["tlsplane_translation_duration_seconds_count"]
	// Where a pass's time goes, over the churn: means in ms.
	meanMs := func(histogram string) float64 {
		if c := metricsAfter[histogram+"_count"] - metricsBefore[histogram+"_count"]; c > 0 {
			return (metricsAfter[histogram+"_sum"] - metricsBefore[histogram+"_sum"]) / c * 1000
		}
		return 0
	}
	sourceMs, translateMs, publishMs := meanMs("tlsplane_source_read_duration_seconds"),
		meanMs("tlsplane_translation_duration_seconds"), meanMs("tlsplane_snapshot_publish_duration_seconds")

	drainErr := harness.Eventually(*churnPatience, 20*time.Millisecond, func() error {
		if _, pending := ledger.state(); pending > 0 {
			return fmt.Errorf("%d Services' updates not received", pending)
		}
		return nil
	})
	select {
	case err := <-watchDone:
		b.Errorf("the delta ADS client's stream ended: %v", err)
	default:
	}

	// The Envoy holds every Service's final endpoints.
	var stale []string
	envoyErr := harness.Eventually(*churnPatience, time.Second, func() error {
		hosts, err := clusterHosts(admin.base)
		if err != nil {
			return err
		}
		stale = stale[:0]
		for i := range n {
			want := []string{
				fmt.Sprintf("10.%d.%d.1:%d", i/250%250, i%250, churnBasePort+gens[i]),
				fmt.Sprintf("10.%d.%d.2:%d", i/250%250, i%250, churnBasePort+gens[i]),
			}
			cluster := fmt.Sprintf("%s/svc-%d/443", namespaceOf(i), i)
			if got := hosts[cluster]; !slices.Equal(got, want) {
				stale = append(stale, fmt.Sprintf("%s: %v, want %v", cluster, got, want))
			}
		}
		if len(stale) > 0 {
			return fmt.Errorf("%d clusters with other endpoints, first %s", len(stale), stale[0])
		}
		return nil
	})

	ledger.mu.Lock()
	var latencies []float64
	for _, u := range ledger.updates {
		if !u.applied.IsZero() {
			latencies = append(latencies, ms(u.applied.Sub(u.written)))
		}
	}
	written := len(ledger.updates)
	ledger.mu.Unlock()
	slices.Sort(latencies)
	window := t1.Sub(t0)
	cpu := float64(cpuAfter-cpuBefore) / clockTicks / window.Seconds() * 100
	b.ReportMetric(cpu, "tlsplane-cpu-%")
	b.ReportMetric(percentile(latencies, 50), "p50-ms")
	b.ReportMetric(percentile(latencies, 99), "p99-ms")
	b.ReportMetric(percentile(latencies, 100), "max-ms")
	b.ReportMetric(float64(written), "updates")
	b.ReportMetric(float64(len(latencies)), "applied")
	b.ReportMetric(float64(len(stale)), "envoy-stale")
	b.ReportMetric(passes, "passes")
	b.ReportMetric(ms(lag), "write-lag-max-ms")
	b.ReportMetric(sourceMs, "source-read-ms")
	b.ReportMetric(translateMs, "translate-ms")
	b.ReportMetric(publishMs, "publish-ms")
	b.Logf("services=%d rate=%d/s window=%v updates=%d applied=%d p50=%.1fms p99=%.1fms max=%.1fms tlsplane_cpu=%.1f%% passes=%.0f source_read_mean=%.2fms translate_mean=%.1fms publish_mean=%.1fms envoy_stale=%d write_lag_max=%.1fms load_before=%s load_after=%s",
		n, rate, window.Round(time.Millisecond), written, len(latencies), percentile(latencies, 50), percentile(latencies, 99),
		percentile(latencies, 100), cpu, passes, sourceMs, translateMs, publishMs, len(stale), ms(lag), load, loadAverage())
	if drainErr != nil {
		b.Errorf("not every update reached the delta ADS client within %v: %v", *churnPatience, drainErr)
	}
	if envoyErr != nil {
		b.Errorf("the Envoy does not hold every final endpoint within %v: %v\n%s", *churnPatience, envoyErr, envoy.LogTail(40))
	}
}

// writeChurnService writes Service i's Service, CA ConfigMap and
// BackendTLSPolicy; its EndpointSlice is a file of its own.
func writeChurnService(b *testing.B, dir string, i int, caPEM string) {
	ns, name := namespaceOf(i), fmt.Sprintf("svc-%d", i)
	if err := os.WriteFile(filepath.Join(dir, name+".yaml"), []byte(policedService(ns, name, caPEM, name+".example", "")), 0o644); err != nil {
		b.Fatal(err)
	}
}

func endpointSlice(i, gen int) string {
	return fmt.Sprintf(`apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata:
  namespace: %[1]s
  name: svc-%[2]d-x
  labels: {kubernetes.io/service-name: svc-%[2]d}
addressType: IPv4
ports: [{name: https, port: %[5]d}]
endpoints:
- addresses: ["10.%[3]d.%[4]d.1"]
- addresses: ["10.%[3]d.%[4]d.2"]
`, namespaceOf(i), i, i/250%250, i%250, churnBasePort+gen)
}

func writeEndpointSlice(b *testing.B, dir string, i, gen int) {
	if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("svc-%d-endpoints.yaml", i)), []byte(endpointSlice(i, gen)), 0o644); err != nil {
		b.Fatal(err)
	}
}

// writeEndpointSliceRecorded rewrites Service i's EndpointSlice file
// atomically (a hidden temporary file, then a rename), recording the
// update just before the rename.
func writeEndpointSliceRecorded(b *testing.B, dir string, i, gen int, l *churnLedger) {
	path := filepath.Join(dir, fmt.Sprintf("svc-%d-endpoints.yaml", i))
	tmp := filepath.Join(dir, fmt.Sprintf(".svc-%d-endpoints.tmp", i))
	if err := os.WriteFile(tmp, []byte(endpointSlice(i, gen)), 0o644); err != nil {
		b.Fatal(err)
	}
	l.wrote(i, gen)
	if err := os.Rename(tmp, path); err != nil {
		b.Fatal(err)
	}
}

// clockTicks is USER_HZ, the unit of /proc/PID/stat's times: 100 on every
// Linux architecture Go supports.
const clockTicks = 100

// cpuTicks is a process's user+system CPU time, in clock ticks, from
// /proc/PID/stat (fields 14 and 15).
func cpuTicks(b *testing.B, pid int) int64 {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		b.Fatal(err)
	}
	// The command name (field 2) may hold spaces; fields after it are plain.
	_, rest, ok := strings.Cut(string(raw), ") ")
	f := strings.Fields(rest)
	if !ok || len(f) < 13 {
		b.Fatalf("/proc/%d/stat: %q", pid, raw)
	}
	utime, err1 := strconv.ParseInt(f[11], 10, 64)
	stime, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		b.Fatalf("/proc/%d/stat: %q", pid, raw)
	}
	return utime + stime
}

// tlsplaneMetrics reads the unlabelled samples of tlsplane's /metrics.
func tlsplaneMetrics(b *testing.B, adminPort int) map[string]float64 {
	m, err := promMetrics("http://127.0.0.1:" + strconv.Itoa(adminPort) + "/metrics")
	if err != nil {
		b.Fatal(err)
	}
	return m
}

// clusterHosts reads Envoy's /clusters: each cluster's hosts (host:port),
// sorted.
func clusterHosts(base string) (map[string][]string, error) {
	client := &http.Client{Timeout: time.Minute}
	resp, err := client.Get(base + "/clusters")
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<30))
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("/clusters: %s", resp.Status)
	}
	out := map[string][]string{}
	for _, line := range strings.Split(string(body), "\n") {
		// cluster::host:port::stat::value, one line per host stat.
		parts := strings.Split(line, "::")
		if len(parts) != 4 || parts[2] != "cx_active" {
			continue
		}
		out[parts[0]] = append(out[parts[0]], parts[1])
	}
	for c := range out {
		slices.Sort(out[c])
	}
	return out, nil
}

// ms is a duration in milliseconds, for reports.
func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

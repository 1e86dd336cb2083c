package kubechurn

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tlsplane/tlsplane/e2e/apiserver"
	"github.com/tlsplane/tlsplane/e2e/harness"
)

var (
	churnServices = flag.Int("churn.services", 1000, "policy-targeted Services, each with one EndpointSlice")
	churnRate     = flag.Int("churn.rate", 50, "EndpointSlice updates per second")
	churnDuration = flag.Duration("churn.duration", 60*time.Second, "how long the updates go on")
	churnPatience = flag.Duration("churn.patience", 30*time.Second, "bound on the last updates' arrival after the churn, and on Envoy holding every final endpoint")
	churnSetup    = flag.Duration("churn.setup", 10*time.Minute, "bound on creating the objects and everything serving them")
)

// BenchmarkEndpointChurn/kube: -churn.services Services with a
// BackendTLSPolicy, a CA ConfigMap and an EndpointSlice each, created
// through client-go in a real kube-apiserver; the tlsplane binary in
// Kubernetes mode serving them to a real delta Envoy and to a delta ADS
// client; then -churn.rate EndpointSlice updates per second for
// -churn.duration, each changing an endpoint's address, round robin over
// the Services. An operation is one churn window.
//
// p50-ms, p99-ms and max-ms run from just before the update's API call to
// the ADS client receiving the load assignment that carries it; applied
// counts the updates received, of updates written. The *-cpu-% figures are
// each process's user + system CPU over the window (first update to the
// last arrival, or the patience), as a percentage of one core. At the end
// the real Envoy must hold every Service's final endpoint (envoy-held).
// delivered-p50-ms and delivered-p99-ms run from the API call to the API
// server's watch event reaching a watcher of the benchmark's own (on a
// connection of its own), after-p50-ms and after-p99-ms from that event to
// the ADS client: the API server's part and tlsplane's.
//
// Needs tlsplane, Envoy and the API server binaries (make
// kube-apiserver); skips without them, fails under CI=true.
func BenchmarkEndpointChurn(b *testing.B) {
	b.Run(fmt.Sprintf("kube/services=%d/rate=%d", *churnServices, *churnRate), func(b *testing.B) {
		benchmarkKubeChurn(b, *churnServices, *churnRate, *churnDuration)
	})
}

func benchmarkKubeChurn(b *testing.B, n, rate int, duration time.Duration) {
	_, envoyBin := binaries(b)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	s := startWorld(b, n)
	w, tp, logDir, setupCtx := s.w, s.tp, s.logDir, s.setup
	envoy := harness.StartEnvoy(b, harness.EnvoyOptions{
		Bin: envoyBin, LogDir: logDir, NodeID: "churn-envoy", Fleet: "churn",
		XDSAddress: tp.XDSAddress(), APIType: "DELTA_GRPC",
	})
	a := newArrivals()
	streamDone, err := watchLoadAssignments(ctx, tp.XDSAddress(), "churn-client", "churn", a)
	if err != nil {
		b.Fatal(err)
	}
	// Served: every load assignment on the ADS stream, every cluster active
	// in Envoy, and every policy's status written (the status writer's
	// requests would otherwise land in the window). Once a second: at
	// 10,000 Services each look lists 10,000 policies.
	if err := harness.Eventually(*churnSetup, time.Second, func() error {
		if tp.Exited() || envoy.Exited() {
			return errors.New("tlsplane or Envoy exited")
		}
		select {
		case err := <-streamDone:
			return fmt.Errorf("ADS stream ended: %w", err)
		default:
		}
		if !a.servedAll(w.gens) {
			return errors.New("not every load assignment on the ADS stream")
		}
		active, warming, err := envoyClusters(envoy)
		if err != nil {
			return err
		}
		// n and the static xDS cluster, and whatever else tlsplane serves
		// every fleet.
		if active < int64(n+1) || warming != 0 {
			return fmt.Errorf("Envoy: %d clusters active, %d warming, want at least %d and 0", active, warming, n+1)
		}
		withStatus, err := w.policiesWithStatus(setupCtx)
		if err != nil {
			return err
		}
		if withStatus != n {
			return fmt.Errorf("%d of %d policies have a status", withStatus, n)
		}
		return nil
	}); err != nil {
		b.Fatalf("not served: %v\n--- tlsplane:\n%s\n--- envoy:\n%s", err, tp.LogTail(30), envoy.LogTail(30))
	}
	b.Logf("served (ADS stream, Envoy, statuses) %s after tlsplane started", time.Since(s.tlsplaneStarted).Round(time.Millisecond))

	apiPID, etcdPID := s.api.PIDs()
	pids := map[string]int{"tlsplane": tp.PID(), "apiserver": apiPID, "etcd": etcdPID, "envoy": envoy.PID()}
	var latencies []time.Duration
	var written, outstanding int
	cpuSum := map[string]time.Duration{}
	var wallSum time.Duration
	translateBefore, publishBefore, err := passes(tp)
	if err != nil {
		b.Fatal(err)
	}
	// Where an update's time goes: the API server's watch event, as a
	// watcher of the benchmark's sees it, and tlsplane's publishes.
	delivered, err := watchDeliveries(ctx, w)
	if err != nil {
		b.Fatal(err)
	}
	rvs := map[[2]int]string{}
	published := &publishLog{path: tp.LogPath}
	if err := published.mark(); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for range b.N {
		m, err := startCPU(pids)
		if err != nil {
			b.Fatal(err)
		}
		written += churn(ctx, b, w, a, rate, duration, rvs)
		// The last updates' arrival, bounded.
		deadline := time.Now().Add(*churnPatience)
		for a.outstanding() > 0 && time.Now().Before(deadline) {
			select {
			case <-a.changed:
			case <-time.After(100 * time.Millisecond):
			case err := <-streamDone:
				b.Fatalf("ADS stream ended during the churn: %v", err)
			}
		}
		pct, wall, err := m.percentOfCore()
		if err != nil {
			b.Fatal(err)
		}
		for name, p := range pct {
			cpuSum[name] += time.Duration(p / 100 * float64(wall))
		}
		wallSum += wall
		outstanding = a.outstanding()
	}
	b.StopTimer()
	latencies = a.sorted()
	translateAfter, publishAfter, err := passes(tp)
	if err != nil {
		b.Fatal(err)
	}

	// The real Envoy, connected throughout, holds every final endpoint.
	var held int
	err = harness.Eventually(*churnPatience, time.Second, func() error {
		gens, err := envoyGenerations(envoy)
		if err != nil {
			return err
		}
		held = 0
		for i, g := range w.finalGenerations() {
			if got, ok := gens[i]; ok && got == g {
				held++
			}
		}
		if held != n {
			return fmt.Errorf("Envoy holds the final endpoint of %d of %d Services", held, n)
		}
		return nil
	})
	if err != nil {
		b.Logf("Envoy: %v", err)
	}

	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	for name := range pids {
		b.ReportMetric(100*float64(cpuSum[name])/float64(wallSum), name+"-cpu-%")
	}
	b.ReportMetric(ms(percentile(latencies, 50)), "p50-ms")
	b.ReportMetric(ms(percentile(latencies, 99)), "p99-ms")
	b.ReportMetric(ms(percentile(latencies, 100)), "max-ms")
	b.ReportMetric(float64(written), "updates")
	b.ReportMetric(float64(len(latencies)), "applied")
	b.ReportMetric(float64(held), "envoy-held")
	translations, translateMs := translateAfter.since(translateBefore)
	_, publishMs := publishAfter.since(publishBefore)
	b.Logf("window %s: %d updates written (%.1f/s), %d applied, %d not applied within %s; p50 %.0f ms p99 %.0f ms max %.0f ms; "+
		"%.0f translations (mean %.1f ms) and publishes (mean %.1f ms); Envoy holds %d of %d final endpoints; load %s",
		wallSum.Round(time.Millisecond), written, float64(written)/duration.Seconds()/float64(b.N), len(latencies), outstanding, *churnPatience,
		ms(percentile(latencies, 50)), ms(percentile(latencies, 99)), ms(percentile(latencies, 100)),
		translations, translateMs, publishMs, held, n, loadAverage())

	// The split: from the API call to the watch event, and from the watch
	// event to the ADS client; the intervals between tlsplane's publishes.
	var toEvent, afterEvent []time.Duration
	for _, u := range a.appliedUpdates() {
		if rv, ok := rvs[[2]int{u.service, u.gen}]; ok {
			if at, ok := delivered.of(rv, 0); ok {
				toEvent = append(toEvent, at.Sub(u.sent))
				afterEvent = append(afterEvent, u.at.Sub(at))
			}
		}
	}
	slices.Sort(toEvent)
	slices.Sort(afterEvent)
	b.ReportMetric(ms(percentile(toEvent, 50)), "delivered-p50-ms")
	b.ReportMetric(ms(percentile(toEvent, 99)), "delivered-p99-ms")
	b.ReportMetric(ms(percentile(afterEvent, 50)), "after-p50-ms")
	b.ReportMetric(ms(percentile(afterEvent, 99)), "after-p99-ms")
	var intervals []time.Duration
	if times, err := published.all(); err == nil {
		for k := 1; k < len(times); k++ {
			intervals = append(intervals, times[k].Sub(times[k-1]))
		}
	}
	slices.Sort(intervals)
	b.Logf("split (%d updates): the API server's watch event p50 %.0f ms p99 %.0f ms max %.0f ms after the call; "+
		"then to the ADS client p50 %.0f ms p99 %.0f ms max %.0f ms; tlsplane published %d times, every p50 %.0f ms p99 %.0f ms max %.0f ms",
		len(toEvent), ms(percentile(toEvent, 50)), ms(percentile(toEvent, 99)), ms(percentile(toEvent, 100)),
		ms(percentile(afterEvent, 50)), ms(percentile(afterEvent, 99)), ms(percentile(afterEvent, 100)),
		len(intervals)+1, ms(percentile(intervals, 50)), ms(percentile(intervals, 99)), ms(percentile(intervals, 100)))
}

// churn writes rate updates a second for duration, round robin over the
// Services, each to the next generation, and returns how many the API
// server accepted. Writes overlap (a slow answer does not slow the rate)
// up to a bound; it never runs past duration.
//
// rvs gets each accepted update's resourceVersion, by (Service, generation).
func churn(ctx context.Context, b *testing.B, w *world, a *arrivals, rate int, duration time.Duration, rvs map[[2]int]string) int {
	total := int(float64(rate) * duration.Seconds())
	interval := time.Second / time.Duration(rate)
	start := time.Now()
	inFlight := make(chan struct{}, 64)
	var wg sync.WaitGroup
	var mu sync.Mutex
	accepted, refused := 0, 0
	var lastErr error
	next := 0 // Service to update next
	for k := range total {
		if wait := time.Until(start.Add(time.Duration(k) * interval)); wait > 0 {
			time.Sleep(wait)
		}
		if time.Since(start) >= duration {
			break
		}
		i := next
		next = (next + 1) % w.n
		w.gens[i]++
		g := w.gens[i]
		select {
		case inFlight <- struct{}{}:
		case <-ctx.Done():
			b.Fatal(ctx.Err())
		}
		wg.Add(1)
		a.sent(i, g, time.Now())
		go func() {
			defer wg.Done()
			defer func() { <-inFlight }()
			rv, err := w.update(ctx, i, g)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				a.failed(i, g)
				refused++
				lastErr = err
				return
			}
			accepted++
			rvs[[2]int{i, g}] = rv
		}()
	}
	wg.Wait()
	if refused > 0 {
		b.Logf("%d updates refused by the API server; the last: %v", refused, lastErr)
	}
	return accepted
}

// binaries are tlsplane and Envoy (e2e/harness), and the API server's must be
// built; a missing one skips (fails under CI=true).
func binaries(b *testing.B) (tlsplane, envoy string) {
	tlsplane, envoy = harness.TLSPlaneBin(b), harness.EnvoyBin(b)
	for _, name := range []string{"etcd", "kube-apiserver"} {
		_, err := os.Stat(filepath.Join(apiserver.BinDir(), name))
		harness.Prerequisite(b, name+" not built (make kube-apiserver)", err)
	}
	return tlsplane, envoy
}

// loadAverage is /proc/loadavg's three averages: the figures are noisy on
// a shared machine.
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	return strings.Join(strings.Fields(string(b))[:3], " ")
}

package faults

import (
	"context"
	"fmt"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tlsplane/tlsplane/e2e/harness"
)

// The flood: tlsplane runs with `ulimit -n floodFileLimit`, so that a
// flood this machine can afford reaches it. Its defaults derive from that
// limit (832 connections, 208 handshakes, 104 and 13 per client address);
// the flood comes from 24 loopback addresses (more than the 16 that one
// address's share of handshakes lets fill them), at most floodDialRate
// connections a second, and holds floodWorkers connections at once:
// partial ClientHellos and, one in three, connections that send nothing.
const (
	floodFileLimit = 1024
	floodWorkers   = 1500
	floodSources   = 24
	floodDialRate  = 1500
	floodMaxDials  = 60000
	// floodHold is how long the flood dials once it holds its connections.
	floodHold = 8 * time.Second
	// handshakeDeadline is tlsplane's default --xds-handshake-timeout.
	handshakeDeadline = 5 * time.Second
	// configWithin is the promise: an authenticated Envoy started during
	// the flood has its clusters within this long of its start.
	configWithin = time.Second
	// healthWithin bounds every /healthz answer during the flood.
	healthWithin = time.Second
	// rssBound is the chart's memory limit (charts/tlsplane resources).
	rssBound = 512 << 20
)

// TestXDSPortHoldsUnderAFlood floods the mutual-TLS xDS port of a
// tlsplane whose file limit is 1024 with clients that never complete a
// handshake, and measures what the issue promised: an authenticated real
// Envoy started during the flood has its configuration within a second,
// /healthz answers, tlsplane's open files stay under its limit and its
// resident memory under the chart's 512Mi, and once the flood stops it
// serves a new Envoy without a restart, the refusals visible in /metrics.
func TestXDSPortHoldsUnderAFlood(t *testing.T) {
	e := newEnv(t, "")
	e.apiType = "GRPC"
	e.fileLimit = floodFileLimit
	x := newXDSPKI(t, e.root)
	serverCert, serverKey := x.issue(t, "tlsplane-xds", true, "")
	fleetCert, fleetKey := x.issue(t, "envoy-faults", false, "spiffe://cluster.local/fleet/faults")
	fleetTLS := &harness.XDSTLS{CertFile: fleetCert, KeyFile: fleetKey, CAFile: x.caFile, ServerName: xdsServerName}
	e.tlsplaneArgs = []string{"--xds-tls-cert", serverCert, "--xds-tls-key", serverKey, "--xds-client-ca", x.caFile}

	port := e.startBackend(t, "flood")
	harness.WriteAtomic(t, filepath.Join(e.manifestDir, "flood.yaml"), manifest(t, backendObjects("flood", port, e.pki.caPEM, hostMain)))
	e.startTLSPlane(t)
	pid := e.tlsplane.PID()
	if limit, err := fileLimitOf(pid); err != nil || limit != floodFileLimit {
		t.Fatalf("tlsplane's file limit: %d, %v; the test needs %d", limit, err, floodFileLimit)
	}

	baseline, err := e.timeToConfig(t, "envoy", fleetTLS, 30*time.Second)
	if err != nil {
		t.Fatalf("before the flood: %v", err)
	}
	e.waitServed(t, clusterName("flood"), "flood", hostMain)

	sampler := sampleProcess(pid, 50*time.Millisecond)
	health := probeHealth(e.tlsplaneURL("/healthz"), 100*time.Millisecond)
	var sources []string
	for i := range floodSources {
		sources = append(sources, fmt.Sprintf("127.0.0.%d", i+2))
	}
	f := &flood{target: fmt.Sprintf("127.0.0.1:%d", e.xdsPort), sources: sources, workers: floodWorkers,
		idleEvery: 3, dialsPerSecond: floodDialRate, maxDials: floodMaxDials}
	f.start(context.Background())
	stopped := false
	stopFlood := func() {
		if !stopped {
			stopped = true
			f.stop()
		}
	}
	defer stopFlood()
	// Every worker has dialed once: the flood holds what tlsplane let it.
	if err := harness.Eventually(10*time.Second, 50*time.Millisecond, func() error {
		if n := f.dials.Load(); n < floodWorkers {
			return fmt.Errorf("%d of %d flood workers dialed", n, floodWorkers)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	floodStart := time.Now()

	during, errDuring := e.timeToConfig(t, "envoy-during-flood", fleetTLS, 10*time.Second)
	if errDuring != nil {
		t.Errorf("an authenticated Envoy started during the flood: %v", errDuring)
	} else if during > configWithin {
		t.Errorf("an authenticated Envoy started during the flood had its clusters after %s, want within %s (%s without the flood)", during, configWithin, baseline)
	}
	// The Envoy connected before the flood is still served.
	if got, err := e.request(clusterName("flood")); err != nil || got.SNI != hostMain {
		t.Errorf("the Envoy connected before the flood, during it: %+v, %v", got, err)
	}
	time.Sleep(time.Until(floodStart.Add(floodHold)))

	// The flood stops dialing but holds what it has open: tlsplane itself
	// closes those at the handshake deadline, and recovers without a
	// restart.
	f.hold()
	floodOpen := f.open.Load()
	if err := harness.Eventually(handshakeDeadline+5*time.Second, 100*time.Millisecond, func() error {
		n, err := e.metricValue("tlsplane_xds_connections")
		if err != nil {
			return err
		}
		if open := f.open.Load(); n != 2 || open != 0 {
			return fmt.Errorf("tlsplane_xds_connections = %v, want the 2 Envoys'; %d flood connections open", n, open)
		}
		return nil
	}); err != nil {
		t.Errorf("after the flood stopped dialing: %v", err)
	}
	stopFlood()
	after, errAfter := e.timeToConfig(t, "envoy-after-flood", fleetTLS, 10*time.Second)
	if errAfter != nil {
		t.Errorf("an Envoy started after the flood: %v", errAfter)
	}
	peakFDs, peakRSS, samples, sampleErrs := sampler.stop()
	firstFDs, firstRSS := sampler.firstFDs, sampler.firstRSS // stopped: no more writes
	hs := health.stop()
	if e.tlsplane.Exited() {
		t.Fatalf("tlsplane exited\n--- log:\n%s", e.tlsplane.LogTail(30))
	}

	refused := map[string]float64{}
	for _, reason := range []string{"total", "per_source", "handshake_evicted", "handshake_timeout"} {
		if refused[reason], err = e.metricValue("tlsplane_xds_connections_refused_total", `reason="`+reason+`"`); err != nil {
			t.Errorf("after the flood: %v", err)
		}
	}
	t.Logf("tlsplane file limit %d; flood: %d dials from %d addresses (%d failed, %d closed by tlsplane), at most %d open at once, %d open when it stopped dialing",
		floodFileLimit, f.dials.Load(), floodSources, f.failed.Load(), f.closedByServer.Load(), f.peakOpen.Load(), floodOpen)
	t.Logf("tlsplane over %d samples: %d open files before the flood, peak %d (limit %d); VmRSS %.1f MiB before, peak %.1f MiB (bound %d MiB)",
		samples, firstFDs, peakFDs, floodFileLimit, float64(firstRSS)/(1<<20), float64(peakRSS)/(1<<20), rssBound>>20)
	t.Logf("Envoy start to clusters: %s before the flood, %s during, %s after", baseline, during, after)
	t.Logf("/healthz during the flood: %s", hs)
	t.Logf("refused: %v", refused)

	if samples == 0 {
		t.Errorf("no sample of tlsplane's /proc: %v", sampleErrs)
	}
	if peakFDs >= floodFileLimit {
		t.Errorf("tlsplane held %d open files, its limit is %d", peakFDs, floodFileLimit)
	}
	if peakRSS >= rssBound {
		t.Errorf("tlsplane's VmRSS reached %.1f MiB, the chart's limit is %d MiB", float64(peakRSS)/(1<<20), rssBound>>20)
	}
	if hs.failed > 0 || hs.max > healthWithin || hs.count == 0 {
		t.Errorf("/healthz during the flood: %s; want every probe answered within %s", hs, healthWithin)
	}
	if refused["handshake_evicted"] == 0 || refused["handshake_timeout"] == 0 {
		t.Errorf("tlsplane_xds_connections_refused_total: %v; want handshakes evicted (the flood) and timed out (what it held at the end)", refused)
	}
	if strings.Contains(e.tlsplane.Log(), "too many open files") {
		t.Errorf("tlsplane ran out of file descriptors:\n%s", e.tlsplane.LogTail(10))
	}
}

// timeToConfig starts an Envoy of fleet faults with the xDS client TLS
// given, and returns how long from its start until it has the fleet's
// cluster (a CDS update applied, the cluster active beside the static xDS
// one). The Envoy first started becomes e.envoy.
func (e *env) timeToConfig(t *testing.T, name string, xdsTLS *harness.XDSTLS, timeout time.Duration) (time.Duration, error) {
	t.Helper()
	start := time.Now()
	envoy := e.startEnvoyWith(t, envoyOpts{name: name, fleet: "faults", xdsTLS: xdsTLS})
	if e.envoy == nil {
		e.envoy = envoy
	}
	err := harness.Eventually(timeout, 10*time.Millisecond, func() error {
		body, err := harness.HTTPGet(envoy.AdminURL("/stats?filter=cluster_manager"))
		if err != nil {
			return err
		}
		stats, err := harness.ParseStats(body)
		if err != nil {
			return err
		}
		if stats["cluster_manager.cds.update_success"] < 1 || stats["cluster_manager.active_clusters"] < 2 {
			return fmt.Errorf("%s: CDS updates %d, active clusters %d", name, stats["cluster_manager.cds.update_success"], stats["cluster_manager.active_clusters"])
		}
		return nil
	})
	return time.Since(start), err
}

// healthStats summarise /healthz probes.
type healthStats struct {
	count, failed int
	max, median   time.Duration
	firstError    string
}

func (h healthStats) String() string {
	s := fmt.Sprintf("%d probes, %d failed, latency median %s, max %s", h.count, h.failed, h.median, h.max)
	if h.firstError != "" {
		s += " (first failure: " + h.firstError + ")"
	}
	return s
}

// healthProbe GETs url every interval until stop, timing each answer.
type healthProbe struct {
	stopped chan struct{}
	done    chan struct{}
	mu      sync.Mutex
	stats   healthStats
	times   []time.Duration
}

func probeHealth(url string, interval time.Duration) *healthProbe {
	p := &healthProbe{stopped: make(chan struct{}), done: make(chan struct{})}
	client := &http.Client{Timeout: 3 * time.Second}
	go func() {
		defer close(p.done)
		for {
			start := time.Now()
			resp, err := client.Get(url)
			took := time.Since(start)
			if err == nil {
				resp.Body.Close()
				if resp.StatusCode != http.StatusOK {
					err = fmt.Errorf("%s", resp.Status)
				}
			}
			p.mu.Lock()
			p.stats.count++
			p.times = append(p.times, took)
			if err != nil {
				p.stats.failed++
				if p.stats.firstError == "" {
					p.stats.firstError = err.Error()
				}
			}
			p.mu.Unlock()
			select {
			case <-p.stopped:
				return
			case <-time.After(interval):
			}
		}
	}()
	return p
}

func (p *healthProbe) stop() healthStats {
	close(p.stopped)
	<-p.done
	p.mu.Lock()
	defer p.mu.Unlock()
	slices.Sort(p.times)
	if n := len(p.times); n > 0 {
		p.stats.median, p.stats.max = p.times[n/2], p.times[n-1]
	}
	return p.stats
}

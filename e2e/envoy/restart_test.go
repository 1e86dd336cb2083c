package envoy

import (
	"fmt"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"
)

// trafficLoop sends requests to cluster every interval until stopped, and
// counts the ones that were not a 200 from the backend.
type trafficLoop struct {
	stopc    chan struct{}
	done     chan struct{}
	stopOnce sync.Once

	mu       sync.Mutex
	sent     int
	failures []string
}

func startTrafficLoop(e *env, cluster string, interval, max time.Duration) *trafficLoop {
	l := &trafficLoop{stopc: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(l.done)
		deadline := time.Now().Add(max)
		for time.Now().Before(deadline) {
			r, err := e.tryRequest(cluster, "/restart")
			l.mu.Lock()
			l.sent++
			if err != nil {
				l.failures = append(l.failures, err.Error())
			} else if r.status != 200 {
				l.failures = append(l.failures, r.String())
			}
			l.mu.Unlock()
			select {
			case <-l.stopc:
				return
			case <-time.After(interval):
			}
		}
	}()
	return l
}

func (l *trafficLoop) stop() (sent int, failures []string) {
	l.stopOnce.Do(func() { close(l.stopc) })
	<-l.done
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.sent, l.failures
}

// xdsState is what must not move when Envoy reconnects to a restarted
// tlsplane: cluster churn counters and every xDS subscription's version.
func xdsState(stats map[string]int64) map[string]int64 {
	out := map[string]int64{}
	for k, v := range stats {
		switch {
		case k == "cluster_manager.cluster_modified", k == "cluster_manager.cluster_added", k == "cluster_manager.cluster_removed",
			strings.HasSuffix(k, ".update_rejected"):
			out[k] = v
		case strings.HasSuffix(k, ".version") && (strings.HasPrefix(k, "cluster_manager.cds.") || strings.HasPrefix(k, "sds.") || strings.HasPrefix(k, "cluster.")):
			out[k] = v
		}
	}
	return out
}

func diffStats(before, after map[string]int64) []string {
	var d []string
	for k, v := range before {
		if after[k] != v {
			d = append(d, fmt.Sprintf("%s: %d -> %d", k, v, after[k]))
		}
	}
	sort.Strings(d)
	return d
}

func waitGauge(e *env, name string, want int64, timeout time.Duration) error {
	return eventually(timeout, 100*time.Millisecond, func() error {
		st, err := e.envoy.stats()
		if err != nil {
			return err
		}
		if st[name] != want {
			return fmt.Errorf("%s = %d, want %d", name, st[name], want)
		}
		return nil
	})
}

// restart: tlsplane stops and starts again while Envoy carries traffic; no
// request fails, and the reconnected Envoy is sent nothing that changes.
func restart(t *testing.T, e *env, b *backends, s *summary) {
	cluster := clusterName("happy-path", svcPortNumber)
	e.waitCluster(t, cluster, activeTLS(hostAbc, b.main.port))
	if err := waitGauge(e, "control_plane.connected_state", 1, applyTimeout); err != nil {
		t.Fatal(err)
	}
	before, err := e.envoy.stats()
	if err != nil {
		t.Fatal(err)
	}
	loop := startTrafficLoop(e, cluster, 50*time.Millisecond, 90*time.Second)
	defer loop.stop() // a Fatal below must not leave it running

	time.Sleep(500 * time.Millisecond)
	e.tlsplane.stop(10 * time.Second)
	if err := waitGauge(e, "control_plane.connected_state", 0, applyTimeout); err != nil {
		t.Fatalf("Envoy did not notice tlsplane stopping: %v", err)
	}
	time.Sleep(time.Second) // Envoy serves on its own for a while
	e.startTLSPlane(t)
	if err := waitGauge(e, "control_plane.connected_state", 1, applyTimeout); err != nil {
		t.Fatalf("Envoy did not reconnect: %v", err)
	}
	time.Sleep(3 * time.Second) // long enough for tlsplane's debounce and a push
	sent, failures := loop.stop()

	after, err := e.envoy.stats()
	if err != nil {
		t.Fatal(err)
	}
	s.note("tlsplane-restart", "%d requests, %d failed; cds.update_success %d -> %d, update_attempt %d -> %d",
		sent, len(failures), before["cluster_manager.cds.update_success"], after["cluster_manager.cds.update_success"],
		before["cluster_manager.cds.update_attempt"], after["cluster_manager.cds.update_attempt"])
	if len(failures) > 0 {
		t.Errorf("%d of %d requests failed across the restart, first: %s", len(failures), sent, failures[0])
	}
	if sent < 20 {
		t.Errorf("only %d requests were sent across the restart", sent)
	}
	if d := diffStats(xdsState(before), xdsState(after)); len(d) > 0 {
		t.Errorf("Envoy received changed resources after reconnecting:\n%s", strings.Join(d, "\n"))
	}
}

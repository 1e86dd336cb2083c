package envoy

import (
	"errors"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/tlsplane/tlsplane/e2e/harness"
)

// startTrafficLoop sends GET path to cluster through Envoy every interval;
// anything but a 200 from the backend is a failure.
func startTrafficLoop(e *env, cluster, path string, interval, max time.Duration) *harness.TrafficLoop {
	return harness.StartTrafficLoop(interval, max, func() error {
		r, err := e.tryRequest(cluster, path)
		if err == nil && r.Status != 200 {
			err = errors.New(r.String())
		}
		return err
	})
}

// churn is what must not move when Envoy reconnects to a restarted
// tlsplane: cluster churn and rejections. With state-of-the-world ADS also
// the CDS subscription's version: every CDS response carries every
// cluster. An EDS or SDS subscription's version gauge is the version of the
// last response naming its resource, and SotW sends a load assignment or
// secret only when it changed (or is asked for anew, as on reconnecting),
// so like delta's they are not compared: resources' own versions are.
func churn(stats map[string]int64, apiType string) map[string]int64 {
	out := map[string]int64{}
	for k, v := range stats {
		switch {
		case k == "cluster_manager.cluster_modified", k == "cluster_manager.cluster_added", k == "cluster_manager.cluster_removed",
			strings.HasSuffix(k, ".update_rejected"):
			out[k] = v
		case apiType == "GRPC" && k == "cluster_manager.cds.version":
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
	return harness.Eventually(timeout, 100*time.Millisecond, func() error {
		st, err := e.envoy.Stats()
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
	before, err := e.envoy.Stats()
	if err != nil {
		t.Fatal(err)
	}
	versionsBefore, err := e.envoy.ResourceVersions()
	if err != nil {
		t.Fatal(err)
	}
	loop := startTrafficLoop(e, cluster, "/restart", 50*time.Millisecond, 90*time.Second)
	defer loop.Stop() // a Fatal below must not leave it running

	time.Sleep(500 * time.Millisecond)
	e.tlsplane.Stop(10 * time.Second)
	if err := waitGauge(e, "control_plane.connected_state", 0, applyTimeout); err != nil {
		t.Fatalf("Envoy did not notice tlsplane stopping: %v", err)
	}
	time.Sleep(time.Second) // Envoy serves on its own for a while
	e.startTLSPlane(t)
	if err := waitGauge(e, "control_plane.connected_state", 1, applyTimeout); err != nil {
		t.Fatalf("Envoy did not reconnect: %v", err)
	}
	time.Sleep(3 * time.Second) // long enough for tlsplane's debounce and a push
	sent, failures := loop.Stop()

	after, err := e.envoy.Stats()
	if err != nil {
		t.Fatal(err)
	}
	s.note("tlsplane-restart", "%d requests, %d failed; responses applied after reconnecting: cds %d, eds %d, sds %d",
		sent, len(failures),
		after["cluster_manager.cds.update_success"]-before["cluster_manager.cds.update_success"],
		harness.SumStats(after, "cluster.", ".update_success")-harness.SumStats(before, "cluster.", ".update_success"),
		harness.SumStats(after, "sds.", ".update_success")-harness.SumStats(before, "sds.", ".update_success"))
	if len(failures) > 0 {
		t.Errorf("%d of %d requests failed across the restart, first: %s", len(failures), sent, failures[0])
	}
	if sent < 20 {
		t.Errorf("only %d requests were sent across the restart", sent)
	}
	if d := diffStats(churn(before, e.apiType), churn(after, e.apiType)); len(d) > 0 {
		t.Errorf("Envoy's xDS stats moved after reconnecting:\n%s", strings.Join(d, "\n"))
	}
	versionsAfter, err := e.envoy.ResourceVersions()
	if err != nil {
		t.Fatal(err)
	}
	if len(versionsBefore) == 0 {
		t.Fatalf("no dynamic resources in Envoy's config_dump")
	}
	var changed []string
	for name, v := range versionsBefore {
		if versionsAfter[name] != v {
			changed = append(changed, fmt.Sprintf("%s: %q -> %q", name, v, versionsAfter[name]))
		}
	}
	for name := range versionsAfter {
		if _, ok := versionsBefore[name]; !ok {
			changed = append(changed, name+": new")
		}
	}
	sort.Strings(changed)
	if len(changed) > 0 {
		t.Errorf("Envoy holds resources with other versions after reconnecting:\n%s", strings.Join(changed, "\n"))
	}
}

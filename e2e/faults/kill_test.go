package faults

import (
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/tlsplane/tlsplane/e2e/harness"
)

// startTrafficLoop sends a request to cluster through Envoy every interval.
func startTrafficLoop(e *env, cluster string, interval, max time.Duration) *harness.TrafficLoop {
	return harness.StartTrafficLoop(interval, max, func() error { _, err := e.request(cluster); return err })
}

// xdsStats are Envoy's CDS, EDS and SDS counters and version gauges.
func xdsStats(stats map[string]int64) map[string]int64 {
	out := map[string]int64{}
	for k, v := range stats {
		xds := strings.HasPrefix(k, "cluster_manager.cds.") || strings.HasPrefix(k, "sds.") ||
			(strings.HasPrefix(k, "cluster.") && strings.Contains(k, "/"))
		switch {
		case xds && (strings.HasSuffix(k, ".update_success") || strings.HasSuffix(k, ".update_rejected") || strings.HasSuffix(k, ".version")),
			k == "cluster_manager.cluster_modified", k == "cluster_manager.cluster_added", k == "cluster_manager.cluster_removed":
			out[k] = v
		}
	}
	return out
}

// reconnectChanges lists what moved beyond one response per subscription
// on the new stream: with SotW go-control-plane answers a new stream's
// first request with the current snapshot (same versions), and with delta
// it answers the first wildcard request even when nothing changed (an
// empty response); Envoy accepts either (update_success + 1) without
// modifying anything. Versions, rejections and cluster churn must not
// move, and resourceVersions checks each resource's own version.
func reconnectChanges(before, after map[string]int64) []string {
	var d []string
	for k, v := range before {
		delta := after[k] - v
		if strings.HasSuffix(k, ".update_success") && (delta == 0 || delta == 1) {
			continue
		}
		if delta != 0 {
			d = append(d, fmt.Sprintf("%s: %d -> %d", k, v, after[k]))
		}
	}
	for k, v := range after {
		if _, ok := before[k]; !ok {
			d = append(d, fmt.Sprintf("%s: new, %d", k, v))
		}
	}
	sort.Strings(d)
	return d
}

// kill -9 of tlsplane while Envoy carries traffic: Envoy serves on its
// last configuration, and the restarted tlsplane sends nothing new.
func TestKill9WhileTrafficFlows(t *testing.T) {
	for _, apiType := range []string{"GRPC", "DELTA_GRPC"} {
		t.Run(apiType, func(t *testing.T) { kill9WhileTrafficFlows(t, apiType) })
	}
}

func kill9WhileTrafficFlows(t *testing.T, apiType string) {
	e := newEnv(t, "")
	e.apiType = apiType
	port := e.startBackend(t, "steady")
	harness.WriteAtomic(t, filepath.Join(e.manifestDir, "steady.yaml"), manifest(t, backendObjects("steady", port, e.pki.caPEM, hostMain)))
	e.startTLSPlane(t)
	e.startEnvoy(t)
	cluster := clusterName("steady")
	e.waitServed(t, cluster, "steady", hostMain)
	e.waitEnvoyStat(t, "control_plane.connected_state", 1)
	time.Sleep(time.Second) // the SDS and EDS responses that follow CDS
	before := xdsStats(e.envoyStats(t))
	versionsBefore := e.resourceVersions(t)
	if len(versionsBefore) < 3 {
		t.Fatalf("Envoy holds %v, want the cluster, its endpoints and its CA", versionsBefore)
	}
	if before["cluster_manager.cds.update_success"] == 0 || harness.SumStats(before, "sds.", ".update_success") == 0 {
		t.Fatalf("no CDS or SDS update before the kill: %v", before)
	}

	loop := startTrafficLoop(e, cluster, 20*time.Millisecond, 60*time.Second)
	defer loop.Stop()
	time.Sleep(500 * time.Millisecond)
	e.tlsplane.Kill()
	e.waitEnvoyStat(t, "control_plane.connected_state", 0)
	time.Sleep(2 * time.Second) // Envoy alone, retrying the ADS stream
	e.startTLSPlane(t)
	e.waitEnvoyStat(t, "control_plane.connected_state", 1)
	time.Sleep(3 * time.Second) // past the debounce, time for any push
	sent, failures := loop.Stop()

	if len(failures) > 0 {
		t.Errorf("%d of %d requests failed across kill -9 and restart; first: %s", len(failures), sent, failures[0])
	}
	if sent < 50 {
		t.Errorf("only %d requests across the kill and restart", sent)
	}
	after := xdsStats(e.envoyStats(t))
	if d := reconnectChanges(before, after); len(d) > 0 {
		t.Errorf("Envoy's xDS stats moved after reconnecting to the restarted tlsplane:\n%s", strings.Join(d, "\n"))
	}
	versionsAfter := e.resourceVersions(t)
	for name, v := range versionsBefore {
		if versionsAfter[name] != v {
			t.Errorf("%s: version %q before the kill, %q after", name, v, versionsAfter[name])
		}
	}
	if len(versionsAfter) != len(versionsBefore) {
		t.Errorf("Envoy holds %v after the restart, %v before", versionsAfter, versionsBefore)
	}
	t.Logf("%d requests, none failed; Envoy's versions, rejections and cluster churn unchanged (%d stats compared); re-sent: cds %d, sds %d",
		sent, len(before), after["cluster_manager.cds.update_success"]-before["cluster_manager.cds.update_success"],
		harness.SumStats(after, "sds.", ".update_success")-harness.SumStats(before, "sds.", ".update_success"))
}

// resourceVersions maps each dynamic resource Envoy holds ("cds/NAME",
// "eds/NAME", "sds/NAME") to the version it came with.
func (e *env) resourceVersions(t *testing.T) map[string]string {
	t.Helper()
	versions, err := e.envoy.ResourceVersions()
	if err != nil {
		t.Fatal(err)
	}
	return versions
}

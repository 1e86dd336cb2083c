package kubechurn

import (
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/tlsplane/tlsplane/e2e/harness"
)

// BenchmarkIdleEdits's own logic, without processes.

func TestIdleEditsTakeTurnsOnDistinctServices(t *testing.T) {
	const n = 1000
	seen := map[int]bool{}
	for e := range 300 {
		ed := newIdleEdit(e, n)
		if want := idleKinds[e%3]; ed.kind != want {
			t.Errorf("edit %d is a %s, want %s", e, ed.kind, want)
		}
		if seen[ed.service] {
			t.Errorf("edit %d: Service %d edited twice", e, ed.service)
		}
		seen[ed.service] = true
	}
}

// Each kind is applied when, and only when, its own stats say so.
func TestIdleEditDone(t *testing.T) {
	ca := newIdleEdit(0, 1000)
	secret := "sds." + caSecretName(ca.service)
	if before, now := map[string]int64{secret + ".update_success": 1}, map[string]int64{secret + ".update_success": 1}; ca.done(before, now) {
		t.Error("CA rotation applied without a new SDS update")
	}
	if !ca.done(map[string]int64{secret + ".update_success": 1}, map[string]int64{secret + ".update_success": 2}) {
		t.Error("CA rotation not applied after an SDS update")
	}
	if len(ca.stamps) != 1 || ca.stamps[0] != secret+".update_time" {
		t.Errorf("CA rotation stamps %v", ca.stamps)
	}

	policy := newIdleEdit(1, 1000)
	before := map[string]int64{"cluster_manager.cluster_modified": 5, "cluster_manager.warming_clusters": 0}
	for _, tc := range []struct {
		modified, warming int64
		want              bool
	}{{5, 0, false}, {6, 1, false}, {6, 0, true}} {
		now := map[string]int64{"cluster_manager.cluster_modified": tc.modified, "cluster_manager.warming_clusters": tc.warming}
		if got := policy.done(before, now); got != tc.want {
			t.Errorf("policy edit: modified %d warming %d: applied %v, want %v", tc.modified, tc.warming, got, tc.want)
		}
	}
	cluster := "cluster." + clusterName(policy.service)
	if len(policy.stamps) != 2 || policy.stamps[0] != "cluster_manager.cds.update_time" || policy.stamps[1] != cluster+".update_time" {
		t.Errorf("policy edit stamps %v", policy.stamps)
	}

	endpoint := newIdleEdit(2, 1000)
	cluster = "cluster." + clusterName(endpoint.service)
	if !endpoint.done(map[string]int64{cluster + ".update_success": 3}, map[string]int64{cluster + ".update_success": 4}) {
		t.Error("EndpointSlice change not applied after an EDS update")
	}
}

// The bootstrap keeps the edited clusters' and secrets' stats and no
// other cluster's.
func TestStatsBootstrapKeepsOnlyTheEditedStats(t *testing.T) {
	boot := statsBootstrap("127.0.0.1:18000", 19000, []string{clusterName(7), clusterName(7), clusterName(12)}, []string{caSecretName(3)})
	patterns := boot["stats_config"].(map[string]any)["stats_matcher"].(map[string]any)["inclusion_list"].(map[string]any)["patterns"].([]map[string]any)
	kept := func(stat string) bool {
		for _, p := range patterns {
			if prefix, ok := p["prefix"].(string); ok && strings.HasPrefix(stat, prefix) {
				return true
			}
			if re, ok := p["safe_regex"].(map[string]any); ok && regexp.MustCompile(re["regex"].(string)).MatchString(stat) {
				return true
			}
		}
		return false
	}
	for _, stat := range []string{
		"cluster." + clusterName(7) + ".update_time", "cluster." + clusterName(12) + ".update_success",
		"sds." + caSecretName(3) + ".update_time", "cluster_manager.cds.update_time", "cluster_manager.warming_clusters",
	} {
		if !kept(stat) {
			t.Errorf("%s not kept", stat)
		}
	}
	for _, stat := range []string{
		"cluster." + clusterName(8) + ".update_time", "cluster." + clusterName(7) + ".upstream_cx_total",
		"cluster." + clusterName(17) + ".update_time",
		"sds." + caSecretName(4) + ".update_time", "sds." + caSecretName(3) + ".update_rejected",
	} {
		if kept(stat) {
			t.Errorf("%s kept", stat)
		}
	}
	if got := boot["node"].(map[string]any)["cluster"]; got != "idle" {
		t.Errorf("fleet %v", got)
	}
}

func TestPrometheusSamples(t *testing.T) {
	body := `# TYPE envoy_cluster_update_time gauge
envoy_cluster_update_time{envoy_cluster_name="churn-7/svc-7/443"} 1764103760123
envoy_cluster_manager_warming_clusters{} 0
envoy_sds_update_success{envoy_xds_resource_name="CA/churn-3/configmap/svc-3-ca"} 2
not a sample
`
	got := harness.PrometheusSamples(body)
	for name, want := range map[string]int64{
		clusterStat(clusterName(7), "update_time").sample:    1764103760123,
		managerStat("warming_clusters").sample:               0,
		secretStat(caSecretName(3), "update_success").sample: 2,
	} {
		if v, ok := got[name]; !ok || v != want {
			t.Errorf("%s = %d, %v; want %d", name, v, ok, want)
		}
	}
	if len(got) != 3 {
		t.Errorf("samples %v", got)
	}
}

func TestUnlabelledSamplesAndHistograms(t *testing.T) {
	m := unlabelledSamples(`# HELP x
tlsplane_change_wait_seconds_sum 0.25
tlsplane_change_wait_seconds_count 10
tlsplane_change_wait_seconds_bucket{le="0.001"} 9
tlsplane_translation_duration_seconds_sum 1
tlsplane_translation_duration_seconds_count 4
`)
	if _, ok := m[`tlsplane_change_wait_seconds_bucket{le="0.001"}`]; ok {
		t.Error("labelled sample kept")
	}
	before := histogramOf(m, changeWaitSeconds)
	after := histogram{count: 14, sum: 0.29}
	d := after.minus(before)
	if d.count != 4 || d.meanMs() < 9.99 || d.meanMs() > 10.01 {
		t.Errorf("4 passes of 10 ms read as %+v, mean %v ms", d, d.meanMs())
	}
	if got := (histogram{}).meanMs(); got != 0 {
		t.Errorf("mean of nothing = %v", got)
	}
	if got := histogramOf(m, translationSeconds).add(histogram{1, 1}); got != (histogram{5, 2}) {
		t.Errorf("add = %+v", got)
	}
}

func TestFirstPublish(t *testing.T) {
	log := `time=2026-11-25T20:49:20.485Z level=INFO msg="policy status changed" stage=status
time=2026-11-25T20:49:20.664Z level=INFO msg="snapshot published" stage=snapshots cds_version=2186ddea8e50f224 fleets_updated=1
time=2026-11-25T20:49:21.001Z level=INFO msg="snapshot published" stage=snapshots fleets_updated=1
`
	at, ok := firstPublish(strings.NewReader(log))
	if want := time.Date(2026, 11, 25, 20, 49, 20, 664e6, time.UTC); !ok || !at.Equal(want) {
		t.Errorf("firstPublish = %v, %v; want %v", at, ok, want)
	}
	if got := publishTimes(strings.NewReader(log), 0); len(got) != 2 || !got[1].Equal(time.Date(2026, 11, 25, 20, 49, 21, 1e6, time.UTC)) {
		t.Errorf("publishTimes = %v", got)
	}
	if _, ok := firstPublish(strings.NewReader("time=2026-11-25T20:49:20.485Z level=INFO msg=\"Envoy connected\"\n")); ok {
		t.Error("a publish found in a log without one")
	}
}

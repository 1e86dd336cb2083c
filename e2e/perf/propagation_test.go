package perf

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tlsplane/tlsplane/e2e/harness"
)

var (
	propagation   = flag.Bool("perf.propagation", false, "run TestPropagation (needs the tlsplane and Envoy binaries)")
	clusterList   = flag.String("perf.clusters", "100,1000", "comma-separated cluster counts")
	editCount     = flag.Int("perf.edits", 50, "edits per cluster count, in turn a CA rotation, a policy edit and an endpoint change")
	idle          = flag.Duration("perf.idle", 150*time.Millisecond, "quiet before each edit, longer than tlsplane's quiet period (100 ms): an idle world, one edit at a time")
	apiType       = flag.String("perf.api", "DELTA_GRPC", "Envoy's ADS api_type: DELTA_GRPC or GRPC")
	resultsPath   = flag.String("perf.out", "", "write the results as JSON to this file")
	patience      = flag.Duration("perf.patience", 10*time.Second, "bound on one edit's propagation")
	pollEvery     = flag.Duration("perf.poll", 2*time.Millisecond, "least interval between reads of Envoy's stats while an edit propagates")
	firstPoll     = flag.Duration("perf.firstpoll", 100*time.Millisecond, "wait this long after an edit before reading Envoy's stats: each read occupies Envoy's main thread, which applies xDS (28 ms a read at 10,000 clusters), and Envoy's own update_time stamps say when it applied the edit however late it is read")
	statsRead     = flag.String("perf.read", "prometheus", "how Envoy's stats are read while an edit propagates: prometheus (/stats/prometheus?filter=, 3-10 ms at 10,000 clusters) or text (/stats?filter=, 50-120 ms there, whatever the filter matches)")
	dirResyncFlag = flag.Duration("perf.resync", 0, "tlsplane's --dir-resync (0: its default, one minute); 1ms walks the directory back to back, so every edit lands during a walk (issue 37)")
	worldSize     = flag.Int("perf.world", 0, "Services in the directory when more than -perf.clusters: the others are in namespaces the Envoy's fleet is not granted (--fleet-namespaces), so they are read, walked and translated but not served to it")
	paced         = flag.Bool("perf.paced", true, "wait at least as long as the last read of Envoy's stats took before the next, so the reads leave Envoy's main thread free at least half the time")
)

// Result is one cluster count's measurement.
type Result struct {
	Clusters int    `json:"clusters"`
	API      string `json:"api"`
	Edits    int    `json:"edits"`
	// Latencies are each edit's time from file write to Envoy applying it,
	// in milliseconds, sorted: by Envoy's own update_time stamps (whole
	// milliseconds) where it keeps them.
	Latencies []float64 `json:"latencies_ms"`
	// PolledP50 and PolledP99 are the same edits seen applied by polling
	// Envoy's stats: an upper bound, each read costing Envoy's main thread.
	PolledP50 float64 `json:"polled_p50_ms,omitempty"`
	PolledP99 float64 `json:"polled_p99_ms,omitempty"`
	// Stalled says which edit Envoy did not apply within the bound; the
	// latencies are those of the edits before it.
	Stalled string  `json:"stalled,omitempty"`
	P50     float64 `json:"p50_ms"`
	P99     float64 `json:"p99_ms"`
	Max     float64 `json:"max_ms"`
	// InitialMs is from tlsplane's start to Envoy holding every cluster,
	// none warming, and every CA secret.
	InitialMs float64 `json:"initial_ms"`
	// Resident memory after the edits, MiB.
	TLSPlaneRSS float64 `json:"tlsplane_rss_mib"`
	EnvoyRSS    float64 `json:"envoy_rss_mib"`
	LoadAverage string  `json:"load_average"`
	// Mean time per translation and per publish inside tlsplane over the
	// run (its /metrics), in milliseconds: where the latency goes.
	TranslateMs float64 `json:"translate_mean_ms"`
	// StatsReadMs is the mean time of one read of Envoy's stats while
	// waiting for an edit; StatsRead says which read (prometheus, text).
	StatsReadMs float64 `json:"stats_read_mean_ms"`
	StatsRead   string  `json:"stats_read,omitempty"`
	// ResolutionMs is the mean, over the edits, of the time from the start
	// of the last read that did not see the edit (or from the write) to the
	// end of the read that did: each latency overstates the true one by at
	// most that much.
	ResolutionMs float64 `json:"resolution_mean_ms,omitempty"`
	PublishMs    float64 `json:"publish_mean_ms"`
	// MainThreadP50 and MainThreadP99 are, for route edits, the time from
	// the write to Envoy's main thread having applied RDS (its
	// config_reload_time_ms), before the workers have the routes.
	MainThreadP50 float64 `json:"rds_applied_p50_ms,omitempty"`
	MainThreadP99 float64 `json:"rds_applied_p99_ms,omitempty"`
	// SourceReadMs is the mean time of one read of the directory after
	// events (tlsplane_source_read_duration_seconds); 0 for a tlsplane
	// without that metric.
	SourceReadMs float64 `json:"source_read_mean_ms,omitempty"`
	// WaitMs is the mean of tlsplane's own waiting per pass, from the
	// first change a pass takes in to the pass (tlsplane_change_wait_seconds).
	WaitMs float64 `json:"wait_mean_ms,omitempty"`
	// Walks is the number of periodic walks of the directory during the
	// edits (tlsplane_source_walk_duration_seconds), WalkMs their mean:
	// with -perf.resync=1ms every edit lands during one.
	Walks  float64 `json:"walks,omitempty"`
	WalkMs float64 `json:"walk_mean_ms,omitempty"`
	// ByKind splits the edits by what they change: ca (a CA rotation),
	// policy (a policy edit), endpoint (an EndpointSlice change).
	ByKind map[string]KindResult `json:"by_kind,omitempty"`
}

// KindResult is one kind of edit's latencies.
type KindResult struct {
	Edits int     `json:"edits"`
	P50   float64 `json:"p50_ms"`
	P99   float64 `json:"p99_ms"`
	Max   float64 `json:"max_ms"`
}

// editKinds are the edits of TestPropagation, in turn.
var editKinds = []string{"ca", "policy", "endpoint"}

func TestPropagation(t *testing.T) {
	if !*propagation {
		t.Skip("a measurement: run with -perf.propagation (make bench)")
	}
	tlsplaneBin, envoyBin := measuredBinaries(t)
	if *statsRead != "prometheus" && *statsRead != "text" {
		t.Fatalf("-perf.read=%q: prometheus or text", *statsRead)
	}
	var results []Result
	for _, s := range strings.Split(*clusterList, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n <= 0 {
			t.Fatalf("-perf.clusters: %q", s)
		}
		t.Run(fmt.Sprintf("clusters=%d", n), func(t *testing.T) {
			r := measure(t, tlsplaneBin, envoyBin, n)
			t.Logf("world=%d resync=%s walks=%.0f walk_mean=%.1fms", max(*worldSize, n), *dirResyncFlag, r.Walks, r.WalkMs)
			t.Logf("clusters=%d api=%s edits=%d p50=%.1fms p99=%.1fms max=%.1fms (polled: p50=%.1fms p99=%.1fms) initial=%.0fms tlsplane_rss=%.0fMiB envoy_rss=%.0fMiB source_read_mean=%.2fms translate_mean=%.1fms publish_mean=%.1fms envoy_stats_read=%.1fms (%s) resolution_mean=%.1fms load=%s stalled=%q",
				r.Clusters, r.API, r.Edits, r.P50, r.P99, r.Max, r.PolledP50, r.PolledP99, r.InitialMs, r.TLSPlaneRSS, r.EnvoyRSS, r.SourceReadMs, r.TranslateMs, r.PublishMs, r.StatsReadMs, r.StatsRead, r.ResolutionMs, r.LoadAverage, r.Stalled)
			for _, kind := range editKinds {
				k := r.ByKind[kind]
				t.Logf("clusters=%d %s: edits=%d p50=%.1fms p99=%.1fms max=%.1fms (tlsplane: wait_mean=%.3fms source_read_mean=%.2fms translate_mean=%.2fms publish_mean=%.2fms)",
					r.Clusters, kind, k.Edits, k.P50, k.P99, k.Max, r.WaitMs, r.SourceReadMs, r.TranslateMs, r.PublishMs)
			}
			results = append(results, r)
		})
	}
	if *resultsPath != "" {
		b, err := json.MarshalIndent(results, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(*resultsPath, append(b, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func measure(t *testing.T, tlsplaneBin, envoyBin string, n int) Result {
	dir := t.TempDir()
	manifests := filepath.Join(dir, "manifests")
	if err := os.Mkdir(manifests, 0o755); err != nil {
		t.Fatal(err)
	}
	cas := [2]string{string(harness.NewAuthority(t, "perf-ca-one").PEM), string(harness.NewAuthority(t, "perf-ca-two").PEM)}
	caOf := make([]int, n) // which CA each Service's ConfigMap holds
	sniGen, epGen := make([]int, n), make([]int, n)
	for i := range n {
		writeService(t, manifests, i, cas[caOf[i]], sniGen[i], epGen[i])
	}
	var tlsplaneArgs []string
	if *dirResyncFlag > 0 {
		tlsplaneArgs = append(tlsplaneArgs, "--dir-resync", dirResyncFlag.String())
	}
	if *worldSize > n {
		for i := n; i < *worldSize; i++ {
			writeServiceIn(t, manifests, outsideNamespaceOf(i), i, cas[0], 0, 0)
		}
		tlsplaneArgs = append(tlsplaneArgs, "--fleet-namespaces", plainFleet+"="+strings.Join(fleetNamespaces(), ","))
	}

	var watched []string // the clusters an edit changes
	for e := range *editCount {
		if k := editKinds[e%len(editKinds)]; k == "endpoint" || k == "policy" {
			i := editedService(e, n)
			watched = append(watched, fmt.Sprintf("%s/svc-%d/443", namespaceOf(i), i))
		}
	}
	start := time.Now()
	served := serveFleetWith(t, dir, manifests, tlsplaneBin, envoyBin, *apiType, n, plainFleet, tlsplaneArgs, watched...)
	tp, envoy, admin, tlsplaneAdmin := served.tp, served.envoy, served.admin, served.tlsplaneAdmin
	initial := time.Since(start)

	var latencies, polled []float64
	byKind := map[string][]float64{}
	var stalled string
	// Each read of Envoy's stats bounds how precisely "applied" is seen.
	var statsCalls int
	var statsTime, resolution time.Duration
	// tlsplane's own figures are over the edits only, not the first sync.
	metricsURL := "http://127.0.0.1:" + strconv.Itoa(tlsplaneAdmin) + "/metrics"
	atStart, err := promMetrics(metricsURL)
	if err != nil {
		t.Fatal(err)
	}
	for e := range *editCount {
		i := editedService(e, n)
		var (
			stats []watchedStat
			done  func(before, now map[string]int64) bool
			// stamps are Envoy's gauges of when it applied an update
			// (update_time, ms since the epoch): applied is the latest.
			stamps []string
		)
		kind := editKinds[e%len(editKinds)]
		cluster := fmt.Sprintf("%s/svc-%d/443", namespaceOf(i), i)
		clusterStamp := watchedStat{"cluster." + cluster + ".update_time", `envoy_cluster_update_time{envoy_cluster_name="` + cluster + `"}`}
		switch kind {
		case "ca":
			// CA rotation: Envoy applies the new SDS secret.
			caOf[i] = 1 - caOf[i]
			stat := "sds." + caSecretName(i) + ".update_success"
			stamp := watchedStat{"sds." + caSecretName(i) + ".update_time", `envoy_sds_update_time{envoy_xds_resource_name="` + caSecretName(i) + `"}`}
			stats = []watchedStat{{stat, `envoy_sds_update_success{envoy_xds_resource_name="` + caSecretName(i) + `"}`}, stamp}
			stamps = []string{stamp.stat}
			done = func(before, now map[string]int64) bool { return now[stat] > before[stat] }
		case "endpoint":
			// EndpointSlice change: Envoy applies the cluster's new load
			// assignment.
			epGen[i]++
			stat := "cluster." + cluster + ".update_success"
			stats = []watchedStat{{stat, `envoy_cluster_update_success{envoy_cluster_name="` + cluster + `"}`}, clusterStamp}
			stamps = []string{clusterStamp.stat}
			done = func(before, now map[string]int64) bool { return now[stat] > before[stat] }
		default:
			// Policy edit (SNI): Envoy replaces the cluster and warms it;
			// it is applied when both its CDS and its load assignment are.
			sniGen[i]++
			stats = []watchedStat{
				{"cluster_manager.cluster_modified", "envoy_cluster_manager_cluster_modified"},
				{"cluster_manager.warming_clusters", "envoy_cluster_manager_warming_clusters"},
				{"cluster_manager.cds.update_time", "envoy_cluster_manager_cds_update_time"},
				clusterStamp,
			}
			stamps = []string{"cluster_manager.cds.update_time", clusterStamp.stat}
			done = func(before, now map[string]int64) bool {
				return now["cluster_manager.cluster_modified"] > before["cluster_manager.cluster_modified"] && now["cluster_manager.warming_clusters"] == 0
			}
		}
		time.Sleep(*idle)
		before, err := admin.watch(*statsRead, stats)
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range stats {
			if _, ok := before[w.stat]; !ok {
				t.Fatalf("Envoy's %s stats have no %s (read as %q): %v", *statsRead, w.stat, w.sample, before)
			}
		}
		written := writeService(t, manifests, i, cas[caOf[i]], sniGen[i], epGen[i])
		var applied time.Time
		deadline := written.Add(*patience)
		lastMiss := written // start of the last read that did not see the edit
		var now map[string]int64
		time.Sleep(*firstPoll)
		for {
			asked := time.Now()
			now, err = admin.watch(*statsRead, stats)
			took := time.Since(asked)
			statsCalls++
			statsTime += took
			if err == nil && done(before, now) {
				applied = time.Now()
				break
			}
			if err == nil {
				lastMiss = asked // a failed read tells nothing
			}
			if asked.After(deadline) {
				break
			}
			wait := *pollEvery
			if *paced {
				wait = max(wait, took)
			}
			time.Sleep(wait)
		}
		if applied.IsZero() {
			// A result, not a test failure: the report shows where a size
			// stops keeping up. Later edits are not measured, since this
			// one's late arrival would pass for theirs.
			t.Logf("edit %d (Service %d) not applied within %s: %v %v", e, i, *patience, now, err)
			stalled = fmt.Sprintf("edit %d of %d not applied within %s", e+1, *editCount, *patience)
			break
		}
		resolution += applied.Sub(lastMiss)
		polledMs := float64(applied.Sub(written).Microseconds()) / 1000
		polled = append(polled, polledMs)
		// Envoy's own record of when it applied the edit, to the
		// millisecond: the polling above only bounds it from above.
		var at int64
		for _, st := range stamps {
			at = max(at, now[st])
		}
		ms := float64(at - written.UnixMilli())
		if at == 0 || ms > polledMs+1 {
			t.Fatalf("edit %d: Envoy's update_time stamps %v (%v) disagree with the edit seen applied %.1fms after it", e, stamps, now, polledMs)
		}
		ms = max(ms, 0) // the stamp's millisecond began before the write
		if testing.Verbose() {
			t.Logf("edit %d (%s, Service %d): %.0f ms", e, kind, i, ms)
		}
		latencies = append(latencies, ms)
		byKind[kind] = append(byKind[kind], ms)
	}
	slices.Sort(latencies)
	slices.Sort(polled)
	r := Result{
		PolledP50: percentile(polled, 50), PolledP99: percentile(polled, 99),
		Clusters: n, API: *apiType, Edits: len(latencies), Latencies: latencies, Stalled: stalled,
		P50: percentile(latencies, 50), P99: percentile(latencies, 99), Max: percentile(latencies, 100),
		InitialMs:   float64(initial.Milliseconds()),
		TLSPlaneRSS: rssMiB(tp.PID()), EnvoyRSS: rssMiB(envoy.PID()),
		LoadAverage:  loadAverage(),
		StatsReadMs:  float64(statsTime.Microseconds()) / 1000 / float64(max(statsCalls, 1)),
		StatsRead:    *statsRead,
		ResolutionMs: float64(resolution.Microseconds()) / 1000 / float64(max(len(latencies), 1)),
		ByKind:       map[string]KindResult{},
	}
	for kind, l := range byKind {
		slices.Sort(l)
		r.ByKind[kind] = KindResult{Edits: len(l), P50: percentile(l, 50), P99: percentile(l, 99), Max: percentile(l, 100)}
	}
	if m, err := promMetrics(metricsURL); err == nil {
		r.TranslateMs = meanSince(atStart, m, "tlsplane_translation_duration_seconds") * 1000
		r.PublishMs = meanSince(atStart, m, "tlsplane_snapshot_publish_duration_seconds") * 1000
		r.SourceReadMs = meanSince(atStart, m, "tlsplane_source_read_duration_seconds") * 1000
		r.WaitMs = meanSince(atStart, m, "tlsplane_change_wait_seconds") * 1000
		r.Walks = m["tlsplane_source_walk_duration_seconds_count"] - atStart["tlsplane_source_walk_duration_seconds_count"]
		r.WalkMs = meanSince(atStart, m, "tlsplane_source_walk_duration_seconds") * 1000
	}
	return r
}

// promMetrics reads unlabelled samples of a Prometheus text exposition.
func promMetrics(url string) (map[string]float64, error) {
	resp, err := httpClient.Get(url)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return nil, err
	}
	out := map[string]float64{}
	for _, line := range strings.Split(string(body), "\n") {
		name, value, ok := strings.Cut(line, " ")
		if !ok || strings.HasPrefix(line, "#") {
			continue
		}
		if v, err := strconv.ParseFloat(value, 64); err == nil {
			out[name] = v
		}
	}
	return out, nil
}

// mean of a histogram: its sum over its count.
func mean(m map[string]float64, histogram string) float64 {
	if c := m[histogram+"_count"]; c > 0 {
		return m[histogram+"_sum"] / c
	}
	return 0
}

// meanSince is a histogram's mean over what it observed between two reads.
func meanSince(before, after map[string]float64, histogram string) float64 {
	if c := after[histogram+"_count"] - before[histogram+"_count"]; c > 0 {
		return (after[histogram+"_sum"] - before[histogram+"_sum"]) / c
	}
	return 0
}

// editedService is the Service edit e of a run over n changes: spread
// over the Services, each known before the run.
func editedService(e, n int) int { return (e * 7919) % n }

// percentile is the nearest-rank percentile of sorted values.
// percentile of sorted values; 0 for none.
func percentile(sorted []float64, p int) float64 {
	if len(sorted) == 0 {
		return 0
	}
	rank := (p*len(sorted) + 99) / 100
	return sorted[max(rank, 1)-1]
}

func caSecretName(i int) string {
	return fmt.Sprintf("CA/%s/configmap/svc-%d-ca", namespaceOf(i), i)
}

func namespaceOf(i int) string { return fmt.Sprintf("team-%d", i%50) }

// fleetNamespaces are every namespaceOf: what -perf.world grants the
// measured Envoy's fleet.
func fleetNamespaces() []string {
	ns := make([]string, 50)
	for i := range ns {
		ns[i] = namespaceOf(i)
	}
	return ns
}

// outsideNamespaceOf is the namespace of -perf.world's Service i, outside
// the measured fleet's grant.
func outsideNamespaceOf(i int) string { return fmt.Sprintf("outside-%d", i%50) }

// writeService writes Service i's manifest (Service, EndpointSlice, CA
// ConfigMap, BackendTLSPolicy) atomically and returns when it was renamed
// into place; sniGen names the policy's hostname, epGen the endpoints.
func writeService(t *testing.T, dir string, i int, caPEM string, sniGen, epGen int) time.Time {
	return writeServiceIn(t, dir, namespaceOf(i), i, caPEM, sniGen, epGen)
}

// writeServiceIn is writeService in namespace ns.
func writeServiceIn(t *testing.T, dir, ns string, i int, caPEM string, sniGen, epGen int) time.Time {
	name := fmt.Sprintf("svc-%d", i)
	manifest := policedService(ns, name, caPEM, fmt.Sprintf("%s-%d.example", name, sniGen),
		`tlsplane.io/alpnProtocols: "h2,http/1.1"`) + fmt.Sprintf(`---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata:
  namespace: %[1]s
  name: %[2]s-x
  labels: {kubernetes.io/service-name: %[2]s}
addressType: IPv4
ports: [{name: https, port: 8443}]
endpoints:
- addresses: ["10.%[3]d.%[4]d.%[5]d"]
- addresses: ["10.%[3]d.%[4]d.2"]
`, ns, name, i/250%250, i%250, 10+epGen%200)
	return writeAtomically(t, dir, name, manifest)
}

// policedService is Service ns/name (port 443), its CA ConfigMap holding
// caPEM, and a BackendTLSPolicy validating hostname against it, with the
// option (one YAML line; "" for none), as YAML documents.
func policedService(ns, name, caPEM, hostname, option string) string {
	var b strings.Builder
	fmt.Fprintf(&b, `apiVersion: v1
kind: Service
metadata: {namespace: %[1]s, name: %[2]s}
spec:
  ports: [{name: https, port: 443}]
---
apiVersion: v1
kind: ConfigMap
metadata: {namespace: %[1]s, name: %[2]s-ca}
data:
  ca.crt: |
`, ns, name)
	for _, line := range strings.Split(strings.TrimRight(caPEM, "\n"), "\n") {
		b.WriteString("    " + line + "\n")
	}
	fmt.Fprintf(&b, `---
apiVersion: gateway.networking.k8s.io/v1
kind: BackendTLSPolicy
metadata: {namespace: %[1]s, name: %[2]s-tls}
spec:
  targetRefs: [{group: "", kind: Service, name: %[2]s}]
  validation:
    hostname: %[3]s
    caCertificateRefs: [{group: "", kind: ConfigMap, name: %[2]s-ca}]
`, ns, name, hostname)
	if option != "" {
		b.WriteString("  options:\n    " + option + "\n")
	}
	return b.String()
}

// writeAtomically renames name.yaml into place in dir, as editors and
// ConfigMap mounts do, and returns when it did.
func writeAtomically(t *testing.T, dir, name, content string) time.Time {
	path := filepath.Join(dir, name+".yaml")
	tmp := filepath.Join(dir, "."+name+".tmp")
	if err := os.WriteFile(tmp, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
	return time.Now()
}

type object = map[string]any

// bootstrap: ADS to tlsplane (node fleet "perf"), admin on loopback, no
// listener: only configuration is measured. Envoy keeps only the stats the
// measurement reads: with every cluster's stats, one read of /stats takes
// ~50 ms at 1,000 clusters on Envoy's main thread, the thread that applies
// xDS updates, so the polling itself would delay what it measures.
//
// A Gateway fleet's Envoy also takes its listeners over ADS.
//
// Of the clusters' stats it keeps only the load-assignment updates of those
// named in watched: every cluster's would slow each read.
func bootstrap(fleet, apiType string, xdsPort, adminPort int, watched ...string) object {
	addr := func(port int) object {
		return object{"socket_address": object{"address": "127.0.0.1", "port_value": port}}
	}
	dynamic := object{
		"ads_config": object{
			"api_type": apiType, "transport_api_version": "V3",
			"grpc_services":                  []object{{"envoy_grpc": object{"cluster_name": "tlsplane"}}},
			"set_node_on_first_message_only": true,
		},
		"cds_config": object{"ads": object{}, "resource_api_version": "V3"},
	}
	if fleet != plainFleet {
		dynamic["lds_config"] = object{"ads": object{}, "resource_api_version": "V3"}
	}
	patterns := []object{
		{"prefix": "cluster_manager."}, {"prefix": "control_plane."},
		{"safe_regex": object{"regex": `^sds\..*\.update_(success|time)$`}},
		// When RDS was last applied, on the main thread (a Gateway's).
		{"safe_regex": object{"regex": `^http\..*\.rds\..*\.config_reload_time_ms$`}},
		// How long RDS updates took to apply there (a histogram).
		{"safe_regex": object{"regex": `^http\..*\.rds\..*\.update_duration$`}},
	}
	if len(watched) > 0 {
		quoted := make([]string, len(watched))
		for i, c := range watched {
			quoted[i] = regexp.QuoteMeta(c)
		}
		// A watched cluster's load assignment applied (EDS).
		patterns = append(patterns, object{"safe_regex": object{"regex": `^cluster\.(` + strings.Join(quoted, "|") + `)\.update_(success|time)$`}})
	}
	return object{
		"node":  object{"id": "perf-envoy", "cluster": fleet},
		"admin": object{"address": addr(adminPort)},
		// Envoy keeps only the stats the measurement reads: a read of
		// /stats walks every stat on Envoy's main thread, the thread that
		// applies xDS. Of each secret's SDS stats only update_success is
		// read: at 10,000 secrets the others made a read take 166 ms.
		"stats_config":      object{"stats_matcher": object{"inclusion_list": object{"patterns": patterns}}},
		"dynamic_resources": dynamic,
		"static_resources": object{
			"clusters": []object{{
				"name": "tlsplane", "type": "STATIC", "connect_timeout": "1s",
				"typed_extension_protocol_options": object{
					"envoy.extensions.upstreams.http.v3.HttpProtocolOptions": object{
						"@type":                "type.googleapis.com/envoy.extensions.upstreams.http.v3.HttpProtocolOptions",
						"explicit_http_config": object{"http2_protocol_options": object{}},
					},
				},
				"load_assignment": object{
					"cluster_name": "tlsplane",
					"endpoints":    []object{{"lb_endpoints": []object{{"endpoint": object{"address": addr(xdsPort)}}}}},
				},
			}},
		},
	}
}

func writeJSON(t testing.TB, path string, v any) {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// adminClient reads Envoy's admin stats.
type adminClient struct{ base string }

var httpClient = &http.Client{Timeout: 5 * time.Second}

// stats returns the counters and gauges matching filter (an RE2 regex).
func (a adminClient) stats(filter string) (map[string]int64, error) {
	body, err := a.get("/stats?filter=" + url.QueryEscape(filter))
	if err != nil {
		return nil, err
	}
	return harness.ParseStats([]byte(body))
}

// get is the body of an admin page, bounded.
func (a adminClient) get(path string) (string, error) {
	resp, err := httpClient.Get(a.base + path)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return "", err
	}
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("%s: %s", path, resp.Status)
	}
	return string(body), nil
}

// watchedStat is one of Envoy's stats by its name and by its sample in the
// Prometheus exposition (tags become labels there).
type watchedStat struct{ stat, sample string }

// watch reads the watched stats, by stat name. Both reads run on Envoy's
// main thread, the thread that applies xDS. The text read (/stats) took
// 50-120 ms at 10,000 clusters whatever the filter matched, paid per kind
// of stat (seemingly a visit of every stats scope for each); the Prometheus
// read of the same stats took 3-10 ms there (TestStatsReadCost).
func (a adminClient) watch(how string, stats []watchedStat) (map[string]int64, error) {
	names := make([]string, len(stats))
	for i, w := range stats {
		names[i] = regexp.QuoteMeta(w.stat)
	}
	filter := "^(" + strings.Join(names, "|") + ")$"
	if how == "text" {
		return a.stats(filter)
	}
	samples, err := a.prometheus(filter)
	if err != nil {
		return nil, err
	}
	out := map[string]int64{}
	for _, w := range stats {
		if v, ok := samples[w.sample]; ok {
			out[w.stat] = v
		}
	}
	return out, nil
}

// prometheus returns the samples of the stats matching filter (an RE2 regex
// on stat names), by metric name and labels ("{}" dropped).
func (a adminClient) prometheus(filter string) (map[string]int64, error) {
	body, err := a.get("/stats/prometheus?filter=" + url.QueryEscape(filter))
	if err != nil {
		return nil, err
	}
	return harness.PrometheusSamples(body), nil
}

// rssMiB is a process's resident memory from /proc.
func rssMiB(pid int) float64 { return procStatusMiB(pid, "VmRSS:") }

// procStatusMiB is a kB field of /proc/PID/status (VmRSS:, VmHWM:) in MiB;
// 0 when it cannot be read.
func procStatusMiB(pid int, field string) float64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, field); ok {
			kb, _ := strconv.ParseFloat(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 64)
			return kb / 1024
		}
	}
	return 0
}

func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return ""
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return ""
	}
	return strings.Join(f[:3], " ")
}

package kubechurn

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tlsplane/tlsplane/e2e/harness"
)

// statsEnvoy is a real delta Envoy that keeps only the stats the idle-world
// edits read (statsBootstrap): every stat a read of Envoy's admin walks
// costs its main thread, the thread that applies xDS.
type statsEnvoy struct {
	*harness.Process
	AdminPort int
}

// AdminURL is path on Envoy's admin listener.
func (e *statsEnvoy) AdminURL(path string) string {
	return "http://127.0.0.1:" + strconv.Itoa(e.AdminPort) + path
}

// startStatsEnvoy starts Envoy with statsBootstrap, as the harness starts
// one (one worker, no hot restart), its log in logDir.
func startStatsEnvoy(b *testing.B, bin, logDir, xdsAddress string, clusters, secrets []string) *statsEnvoy {
	b.Helper()
	e := &statsEnvoy{AdminPort: harness.FreePort(b)}
	boot, err := json.MarshalIndent(statsBootstrap(xdsAddress, e.AdminPort, clusters, secrets), "", "  ")
	if err != nil {
		b.Fatal(err)
	}
	path := filepath.Join(logDir, "envoy-bootstrap.json")
	if err := os.WriteFile(path, boot, 0o644); err != nil {
		b.Fatal(err)
	}
	e.Process = harness.Start(b, logDir, "envoy", bin, "-c", path, "--disable-hot-restart",
		"--base-id", strconv.Itoa(e.AdminPort), "--concurrency", "1", "-l", "info", "--drain-time-s", "1")
	return e
}

// statsBootstrap: delta ADS to tlsplane (node fleet "idle"), clusters only
// (no listener: only configuration is measured), admin on loopback. Of the
// stats it keeps the cluster manager's, the ADS connection's, and the
// update_(success|time) of the clusters and CA secrets named: those the
// edits change, known before the run. Every cluster's would make each read
// walk 10,000 scopes.
func statsBootstrap(xdsAddress string, adminPort int, clusters, secrets []string) map[string]any {
	type object = map[string]any
	host, port, _ := strings.Cut(xdsAddress, ":")
	xdsPort, _ := strconv.Atoi(port)
	addr := func(host string, port int) object {
		return object{"socket_address": object{"address": host, "port_value": port}}
	}
	patterns := []object{{"prefix": "cluster_manager."}, {"prefix": "control_plane."}}
	if len(secrets) > 0 {
		patterns = append(patterns, object{"safe_regex": object{"regex": `^sds\.(` + alternation(secrets) + `)\.update_(success|time)$`}})
	}
	if len(clusters) > 0 {
		patterns = append(patterns, object{"safe_regex": object{"regex": `^cluster\.(` + alternation(clusters) + `)\.update_(success|time)$`}})
	}
	return object{
		"node":         object{"id": "idle-envoy", "cluster": "idle"},
		"admin":        object{"address": addr("127.0.0.1", adminPort)},
		"stats_config": object{"stats_matcher": object{"inclusion_list": object{"patterns": patterns}}},
		"dynamic_resources": object{
			"ads_config": object{
				"api_type": "DELTA_GRPC", "transport_api_version": "V3",
				"grpc_services":                  []object{{"envoy_grpc": object{"cluster_name": "tlsplane"}}},
				"set_node_on_first_message_only": true,
			},
			"cds_config": object{"ads": object{}, "resource_api_version": "V3"},
		},
		"static_resources": object{"clusters": []object{{
			"name": "tlsplane", "type": "STATIC", "connect_timeout": "1s",
			"typed_extension_protocol_options": object{
				"envoy.extensions.upstreams.http.v3.HttpProtocolOptions": object{
					"@type":                "type.googleapis.com/envoy.extensions.upstreams.http.v3.HttpProtocolOptions",
					"explicit_http_config": object{"http2_protocol_options": object{}},
				},
			},
			"load_assignment": object{
				"cluster_name": "tlsplane",
				"endpoints":    []object{{"lb_endpoints": []object{{"endpoint": object{"address": addr(host, xdsPort)}}}}},
			},
		}}},
	}
}

// alternation is names quoted for a regular expression, joined by "|",
// each once.
func alternation(names []string) string {
	seen := map[string]bool{}
	var quoted []string
	for _, n := range names {
		if !seen[n] {
			seen[n] = true
			quoted = append(quoted, regexp.QuoteMeta(n))
		}
	}
	return strings.Join(quoted, "|")
}

// watchedStat is one of Envoy's stats by its name and by its sample in the
// Prometheus exposition (tags become labels there).
type watchedStat struct{ stat, sample string }

func clusterStat(cluster, suffix string) watchedStat {
	return watchedStat{"cluster." + cluster + "." + suffix, `envoy_cluster_` + suffix + `{envoy_cluster_name="` + cluster + `"}`}
}

func secretStat(secret, suffix string) watchedStat {
	return watchedStat{"sds." + secret + "." + suffix, `envoy_sds_` + suffix + `{envoy_xds_resource_name="` + secret + `"}`}
}

func managerStat(suffix string) watchedStat {
	return watchedStat{"cluster_manager." + suffix, "envoy_cluster_manager_" + strings.ReplaceAll(suffix, ".", "_")}
}

// statsClient is a bounded client: a read of a 10,000-cluster Envoy's admin
// may wait behind an xDS update on its main thread.
var statsClient = &http.Client{Timeout: 10 * time.Second}

// readStats reads the watched stats, by stat name, from Envoy's Prometheus
// exposition filtered to them: at 10,000 clusters the text /stats took
// 50-120 ms a read whatever the filter matched, the Prometheus read of the
// same stats 3-10 ms (e2e/perf's TestStatsReadCost). Both run on Envoy's
// main thread.
func readStats(e adminURLer, stats []watchedStat) (map[string]int64, error) {
	names := make([]string, len(stats))
	for i, w := range stats {
		names[i] = regexp.QuoteMeta(w.stat)
	}
	resp, err := statsClient.Get(e.AdminURL("/stats/prometheus?filter=" + url.QueryEscape("^("+strings.Join(names, "|")+")$")))
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("/stats/prometheus: %s", resp.Status)
	}
	samples := harness.PrometheusSamples(string(body))
	out := map[string]int64{}
	for _, w := range stats {
		if v, ok := samples[w.sample]; ok {
			out[w.stat] = v
		}
	}
	return out, nil
}

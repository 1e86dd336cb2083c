package routesplit

import (
	"encoding/json"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tlsplane/tlsplane/e2e/harness"
)

// envoy is one running Envoy fed by an adsServer.
type envoy struct {
	*harness.Process
	adminPort int
}

// startEnvoy starts Envoy with listeners from LDS over delta ADS to xds,
// admin on loopback. Stats are flushed only when admin is read (no timer
// competes with xDS on the main thread), and histograms are merged then:
// update_duration is read after an edit is applied. Default tag
// extraction is off so every stat keeps its plain name.
func startEnvoy(t testing.TB, bin, dir, xds string) *envoy {
	t.Helper()
	host, portText, err := net.SplitHostPort(xds)
	if err != nil {
		t.Fatal(err)
	}
	xdsPort, _ := strconv.Atoi(portText)
	e := &envoy{adminPort: harness.FreePort(t)}
	addr := func(h string, p int) map[string]any {
		return map[string]any{"socket_address": map[string]any{"address": h, "port_value": p}}
	}
	ads := map[string]any{"ads": map[string]any{}, "resource_api_version": "V3"}
	boot := map[string]any{
		"node":                 map[string]any{"id": "routesplit", "cluster": "routesplit"},
		"admin":                map[string]any{"address": addr("127.0.0.1", e.adminPort)},
		"stats_flush_on_admin": true,
		"stats_config":         map[string]any{"use_all_default_tags": false},
		"dynamic_resources": map[string]any{
			"ads_config": map[string]any{
				"api_type": "DELTA_GRPC", "transport_api_version": "V3",
				"grpc_services":                  []any{map[string]any{"envoy_grpc": map[string]any{"cluster_name": "xds"}}},
				"set_node_on_first_message_only": true,
			},
			"lds_config": ads,
		},
		"static_resources": map[string]any{"clusters": []any{map[string]any{
			"name": "xds", "type": "STATIC", "connect_timeout": "1s",
			"typed_extension_protocol_options": map[string]any{
				"envoy.extensions.upstreams.http.v3.HttpProtocolOptions": map[string]any{
					"@type":                "type.googleapis.com/envoy.extensions.upstreams.http.v3.HttpProtocolOptions",
					"explicit_http_config": map[string]any{"http2_protocol_options": map[string]any{}},
				},
			},
			"load_assignment": map[string]any{"cluster_name": "xds", "endpoints": []any{map[string]any{
				"lb_endpoints": []any{map[string]any{"endpoint": map[string]any{"address": addr(host, xdsPort)}}},
			}}},
		}}},
	}
	b, err := json.MarshalIndent(boot, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "envoy-bootstrap.json")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	e.Process = harness.Start(t, dir, "envoy", bin, "-c", path, "--disable-hot-restart",
		"--base-id", strconv.Itoa(e.adminPort), "--concurrency", "1", "-l", "warning")
	return e
}

func (e *envoy) adminURL(path string) string {
	return "http://127.0.0.1:" + strconv.Itoa(e.adminPort) + path
}

// values reads the counters and gauges whose names match the regex.
func (e *envoy) values(regex string) (map[string]int64, error) {
	body, err := harness.HTTPGet(e.adminURL("/stats?filter=" + url.QueryEscape(regex)))
	if err != nil {
		return nil, err
	}
	return harness.ParseStats(body)
}

// histSums reads the sum and count of each histogram matching regex, by
// its Prometheus name (sum in the histogram's unit, ms here).
func (e *envoy) histSums(regex string) (map[string][2]float64, error) {
	body, err := harness.HTTPGet(e.adminURL("/stats/prometheus?filter=" + url.QueryEscape(regex)))
	if err != nil {
		return nil, err
	}
	out := map[string][2]float64{}
	for _, line := range strings.Split(string(body), "\n") {
		name, value, ok := strings.Cut(line, " ")
		if !ok || strings.HasPrefix(line, "#") {
			continue
		}
		if j := strings.IndexByte(name, '{'); j >= 0 {
			name = name[:j]
		}
		v, err := strconv.ParseFloat(strings.TrimSpace(value), 64)
		if err != nil {
			continue
		}
		if base, ok := strings.CutSuffix(name, "_sum"); ok {
			p := out[base]
			p[0] = v
			out[base] = p
		} else if base, ok := strings.CutSuffix(name, "_count"); ok {
			p := out[base]
			p[1] = v
			out[base] = p
		}
	}
	return out, nil
}

// rssMiB is the resident set of a process, from /proc.
func rssMiB(pid int) float64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return -1
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, _ := strconv.ParseFloat(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 64)
			return kb / 1024
		}
	}
	return -1
}

// mainThreadCPU is the CPU time Envoy's main thread (the process's first
// thread, which applies xDS) has had, from the scheduler's own account:
// the work an edit costs there, whatever else the machine runs.
func mainThreadCPU(pid int) time.Duration {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/schedstat", pid, pid))
	if err != nil {
		return -1
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return -1
	}
	ns, _ := strconv.ParseInt(f[0], 10, 64)
	return time.Duration(ns)
}

// loadAverage is the one-minute load average: the machine is shared.
func loadAverage() string {
	b, _ := os.ReadFile("/proc/loadavg")
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return "?"
	}
	return f[0]
}

package faults

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// applyTimeout bounds every wait for Envoy to apply a change.
const applyTimeout = 20 * time.Second

// clusterHeader names the cluster a request goes to.
const clusterHeader = "x-tlsplane-cluster"

// env is one tlsplane serving manifestDir to one Envoy.
type env struct {
	root, logDir, manifestDir string
	tlsplaneBin, envoyBin     string
	pki                       *pki

	xdsPort, adminPort              int
	envoyAdminPort, envoyListenPort int
	tlsplane, envoy                 *process
	// tlsplaneArgs are added to `tlsplane serve`.
	tlsplaneArgs []string
	// apiType is Envoy's ADS flavour: "GRPC" (the default) or "DELTA_GRPC".
	apiType string
}

// envoyOpts make one Envoy differ: its fleet and its xDS client TLS.
type envoyOpts struct {
	name      string // log and bootstrap file name
	fleet     string
	xdsTLS    *envoyXDSTLS
	waitReady bool
}

// envoyXDSTLS is the client side of mutual TLS on the ADS cluster, as
// docs/security.md shows it.
type envoyXDSTLS struct {
	certFile, keyFile, caFile string
}

var (
	backendOnce sync.Once
	backendBin  string
	backendErr  error
)

// newEnv prepares directories and certificates; manifestDir, when not
// empty, is used instead of a fresh one (a tmpfs, say).
func newEnv(t *testing.T, manifestDir string) *env {
	t.Helper()
	e := &env{tlsplaneBin: os.Getenv("TLSPLANE_BIN"), envoyBin: os.Getenv("ENVOY_BIN")}
	if e.tlsplaneBin == "" || e.envoyBin == "" {
		t.Skip("TLSPLANE_BIN and ENVOY_BIN must be set (make e2e-faults sets both)")
	}
	// Kept after the run, git-ignored, for reading logs of a failure.
	root, err := filepath.Abs(filepath.Join("..", ".cache", "faults-e2e", t.Name()))
	if err != nil {
		t.Fatal(err)
	}
	// A run killed before its cleanup may have left dir_test's tmpfs
	// mounted here; unmounting nothing is harmless.
	_ = exec.Command("umount", filepath.Join(root, "tmpfs")).Run()
	if err := os.RemoveAll(root); err != nil {
		t.Fatal(err)
	}
	e.root, e.logDir = root, filepath.Join(root, "logs")
	e.manifestDir = manifestDir
	if e.manifestDir == "" {
		e.manifestDir = filepath.Join(root, "manifests")
	}
	for _, d := range []string{e.logDir, e.manifestDir} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	e.pki = newPKI(t, root)
	e.xdsPort, e.adminPort = freePort(t), freePort(t)
	return e
}

// startBackend runs examples/backend (built once) with the env's leaf.
func (e *env) startBackend(t *testing.T, name string) int {
	t.Helper()
	backendOnce.Do(func() {
		dir, err := os.MkdirTemp("", "tlsplane-faults-backend-")
		if err != nil {
			backendErr = err
			return
		}
		backendBin = filepath.Join(dir, "backend")
		cmd := exec.Command("go", "build", "-o", backendBin, "./examples/backend")
		cmd.Dir = filepath.Join("..", "..")
		if out, err := cmd.CombinedOutput(); err != nil {
			backendErr = fmt.Errorf("building examples/backend: %v\n%s", err, out)
		}
	})
	if backendErr != nil {
		t.Fatal(backendErr)
	}
	port := freePort(t)
	p := start(t, e.logDir, "backend-"+name, backendBin, "--listen", "127.0.0.1:"+strconv.Itoa(port),
		"--name", name, "--cert", e.pki.certFile, "--key", e.pki.keyFile)
	waitProbe(t, p, 10*time.Second, func() error {
		c, err := (&http.Client{Timeout: time.Second}).Get("http://127.0.0.1:" + strconv.Itoa(port))
		if err == nil {
			c.Body.Close()
		}
		return err
	})
	return port
}

// startTLSPlane starts (or restarts, on the same ports) tlsplane serve.
func (e *env) startTLSPlane(t *testing.T) {
	t.Helper()
	args := append([]string{"serve",
		"--dir", e.manifestDir,
		"--xds-address", "127.0.0.1:" + strconv.Itoa(e.xdsPort),
		"--admin-address", "127.0.0.1:" + strconv.Itoa(e.adminPort)}, e.tlsplaneArgs...)
	e.tlsplane = start(t, e.logDir, "tlsplane", e.tlsplaneBin, args...)
	waitProbe(t, e.tlsplane, 30*time.Second, func() error { _, err := httpGet(e.tlsplaneURL("/readyz")); return err })
}

func (e *env) tlsplaneURL(path string) string {
	return "http://127.0.0.1:" + strconv.Itoa(e.adminPort) + path
}

// startEnvoy runs Envoy with SotW ADS to tlsplane and one listener that
// routes by clusterHeader.
func (e *env) startEnvoy(t *testing.T) {
	t.Helper()
	e.envoy, e.envoyAdminPort, e.envoyListenPort = e.startEnvoyWith(t, envoyOpts{name: "envoy", fleet: "faults", waitReady: true})
}

func (e *env) apiTypeOrDefault() string {
	if e.apiType == "" {
		return "GRPC"
	}
	return e.apiType
}

// startEnvoyWith starts one Envoy; it waits for /ready only if asked (an
// Envoy that never gets its clusters is not ready).
func (e *env) startEnvoyWith(t *testing.T, o envoyOpts) (p *process, adminPort, listenPort int) {
	t.Helper()
	adminPort, listenPort = freePort(t), freePort(t)
	addr := func(port int) object {
		return object{"socket_address": object{"address": "127.0.0.1", "port_value": port}}
	}
	hcm := object{
		"@type":       "type.googleapis.com/envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager",
		"stat_prefix": "faults",
		"route_config": object{"name": "faults", "virtual_hosts": []object{{
			"name": "all", "domains": []string{"*"},
			"routes": []object{{"match": object{"prefix": "/"}, "route": object{"cluster_header": clusterHeader, "timeout": "5s"}}},
		}}},
		"http_filters": []object{{"name": "envoy.filters.http.router",
			"typed_config": object{"@type": "type.googleapis.com/envoy.extensions.filters.http.router.v3.Router"}}},
	}
	boot := object{
		"node":  object{"id": "faults-" + o.name, "cluster": o.fleet},
		"admin": object{"address": addr(adminPort)},
		"dynamic_resources": object{
			"ads_config": object{
				"api_type": e.apiTypeOrDefault(), "transport_api_version": "V3", "set_node_on_first_message_only": true,
				"grpc_services": []object{{"envoy_grpc": object{"cluster_name": "tlsplane",
					"retry_policy": object{"retry_back_off": object{"base_interval": "0.25s", "max_interval": "1s"}}}}},
			},
			"cds_config": object{"ads": object{}, "resource_api_version": "V3"},
		},
		"static_resources": object{
			"listeners": []object{{"name": "faults", "address": addr(listenPort),
				"filter_chains": []object{{"filters": []object{{"name": "envoy.filters.network.http_connection_manager", "typed_config": hcm}}}}}},
			"clusters": []object{{
				"name": "tlsplane", "type": "STATIC", "connect_timeout": "1s",
				"typed_extension_protocol_options": object{"envoy.extensions.upstreams.http.v3.HttpProtocolOptions": object{
					"@type":                "type.googleapis.com/envoy.extensions.upstreams.http.v3.HttpProtocolOptions",
					"explicit_http_config": object{"http2_protocol_options": object{}},
				}},
				"load_assignment": object{"cluster_name": "tlsplane", "endpoints": []object{{"lb_endpoints": []object{{"endpoint": object{"address": addr(e.xdsPort)}}}}}},
			}},
		},
	}
	if o.xdsTLS != nil {
		xdsCluster := boot["static_resources"].(object)["clusters"].([]object)[0]
		xdsCluster["transport_socket"] = object{
			"name": "envoy.transport_sockets.tls",
			"typed_config": object{
				"@type": "type.googleapis.com/envoy.extensions.transport_sockets.tls.v3.UpstreamTlsContext",
				"sni":   xdsServerName,
				"common_tls_context": object{
					"alpn_protocols": []string{"h2"},
					"tls_params":     object{"tls_minimum_protocol_version": "TLSv1_2"},
					"validation_context": object{
						"trusted_ca": object{"filename": o.xdsTLS.caFile},
						"match_typed_subject_alt_names": []object{{
							"san_type": "DNS", "matcher": object{"exact": xdsServerName},
						}},
					},
				},
			},
		}
		if o.xdsTLS.certFile != "" {
			common := xdsCluster["transport_socket"].(object)["typed_config"].(object)["common_tls_context"].(object)
			common["tls_certificates"] = []object{{
				"certificate_chain": object{"filename": o.xdsTLS.certFile},
				"private_key":       object{"filename": o.xdsTLS.keyFile},
			}}
		}
	}
	b, err := json.Marshal(boot)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(e.logDir, o.name+"-bootstrap.json")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	// --base-id keeps two Envoys' shared memory apart.
	p = start(t, e.logDir, o.name, e.envoyBin, "-c", path, "--disable-hot-restart", "--base-id", strconv.Itoa(listenPort),
		"--concurrency", "1", "-l", "info", "--drain-time-s", "1")
	if o.waitReady {
		waitProbe(t, p, 60*time.Second, func() error {
			_, err := httpGet("http://127.0.0.1:" + strconv.Itoa(adminPort) + "/ready")
			return err
		})
	}
	return p, adminPort, listenPort
}

// echo is what examples/backend answers.
type echo struct {
	Name string `json:"name"`
	SNI  string `json:"sni"`
}

var envoyClient = &http.Client{Timeout: 10 * time.Second}

// request sends one GET through Envoy to cluster; anything but a 200 with
// an echo is an error.
func (e *env) request(cluster string) (echo, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://127.0.0.1:"+strconv.Itoa(e.envoyListenPort)+"/faults", nil)
	if err != nil {
		return echo{}, err
	}
	req.Header.Set(clusterHeader, cluster)
	// Every request handshakes anew, so it proves the TLS configured now.
	req.Header.Set("X-Echo-Close", "1")
	resp, err := envoyClient.Do(req)
	if err != nil {
		return echo{}, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return echo{}, err
	}
	if resp.StatusCode != http.StatusOK {
		return echo{}, fmt.Errorf("%s: %q", resp.Status, body)
	}
	var out echo
	if err := json.Unmarshal(body, &out); err != nil {
		return echo{}, fmt.Errorf("200 without an echo: %q", body)
	}
	return out, nil
}

// waitServed waits until a request to cluster reaches backend name with sni.
func (e *env) waitServed(t *testing.T, cluster, name, sni string) {
	t.Helper()
	err := eventually(applyTimeout, 100*time.Millisecond, func() error {
		got, err := e.request(cluster)
		if err != nil {
			return err
		}
		if got.Name != name || got.SNI != sni {
			return fmt.Errorf("served by %q with SNI %q, want %q with %q", got.Name, got.SNI, name, sni)
		}
		return nil
	})
	if err != nil {
		t.Fatalf("cluster %s: %v\n--- tlsplane log:\n%s", cluster, err, e.tlsplane.logTail(20))
	}
}

// envoyStats reads Envoy's counters and gauges.
func (e *env) envoyStats(t *testing.T) map[string]int64 {
	t.Helper()
	return envoyStatsAt(t, e.envoyAdminPort)
}

func envoyStatsAt(t *testing.T, adminPort int) map[string]int64 {
	t.Helper()
	body, err := httpGet("http://127.0.0.1:" + strconv.Itoa(adminPort) + "/stats")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]int64{}
	sc := bufio.NewScanner(bytes.NewReader(body))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		name, value, ok := strings.Cut(sc.Text(), ": ")
		if !ok {
			continue
		}
		if n, err := strconv.ParseInt(value, 10, 64); err == nil {
			out[name] = n
		}
	}
	return out
}

func (e *env) waitEnvoyStat(t *testing.T, name string, want int64) {
	t.Helper()
	err := eventually(applyTimeout, 100*time.Millisecond, func() error {
		if got := e.envoyStats(t)[name]; got != want {
			return fmt.Errorf("%s = %d, want %d", name, got, want)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// sumStats adds every stat named prefix…suffix.
func sumStats(stats map[string]int64, prefix, suffix string) int64 {
	var n int64
	for k, v := range stats {
		if strings.HasPrefix(k, prefix) && strings.HasSuffix(k, suffix) {
			n += v
		}
	}
	return n
}

// metric sums tlsplane's samples of name whose labels contain every
// `key="value"` in labels.
func (e *env) metric(t *testing.T, name string, labels ...string) float64 {
	t.Helper()
	body, err := httpGet(e.tlsplaneURL("/metrics"))
	if err != nil {
		t.Fatal(err)
	}
	var sum float64
	for _, line := range strings.Split(string(body), "\n") {
		if !strings.HasPrefix(line, name+"{") && !strings.HasPrefix(line, name+" ") {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		matched := true
		for _, l := range labels {
			if !strings.Contains(line[:i], l) {
				matched = false
			}
		}
		if !matched {
			continue
		}
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if err != nil {
			t.Fatalf("metric line %q: %v", line, err)
		}
		sum += v
	}
	return sum
}

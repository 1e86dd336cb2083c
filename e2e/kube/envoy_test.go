package kube

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// clusterHeader names the cluster a request goes to (route cluster_header).
const clusterHeader = "x-tlsplane-cluster"

// child is a process a traffic test started; stopped at the test's end.
type child struct {
	name, log string
	cmd       *exec.Cmd
	done      chan struct{}
}

func startChild(t *testing.T, name string, argv ...string) *child {
	t.Helper()
	logPath := filepath.Join(t.TempDir(), name+".log")
	f, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdout, cmd.Stderr = f, f
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		f.Close()
		t.Fatalf("start %s: %v", name, err)
	}
	c := &child{name: name, log: logPath, cmd: cmd, done: make(chan struct{})}
	go func() { _ = cmd.Wait(); f.Close(); close(c.done) }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-c.done:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-c.done
		}
		if t.Failed() {
			t.Logf("log of %s:\n%s", name, tail(c.logText(), 3000))
		}
	})
	return c
}

func (c *child) logText() string {
	data, _ := os.ReadFile(c.log)
	return string(data)
}

// envoyBinary is ENVOY_BIN (make), or the repository's .venv Envoy.
func envoyBinary(t *testing.T) string {
	t.Helper()
	bin := os.Getenv("ENVOY_BIN")
	if bin == "" {
		bin, _ = filepath.Abs(filepath.Join("..", "..", ".venv", "bin", "envoy"))
	}
	if _, err := os.Stat(bin); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("Envoy not found (make envoy, or ENVOY_BIN): %v", err)
		}
		t.Skipf("Envoy not found (make envoy, or ENVOY_BIN): %v", err)
	}
	return bin
}

// kubeEnvoy is a real Envoy fed by tlsplane over ADS, with one listener
// routing each request to the cluster its header names.
type kubeEnvoy struct {
	proc            *child
	admin, listener int
}

func startEnvoy(t *testing.T, xdsAddr, nodeID, fleet string) *kubeEnvoy {
	t.Helper()
	host, port, _ := strings.Cut(xdsAddr, ":")
	xdsPort, _ := strconv.Atoi(port)
	ports := freePorts(t, 2)
	e := &kubeEnvoy{admin: ports[0], listener: ports[1]}
	addr := func(h string, p int) map[string]any {
		return map[string]any{"socket_address": map[string]any{"address": h, "port_value": p}}
	}
	hcm := map[string]any{
		"@type":       "type.googleapis.com/envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager",
		"stat_prefix": "kube",
		"route_config": map[string]any{"name": "kube", "virtual_hosts": []any{map[string]any{
			"name": "all", "domains": []string{"*"},
			"routes": []any{map[string]any{"match": map[string]any{"prefix": "/"},
				"route": map[string]any{"cluster_header": clusterHeader, "timeout": "5s"}}},
		}}},
		"http_filters": []any{map[string]any{"name": "envoy.filters.http.router",
			"typed_config": map[string]any{"@type": "type.googleapis.com/envoy.extensions.filters.http.router.v3.Router"}}},
	}
	boot := map[string]any{
		"node":  map[string]any{"id": nodeID, "cluster": fleet},
		"admin": map[string]any{"address": addr("127.0.0.1", e.admin)},
		"dynamic_resources": map[string]any{
			"ads_config": map[string]any{"api_type": "GRPC", "transport_api_version": "V3",
				"grpc_services": []any{map[string]any{"envoy_grpc": map[string]any{"cluster_name": "tlsplane"}}}},
			"cds_config": map[string]any{"ads": map[string]any{}, "resource_api_version": "V3"},
		},
		"static_resources": map[string]any{
			"listeners": []any{map[string]any{"name": "kube", "address": addr("127.0.0.1", e.listener),
				"filter_chains": []any{map[string]any{"filters": []any{map[string]any{
					"name": "envoy.filters.network.http_connection_manager", "typed_config": hcm}}}}}},
			"clusters": []any{map[string]any{"name": "tlsplane", "type": "STATIC", "connect_timeout": "1s",
				"typed_extension_protocol_options": map[string]any{"envoy.extensions.upstreams.http.v3.HttpProtocolOptions": map[string]any{
					"@type": "type.googleapis.com/envoy.extensions.upstreams.http.v3.HttpProtocolOptions", "explicit_http_config": map[string]any{"http2_protocol_options": map[string]any{}}}},
				"load_assignment": map[string]any{"cluster_name": "tlsplane", "endpoints": []any{map[string]any{
					"lb_endpoints": []any{map[string]any{"endpoint": map[string]any{"address": addr(host, xdsPort)}}}}}}}},
		},
	}
	b, err := json.Marshal(boot)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "envoy.json")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	e.proc = startChild(t, "envoy", envoyBinary(t), "-c", path, "--disable-hot-restart", "--concurrency", "1",
		"-l", "info", "--drain-time-s", "1", "--base-id", strconv.Itoa(ports[0]))
	eventually(t, 60*time.Second, "Envoy /ready", func() error {
		select {
		case <-e.proc.done:
			t.Fatalf("Envoy exited:\n%s", tail(e.proc.logText(), 3000))
		default:
		}
		_, err := httpGet(fmt.Sprintf("http://127.0.0.1:%d/ready", e.admin), nil)
		return err
	})
	return e
}

// request sends GET / to cluster through the listener: status and body.
func (e *kubeEnvoy) request(cluster string) (int, string, error) {
	code, body, err := httpDo(fmt.Sprintf("http://127.0.0.1:%d/", e.listener), map[string]string{clusterHeader: cluster})
	return code, body, err
}

// stat reads one counter from Envoy's admin.
func (e *kubeEnvoy) stat(t *testing.T, name string) int64 {
	t.Helper()
	body, err := httpGet(fmt.Sprintf("http://127.0.0.1:%d/stats?filter=^%s$", e.admin, name), nil)
	if err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(bytes.NewReader(body))
	for sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), ": "); ok && k == name {
			n, _ := strconv.ParseInt(v, 10, 64)
			return n
		}
	}
	t.Fatalf("Envoy has no stat %s", name)
	return 0
}

func httpDo(url string, headers map[string]string) (int, string, error) {
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		return 0, "", err
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	client := &http.Client{Timeout: 10 * time.Second}
	resp, err := client.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body), err
}

func httpGet(url string, headers map[string]string) ([]byte, error) {
	code, body, err := httpDo(url, headers)
	if err == nil && code != http.StatusOK {
		err = fmt.Errorf("GET %s: %d %s", url, code, tail(body, 300))
	}
	return []byte(body), err
}

package faults

import (
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tlsplane/tlsplane/e2e/harness"
)

// applyTimeout bounds every wait for Envoy to apply a change.
const applyTimeout = 20 * time.Second

// env is one tlsplane serving manifestDir to one Envoy.
type env struct {
	root, logDir, manifestDir string
	tlsplaneBin, envoyBin     string
	pki                       *pki

	xdsPort, adminPort int
	tlsplane           *process
	envoy              *harness.Envoy
	// tlsplaneArgs are added to `tlsplane serve`.
	tlsplaneArgs []string
	// apiType is Envoy's ADS flavour: "GRPC" (the default) or "DELTA_GRPC".
	apiType string
	// fileLimit, when set, is tlsplane's RLIMIT_NOFILE.
	fileLimit int
}

// envoyOpts make one Envoy differ: its fleet and its xDS client TLS.
type envoyOpts struct {
	name      string // log and bootstrap file name
	fleet     string
	xdsTLS    *harness.XDSTLS
	waitReady bool
	// statsFlush, when set, streams the TLS counters to tlsplane.
	statsFlush time.Duration
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
	e := &env{tlsplaneBin: harness.TLSPlaneBin(t), envoyBin: harness.EnvoyBin(t)}
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
	e.xdsPort, e.adminPort = harness.FreePort(t), harness.FreePort(t)
	return e
}

// startBackend runs examples/backend (built once) with the env's leaf.
func (e *env) startBackend(t *testing.T, name string) int {
	t.Helper()
	backendOnce.Do(func() {
		dir, err := os.MkdirTemp("", backendTempPattern)
		if err != nil {
			backendErr = err
			return
		}
		backendBin, backendErr = harness.BackendBinary(dir)
	})
	if backendErr != nil {
		t.Fatal(backendErr)
	}
	port := harness.FreePort(t)
	p := harness.Start(t, e.logDir, "backend-"+name, backendBin, "--listen", "127.0.0.1:"+strconv.Itoa(port),
		"--name", name, "--cert", e.pki.certFile, "--key", e.pki.keyFile)
	harness.WaitProbe(t, p, 10*time.Second, func() error {
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
	p := harness.StartTLSPlane(t, harness.TLSPlaneOptions{
		Bin: e.tlsplaneBin, LogDir: e.logDir, XDSPort: e.xdsPort, AdminPort: e.adminPort,
		Args:      append([]string{"--dir", e.manifestDir}, e.tlsplaneArgs...),
		FileLimit: e.fileLimit,
	})
	e.tlsplane = &process{p.Process}
}

func (e *env) tlsplaneURL(path string) string {
	return "http://127.0.0.1:" + strconv.Itoa(e.adminPort) + path
}

// startEnvoy runs Envoy with ADS to tlsplane and one listener that routes
// by harness.ClusterHeader.
func (e *env) startEnvoy(t *testing.T) {
	t.Helper()
	e.envoy = e.startEnvoyWith(t, envoyOpts{name: "envoy", fleet: "faults", waitReady: true})
}

// startEnvoyWith starts one Envoy; it waits for /ready only if asked (an
// Envoy that never gets its clusters is not ready).
func (e *env) startEnvoyWith(t *testing.T, o envoyOpts) *harness.Envoy {
	t.Helper()
	return harness.StartEnvoy(t, harness.EnvoyOptions{
		Bin: e.envoyBin, LogDir: e.logDir, Name: o.name, APIType: e.apiType,
		NodeID: "faults-" + o.name, Fleet: o.fleet, XDSAddress: "127.0.0.1:" + strconv.Itoa(e.xdsPort),
		StatPrefix: "faults", XDSTLS: o.xdsTLS, WaitReady: o.waitReady, StatsFlush: o.statsFlush,
	})
}

// request sends one GET through Envoy to cluster; anything but a 200 with
// an echo is an error.
func (e *env) request(cluster string) (harness.Echo, error) {
	r, err := e.envoy.Request(cluster, "/faults")
	if err == nil && r.Status != http.StatusOK {
		err = fmt.Errorf("%d: %q", r.Status, r.Body)
	}
	return r.Echo, err
}

// waitServed waits until a request to cluster reaches backend name with sni.
func (e *env) waitServed(t *testing.T, cluster, name, sni string) {
	t.Helper()
	err := harness.Eventually(applyTimeout, 100*time.Millisecond, func() error {
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
		t.Fatalf("cluster %s: %v\n--- tlsplane log:\n%s", cluster, err, e.tlsplane.LogTail(20))
	}
}

// envoyStats reads Envoy's counters and gauges.
func (e *env) envoyStats(t *testing.T) map[string]int64 {
	t.Helper()
	stats, err := e.envoy.Stats()
	if err != nil {
		t.Fatal(err)
	}
	return stats
}

func (e *env) waitEnvoyStat(t *testing.T, name string, want int64) {
	t.Helper()
	err := harness.Eventually(applyTimeout, 100*time.Millisecond, func() error {
		if got := e.envoyStats(t)[name]; got != want {
			return fmt.Errorf("%s = %d, want %d", name, got, want)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// metric sums tlsplane's samples of name whose labels contain every
// `key="value"` in labels.
func (e *env) metric(t *testing.T, name string, labels ...string) float64 {
	t.Helper()
	v, err := e.metricValue(name, labels...)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// metricValue is metric returning its error, for a wait that may outlast
// an unreachable admin server.
func (e *env) metricValue(name string, labels ...string) (float64, error) {
	body, err := harness.HTTPGet(e.tlsplaneURL("/metrics"))
	if err != nil {
		return 0, err
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
			return 0, fmt.Errorf("metric line %q: %v", line, err)
		}
		sum += v
	}
	return sum, nil
}

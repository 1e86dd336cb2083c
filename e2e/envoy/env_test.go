package envoy

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tlsplane/tlsplane/e2e/harness"
)

// env is one tlsplane and one Envoy shared by every scenario; scenarios
// edit files in manifestDir and use their own Services.
type env struct {
	apiType                           string // Envoy's ADS flavour
	root, logDir, manifestDir, pkiDir string
	backendBin, tlsplaneBin, envoyBin string

	xdsPort, tlsplaneAdminPort int
	// serveArgs follow --dir on tlsplane's command line.
	serveArgs []string
	tlsplane  *harness.Process
	envoy     *envoyProxy
}

// applyTimeout bounds how long a scenario waits for Envoy to apply an edit.
const applyTimeout = 20 * time.Second

func newEnv(t *testing.T, apiType string) *env {
	t.Helper()
	return newEnvIn(t, apiType, strings.ToLower(apiType))
}

// newEnvIn is newEnv keeping its files in .cache/envoy-e2e/<dir>, so two
// suites of one ADS flavour keep their logs apart.
func newEnvIn(t *testing.T, apiType, dir string) *env {
	t.Helper()
	e := &env{apiType: apiType, tlsplaneBin: harness.TLSPlaneBin(t), envoyBin: harness.EnvoyBin(t)}
	// Kept after the run, git-ignored, for reading logs of a failure.
	root, err := filepath.Abs(filepath.Join("..", ".cache", "envoy-e2e", dir))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(root); err != nil {
		t.Fatal(err)
	}
	e.root, e.logDir, e.manifestDir, e.pkiDir = root, filepath.Join(root, "logs"), filepath.Join(root, "manifests"), filepath.Join(root, "pki")
	for _, d := range []string{e.logDir, e.manifestDir, e.pkiDir} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	e.backendBin = harness.BackendBin(t, root)
	e.xdsPort, e.tlsplaneAdminPort = harness.FreePort(t), harness.FreePort(t)
	return e
}

// startTLSPlane starts (or restarts) `tlsplane serve --dir` and waits for
// its first snapshot.
func (e *env) startTLSPlane(t *testing.T) {
	t.Helper()
	e.tlsplane = harness.StartTLSPlane(t, harness.TLSPlaneOptions{
		Bin: e.tlsplaneBin, LogDir: e.logDir, XDSPort: e.xdsPort, AdminPort: e.tlsplaneAdminPort,
		Args: append([]string{"--dir", e.manifestDir}, e.serveArgs...),
	}).Process
}

func (e *env) tlsplaneURL(path string) string {
	return "http://127.0.0.1:" + strconv.Itoa(e.tlsplaneAdminPort) + path
}

// response is one request's outcome through Envoy.
type response = harness.Response

// request sends one GET through Envoy's listener to cluster.
func (e *env) request(t *testing.T, cluster, path string) response {
	t.Helper()
	r, err := e.tryRequest(cluster, path)
	if err != nil {
		t.Fatalf("request to %s through Envoy: %v", cluster, err)
	}
	return r
}

func (e *env) tryRequest(cluster, path string) (response, error) {
	return e.envoy.Request(cluster, path)
}

// waitCluster waits until Envoy's view of cluster satisfies want.
func (e *env) waitCluster(t *testing.T, cluster string, want func(clusterView) error) clusterView {
	t.Helper()
	var last clusterView
	err := harness.Eventually(applyTimeout, 100*time.Millisecond, func() error {
		v, err := e.envoy.cluster(cluster)
		if err != nil {
			return err
		}
		last = v
		return want(v)
	})
	if err != nil {
		t.Fatalf("Envoy did not apply cluster %s: %v (last: %s)\n--- tlsplane log:\n%s", cluster, err, last, e.tlsplane.LogTail(15))
	}
	return last
}

// activeTLS: the cluster is active, speaks TLS with sni (any when ""), and
// has the backend's endpoint.
func activeTLS(sni string, port int) func(clusterView) error {
	return func(v clusterView) error {
		switch {
		case !v.active:
			return fmt.Errorf("not active")
		case !v.hasTLS:
			return fmt.Errorf("no TLS transport socket")
		case sni != "" && v.sni != sni:
			return fmt.Errorf("sni %q, want %q", v.sni, sni)
		case !hasPort(v.hostPorts, port):
			return fmt.Errorf("endpoints %v, want port %d", v.hostPorts, port)
		}
		return nil
	}
}

// activePlain: the cluster is active without TLS, with the backend's endpoint.
func activePlain(port int) func(clusterView) error {
	return func(v clusterView) error {
		switch {
		case !v.active:
			return fmt.Errorf("not active")
		case v.hasTLS:
			return fmt.Errorf("has a TLS transport socket")
		case !hasPort(v.hostPorts, port):
			return fmt.Errorf("endpoints %v, want port %d", v.hostPorts, port)
		}
		return nil
	}
}

// present: Envoy knows the cluster, active or warming (a fail-closed
// cluster may wait forever for a secret).
func present(v clusterView) error {
	if !v.active && !v.warming {
		return fmt.Errorf("not in config_dump")
	}
	return nil
}

func hasPort(ports []int, port int) bool {
	for _, p := range ports {
		if p == port {
			return true
		}
	}
	return false
}

package kube

import (
	"bufio"
	"bytes"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tlsplane/tlsplane/e2e/harness"
)

// startChild runs argv until the test's end; its log is shown if the test
// failed.
func startChild(t *testing.T, name string, argv ...string) *harness.Process {
	t.Helper()
	p := harness.Start(t, t.TempDir(), name, argv[0], argv[1:]...)
	showLogOnFailure(t, p, 10*time.Second, 3000)
	return p
}

// showLogOnFailure stops p at the test's end, within grace, and then logs
// the last n bytes of its log if the test failed.
func showLogOnFailure(t *testing.T, p *harness.Process, grace time.Duration, n int) {
	t.Cleanup(func() {
		p.Stop(grace)
		if t.Failed() {
			t.Logf("log of %s:\n%s", p.Name, tail(p.Log(), n))
		}
	})
}

// kubeEnvoy is a real Envoy fed by tlsplane over ADS, with one listener
// routing each request to the cluster its header names.
type kubeEnvoy struct{ *harness.Envoy }

// apiType is Envoy's ADS flavour: "GRPC" or "DELTA_GRPC".
func startEnvoy(t *testing.T, xdsAddr, nodeID, fleet, apiType string) *kubeEnvoy {
	t.Helper()
	e := &kubeEnvoy{harness.StartEnvoy(t, harness.EnvoyOptions{
		Bin: harness.EnvoyBin(t), LogDir: t.TempDir(), NodeID: nodeID, Fleet: fleet,
		XDSAddress: xdsAddr, StatPrefix: "kube", WaitReady: true, APIType: apiType,
	})}
	showLogOnFailure(t, e.Process, 10*time.Second, 3000)
	return e
}

// stat reads one counter from Envoy's admin.
func (e *kubeEnvoy) stat(t *testing.T, name string) int64 {
	t.Helper()
	body, err := harness.HTTPGet(e.AdminURL("/stats?filter=^" + name + "$"))
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

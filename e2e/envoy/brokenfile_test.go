package envoy

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tlsplane/tlsplane/e2e/harness"
)

const brokenSvc = "broken-file"

func brokenFileObjects(p *pki, b *backends) []object {
	pol := policy{name: brokenSvc, targets: []target{{svc: brokenSvc}}, caRefs: []caRef{{name: "ca-broken-file"}}, hostname: hostAbc}
	objs := serviceWithEndpoints(brokenSvc, svcPort{name: "https", port: svcPortNumber, backendPort: b.main.port})
	return append(objs, caConfigMap("ca-broken-file", p.ca.PEM), pol.object())
}

// brokenFile: a manifest file that stops parsing loses nothing already
// served; Envoy keeps the cluster and traffic flows.
func brokenFile(t *testing.T, e *env, p *pki, b *backends, s *summary) {
	cluster := clusterName(brokenSvc, svcPortNumber)
	good := e.waitCluster(t, cluster, activeTLS(hostAbc, b.main.port))
	file := filepath.Join(e.manifestDir, brokenSvc+".yaml")
	harness.WriteAtomic(t, file, []byte("kind: Service\nmetadata: [this is not\n  valid: yaml\n"))
	// Put the good file back, so later scenarios see the original state.
	defer func() {
		writeManifests(t, e.manifestDir, brokenSvc, brokenFileObjects(p, b)...)
		e.waitCluster(t, cluster, activeTLS(hostAbc, b.main.port))
	}()

	// Wait until tlsplane has read the broken file, so the check means something.
	err := harness.Eventually(applyTimeout, 100*time.Millisecond, func() error {
		log, err := os.ReadFile(e.tlsplane.LogPath)
		if err != nil {
			return err
		}
		if !strings.Contains(string(log), brokenSvc+".yaml") {
			return fmt.Errorf("tlsplane's log does not name %s.yaml", brokenSvc)
		}
		return nil
	})
	if err != nil {
		t.Fatalf("tlsplane did not report the broken file: %v", err)
	}
	time.Sleep(500 * time.Millisecond) // past tlsplane's debounce
	r := e.request(t, cluster, "/broken-file")
	s.note("broken-file-keeps-last-good-state", "%s", r)
	if r.Status != 200 || r.Echo.SNI != hostAbc {
		t.Errorf("after the file broke: want 200 with SNI %q, got %s", hostAbc, r)
	}
	now, err := e.envoy.cluster(cluster)
	if err != nil || now.raw != good.raw {
		t.Errorf("cluster %s changed after its file broke (err %v):\nbefore %s\nafter  %s", cluster, err, good.raw, now.raw)
	}
}

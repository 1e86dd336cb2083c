package faults

import (
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/tlsplane/tlsplane/e2e/harness"
)

// tlsplane's debounce cap (pipeline.MaxDelay): while changes keep coming,
// a burst is published at most once per cap, after its first change at once.
const debounceMaxDelay = 50 * time.Millisecond

// 1,000 policy edits as fast as the disk takes them: the final state is
// served, nothing is rejected, and publishes are bounded by the debounce.
func TestBurstOf1000PolicyEdits(t *testing.T) {
	const edits = 1000
	e := newEnv(t, "")
	port := e.startBackend(t, "burst")
	file := filepath.Join(e.manifestDir, "burst.yaml")
	harness.WriteAtomic(t, file, manifest(t, backendObjects("burst", port, e.pki.caPEM, hostMain)))
	e.startTLSPlane(t)
	e.startEnvoy(t)
	cluster := clusterName("burst")
	e.waitServed(t, cluster, "burst", hostMain)
	publishedBefore := e.metric(t, "tlsplane_snapshot_publishes_total", `result="changed"`)

	began := time.Now()
	for i := range edits {
		// Every edit changes the SNI; the last one is a name the
		// backend's certificate carries, so only the final state serves.
		sni := fmt.Sprintf("edit-%d.faults.example", i)
		if i == edits-1 {
			sni = hostOther
		}
		harness.WriteAtomic(t, file, manifest(t, backendObjects("burst", port, e.pki.caPEM, sni)))
	}
	burst := time.Since(began)
	e.waitServed(t, cluster, "burst", hostOther)
	time.Sleep(time.Second) // anything still debounced has been published

	published := e.metric(t, "tlsplane_snapshot_publishes_total", `result="changed"`) - publishedBefore
	// Edits closer than the quiet period coalesce: the first at once, then
	// at most one publish per cap of the burst, plus the one after it.
	bound := float64(burst/debounceMaxDelay) + 3
	t.Logf("%d edits in %v: %v snapshots published (bound %v)", edits, burst.Round(time.Millisecond), published, bound)
	if published < 1 || published > bound || published >= edits/4 {
		t.Errorf("%v snapshots published for %d edits in %v, want between 1 and %v", published, edits, burst, bound)
	}
	if n := e.metric(t, "tlsplane_xds_nacks_total"); n != 0 {
		t.Errorf("tlsplane_xds_nacks_total = %v, want 0", n)
	}
	stats := e.envoyStats(t)
	if n := harness.SumStats(stats, "", ".update_rejected"); n != 0 {
		t.Errorf("Envoy rejected %d updates", n)
	}
	if got, err := e.request(cluster); err != nil || got.SNI != hostOther {
		t.Errorf("after the burst: %+v, %v; want SNI %s", got, err, hostOther)
	}
}

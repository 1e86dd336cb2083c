package dirsource

import (
	"fmt"
	"path/filepath"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/tlsplane/tlsplane/manifests"
)

// TestEditNeverWaitsForTheResync: with the periodic walk running back to
// back and a settle delay far longer than any read, every edit renamed
// into place is signalled at once: it waits neither for a walk nor for
// the read after one.
func TestEditNeverWaitsForTheResync(t *testing.T) {
	const n = 2000
	dir := t.TempDir()
	for i := range n {
		writeAtomically(t, filepath.Join(dir, fmt.Sprintf("svc-%d.yaml", i)), serviceManifest(i, 0))
	}
	src, err := New(Options{Dir: dir, Parse: manifests.Parser(func(string) {}), Resync: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	src.settle = 5 * time.Second
	changed := make(chan struct{}, 1)
	runUntilCleanup(t, src, changed)
	<-src.Synced()
	for gen := 1; gen <= 20; gen++ {
		time.Sleep(time.Duration(gen*7%13) * time.Millisecond)
		i := gen * 97 % n
		start := time.Now()
		writeAtomically(t, filepath.Join(dir, fmt.Sprintf("svc-%d.yaml", i)), serviceManifest(i, gen))
		select {
		case <-changed:
		case <-time.After(time.Second):
			t.Fatalf("edit %d of svc-%d not signalled within 1s: it waited for the resync", gen, i)
		}
		t.Logf("edit %d: %v", gen, time.Since(start))
	}
	// The walks ran meanwhile, and each is counted.
	var walks dto.Metric
	if err := src.metrics.walks.Write(&walks); err != nil {
		t.Fatal(err)
	}
	if n := walks.GetHistogram().GetSampleCount(); n < 2 {
		t.Errorf("tlsplane_source_walk_duration_seconds counts %d walks during the edits, want them back to back", n)
	}
}

// TestWalkTurnIsBounded: a turn of the comparison that is past its
// deadline stops after walkCheck files, and the walk is still compared
// whole, over as many turns as it takes.
func TestWalkTurnIsBounded(t *testing.T) {
	const n = 1000
	dir := oldFiles(t, n)
	src, err := New(Options{Dir: dir, Parse: manifests.Parser(func(string) {})})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := src.rescan(nil); err != nil {
		t.Fatal(err)
	}
	w := &walked{}
	walk(dir, w)
	a, err := src.beginWalk(nil, w, func() { t.Fatal("changed") })
	if err != nil || a == nil {
		t.Fatal("walk not compared", err)
	}
	turns := 0
	for done := false; !done; turns++ {
		if done, err = src.applyChunk(nil, a, time.Now().Add(-time.Second), func() { t.Fatal("changed") }); err != nil {
			t.Fatal(err)
		}
		if !done && a.next != (turns+1)*walkCheck {
			t.Fatalf("turn %d past its deadline ended at file %d, want %d", turns, a.next, (turns+1)*walkCheck)
		}
	}
	if want := (n + walkCheck - 1) / walkCheck; turns != want || src.seen != n {
		t.Fatalf("%d turns, %d files seen; want %d turns, %d files", turns, src.seen, want, n)
	}
}

// TestWalkReusesItsBuffers: a walk of unchanged files, given the buffers of
// the walk before, allocates little per file (it was six allocations, 740
// bytes, each time new).
func TestWalkReusesItsBuffers(t *testing.T) {
	const n = 1000
	dir := oldFiles(t, n)
	w := &walked{}
	walk(dir, w)
	allocs := testing.AllocsPerRun(3, func() { walk(dir, w) })
	if len(w.stats) != n || len(w.list.files) != n {
		t.Fatalf("walk found %d files, %d stated; want %d", len(w.list.files), len(w.stats), n)
	}
	if perFile := allocs / n; perFile > 4 {
		t.Fatalf("%.1f allocations per unchanged file, want at most 4", perFile)
	}
}

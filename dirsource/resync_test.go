package dirsource

import (
	"fmt"
	"path/filepath"
	"testing"
	"time"

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
}

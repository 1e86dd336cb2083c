package dirsource

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/tlsplane/tlsplane/manifests"
)

// BenchmarkEditDuringResync: one file among n is renamed into place while
// the periodic walk runs back to back (resync=1ms), so most edits land
// during a walk, or with no walk (resync=1m, the control); an operation
// runs from the rename to the changed callback, and p50/p99 of that
// latency are reported.
func BenchmarkEditDuringResync(b *testing.B) {
	for _, c := range []struct {
		n      int
		resync time.Duration
	}{{10000, time.Minute}, {10000, time.Millisecond}, {100000, time.Minute}, {100000, time.Millisecond}} {
		n := c.n
		b.Run(fmt.Sprintf("files=%d/resync=%v", n, c.resync), func(b *testing.B) {
			dir := oldFiles(b, n)
			src, err := New(Options{Dir: dir, Parse: manifests.Parser(func(string) {}), Resync: c.resync})
			if err != nil {
				b.Fatal(err)
			}
			changed := make(chan struct{}, 1)
			runUntilCleanup(b, src, changed)
			select {
			case <-src.Synced():
			case <-time.After(2 * time.Minute):
				b.Fatal("not synced within 2m")
			}
			var took []time.Duration
			gen := 0
			for b.Loop() {
				gen++
				i := gen * 7919 % n
				// Spread the edits over the walk's cycle.
				time.Sleep(time.Duration(gen*7%31) * time.Millisecond)
				start := time.Now()
				writeAtomically(b, filepath.Join(dir, fmt.Sprintf("svc-%d.yaml", i)), serviceManifest(i, gen))
				select {
				case <-changed:
				case <-time.After(10 * time.Second):
					b.Fatalf("edit %d of svc-%d not signalled within 10s", gen, i)
				}
				took = append(took, time.Since(start))
			}
			slices.Sort(took)
			b.ReportMetric(float64(took[len(took)/2].Microseconds())/1000, "p50-ms")
			b.ReportMetric(float64(took[len(took)*99/100].Microseconds())/1000, "p99-ms")
			b.ReportMetric(float64(took[len(took)-1].Microseconds())/1000, "max-ms")
		})
	}
}

// BenchmarkApplyWalk: a walk of n unchanged files, with the buffers of the
// one before, and what the event loop does with it, a turn at a time: an
// edit waits for one turn at most (longest-turn-ms). B/op is the walk's.
func BenchmarkApplyWalk(b *testing.B) {
	for _, n := range []int{10000, 100000} {
		b.Run(fmt.Sprintf("files=%d", n), func(b *testing.B) {
			dir := oldFiles(b, n)
			src, err := New(Options{Dir: dir, Parse: manifests.Parser(func(string) {})})
			if err != nil {
				b.Fatal(err)
			}
			if _, _, err := src.rescan(nil); err != nil {
				b.Fatal(err)
			}
			var longest time.Duration
			for b.Loop() {
				w := src.spare
				if w == nil {
					w = &walked{}
				}
				walk(dir, w)
				a, err := src.beginWalk(nil, w, func() { b.Fatal("changed") })
				if err != nil || a == nil {
					b.Fatal("walk not compared", err)
				}
				for done := false; !done; {
					start := time.Now()
					if done, err = src.applyChunk(nil, a, start.Add(walkTurn), func() { b.Fatal("changed") }); err != nil {
						b.Fatal(err)
					}
					longest = max(longest, time.Since(start))
				}
			}
			b.ReportMetric(float64(longest.Microseconds())/1000, "longest-turn-ms")
		})
	}
}

// oldFiles is a directory of n Service manifests, last modified an hour
// ago, so a walk finds nothing changed since they were read.
func oldFiles(b testing.TB, n int) string {
	b.Helper()
	dir := b.TempDir()
	old := time.Now().Add(-time.Hour)
	for i := range n {
		path := filepath.Join(dir, fmt.Sprintf("svc-%d.yaml", i))
		writeAtomically(b, path, serviceManifest(i, 0))
		if err := os.Chtimes(path, old, old); err != nil {
			b.Fatal(err)
		}
	}
	return dir
}

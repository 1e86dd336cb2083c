package dirsource

import (
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// startSettling runs a source whose settle delay is an hour: whatever it
// serves within seconds of an edit, it read without waiting for settle.
func startSettling(t *testing.T, dir string) *running {
	t.Helper()
	r := &running{changes: make(chan struct{}, 64), logs: &syncBuffer{}, reg: prometheus.NewRegistry()}
	src, err := New(Options{Dir: dir, Parse: parseConfigMaps, Registerer: r.reg, Logger: slog.New(slog.NewTextHandler(r.logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	src.settle = time.Hour
	r.src = src
	runUntilCleanup(t, src, r.changes)
	select {
	case <-src.Synced():
	case <-time.After(5 * time.Second):
		t.Fatal("not synced within 5s")
	}
	return r
}

// renameInto writes content to a hidden name in dir's directory of path,
// then renames it to path: an atomic writer.
func renameInto(t *testing.T, tmpDir, path, content string) {
	t.Helper()
	tmp := filepath.Join(tmpDir, ".writing")
	write(t, tmp, content)
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

// stays checks for a while that the served ConfigMaps remain want.
func (r *running) stays(t *testing.T, why string, want ...string) {
	t.Helper()
	deadline := time.Now().Add(300 * time.Millisecond)
	for time.Now().Before(deadline) {
		if got := r.names(); !slices.Equal(got, want) {
			t.Fatalf("%s: served %v before the settle delay, want %v still", why, got, want)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestSourceReadsAFileRenamedIntoPlaceAtOnce: a rename within the
// directory puts a complete file in place, so it is served without the
// settle delay, new or replacing; a file written in place, or moved in from
// another directory (indistinguishable from a file being written), waits.
func TestSourceReadsAFileRenamedIntoPlaceAtOnce(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, "a.yaml"), configMap("a"))
	r := startSettling(t, dir)
	r.waitNames(t, "a")

	renameInto(t, dir, filepath.Join(dir, "b.yaml"), configMap("b"))
	r.waitNames(t, "a", "b")
	renameInto(t, dir, filepath.Join(dir, "b.yaml"), configMap("c"))
	r.waitNames(t, "a", "c")

	write(t, filepath.Join(dir, "a.yaml"), configMap("d"))
	r.stays(t, "a file written in place", "a", "c")

	elsewhere := t.TempDir()
	renameInto(t, elsewhere, filepath.Join(dir, "e.yaml"), configMap("e"))
	r.stays(t, "a file moved in from another directory", "a", "c")
}

// TestResyncReadsOnlyFilesWhoseStampChanged: the periodic walk re-reads a
// file whose size, modification time or inode changed, and trusts one
// whose metadata holds (a walk of 10,000 files is 10,000 stats, not reads).
// The trusted file is proven skipped by changing its content behind the
// walk's back and restoring its modification time.
func TestResyncReadsOnlyFilesWhoseStampChanged(t *testing.T) {
	dir, outside := t.TempDir(), t.TempDir()
	old := time.Now().Add(-time.Hour)
	for _, name := range []string{"a", "b"} {
		write(t, filepath.Join(outside, name+".yaml"), configMapWith(name, "1"))
		if err := os.Link(filepath.Join(outside, name+".yaml"), filepath.Join(dir, name+".yaml")); err != nil {
			t.Skipf("no hard links here: %v", err)
		}
		if err := os.Chtimes(filepath.Join(dir, name+".yaml"), old, old); err != nil {
			t.Fatal(err)
		}
	}
	r := startWithResync(t, dir, 500*time.Millisecond)
	r.firstChanges(t)

	// Through the links outside: no event names either file.
	write(t, filepath.Join(outside, "a.yaml"), configMapWith("a", "2"))
	write(t, filepath.Join(outside, "b.yaml"), configMapWith("b", "2"))
	if err := os.Chtimes(filepath.Join(outside, "b.yaml"), old, old); err != nil {
		t.Fatal(err)
	}
	r.waitChanges(t, change{name: "a", v: "2"})
	time.Sleep(time.Second) // two more walks
	if got := dataOf(servedObject(r.src.Inputs(), "b")); got != "1" {
		t.Fatalf("b, whose size, time and inode held, was read again by the walk (v=%q)", got)
	}
}

// TestSourceReadsAConfigMapVolumeSwapAtOnce: the kubelet's rename of ..data
// makes a mounted ConfigMap's new content complete at once; its files are
// read without waiting for settle.
func TestSourceReadsAConfigMapVolumeSwapAtOnce(t *testing.T) {
	dir := t.TempDir()
	swapConfigMapVolume(t, dir, "1", map[string]string{"a.yaml": configMap("a1"), "b.yaml": configMap("b1")})
	r := startSettling(t, dir)
	r.waitNames(t, "a1", "b1")
	swapConfigMapVolume(t, dir, "2", map[string]string{"a.yaml": configMap("a2"), "b.yaml": configMap("b1")})
	r.waitNames(t, "a2", "b1")
}

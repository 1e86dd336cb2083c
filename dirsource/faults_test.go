package dirsource

import (
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// stepper drives rescan by hand, one read at a time, so the rules for
// suspect paths are tested without timing.
type stepper struct {
	src  *Source
	logs *syncBuffer
}

func newStepper(t *testing.T, dir string) *stepper {
	t.Helper()
	logs := &syncBuffer{}
	src, err := New(Options{
		Dir: dir, Parse: parseConfigMaps, Registerer: prometheus.NewRegistry(),
		Logger: slog.New(slog.NewTextHandler(logs, nil)),
	})
	if err != nil {
		t.Fatal(err)
	}
	return &stepper{src: src, logs: logs}
}

// read rescans once and checks whether it asked to be read again and
// which ConfigMaps are served afterwards.
func (s *stepper) read(t *testing.T, wantAgain bool, want ...string) {
	t.Helper()
	_, again, err := s.src.rescan(nil)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, cm := range s.src.Inputs().ConfigMaps {
		got = append(got, cm.Name)
	}
	slices.Sort(got)
	if again != wantAgain || !slices.Equal(got, want) {
		t.Fatalf("after a read: again=%v, served %v; want again=%v, served %v\nlogs:\n%s", again, got, wantAgain, want, s.logs)
	}
}

func (s *stepper) errors(t *testing.T) float64 { return value(t, s.src.metrics.fileErrors) }

// replaceWithSymlink points path at target atomically, as `ln -sfn` does.
func replaceWithSymlink(t *testing.T, target, path string) {
	t.Helper()
	tmp := filepath.Join(filepath.Dir(path), ".tmp-link")
	if err := os.Symlink(target, tmp); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

// waitErrors waits (at most 5s) until at least n file errors are counted.
func (r *running) waitErrors(t *testing.T, n float64) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for value(t, r.src.metrics.fileErrors) < n {
		if time.Now().After(deadline) {
			t.Fatalf("tlsplane_source_file_errors_total = %v, want %v\nlogs:\n%s", value(t, r.src.metrics.fileErrors), n, r.logs)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestSourceKeepsObjectsOfAManifestReplacedByADanglingSymlink(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "a.yaml")
	write(t, path, configMap("a"))
	write(t, filepath.Join(dir, "b.yaml"), configMap("b"))
	r := start(t, dir)
	r.waitNames(t, "a", "b")

	replaceWithSymlink(t, filepath.Join(dir, "missing", "a.yaml"), path)
	r.waitErrors(t, 1)
	// A later edit elsewhere is served, and a is still there.
	write(t, filepath.Join(dir, "b.yaml"), configMap("b2"))
	r.waitNames(t, "a", "b2")
	if !strings.Contains(r.logs.String(), "file="+path) || !strings.Contains(r.logs.String(), "missing/a.yaml") {
		t.Errorf("no log line naming %s and its target:\n%s", path, r.logs)
	}
	if got := value(t, r.src.metrics.failingFiles); got != 1 {
		t.Errorf("tlsplane_source_files_failing = %v, want 1", got)
	}
	if got := value(t, r.src.metrics.fileErrors); got != 1 {
		t.Errorf("tlsplane_source_file_errors_total = %v, want 1: an unchanged dangling link is reported once", got)
	}

	// The link's target appears: it is read like any file.
	if err := os.Mkdir(filepath.Join(dir, "missing"), 0o755); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(dir, "missing", "a.yaml"), configMap("a-new"))
	r.waitNames(t, "a-new", "b2") // through the link, and as missing/a.yaml: a duplicate
	if got := value(t, r.src.metrics.failingFiles); got != 0 {
		t.Errorf("tlsplane_source_files_failing = %v, want 0", got)
	}
}

func TestSourceWithdrawsADeletedDanglingSymlink(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "a.yaml")
	write(t, path, configMap("a"))
	s := newStepper(t, dir)
	s.read(t, false, "a")

	replaceWithSymlink(t, "nowhere.yaml", path)
	// A dangling link is read again before it is reported: a ConfigMap
	// volume's removed keys dangle for a moment.
	s.read(t, true, "a")
	s.read(t, true, "a")
	if s.errors(t) != 0 {
		t.Fatalf("a dangling link reported before it was read again:\n%s", s.logs)
	}
	s.read(t, false, "a")
	if s.errors(t) != 1 {
		t.Fatalf("file errors = %v, want 1\nlogs:\n%s", s.errors(t), s.logs)
	}
	s.read(t, false, "a")
	if s.errors(t) != 1 {
		t.Fatalf("file errors = %v, want 1: reported once", s.errors(t))
	}

	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	s.read(t, false) // no entry at all: deleted
}

func TestSourceConfigMapVolumeRemovedKeyDanglesWithoutAnError(t *testing.T) {
	dir := t.TempDir()
	swapConfigMapVolume(t, dir, "1", map[string]string{"a.yaml": configMap("a1"), "b.yaml": configMap("b1")})
	s := newStepper(t, dir)
	s.read(t, false, "a1", "b1")

	// The kubelet's swap, read between its ..data rename and its removal
	// of b.yaml's link, which dangles then.
	ts := filepath.Join(dir, "..2026_11_22_2")
	if err := os.Mkdir(ts, 0o755); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(ts, "a.yaml"), configMap("a2"))
	replaceWithSymlink(t, filepath.Base(ts), filepath.Join(dir, "..data"))
	if err := os.RemoveAll(filepath.Join(dir, "..2026_11_22_1")); err != nil {
		t.Fatal(err)
	}
	s.read(t, true, "a2", "b1")
	if err := os.Remove(filepath.Join(dir, "b.yaml")); err != nil {
		t.Fatal(err)
	}
	s.read(t, false, "a2")
	if strings.Contains(s.logs.String(), "level=ERROR") || s.errors(t) != 0 {
		t.Errorf("a swap produced errors:\n%s", s.logs)
	}
}

func TestSourceKeepsAConfigMapVolumeWhoseDataLinkDangles(t *testing.T) {
	dir := t.TempDir()
	swapConfigMapVolume(t, dir, "1", map[string]string{"a.yaml": configMap("a"), "b.yaml": configMap("b")})
	r := start(t, dir)
	r.waitNames(t, "a", "b")

	replaceWithSymlink(t, "..2026_11_22_gone", filepath.Join(dir, "..data"))
	r.waitErrors(t, 2) // one per file
	if got := r.names(); !slices.Equal(got, []string{"a", "b"}) {
		t.Fatalf("with ..data dangling: %v, want the last good [a b]", got)
	}
	if got := value(t, r.src.metrics.failingFiles); got != 2 {
		t.Errorf("tlsplane_source_files_failing = %v, want 2", got)
	}

	swapConfigMapVolume(t, dir, "2", map[string]string{"a.yaml": configMap("a2"), "b.yaml": configMap("b2")})
	r.waitNames(t, "a2", "b2")
	if got := value(t, r.src.metrics.failingFiles); got != 0 {
		t.Errorf("tlsplane_source_files_failing after the swap = %v, want 0", got)
	}
}

func TestSourceKeepsObjectsOfAManifestReplacedByADirectory(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "a.yaml")
	write(t, path, configMap("a")+"data:\n  from: file\n---\n"+configMap("a-only"))
	r := start(t, dir)
	r.waitNames(t, "a", "a-only")

	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(path, 0o755); err != nil {
		t.Fatal(err)
	}
	r.waitErrors(t, 1)
	if !strings.Contains(r.logs.String(), "replaced by a directory") {
		t.Errorf("no log line saying %s is a directory now:\n%s", path, r.logs)
	}
	// The directory's manifests are new files; their objects win over the
	// kept ones, which are still served otherwise.
	write(t, filepath.Join(path, "inner.yaml"), configMap("a")+"data:\n  from: directory\n---\n"+configMap("inner"))
	r.waitNames(t, "a", "a-only", "inner")
	for _, cm := range r.src.Inputs().ConfigMaps {
		if cm.Name == "a" && cm.Data["from"] != "directory" {
			t.Errorf("ConfigMap a from %q, want the directory's live manifest", cm.Data["from"])
		}
	}
	if got := value(t, r.src.metrics.fileErrors); got != 1 {
		t.Errorf("tlsplane_source_file_errors_total = %v, want 1: reported once", got)
	}

	// Removing the directory removes both the kept objects and its own.
	if err := os.RemoveAll(path); err != nil {
		t.Fatal(err)
	}
	r.waitNames(t)
	if got := value(t, r.src.metrics.failingFiles); got != 0 {
		t.Errorf("tlsplane_source_files_failing = %v, want 0", got)
	}
}

func TestSourceManifestBackFromADirectoryIsReadAgain(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "a.yaml")
	write(t, path, configMap("a"))
	s := newStepper(t, dir)
	s.read(t, false, "a")
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(path, 0o755); err != nil {
		t.Fatal(err)
	}
	s.read(t, false, "a")
	if s.errors(t) != 1 {
		t.Fatalf("file errors = %v, want 1", s.errors(t))
	}
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	write(t, path, configMap("a")) // the same content as before
	s.read(t, false, "a")
	if got := value(t, s.src.metrics.failingFiles); got != 0 {
		t.Errorf("tlsplane_source_files_failing = %v, want 0", got)
	}
}

func TestSourceRereadsAManifestFoundEmpty(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "a.yaml")
	write(t, path, configMap("a"))
	s := newStepper(t, dir)
	s.read(t, false, "a")

	// Caught between an in-place rewrite's truncate and its write.
	write(t, path, "")
	s.read(t, true, "a")
	write(t, path, configMap("a2"))
	s.read(t, false, "a2")

	// Emptied for real: believed after suspectRereads more reads.
	write(t, path, "\n  \n")
	for range suspectRereads {
		s.read(t, true, "a2")
	}
	s.read(t, false)
	if !strings.Contains(s.logs.String(), "no objects any more") {
		t.Errorf("emptying not logged:\n%s", s.logs)
	}
	// An empty file stays empty without more re-reads.
	s.read(t, false)

	// Back to the old content while suspect: the count starts again.
	write(t, path, configMap("a"))
	s.read(t, false, "a")
	write(t, path, "")
	s.read(t, true, "a")
	write(t, path, configMap("a"))
	s.read(t, false, "a")
	write(t, path, "")
	for range suspectRereads {
		s.read(t, true, "a")
	}
	if s.errors(t) != 0 {
		t.Errorf("an emptied file counted as an error:\n%s", s.logs)
	}
}

func TestSourceWithdrawsAnEmptiedManifestAfterItsRereads(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "a.yaml")
	write(t, path, configMap("a"))
	write(t, filepath.Join(dir, "b.yaml"), configMap("b"))
	r := start(t, dir)
	r.waitNames(t, "a", "b")
	start := time.Now()
	write(t, path, "")
	r.waitNames(t, "b") // needs the re-reads to be scheduled: no event follows
	if took := time.Since(start); took < suspectRereads*defaultSettle {
		t.Errorf("emptied file withdrawn after %v, before its %d re-reads %v apart", took, suspectRereads, defaultSettle)
	}
}

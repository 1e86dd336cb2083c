package dirsource

import (
	"os"
	"path/filepath"
	"testing"
)

// A directory removed and re-created within one burst of events lost its
// watch with the old directory; the read that follows watches the new one,
// or edits inside it would go unseen until the resync.
func TestSourceWatchesADirectoryRecreatedWithinOneBurst(t *testing.T) {
	dir := t.TempDir()
	sub := filepath.Join(dir, "sub")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(sub, "a.yaml"), configMap("a"))
	r := start(t, dir)
	r.waitNames(t, "a")

	if err := os.RemoveAll(sub); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(sub, "b.yaml"), configMap("b"))
	r.waitNames(t, "b")
	write(t, filepath.Join(sub, "c.yaml"), configMap("c"))
	r.waitNames(t, "b", "c")
}

// A symlinked manifest changes when its target does, with no event naming
// the link: every read after an event reads links again.
func TestSourceFollowsALinkWhoseTargetIsEdited(t *testing.T) {
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	// The target is a .txt, so it is not read as a manifest of its own.
	target := filepath.Join(dir, "sub", "a.txt")
	write(t, target, configMapWith("a", "1"))
	if err := os.Symlink(filepath.Join("sub", "a.txt"), filepath.Join(dir, "a.yaml")); err != nil {
		t.Fatal(err)
	}
	r := start(t, dir)
	r.firstChanges(t)
	if got := dataOf(servedObject(r.src.Inputs(), "a")); got != "1" {
		t.Fatalf("served a with %q, want 1", got)
	}
	write(t, target, configMapWith("a", "2"))
	r.waitChanges(t, change{name: "a", v: "2"})
}

package dirsource

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tlsplane/tlsplane/manifests"
)

// paddedConfigMap is ConfigMap name holding v, padded by a comment to
// size bytes.
func paddedConfigMap(name, v string, size int) string {
	doc := configMap(name) + "data: {v: " + v + "}\n"
	return doc + "#" + strings.Repeat("x", max(size-len(doc)-2, 0)) + "\n"
}

// The files whose objects are served are bounded together: new content
// that would take them over TotalBytes is refused, naming the file and the
// flag, and what was served stays, until the others shrink.
func TestSourceBoundsTheFilesItHoldsTogether(t *testing.T) {
	dir := t.TempDir()
	write := func(name, v string, size int) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name+".yaml"), []byte(paddedConfigMap(name, v, size)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 8 {
		write(fmt.Sprintf("cm-%d", i), "old", 1<<10)
	}
	s := newStepper(t, dir)
	s.src.opts.Limits = manifests.Limits{TotalBytes: 10 << 10}
	s.read(t, false, "cm-0", "cm-1", "cm-2", "cm-3", "cm-4", "cm-5", "cm-6", "cm-7")

	// Many more files: the first in path order fill the total, the others
	// are refused.
	for i := 8; i < 16; i++ {
		write(fmt.Sprintf("cm-%d", i), "old", 1<<10)
	}
	s.read(t, false, "cm-0", "cm-1", "cm-10", "cm-11", "cm-2", "cm-3", "cm-4", "cm-5", "cm-6", "cm-7")
	refused := filepath.Join(dir, "cm-12.yaml") + ": its 1 KiB would take the manifests read to 11 KiB, over --dir-max-total-bytes (10 KiB); raise it to read this file"
	if !strings.Contains(s.logs.String(), refused) {
		t.Fatalf("no log line %q:\n%s", refused, s.logs)
	}
	if got := s.errors(t); got != 6 {
		t.Errorf("%v file errors, want 6 (cm-12 to cm-15, cm-8 and cm-9)", got)
	}

	// A served file grown over the total keeps its objects as they were.
	write("cm-0", "new", 4<<10)
	s.read(t, false, "cm-0", "cm-1", "cm-10", "cm-11", "cm-2", "cm-3", "cm-4", "cm-5", "cm-6", "cm-7")
	if v := s.src.Inputs().ConfigMaps[0].Data["v"]; v != "old" {
		t.Errorf("cm-0 served with v=%s, want the old content kept", v)
	}

	// Room made: the refused files are read again and served.
	for i := 1; i < 10; i++ {
		if err := os.Remove(filepath.Join(dir, fmt.Sprintf("cm-%d.yaml", i))); err != nil {
			t.Fatal(err)
		}
	}
	s.read(t, false, "cm-0", "cm-10", "cm-11", "cm-12", "cm-13", "cm-14", "cm-15")
	if v := s.src.Inputs().ConfigMaps[0].Data["v"]; v != "new" {
		t.Errorf("cm-0 served with v=%s, want its new content once it fits", v)
	}
	if s.src.held != 4<<10+6<<10 {
		t.Errorf("held %d bytes, want %d", s.src.held, 4<<10+6<<10)
	}
}

// A file grown over FileBytes keeps its objects, as a broken file does,
// and the error names the flag that raises the limit.
func TestSourceKeepsTheObjectsOfAFileGrownOverItsLimit(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "cm.yaml")
	if err := os.WriteFile(path, []byte(paddedConfigMap("cm", "old", 1<<10)), 0o644); err != nil {
		t.Fatal(err)
	}
	s := newStepper(t, dir)
	s.src.opts.Limits = manifests.Limits{FileBytes: 4 << 10}
	s.read(t, false, "cm")
	if err := os.WriteFile(path, []byte(paddedConfigMap("cm", "new", 6<<10)), 0o644); err != nil {
		t.Fatal(err)
	}
	s.read(t, false, "cm")
	if v := s.src.Inputs().ConfigMaps[0].Data["v"]; v != "old" {
		t.Errorf("served v=%s, want the old content kept", v)
	}
	want := path + ": 6 KiB is over --dir-max-file-bytes (4 KiB); raise it to read this file"
	if !strings.Contains(s.logs.String(), want) {
		t.Errorf("no log line %q:\n%s", want, s.logs)
	}
}

package certfiles

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Load reads again only when a file changed, and keeps the last good
// result through a bad rotation and a file gone, saying why.
func TestLoadReadsAgainOnChangeAndKeepsTheLastGood(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "tls.crt")
	reads := 0
	f := New(func() (string, error) {
		reads++
		b, err := os.ReadFile(path)
		if err != nil {
			return "", err
		}
		if strings.HasPrefix(string(b), "bad") {
			return "", errors.New("does not parse")
		}
		return string(b), nil
	}, path)
	write := func(s string, mtime time.Time) {
		t.Helper()
		if err := os.WriteFile(path, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(path, mtime, mtime); err != nil {
			t.Fatal(err)
		}
	}
	base := time.Now().Add(-time.Hour)

	if _, ok, err := f.Load(); ok || err == nil {
		t.Fatalf("no file yet: ok=%v err=%v, want no result and an error", ok, err)
	}
	write("bad one", base)
	if _, ok, err := f.Load(); ok || err == nil {
		t.Fatalf("a first file that does not parse: ok=%v err=%v", ok, err)
	}
	write("one", base.Add(time.Second))
	if v, ok, err := f.Load(); v != "one" || !ok || err != nil {
		t.Fatalf("Load = %q, %v, %v, want one", v, ok, err)
	}
	before := reads
	if v, _, _ := f.Load(); v != "one" || reads != before {
		t.Fatalf("unchanged files read again (%d reads, were %d) or %q", reads, before, v)
	}
	write("bad two", base.Add(2*time.Second))
	if v, ok, err := f.Load(); v != "one" || !ok || err == nil {
		t.Fatalf("half-written rotation: %q, %v, %v, want the last good one with the error", v, ok, err)
	}
	write("two", base.Add(3*time.Second))
	if v, _, err := f.Load(); v != "two" || err != nil {
		t.Fatalf("rotated: %q, %v, want two", v, err)
	}
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if v, ok, err := f.Load(); v != "two" || !ok || !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("file gone: %q, %v, %v, want the last good one and ErrNotExist", v, ok, err)
	}
}

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestTranslateRefusesAConflictedTrafficPolicy: an XBackendTrafficPolicy
// that lost its target to an older one is refused (exit 3), stderr naming
// it, its condition and the winner; the winner is not named as refused.
func TestTranslateRefusesAConflictedTrafficPolicy(t *testing.T) {
	golden, err := os.ReadFile(filepath.Join("..", "..", "testdata", "translator", "xtraffic-conflict.in.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	write(t, filepath.Join(dir, "world.yaml"), string(golden))
	code, _, stderr := translateProcess(t, dir)
	if code != exitRefused {
		t.Fatalf("translate: exit %d, want %d (refused); stderr:\n%s", code, exitRefused, stderr)
	}
	for _, want := range []string{"XBackendTrafficPolicy shop/newer (ancestor Gateway edge): Accepted=False (Conflicted)", "XBackendTrafficPolicy shop/older, the older"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
	if strings.Contains(stderr, "XBackendTrafficPolicy shop/older (") {
		t.Errorf("stderr names the winner as refused:\n%s", stderr)
	}
}

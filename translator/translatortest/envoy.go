package translatortest

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// EnvoyBinary is $ENVOY_BIN, or the Makefile's default in the repository's
// virtualenv. Without it the test skips, except in CI (CI=true) where it
// must run; with -short it skips too (Envoy takes seconds).
func EnvoyBinary(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("runs Envoy 1.40; skipped with -short")
	}
	envoy := os.Getenv("ENVOY_BIN")
	if envoy == "" {
		envoy = filepath.Join(repositoryRoot(), ".venv", "bin", "envoy")
	}
	if _, err := os.Stat(envoy); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("CI=true but no Envoy at %s (set ENVOY_BIN or run `make envoy`): %v", envoy, err)
		}
		t.Skipf("no Envoy at %s (set ENVOY_BIN or run `make envoy`): %v", envoy, err)
	}
	return envoy
}

// repositoryRoot is the nearest directory above the test's own (a
// package directory, where go test runs it) that holds go.mod.
func repositoryRoot() string {
	dir, err := os.Getwd()
	if err != nil {
		return "."
	}
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return d
		}
		if filepath.Dir(d) == d {
			return dir
		}
	}
}

// ValidateBootstrap runs `envoy --mode validate` on the bootstrap file at
// path (args after the file's, such as --service-node) and fails t with
// Envoy's output when Envoy refuses it.
func ValidateBootstrap(t *testing.T, envoy, path string, args ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	argv := append([]string{"--mode", "validate", "-c", path, "--disable-hot-restart", "--log-level", "error"}, args...)
	if out, err := exec.CommandContext(ctx, envoy, argv...).CombinedOutput(); err != nil {
		boot, _ := os.ReadFile(path)
		t.Fatalf("envoy --mode validate: %v\n%s\n%s", err, out, boot)
	}
}

package harness

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
)

// The programs the suites start, each named by an environment variable
// (e2e/README.md lists them) or found where make builds it.
var (
	envoyProgram    = program{name: "Envoy", env: "ENVOY_BIN", fallback: filepath.Join(RepoRoot(), ".venv", "bin", "envoy"), how: "make envoy"}
	tlsplaneProgram = program{name: "tlsplane", env: "TLSPLANE_BIN", how: "the make targets set it; or make build, then TLSPLANE_BIN=$PWD/bin/tlsplane"}
	helmProgram     = program{name: "helm", env: "HELM_BIN", fallback: filepath.Join(RepoRoot(), "e2e", ".cache", "bin", "helm"), how: "make helm"}
	promtoolProgram = program{name: "promtool", env: "PROMTOOL_BIN", fallback: filepath.Join(RepoRoot(), "e2e", ".cache", "bin", "promtool"), how: "make promtool"}
	corednsProgram  = program{name: "CoreDNS", env: "COREDNS_BIN", fallback: filepath.Join(imagesDir(), "coredns"), how: "make coredns"}
)

// EnvoyBin is the Envoy under test: $ENVOY_BIN, else the repository's
// .venv Envoy (make envoy). Missing, it ends the test (Prerequisite).
func EnvoyBin(t testing.TB) string { t.Helper(); return envoyProgram.require(t) }

// TLSPlaneBin is the tlsplane under test: $TLSPLANE_BIN. Missing, it ends
// the test (Prerequisite).
func TLSPlaneBin(t testing.TB) string { t.Helper(); return tlsplaneProgram.require(t) }

// HelmBin is the helm CLI: $HELM_BIN, else e2e/.cache/bin/helm (make helm).
func HelmBin(t testing.TB) string { t.Helper(); return helmProgram.require(t) }

// PromtoolBin is Prometheus's promtool: $PROMTOOL_BIN, else
// e2e/.cache/bin/promtool (make promtool).
func PromtoolBin(t testing.TB) string { t.Helper(); return promtoolProgram.require(t) }

// EnvoyBinary and TLSPlaneBinary are EnvoyBin and TLSPlaneBin as errors,
// for a caller with no test to end (a TestMain) or one that fails rather
// than skips (a measurement asked for by its flag).
func EnvoyBinary() (string, error)    { return envoyProgram.find() }
func TLSPlaneBinary() (string, error) { return tlsplaneProgram.find() }

// TLSPlaneOrBuild is $TLSPLANE_BIN when set, else this checkout's
// cmd/tlsplane built into dir, so that a suite run on its own (go test
// ./kube/) needs no make; built says which.
func TLSPlaneOrBuild(dir string) (bin string, built bool, err error) {
	if os.Getenv(tlsplaneProgram.env) != "" {
		bin, err = tlsplaneProgram.find()
		return bin, false, err
	}
	bin, err = buildInRepo(dir, "./cmd/tlsplane")
	if err != nil {
		return "", false, fmt.Errorf("%w (or set TLSPLANE_BIN)", err)
	}
	return bin, true, nil
}

// BackendBinary is the HTTPS echo backend the suites send traffic to
// (examples/backend): $BACKEND_BIN when set, else built into dir.
func BackendBinary(dir string) (string, error) {
	if bin := os.Getenv("BACKEND_BIN"); bin != "" {
		return bin, nil
	}
	return buildInRepo(dir, "./examples/backend")
}

// BackendBin is BackendBinary, a failure ending the test.
func BackendBin(t testing.TB, dir string) string {
	t.Helper()
	bin, err := BackendBinary(dir)
	if err != nil {
		t.Fatal(err)
	}
	return bin
}

// buildInRepo builds the main module's package pkg into dir, named after
// its last element. In the main module: from e2e/, its go.sum lacks
// tlsplane's own dependencies.
func buildInRepo(dir, pkg string) (string, error) {
	bin := filepath.Join(dir, filepath.Base(pkg))
	cmd := exec.Command("go", "build", "-o", bin, pkg)
	cmd.Dir = RepoRoot()
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build %s: %w\n%s", pkg, err, out)
	}
	return bin, nil
}

// Prerequisite ends a test that cannot run because what is missing (err):
// a failure under CI=true, where every end-to-end test must run, else a
// skip. A nil err does nothing.
func Prerequisite(t testing.TB, what string, err error) {
	t.Helper()
	if err == nil {
		return
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("%s: %v (CI=true: not skipped)", what, err)
	}
	t.Skipf("%s: %v", what, err)
}

// imagesDir is where hack/build-conformance-images.sh puts the binaries of
// the conformance suite's images: $CONFORMANCE_IMAGES_DIR, else
// e2e/.cache/bin/images (as e2e/node reads them).
func imagesDir() string {
	if dir := os.Getenv("CONFORMANCE_IMAGES_DIR"); dir != "" {
		return dir
	}
	return filepath.Join(RepoRoot(), "e2e", ".cache", "bin", "images")
}

// program is one binary a suite runs.
type program struct {
	name     string // what it is, for messages
	env      string // the variable naming it
	fallback string // where make puts it when env is unset; "" when none
	how      string // how a user gets it
}

func (p program) find() (string, error) {
	bin := os.Getenv(p.env)
	if bin == "" {
		bin = p.fallback
	}
	if bin == "" {
		return "", fmt.Errorf("%s: %s is not set (%s)", p.name, p.env, p.how)
	}
	if _, err := os.Stat(bin); err != nil {
		return "", fmt.Errorf("%s: %w (%s, or set %s)", p.name, err, p.how, p.env)
	}
	return bin, nil
}

func (p program) require(t testing.TB) string {
	t.Helper()
	bin, err := p.find()
	Prerequisite(t, "missing prerequisite", err)
	return bin
}

// RepoRoot is the repository's root, two directories above this file.
func RepoRoot() string {
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		panic(errors.New("harness: no caller information for the repository root"))
	}
	return filepath.Join(filepath.Dir(file), "..", "..")
}

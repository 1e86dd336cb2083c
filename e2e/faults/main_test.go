package faults

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// backendTempPattern names the folder in os.TempDir() that holds the
// examples/backend binary built once for the package (startBackend).
const backendTempPattern = "tlsplane-faults-backend-*"

// TestMain removes the backend binary after the tests and fails the run
// when the package left anything of its own in the temp directory: a
// newcomer's /tmp must look the same after make e2e-faults as before.
func TestMain(m *testing.M) {
	before := tempEntries()
	code := m.Run()
	if backendBin != "" {
		if err := os.RemoveAll(filepath.Dir(backendBin)); err != nil {
			fmt.Fprintf(os.Stderr, "e2e/faults: removing the backend binary: %v\n", err)
			code = 1
		}
	}
	for _, left := range tempEntries() {
		if !slices.Contains(before, left) {
			fmt.Fprintf(os.Stderr, "e2e/faults: FAIL: left %s in the temp directory\n", left)
			code = 1
		}
	}
	os.Exit(code)
}

func tempEntries() []string {
	matches, _ := filepath.Glob(filepath.Join(os.TempDir(), backendTempPattern))
	return matches
}

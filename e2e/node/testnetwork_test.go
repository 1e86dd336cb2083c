package node

import (
	"errors"
	"os"
	"os/exec"
	"testing"

	"github.com/tlsplane/tlsplane/e2e/harness"
)

// testNetwork is a Network for a test that runs processes in network
// namespaces, with tools (besides ip) on PATH; removed when t ends.
func testNetwork(t *testing.T, why string, tools ...string) *Network {
	t.Helper()
	if os.Geteuid() != 0 {
		harness.Prerequisite(t, why, errors.New("not root"))
	}
	for _, tool := range append([]string{"ip"}, tools...) {
		_, err := exec.LookPath(tool)
		harness.Prerequisite(t, why, err)
	}
	n, err := NewNetwork()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(n.Close)
	return n
}

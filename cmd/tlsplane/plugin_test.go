package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestProgramName(t *testing.T) {
	for _, tc := range []struct{ argv0, want string }{
		{"tlsplane", "tlsplane"},
		{"/usr/local/bin/tlsplane", "tlsplane"},
		{"./bin/tlsplane", "tlsplane"},
		{"/home/me/bin/kubectl-tlsplane", "kubectl tlsplane"},
		{"kubectl-tlsplane", "kubectl tlsplane"},
		{`C:\bin\kubectl-tlsplane.exe`, "tlsplane"}, // filepath.Base on Linux keeps the backslashes
		{"kubectl-tlsplane.exe", "kubectl tlsplane"},
		{"kubectl-tlsplane-status", "tlsplane"},
	} {
		if got := programName(tc.argv0); got != tc.want {
			t.Errorf("programName(%q) = %q, want %q", tc.argv0, got, tc.want)
		}
	}
}

// TestKubectlPluginDispatch runs this binary under the plugin's name, as
// kubectl does for `kubectl tlsplane ...`: the same subcommands, spelled
// as the user typed them.
func TestKubectlPluginDispatch(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	plugin := filepath.Join(t.TempDir(), kubectlPluginName)
	if err := os.Symlink(self, plugin); err != nil {
		t.Fatal(err)
	}
	run := func(args ...string) (string, string, error) {
		cmd := exec.Command(plugin, args...)
		cmd.Env = append(os.Environ(), "TLSPLANE_TEST_RUN_MAIN=1")
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		return stdout.String(), stderr.String(), err
	}
	out, _, err := run("--help")
	if err != nil || !strings.Contains(out, "\n  kubectl tlsplane status ") || strings.Contains(out, "\n  tlsplane status ") {
		t.Errorf("kubectl-tlsplane --help: %v\n%s", err, out)
	}
	out, _, err = run("status", "--help")
	if err != nil || !strings.Contains(out, "--kubeconfig PATH") {
		t.Errorf("kubectl-tlsplane status --help: %v\n%s", err, out)
	}
	_, stderr, err := run("status", "--kubeconfig", "/nowhere/config")
	if err == nil || !strings.HasPrefix(stderr, `kubectl tlsplane status: --kubeconfig "/nowhere/config"`) {
		t.Errorf("kubectl-tlsplane status with a missing kubeconfig: %v: %s", err, stderr)
	}
	_, stderr, err = run("frobnicate")
	if err == nil || !strings.HasPrefix(stderr, `kubectl tlsplane: unknown command "frobnicate"`) {
		t.Errorf("kubectl-tlsplane frobnicate: %v: %s", err, stderr)
	}
}

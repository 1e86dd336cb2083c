package envoy

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tlsplane/tlsplane/e2e/harness"
)

// TestQuickstart runs e2e/docker-compose.yaml without Docker: the same
// commands, the same mounted quickstart files and the same check scripts,
// as local processes sharing loopback the way the containers share
// tlsplane's network namespace. So the compose setup cannot drift from what
// `make e2e` proves, although no Docker engine runs here.
func TestQuickstart(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".cache", "envoy-e2e", "quickstart"))
	if err != nil {
		t.Fatal(err)
	}
	// Created first, so a scenario that cannot run is in the summary.
	s := newSummary("quickstart: e2e/docker-compose.yaml run without Docker", root)
	scenarios := []string{"happy-path", "failure-case"}
	tlsplaneBin, err := harness.TLSPlaneBinary()
	if err != nil {
		cannotRun(t, s, scenarios, err.Error())
	}
	envoyBin, err := harness.EnvoyBinary()
	if err != nil {
		cannotRun(t, s, scenarios, err.Error())
	}
	if _, err := exec.LookPath("curl"); err != nil {
		cannotRun(t, s, scenarios, "the compose check scripts need curl")
	}
	compose, err := readCompose(filepath.Join("..", "docker-compose.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, svc := range []string{"tlsplane", "payments", "payments-p384-only", "catalog", "envoy"} {
		if len(compose.commands[svc]) == 0 {
			t.Fatalf("docker-compose.yaml: no command for service %s", svc)
		}
	}
	for _, check := range []string{"check-happy", "check-failure"} {
		if compose.scripts[check] == "" {
			t.Fatalf("docker-compose.yaml: no script for %s", check)
		}
	}
	if busy := takenPorts(t, compose); busy != "" {
		cannotRun(t, s, scenarios, busy)
	}
	if err := os.RemoveAll(root); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(root, 0o755); err != nil {
		t.Fatal(err)
	}
	backendBin := harness.BackendBin(t, root)
	run := func(svc, bin string) *harness.Process {
		return harness.Start(t, root, svc, bin, compose.localArgs(compose.commands[svc])...)
	}
	run("tlsplane", tlsplaneBin)
	payments := run("payments", backendBin)
	run("catalog", backendBin)
	run("envoy", envoyBin)

	s.run(t, "happy-path", func(t *testing.T) { runCheck(t, root, compose, "check-happy", s, "happy-path") })
	s.run(t, "failure-case", func(t *testing.T) {
		payments.Stop(10 * time.Second)
		run("payments-p384-only", backendBin)
		runCheck(t, root, compose, "check-failure", s, "failure-case")
	})
}

// runCheck runs one compose check script with sh, bounded in time.
func runCheck(t *testing.T, dir string, c *composeFile, check string, s *summary, name string) {
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "sh", "-c", c.scripts[check])
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	last := strings.TrimSpace(string(out))
	if i := strings.LastIndex(last, "\n"); i >= 0 {
		last = last[i+1:]
	}
	s.note(name, "%s", shorten(last))
	if err != nil {
		t.Fatalf("%s: %v\n%s", check, err, out)
	}
}

// cannotRun ends the test when a prerequisite is missing: a failure under
// CI=true, where every scenario must run, else a skip. Either way each
// scenario is a line of the summary.
func cannotRun(t *testing.T, s *summary, scenarios []string, why string) {
	t.Helper()
	if os.Getenv("CI") == "true" {
		s.notRun(why+"; CI=true: not skipped", scenarios...)
	} else {
		s.skipped(why, scenarios...)
	}
	harness.Prerequisite(t, "quickstart", errors.New(why))
}

// takenPorts names a fixed quickstart port that is in use, e.g. by the
// README walkthrough's `make run`, or returns "".
func takenPorts(t *testing.T, c *composeFile) string {
	t.Helper()
	envoyYAML, err := os.ReadFile(c.mounts["/etc/envoy/envoy.yaml"])
	if err != nil {
		t.Fatalf("examples/envoy.yaml through the compose mount: %v", err)
	}
	var text strings.Builder
	text.Write(envoyYAML)
	for _, args := range c.commands {
		text.WriteString(strings.Join(args, " ") + "\n")
	}
	addrs := map[string]bool{}
	for _, m := range regexp.MustCompile(`127\.0\.0\.1:(\d+)`).FindAllStringSubmatch(text.String(), -1) {
		addrs["127.0.0.1:"+m[1]] = true
	}
	for _, m := range regexp.MustCompile(`port_value: (\d+)`).FindAllStringSubmatch(string(envoyYAML), -1) {
		addrs["127.0.0.1:"+m[1]] = true
	}
	for _, addr := range slices.Sorted(maps.Keys(addrs)) {
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			return fmt.Sprintf("quickstart port %s is in use (%v); stop whatever holds it, e.g. the README walkthrough", addr, err)
		}
		ln.Close()
	}
	return ""
}

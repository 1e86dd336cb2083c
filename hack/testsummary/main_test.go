package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A run as go test -json prints it: one test passes, one is skipped, one
// fails in a subtest, one never finishes.
const run = `{"Action":"start","Package":"p"}
{"Action":"run","Package":"p","Test":"TestA"}
{"Action":"output","Package":"p","Test":"TestA","Output":"=== RUN   TestA\n"}
{"Action":"output","Package":"p","Test":"TestA","Output":"    a_test.go:3: chatty\n"}
{"Action":"output","Package":"p","Test":"TestA","Output":"--- PASS: TestA (1.50s)\n"}
{"Action":"pass","Package":"p","Test":"TestA","Elapsed":1.5}
{"Action":"output","Package":"p","Test":"TestB","Output":"    b_test.go:9: no network namespace: not root\n"}
{"Action":"output","Package":"p","Test":"TestB","Output":"--- SKIP: TestB (0.00s)\n"}
{"Action":"skip","Package":"p","Test":"TestB","Elapsed":0}
{"Action":"output","Package":"p","Test":"TestC/one","Output":"    c_test.go:20: boom\n"}
{"Action":"fail","Package":"p","Test":"TestC/one","Elapsed":0.2}
{"Action":"output","Package":"p","Test":"TestC","Output":"--- FAIL: TestC (0.30s)\n"}
{"Action":"fail","Package":"p","Test":"TestC","Elapsed":0.3}
{"Action":"output","Package":"p","Test":"TestD","Output":"=== RUN   TestD\n"}
not json: printed as is
{"Action":"output","Package":"p","Output":"FAIL\tp\t2.0s\n"}
{"Action":"fail","Package":"p","Elapsed":2}
`

func TestSummary(t *testing.T) {
	var out strings.Builder
	r := newReport(&out, false)
	r.read(strings.NewReader(run))
	code := r.summarize("e2e/p", true, false)
	got := out.String()
	for _, want := range []string{
		"    c_test.go:20: boom\n--- FAIL: TestC",
		"not json: printed as is\n",
		"FAIL\tp\t2.0s\n",
		"=== e2e/p: per-test summary\n",
		"PASS TestA (1.5s)\n",
		"SKIP TestB (0.0s)  b_test.go:9: no network namespace: not root\n",
		"FAIL TestC (0.3s)\n  FAIL TestC/one (0.2s)\n",
		"FAIL TestD  (did not finish",
		"FAIL package p\n",
		"1 passed, 2 failed, 1 skipped (and 1 subtests: 0 passed, 1 failed, 0 skipped)\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "chatty") {
		t.Errorf("a passing test's log printed without -v:\n%s", got)
	}
	if code == 0 {
		t.Error("exit code 0 after failures")
	}
}

func TestSummaryExitCodes(t *testing.T) {
	pass := `{"Action":"pass","Package":"p","Test":"TestA","Elapsed":1}
{"Action":"pass","Package":"p","Elapsed":1}
`
	skip := pass + `{"Action":"skip","Package":"p","Test":"TestB","Elapsed":0}
`
	for _, c := range []struct {
		name, in string
		ci       bool
		want     int
	}{
		{"all pass", pass, false, 0},
		{"a skip", skip, false, 0},
		{"a skip under CI=true", skip, true, 1},
		{"nothing ran", `{"Action":"pass","Package":"p","Elapsed":1}` + "\n", false, 1},
	} {
		var out strings.Builder
		r := newReport(&out, false)
		r.read(strings.NewReader(c.in))
		if got := r.summarize("", true, c.ci); got != c.want {
			t.Errorf("%s: exit code %d, want %d\n%s", c.name, got, c.want, out.String())
		}
	}
}

// A suite silent for the heartbeat's interval gets a line naming what
// runs; output in between restarts the count.
func TestHeartbeat(t *testing.T) {
	var out strings.Builder
	r := newReport(&out, false)
	now := r.began
	r.now = func() time.Time { return now }
	tick := func(after time.Duration) string {
		now = now.Add(after)
		before := out.Len()
		r.tick("e2e/kube", 25*time.Second)
		return out.String()[before:]
	}
	if got := tick(24 * time.Second); got != "" {
		t.Errorf("heartbeat after 24s of silence: %q", got)
	}
	if got := tick(time.Second); !strings.Contains(got, "... e2e/kube: 25s so far, compiling the test binaries;") {
		t.Errorf("after 25s: %q", got)
	}
	r.read(strings.NewReader(`{"Action":"start","Package":"p"}` + "\n"))
	if got := tick(25 * time.Second); !strings.Contains(got, "a TestMain setting up (p)") {
		t.Errorf("package started, no test: %q", got)
	}
	r.read(strings.NewReader(`{"Action":"run","Package":"p","Test":"TestA"}
{"Action":"run","Package":"p","Test":"TestA/sub"}
{"Action":"run","Package":"p","Test":"TestB"}
{"Action":"pause","Package":"p","Test":"TestB"}
{"Action":"run","Package":"p","Test":"TestC"}
{"Action":"pass","Package":"p","Test":"TestC","Elapsed":1}
`))
	if got := tick(25 * time.Second); !strings.Contains(got, "1m15s so far, running TestA/sub (25s); 1 passed, 0 failed, 0 skipped") {
		t.Errorf("a running subtest, a paused test: %q", got)
	}
	r.read(strings.NewReader(`{"Action":"output","Package":"p","Test":"TestA/sub","Output":"=== RUN   TestA/sub\n"}` + "\n"))
	r.verbose = true
	r.read(strings.NewReader(`{"Action":"output","Package":"p","Test":"TestA/sub","Output":"    a log line\n"}` + "\n"))
	if got := tick(20 * time.Second); got != "" {
		t.Errorf("heartbeat 20s after a printed line: %q", got)
	}
}

// The command itself: a go test that prints nothing for a while gets
// heartbeat lines, and -events keeps its output.
func TestHeartbeatCommand(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs testsummary")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "testsummary")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	events := filepath.Join(dir, "events.json")
	script := `sleep 3; echo '{"Action":"run","Package":"p","Test":"TestA"}'; echo '{"Action":"pass","Package":"p","Test":"TestA","Elapsed":3}'`
	out, err := exec.Command(bin, "-title", "slow", "-heartbeat", "1s", "-events", events, "--", "sh", "-c", script).CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if n := strings.Count(string(out), "... slow: "); n < 2 {
		t.Errorf("%d heartbeat lines in 3s of silence, want at least 2:\n%s", n, out)
	}
	kept, err := os.ReadFile(events)
	if err != nil || !strings.Contains(string(kept), `"Test":"TestA","Elapsed":3`) {
		t.Errorf("-events kept %q (%v)", kept, err)
	}
}

package main

import (
	"strings"
	"testing"
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

package envoy

import (
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/tlsplane/tlsplane/e2e/harness"
)

// summaries are printed by TestMain after every test, so the matrix is the
// last thing a reader of `make e2e` sees.
var (
	summariesMu sync.Mutex
	summaries   []*summary
)

func TestMain(m *testing.M) {
	code := m.Run()
	harness.StopAll()
	summariesMu.Lock()
	for _, s := range summaries {
		fmt.Print(s.String())
	}
	summariesMu.Unlock()
	os.Exit(code)
}

// summary collects one line per scenario of one run.
type summary struct {
	title string
	logs  string // where the run's logs, manifests and certificates stay
	mu    sync.Mutex
	lines []string
	pass  int
	fail  int
	skip  int
	notes map[string]string
}

func newSummary(title, logs string) *summary {
	s := &summary{title: title, logs: logs}
	summariesMu.Lock()
	summaries = append(summaries, s)
	summariesMu.Unlock()
	return s
}

// run runs one scenario as a subtest and records its outcome.
func (s *summary) run(t *testing.T, name string, f func(t *testing.T)) {
	ran := false
	ok := t.Run(name, func(t *testing.T) { ran = true; f(t) })
	if !ran { // filtered out by -run
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	verdict := "PASS"
	if ok {
		s.pass++
	} else {
		s.fail++
		verdict = "FAIL"
	}
	line := fmt.Sprintf("%-4s %s", verdict, name)
	if n := s.notes[name]; n != "" {
		line += "  (" + n + ")"
	}
	s.lines = append(s.lines, line)
}

// notRun records scenarios that never started, e.g. after their setup
// failed, as failures: a summary must not read "0 failed" then.
func (s *summary) notRun(why string, names ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, name := range names {
		s.fail++
		s.lines = append(s.lines, fmt.Sprintf("%-4s %s  (not run: %s)", "FAIL", name, why))
	}
}

// skipped records scenarios that could not run here, e.g. for lack of a
// prerequisite, so a skip stays visible in the summary and its count.
func (s *summary) skipped(why string, names ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, name := range names {
		s.skip++
		s.lines = append(s.lines, fmt.Sprintf("%-4s %s  (%s)", "SKIP", name, why))
	}
}

// note attaches what a scenario observed to its summary line.
func (s *summary) note(name, format string, args ...any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.notes == nil {
		s.notes = map[string]string{}
	}
	s.notes[name] = fmt.Sprintf(format, args...)
}

func (s *summary) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var b strings.Builder
	b.WriteString("\n=== e2e/envoy " + s.title + ": per-scenario summary\n")
	for _, l := range s.lines {
		b.WriteString(l + "\n")
	}
	fmt.Fprintf(&b, "logs, manifests and certificates: %s\n", s.logs)
	fmt.Fprintf(&b, "%d passed, %d failed", s.pass, s.fail)
	if s.skip > 0 {
		fmt.Fprintf(&b, ", %d skipped", s.skip)
	}
	b.WriteString("\n")
	return b.String()
}

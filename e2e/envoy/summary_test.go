package envoy

import (
	"fmt"
	"strings"
	"sync"
	"testing"
)

// summary collects one line per scenario, printed when the run ends so a
// reader sees the whole matrix at once.
type summary struct {
	title string
	mu    sync.Mutex
	lines []string
	pass  int
	fail  int
	notes map[string]string
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
	fmt.Fprintf(&b, "%d passed, %d failed\n", s.pass, s.fail)
	return b.String()
}

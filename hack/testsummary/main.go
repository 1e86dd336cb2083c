// Command testsummary runs `go test -json ...` and prints what go test
// would print, then a per-test summary ending in an "N passed, N failed"
// line, so that a skipped or vanished test is visible at the end of every
// suite `make test` runs:
//
//	testsummary [-title T] [-v | -quiet] [-list all|notpassed] [-ci-skip-fails] [-heartbeat 25s] [-events FILE] -- go test -json ./kube/...
//
// Without -v only the package lines (ok, FAIL, what TestMain prints) and
// the output of failed tests pass through, as go test prints them without
// -v; with -v all output passes through. It exits non-zero when go test
// does, when a test failed or never finished, when no test ran, and, with
// -ci-skip-fails under CI=true, when a test was skipped: in the end-to-end
// suites a skip means a missing prerequisite, which CI must not hide.
//
// Whenever it has printed nothing for -heartbeat (compiling, a TestMain
// starting an API server, a long test without -v), it prints a line saying
// how long the suite has run, what is running and the counts so far, so
// no suite is silent for longer than that. -events keeps go test's JSON in
// a file (the conformance ratchet reads it); -quiet prints only the package
// lines and the heartbeat, no test output and no summary.
package main

import (
	"bufio"
	"cmp"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"time"
)

func main() {
	title := flag.String("title", "", "the suite's name in the summary heading")
	verbose := flag.Bool("v", false, "pass every test's output through, as go test -v")
	list := flag.String("list", "all", "tests listed in the summary: all, or notpassed (failed and skipped only)")
	ciSkipFails := flag.Bool("ci-skip-fails", false, "under CI=true, a skipped test fails the run")
	heartbeat := flag.Duration("heartbeat", 25*time.Second, "after this long without printing, print what is running (0: never)")
	eventsPath := flag.String("events", "", "also write go test's output, as it arrives, to this file")
	quiet := flag.Bool("quiet", false, "print only package lines and the heartbeat: no test output, no summary")
	flag.Parse()
	if flag.NArg() == 0 || (*list != "all" && *list != "notpassed") || (*verbose && *quiet) {
		fmt.Fprintln(os.Stderr, "usage: testsummary [-title T] [-v | -quiet] [-list all|notpassed] [-ci-skip-fails] [-heartbeat 25s] [-events FILE] -- go test -json ARGS...")
		os.Exit(2)
	}
	cmd := exec.Command(flag.Arg(0), flag.Args()[1:]...)
	cmd.Stderr = os.Stderr
	cmd.Stdin = os.Stdin
	out, err := cmd.StdoutPipe()
	if err == nil {
		err = cmd.Start()
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "testsummary: %v\n", err)
		os.Exit(1)
	}
	r := newReport(os.Stdout, *verbose)
	r.quiet = *quiet
	var in io.Reader = out
	if *eventsPath != "" {
		f, err := os.Create(*eventsPath)
		if err != nil {
			fmt.Fprintf(os.Stderr, "testsummary: %v\n", err)
			os.Exit(1)
		}
		defer f.Close()
		in = io.TeeReader(out, f)
	}
	stop := r.heartbeat(*title, *heartbeat)
	r.read(in)
	runErr := cmd.Wait()
	stop()
	code := 0
	if !*quiet {
		code = r.summarize(*title, *list == "all", *ciSkipFails && os.Getenv("CI") == "true")
	}
	var exit *exec.ExitError
	switch {
	case errors.As(runErr, &exit):
		code = max(code, exit.ExitCode(), 1)
	case runErr != nil:
		fmt.Fprintf(os.Stderr, "testsummary: %v\n", runErr)
		code = 1
	}
	os.Exit(code)
}

// event is one line of `go test -json` (cmd/test2json).
type event struct {
	Action  string
	Package string
	Test    string
	Elapsed float64
	Output  string
}

// result is one test's outcome.
type result struct {
	pkg, name string
	action    string // pass, fail, skip; "" while running
	paused    bool   // t.Parallel, waiting for its turn
	started   time.Time
	elapsed   float64
	output    []string // buffered until the outcome is known (without -v)
	lastLog   string   // the last line the test logged: a skip's reason
}

type report struct {
	mu       sync.Mutex // the heartbeat prints from its own goroutine
	w        io.Writer
	verbose  bool
	quiet    bool
	now      func() time.Time
	began    time.Time
	lastOut  time.Time       // when anything was last printed
	running  map[string]bool // packages started and not ended
	tests    map[[2]string]*result
	order    []*result
	packages map[string]string // package -> pass, fail, skip
	pkgOrder []string
}

func newReport(w io.Writer, verbose bool) *report {
	r := &report{verbose: verbose, tests: map[[2]string]*result{}, packages: map[string]string{},
		running: map[string]bool{}, now: time.Now}
	r.began = r.now()
	r.lastOut = r.began
	r.w = writerFunc(func(p []byte) (int, error) {
		r.lastOut = r.now()
		return w.Write(p)
	})
	return r
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

// heartbeat calls tick every second (a quarter of every, when shorter)
// until stop is called: a tick as long as every raced with it, and a line
// due at 1 s came at 2 s when the tick fired a hair early.
func (r *report) heartbeat(title string, every time.Duration) (stop func()) {
	if every <= 0 {
		return func() {}
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(min(time.Second, every/4))
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				r.tick(title, every)
			}
		}
	}()
	return func() { close(done); wg.Wait() }
}

// tick prints a line saying what runs when nothing was printed for every.
func (r *report) tick(title string, every time.Duration) {
	r.mu.Lock()
	defer r.mu.Unlock()
	now := r.now()
	if now.Sub(r.lastOut) < every {
		return
	}
	name := title
	if name == "" {
		name = "go test"
	}
	counts := map[string]int{}
	var leaves []*result
	for _, t := range r.order {
		counts[t.action]++
		if t.action != "" || t.paused {
			continue
		}
		leaf := true
		for _, sub := range r.order {
			if sub.pkg == t.pkg && sub.action == "" && strings.HasPrefix(sub.name, t.name+"/") {
				leaf = false
				break
			}
		}
		if leaf {
			leaves = append(leaves, t)
		}
	}
	var doing string
	switch {
	case len(leaves) > 0:
		var names []string
		for i, t := range leaves {
			if i == 3 {
				names = append(names, fmt.Sprintf("and %d more", len(leaves)-3))
				break
			}
			names = append(names, fmt.Sprintf("%s (%s)", t.name, now.Sub(t.started).Round(time.Second)))
		}
		doing = "running " + strings.Join(names, ", ")
	case len(r.running) > 0:
		pkgs := make([]string, 0, len(r.running))
		for p := range r.running {
			pkgs = append(pkgs, p)
		}
		slices.Sort(pkgs)
		doing = "no test running: compiling, or a TestMain setting up (" + strings.Join(pkgs, ", ") + ")"
	default:
		doing = "compiling the test binaries"
	}
	fmt.Fprintf(r.w, "... %s: %s so far, %s; %d passed, %d failed, %d skipped (tests and subtests)\n",
		name, now.Sub(r.began).Round(time.Second), doing, counts["pass"], counts["fail"], counts["skip"])
}

// read passes output through as it arrives and records every outcome.
func (r *report) read(in io.Reader) {
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		line := sc.Bytes()
		var e event
		if len(line) == 0 || line[0] != '{' || json.Unmarshal(line, &e) != nil {
			r.mu.Lock()
			fmt.Fprintf(r.w, "%s\n", line) // not test2json: show it as is
			r.mu.Unlock()
			continue
		}
		r.mu.Lock()
		r.event(e)
		r.mu.Unlock()
	}
	if err := sc.Err(); err != nil {
		r.mu.Lock()
		defer r.mu.Unlock()
		fmt.Fprintf(r.w, "testsummary: reading go test's output: %v\n", err)
		r.packages["(testsummary)"] = "fail"
		r.pkgOrder = append(r.pkgOrder, "(testsummary)")
	}
}

func (r *report) event(e event) {
	if e.Test == "" {
		switch e.Action {
		case "start":
			r.running[e.Package] = true
		case "output", "build-output":
			// go test -json says PASS before ok; go test alone does not.
			if r.verbose || e.Output != "PASS\n" {
				io.WriteString(r.w, e.Output)
			}
		case "pass", "fail", "skip", "build-fail":
			delete(r.running, e.Package)
			action := e.Action
			if action == "build-fail" {
				action = "fail"
			}
			if _, seen := r.packages[e.Package]; !seen {
				r.pkgOrder = append(r.pkgOrder, e.Package)
			}
			r.packages[e.Package] = action
		}
		return
	}
	key := [2]string{e.Package, e.Test}
	t := r.tests[key]
	if t == nil {
		t = &result{pkg: e.Package, name: e.Test, started: r.now()}
		r.tests[key] = t
		r.order = append(r.order, t)
	}
	switch e.Action {
	case "pause":
		t.paused = true
	case "cont":
		t.paused = false
	case "output":
		if r.verbose {
			io.WriteString(r.w, e.Output)
		} else if !r.quiet {
			t.output = append(t.output, e.Output)
		}
		trimmed := strings.TrimSpace(e.Output)
		if trimmed != "" && !strings.HasPrefix(trimmed, "=== ") && !strings.HasPrefix(trimmed, "--- ") {
			t.lastLog = trimmed
		}
	case "pass", "fail", "skip":
		t.action, t.elapsed = e.Action, e.Elapsed
		if e.Action == "fail" && !r.verbose && !r.quiet && !strings.Contains(t.name, "/") {
			// go test without -v prints a failed test's output; its
			// subtests' lines are part of it.
			for _, sub := range r.order {
				if sub == t || strings.HasPrefix(sub.name, t.name+"/") {
					for _, o := range sub.output {
						io.WriteString(r.w, o)
					}
				}
			}
		}
		if !strings.Contains(t.name, "/") {
			for _, sub := range r.order {
				if sub.pkg == t.pkg && (sub == t || strings.HasPrefix(sub.name, t.name+"/")) {
					sub.output = nil
				}
			}
		}
	}
}

// summarize prints the per-test list and the counts of top-level tests,
// and returns the exit code the outcomes call for.
func (r *report) summarize(title string, all, ci bool) int {
	heading := "per-test summary"
	if title != "" {
		heading = title + ": " + heading
	}
	fmt.Fprintf(r.w, "\n=== %s\n", heading)
	counts := map[string]int{}
	sub := map[string]int{}
	for _, t := range r.sorted() {
		verdict := strings.ToUpper(t.action)
		if t.action == "" {
			verdict = "FAIL"
		}
		nested := strings.Count(t.name, "/")
		if nested == 0 {
			counts[verdict]++
		} else {
			sub[verdict]++
		}
		if !all && verdict == "PASS" {
			continue
		}
		line := fmt.Sprintf("%s%-4s %s", strings.Repeat("  ", nested), verdict, t.name)
		if len(r.pkgOrder) > 1 {
			line += "  [" + t.pkg + "]"
		}
		switch {
		case t.action == "":
			line += "  (did not finish: a panic, a timeout or os.Exit)"
		case t.action == "skip" && t.lastLog != "":
			line += fmt.Sprintf(" (%.1fs)  %s", t.elapsed, t.lastLog)
		default:
			line += fmt.Sprintf(" (%.1fs)", t.elapsed)
		}
		fmt.Fprintln(r.w, line)
	}
	code := 0
	for _, pkg := range r.pkgOrder {
		if r.packages[pkg] == "fail" {
			fmt.Fprintf(r.w, "FAIL package %s\n", pkg)
			code = 1
		}
	}
	line := fmt.Sprintf("%d passed, %d failed", counts["PASS"], counts["FAIL"])
	if counts["SKIP"] > 0 {
		line += fmt.Sprintf(", %d skipped", counts["SKIP"])
	}
	if n := sub["PASS"] + sub["FAIL"] + sub["SKIP"]; n > 0 {
		line += fmt.Sprintf(" (and %d subtests: %d passed, %d failed, %d skipped)", n, sub["PASS"], sub["FAIL"], sub["SKIP"])
	}
	fmt.Fprintln(r.w, line)
	switch {
	case counts["FAIL"] > 0 || sub["FAIL"] > 0:
		code = 1
	case len(r.order) == 0:
		fmt.Fprintln(r.w, "FAIL: no test ran")
		code = 1
	case ci && counts["SKIP"]+sub["SKIP"] > 0:
		fmt.Fprintln(r.w, "FAIL: CI=true and tests were skipped (a missing prerequisite must fail in CI)")
		code = 1
	}
	return code
}

// sorted lists the tests in the order their top-level tests started, each
// followed by its subtests by name.
func (r *report) sorted() []*result {
	first := map[[2]string]int{}
	top := func(t *result) [2]string {
		name, _, _ := strings.Cut(t.name, "/")
		return [2]string{t.pkg, name}
	}
	for i, t := range r.order {
		if _, ok := first[top(t)]; !ok {
			first[top(t)] = i
		}
	}
	out := slices.Clone(r.order)
	slices.SortStableFunc(out, func(a, b *result) int {
		if c := cmp.Compare(first[top(a)], first[top(b)]); c != 0 {
			return c
		}
		return cmp.Compare(a.name, b.name)
	})
	return out
}

// Command ratchet reads one run of the conformance suite (go test -json
// events) and the ConformanceReport it wrote, prints a line per suite test
// and a summary, keeps each failing test's own log lines under -logs, and
// exits non-zero when a test listed in -passing did not pass, or when the
// run ended before the suite could report (a setup failure, a crash).
//
// Tests the list does not name may fail without failing the build: the
// list is the ratchet, it only grows (a test that passes and is not listed
// is printed as NEW so it can be added).
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// event is one line of `go test -json`.
type event struct {
	Action  string
	Test    string
	Output  string
	Elapsed float64
}

// result is one suite test: its outcome and its own output.
type result struct {
	action  string // pass, fail, skip; "" when it never ended
	elapsed float64
	output  []string
}

func main() {
	events := flag.String("events", "", "go test -json output of the conformance run")
	passingPath := flag.String("passing", "", "the committed lists of tests that must pass, comma-separated (a channel's run must pass every list it is given)")
	channel := flag.String("channel", "standard", "the Gateway API channel whose CRDs the run installed, for the heading")
	logs := flag.String("logs", "", "folder for the log lines of each failing test")
	flag.Parse()
	fmt.Printf("=== Gateway API conformance, %s channel: per-test results (the profiles and the supported extended features)\n", *channel)
	code, err := run(*events, *passingPath, *logs)
	if err != nil {
		fmt.Fprintln(os.Stderr, "ratchet:", err)
		os.Exit(2)
	}
	os.Exit(code)
}

func run(eventsPath, passingPath, logDir string) (int, error) {
	passing, err := readList(passingPath)
	if err != nil {
		return 0, err
	}
	tests, top, notRun, err := readEvents(eventsPath)
	if err != nil {
		return 0, err
	}
	if err := os.MkdirAll(logDir, 0o755); err != nil {
		return 0, err
	}

	names := make([]string, 0, len(tests))
	for name := range tests {
		names = append(names, name)
	}
	sort.Strings(names)
	var passed, failed, skipped, newlyPassing, listedPassed int
	var regressions, failures []string
	for _, name := range names {
		r := tests[name]
		listed := passing[name]
		switch r.action {
		case "pass":
			passed++
			note := ""
			if listed {
				listedPassed++
			} else {
				newlyPassing++
				note = "  NEW: passes, add it to " + passingPath
			}
			fmt.Printf("PASS  %-60s %6.1fs%s\n", name, r.elapsed, note)
		case "skip":
			skipped++
			note := ""
			if listed {
				// A listed test the suite no longer runs has regressed too
				// (a feature dropped from supportedFeatures, say).
				note = "  REGRESSION: listed in " + passingPath
				regressions = append(regressions, name)
			}
			fmt.Printf("SKIP  %-60s %s%s\n", name, skipReason(r.output), note)
		default:
			failed++
			path := filepath.Join(logDir, name+".log")
			if err := os.WriteFile(path, []byte(strings.Join(r.output, "")), 0o644); err != nil {
				return 0, err
			}
			state := "not yet passing"
			if listed {
				state = "REGRESSION: listed in " + passingPath
				regressions = append(regressions, name)
			}
			failures = append(failures, name)
			fmt.Printf("FAIL  %-60s %6.1fs  %s; log: %s\n", name, r.elapsed, state, path)
		}
	}
	var missing []string
	for name := range passing {
		if _, ran := tests[name]; !ran {
			missing = append(missing, name)
		}
	}
	sort.Strings(missing)
	for _, name := range missing {
		fmt.Printf("FAIL  %-60s did not run (listed in %s)\n", name, passingPath)
	}

	for _, name := range failures {
		fmt.Printf("\n--- %s: last lines of the suite's log\n", name)
		fmt.Print(tail(tests[name].output, 8))
	}
	for _, line := range notRun {
		fmt.Println(line)
	}
	fmt.Printf("\nsuite: %d tests, %d passing, %d not passing, %d skipped (not supported or not in the profile); %d passing but not yet listed\n",
		len(names), passed, failed, skipped, newlyPassing)
	broken := len(regressions) + len(missing)
	if top == "" {
		// Counted as one failure: nothing the suite said can be trusted.
		fmt.Println("the suite's run did not finish (no result for TestConformance): see", eventsPath)
		broken++
	}
	// The ratchet's own line: the listed tests.
	fmt.Printf("ratchet: %d passed, %d failed\n", listedPassed, broken)
	if broken > 0 {
		return 1, nil
	}
	return 0, nil
}

// readEvents groups the run's output by suite test (TestConformance/<Name>;
// deeper subtests count toward their suite test) and returns
// TestConformance's own action and the node agent's list of Pods it could
// not run (images it does not know).
func readEvents(path string) (map[string]*result, string, []string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, "", nil, err
	}
	defer f.Close()
	tests := map[string]*result{}
	var top string
	var notRun []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		var e event
		if json.Unmarshal(sc.Bytes(), &e) != nil {
			continue // go's own messages (a build failure) are not events
		}
		parts := strings.SplitN(e.Test, "/", 3)
		if parts[0] != "TestConformance" {
			continue
		}
		if len(parts) == 1 {
			if e.Action == "pass" || e.Action == "fail" || e.Action == "skip" {
				top = e.Action
			}
			if i := strings.Index(e.Output, "node agent: not run:"); i >= 0 {
				notRun = append(notRun, strings.TrimSpace(e.Output[i:]))
			}
			continue
		}
		r := tests[parts[1]]
		if r == nil {
			r = &result{}
			tests[parts[1]] = r
		}
		switch {
		case e.Action == "output":
			r.output = append(r.output, e.Output)
		case len(parts) == 2 && (e.Action == "pass" || e.Action == "fail" || e.Action == "skip"):
			r.action, r.elapsed = e.Action, e.Elapsed
		}
	}
	return tests, top, notRun, sc.Err()
}

// readList reads test names, one a line; # starts a comment.
// readList reads the comma-separated lists in paths into one set.
func readList(paths string) (map[string]bool, error) {
	names := map[string]bool{}
	for _, path := range strings.Split(paths, ",") {
		data, err := os.ReadFile(path)
		if err != nil {
			return nil, err
		}
		for _, line := range strings.Split(string(data), "\n") {
			line, _, _ = strings.Cut(line, "#")
			if line = strings.TrimSpace(line); line != "" {
				names[line] = true
			}
		}
	}
	return names, nil
}

// skipReason is the suite's reason, from the test's output.
func skipReason(output []string) string {
	for _, line := range output {
		if i := strings.Index(line, "Skipping"); i >= 0 {
			return strings.TrimSpace(line[i:])
		}
	}
	for _, line := range output {
		if t := strings.TrimSpace(line); t != "" && !strings.HasPrefix(t, "=== ") && !strings.HasPrefix(t, "--- ") {
			return t
		}
	}
	return ""
}

func tail(lines []string, n int) string {
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "")
}

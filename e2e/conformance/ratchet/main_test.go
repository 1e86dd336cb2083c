package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// events writes a go test -json stream: TestConformance's own end (when
// top is not empty) and each suite test's action.
func events(t *testing.T, top string, tests map[string]string) string {
	t.Helper()
	var b strings.Builder
	for name, action := range tests {
		b.WriteString(`{"Action":"output","Test":"TestConformance/` + name + `","Output":"log line of ` + name + `\n"}` + "\n")
		b.WriteString(`{"Action":"` + action + `","Test":"TestConformance/` + name + `","Elapsed":0.1}` + "\n")
	}
	if top != "" {
		b.WriteString(`{"Action":"` + top + `","Test":"TestConformance","Elapsed":1}` + "\n")
	}
	path := filepath.Join(t.TempDir(), "events.json")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestRatchetFailsOnlyForListedTests(t *testing.T) {
	list := filepath.Join(t.TempDir(), "passing.txt")
	if err := os.WriteFile(list, []byte("# listed\nA\nB # comment\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name  string
		top   string
		tests map[string]string
		want  int
	}{
		{"listed pass, unlisted fail", "fail", map[string]string{"A": "pass", "B": "pass", "C": "fail"}, 0},
		{"listed test fails", "fail", map[string]string{"A": "pass", "B": "fail"}, 1},
		{"listed test never ran", "pass", map[string]string{"A": "pass"}, 1},
		{"listed test skipped", "pass", map[string]string{"A": "pass", "B": "skip"}, 1},
		{"run did not finish", "", map[string]string{"A": "pass", "B": "pass"}, 1},
		{"new test passes", "pass", map[string]string{"A": "pass", "B": "pass", "D": "pass"}, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			logs := t.TempDir()
			got, err := run(events(t, c.top, c.tests), list, logs)
			if err != nil {
				t.Fatal(err)
			}
			if got != c.want {
				t.Fatalf("exit %d, want %d", got, c.want)
			}
			for name, action := range c.tests {
				_, err := os.Stat(filepath.Join(logs, name+".log"))
				if (action == "fail") != (err == nil) {
					t.Errorf("%s (%s): log kept = %v", name, action, err == nil)
				}
			}
		})
	}
}

// The experimental channel's run is held to the standard list and its own:
// a test of either list that fails, or never runs, fails the ratchet.
func TestRatchetHoldsEveryList(t *testing.T) {
	dir := t.TempDir()
	standard, experimental := filepath.Join(dir, "passing.txt"), filepath.Join(dir, "passing-experimental.txt")
	if err := os.WriteFile(standard, []byte("A\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(experimental, []byte("R\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	lists := standard + "," + experimental
	for _, c := range []struct {
		name  string
		tests map[string]string
		want  int
	}{
		{"both lists pass", map[string]string{"A": "pass", "R": "pass"}, 0},
		{"the second list's test fails", map[string]string{"A": "pass", "R": "fail"}, 1},
		{"the first list's test fails", map[string]string{"A": "fail", "R": "pass"}, 1},
		{"the second list's test never ran", map[string]string{"A": "pass"}, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := run(events(t, "pass", c.tests), lists, t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			if got != c.want {
				t.Fatalf("exit %d, want %d", got, c.want)
			}
		})
	}
	if _, err := run(events(t, "pass", map[string]string{"A": "pass"}), standard+","+filepath.Join(dir, "absent.txt"), t.TempDir()); err == nil {
		t.Fatal("a list that does not exist must be an error")
	}
}

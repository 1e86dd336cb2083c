package translator_test

import (
	"bufio"
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/tlsplane/tlsplane/manifests"
	"github.com/tlsplane/tlsplane/translator"
	"github.com/tlsplane/tlsplane/translator/document"
)

var update = flag.Bool("update", false, "rewrite testdata/translator/*.out.yaml and stages/*, and delete outputs without an input")

// goldenDir holds <case>.in.yaml inputs and the <case>.out.yaml documents
// `tlsplane translate -o yaml` prints for them.
const goldenDir = "../testdata/translator"

// goldenNow is the clock of every golden case (SOURCE_DATE_EPOCH=1767225600
// gives the CLI the same).
var goldenNow = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func TestGolden(t *testing.T) {
	forEachGoldenInput(t, func(t *testing.T, _, in string) {
		outPath := strings.TrimSuffix(in, ".in.yaml") + ".out.yaml"
		compareGolden(t, outPath, renderGolden(t, in), "the translation of "+in)
	})
	if *update {
		deleteStaleOutputs(t)
	}
}

func forEachGoldenInput(t *testing.T, run func(t *testing.T, name, in string)) {
	inputs, err := filepath.Glob(filepath.Join(goldenDir, "*.in.yaml"))
	if err != nil || len(inputs) == 0 {
		t.Fatalf("no golden inputs in %s (%v)", goldenDir, err)
	}
	for _, in := range inputs {
		name := strings.TrimSuffix(filepath.Base(in), ".in.yaml")
		t.Run(name, func(t *testing.T) { run(t, name, in) })
	}
}

// compareGolden compares got, what the test made of what, with the file at
// path, or writes it with -update.
func compareGolden(t *testing.T, path string, got []byte, what string) {
	t.Helper()
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run `make golden`)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from %s; run `make golden` and review the diff\n%s", path, what, firstDifference(want, got))
	}
}

// renderGolden is what `tlsplane translate -o yaml <in>` prints, with the
// flags named on the input's `# flags:` line.
func renderGolden(t *testing.T, path string) []byte {
	t.Helper()
	in, err := manifests.Unadmitted.Read([]string{path}, func(msg string) { t.Log("warning:", msg) })
	if err != nil {
		t.Fatal(err)
	}
	out := translator.Translate(in, nil, goldenNow, goldenOptions(t, path))
	doc, err := document.Render(in, out, document.FormatYAML)
	if err != nil {
		t.Fatal(err)
	}
	return doc
}

// goldenOptions reads the CLI flags a case needs from a `# flags:` line.
func goldenOptions(t *testing.T, path string) translator.Options {
	t.Helper()
	opts := translator.Options{
		ControllerName:     translator.DefaultControllerName,
		SystemCABundlePath: translator.DefaultSystemCABundlePath,
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line, ok := strings.CutPrefix(sc.Text(), "# flags:")
		if !ok {
			continue
		}
		fields := strings.Fields(line)
		for i := 0; i < len(fields); i++ {
			switch fields[i] {
			case "--allow-insecure-skip-verify":
				opts.AllowInsecureSkipVerify = true
			case "--controller-name":
				i++
				opts.ControllerName = gwv1.GatewayController(fields[i])
			case "--system-ca-bundle":
				i++
				opts.SystemCABundlePath = fields[i]
			default:
				t.Fatalf("%s: unknown flag %q on the # flags: line", path, fields[i])
			}
		}
	}
	return opts
}

func deleteStaleOutputs(t *testing.T) {
	deleteStale(t, filepath.Join(goldenDir, "*.out.yaml"), func(out string) string {
		return strings.TrimSuffix(out, ".out.yaml") + ".in.yaml"
	})
}

// deleteStale removes the outputs matching pattern whose input (inputOf)
// is gone.
func deleteStale(t *testing.T, pattern string, inputOf func(string) string) {
	outputs, _ := filepath.Glob(pattern)
	for _, out := range outputs {
		if _, err := os.Stat(inputOf(out)); os.IsNotExist(err) {
			t.Logf("deleting %s: its input is gone", out)
			if err := os.Remove(out); err != nil {
				t.Error(err)
			}
		}
	}
}

// firstDifference shows the first differing line, enough to start a review.
func firstDifference(want, got []byte) string {
	w, g := strings.Split(string(want), "\n"), strings.Split(string(got), "\n")
	for i := 0; i < len(w) || i < len(g); i++ {
		var wl, gl string
		if i < len(w) {
			wl = w[i]
		}
		if i < len(g) {
			gl = g[i]
		}
		if wl != gl {
			return fmt.Sprintf("line %d:\n  want: %s\n  got:  %s", i+1, wl, gl)
		}
	}
	return ""
}

package manifests

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
)

// yamlReaderSplit is what the YAML reader reads from data: its documents
// and its error.
func yamlReaderSplit(data []byte) ([][]byte, error) {
	var raws [][]byte
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	for {
		raw, err := r.Read()
		if errors.Is(err, io.EOF) {
			return raws, nil
		}
		if err != nil {
			return raws, err
		}
		raws = append(raws, raw)
	}
}

// agreesWithYAMLReader fails t when splitDocuments answers data and its
// documents are not the reader's; it says whether splitDocuments answered.
func agreesWithYAMLReader(t *testing.T, what string, data []byte) bool {
	t.Helper()
	data = withFinalNewline(data)
	got, ok := splitDocuments(data)
	if !ok {
		return false
	}
	want, err := yamlReaderSplit(data)
	switch {
	case err != nil:
		t.Errorf("%s: split %d documents of a text the reader refuses (%v): %q", what, len(got), err, data)
	case len(got) != len(want):
		t.Errorf("%s: %d documents, the reader %d: %q", what, len(got), len(want), data)
	default:
		for i := range got {
			if !bytes.Equal(got[i], want[i]) {
				t.Errorf("%s: document %d is %q, the reader's %q", what, i+1, got[i], want[i])
			}
		}
	}
	return true
}

// splitMutations are edits of a file's lines that the reader reads as
// separators, refuses, or reads otherwise.
var splitMutations = []string{"---", "--- ", "---\t# c", "--- #x", "---#", "----", "---x", "--- x", " ---", "...", "\r", "\r\n", "\n", "\n\n", "#", "--- \u00a0", "---\v", "-- -", "a: 1"}

// TestSplitDocumentsIsYAMLReader: on every file of the repository's
// manifests and thousands of edits of them, splitDocuments either
// declines or splits as the YAML reader does; it splits every unedited
// file.
func TestSplitDocumentsIsYAMLReader(t *testing.T) {
	var files [][]byte
	for _, pattern := range []string{"../testdata/translator/*.in.yaml", "../examples/*.yaml", "../examples/*/*.yaml", "../deploy/*.yaml", "../deploy/*/*.yaml", "testdata/*.yaml"} {
		names, err := filepath.Glob(pattern)
		if err != nil {
			t.Fatal(err)
		}
		for _, name := range names {
			data, err := os.ReadFile(name)
			if err != nil {
				t.Fatal(err)
			}
			files = append(files, data)
		}
	}
	if len(files) < 20 {
		t.Fatalf("only %d files: the corpus is missing", len(files))
	}
	rng := rand.New(rand.NewPCG(38, 49))
	edits, editsSplit := 0, 0
	for i, data := range files {
		if !bytes.Contains(data, []byte("\r")) && !agreesWithYAMLReader(t, "file", data) {
			t.Errorf("file %d: splitDocuments declined a plain file", i)
		}
		for range 30 {
			lines := bytes.SplitAfter(data, []byte("\n"))
			for range 1 + rng.IntN(3) {
				at := rng.IntN(len(lines) + 1)
				edit := []byte(splitMutations[rng.IntN(len(splitMutations))])
				if rng.IntN(2) == 0 {
					edit = append(edit, '\n')
				}
				lines = append(lines[:at], append([][]byte{edit}, lines[at:]...)...)
			}
			edits++
			if agreesWithYAMLReader(t, "edit", bytes.Join(lines, nil)) {
				editsSplit++
			}
		}
	}
	for _, data := range []string{"", "\n", "---\n", "---\n---\n", "a: 1\n---\n", "---\na: 1\n---\n--- # x\nb: 2\n", "a: 1\n----\n", "a:\n  - 1\n---\t\n"} {
		agreesWithYAMLReader(t, "case", []byte(data))
	}
	t.Logf("%d files, %d edits, %d of them split", len(files), edits, editsSplit)
}

// FuzzSplitDocuments holds splitDocuments to the YAML reader on any text.
func FuzzSplitDocuments(f *testing.F) {
	f.Add([]byte("a: 1\n---\nb: 2\n"))
	f.Add([]byte("---\n--- #c\n----\n"))
	f.Fuzz(func(t *testing.T, data []byte) { agreesWithYAMLReader(t, "fuzz", data) })
}

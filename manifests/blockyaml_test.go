package manifests

import (
	"bytes"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/tlsplane/tlsplane/crds"
	"github.com/tlsplane/tlsplane/perf/world"
)

// corpusDocuments are the documents of the repository's manifests: the
// translator's golden inputs and the examples.
func corpusDocuments(t testing.TB) [][]byte {
	t.Helper()
	var docs [][]byte
	for _, pattern := range []string{"../testdata/translator/*.in.yaml", "../examples/*.yaml", "../examples/*/*.yaml", "../deploy/*.yaml", "../deploy/*/*.yaml"} {
		files, err := filepath.Glob(pattern)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			raws, err := yamlReaderSplit(append(data, '\n'))
			if err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			docs = append(docs, raws...)
		}
	}
	return docs
}

// corpusAndWorldDocuments is corpusDocuments and the documents of
// perf/world's Gateway and first three Services.
func corpusAndWorldDocuments(t testing.TB) [][]byte {
	t.Helper()
	docs := corpusDocuments(t)
	var w bytes.Buffer
	if err := world.WriteGateway(&w); err != nil {
		t.Fatal(err)
	}
	if err := world.WriteServices(&w, 0, 3, "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n", 8443); err != nil {
		t.Fatal(err)
	}
	raws, stop := DefaultLimits.split("world.yaml", w.Bytes())
	if stop != nil {
		t.Fatal(stop)
	}
	return append(docs, raws...)
}

// yamlMutations are edits that make YAML mean something else, or
// nothing: the converter must then decline, or agree with YAMLToJSON.
var yamlMutations = []string{" ", "  ", "\t", ":", ": ", "- ", "#", " #x", "'", "\"", "\\", "|", "|-", ">", "&a ", "*a", "!t ", "[", "]", "{", "}", ",", "\n", "\n  ", "yes", "0", "07", "1.5", "~", "-", "?", "@", "%", "<", "&", "---\n", "--- ", "...\n"}

// TestBlockYAMLToJSONIsYAMLToJSON: on every document of the repository's
// manifests and thousands of edits of them, the block converter either
// declines or writes YAMLToJSON's bytes (and never accepts YAML that
// YAMLToJSON refuses); it converts half the documents themselves.
func TestBlockYAMLToJSONIsYAMLToJSON(t *testing.T) {
	docs := corpusDocuments(t)
	converted := 0
	check := func(what string, raw []byte) bool { return agreesWithYAMLToJSON(t, what, raw) }
	for _, d := range docs {
		if check("document", d) {
			converted++
		}
	}
	// The golden inputs favour nested flow style, which is declined.
	if converted < len(docs)/2 {
		t.Errorf("converted %d of %d documents; want half", converted, len(docs))
	}
	r := rand.New(rand.NewPCG(37, 2))
	for range 30000 {
		d := docs[r.IntN(len(docs))]
		if len(d) == 0 {
			continue
		}
		m := slicesClone(d)
		for n := 1 + r.IntN(2); n > 0; n-- {
			at := r.IntN(len(m) + 1)
			switch r.IntN(3) {
			case 0:
				end := min(len(m), at+1+r.IntN(3))
				m = append(m[:at:at], m[end:]...)
			default:
				ins := yamlMutations[r.IntN(len(yamlMutations))]
				m = append(m[:at:at], append([]byte(ins), m[at:]...)...)
			}
		}
		check("edited document", m)
	}
}

// agreesWithYAMLToJSON fails t unless blockYAMLToJSON declines raw or
// writes YAMLToJSON's exact bytes (and never accepts what YAMLToJSON
// refuses); it reports whether the converter accepted.
func agreesWithYAMLToJSON(t testing.TB, what string, raw []byte) bool {
	t.Helper()
	got, ok := blockYAMLToJSON(raw)
	if !ok {
		return false
	}
	want, err := yaml.YAMLToJSON(raw)
	if err != nil {
		t.Fatalf("%s: converted YAML that YAMLToJSON refuses (%v):\n%s", what, err, raw)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("%s:\n%s\ngot  %s\nwant %s", what, raw, got, want)
	}
	// The tree a Gateway API object is admitted from is crds.Decode of
	// those bytes, and its head the probe's.
	p, root, _ := parseBlockYAML(raw)
	defer p.release()
	decoded, err := crds.Decode(want)
	if tree := root.value(); err != nil || !reflect.DeepEqual(tree, any(decoded)) {
		t.Fatalf("%s:\n%s\ntree    %#v\ndecoded %#v (%v)", what, raw, tree, decoded, err)
	}
	if h, ok := root.head(); ok {
		if probed, err := probeHead(want); err != nil || probed != h {
			t.Fatalf("%s:\n%s\nhead %+v, the probe's %+v (%v)", what, raw, h, probed, err)
		}
	}
	return true
}

// FuzzBlockYAMLToJSON: on any input the block converter declines or agrees
// with YAMLToJSON byte for byte (the random edits above, searched by the
// fuzzer from the repository's documents).
func FuzzBlockYAMLToJSON(f *testing.F) {
	for _, d := range corpusDocuments(f) {
		f.Add(d)
	}
	f.Fuzz(func(t *testing.T, raw []byte) { agreesWithYAMLToJSON(t, "input", raw) })
}

func slicesClone(b []byte) []byte { return append([]byte(nil), b...) }

// A file's first document, as the YAML reader splits it, keeps the file's
// leading "---" (helm template writes one): the converter reads it, as
// YAMLToJSON does, rather than declining every such file's first object.
func TestBlockYAMLToJSONReadsALeadingDocumentMarker(t *testing.T) {
	var b bytes.Buffer
	if err := world.WriteServices(&b, 3, 4, "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n", 8443); err != nil {
		t.Fatal(err)
	}
	raws, stop := DefaultLimits.split("world.yaml", b.Bytes())
	if stop != nil || len(raws) == 0 || !bytes.HasPrefix(raws[0], []byte("---\n")) {
		t.Fatalf("the world's first document %q (%v): want one starting with its file's ---", raws, stop)
	}
	for i, raw := range raws {
		if !agreesWithYAMLToJSON(t, "world document", raw) {
			t.Errorf("document %d declined:\n%s", i+1, raw)
		}
	}
}

package manifests

import (
	"bytes"
	"math/rand/v2"
	"testing"

	"sigs.k8s.io/yaml"
)

// jsonMutations are edits that make JSON invalid, or change what its head
// is: the scanner must then decline, or agree with the probe.
var jsonMutations = []string{"", " ", "\"", "\\", "\\u0041", "\\n", "{", "}", "[", "]", ",", ":", "0", "-", "01", "1.", "1e", "1.5e+3", "true", "nul", "null", "\x01", "\xc3\xa9", "\u017f", "\u212a", "APIVERSION", "Kind", "\"kind\":\"X\",", "\"metadata\":{},", "\"Metadata\":{\"name\":\"n\"},", "\"name\":\"x\",", "\"namespace\":1,"}

// agreesWithProbe fails t when scanHead answers doc and its answer is not
// the probe's; it says whether scanHead answered.
func agreesWithProbe(t *testing.T, what string, doc []byte) bool {
	t.Helper()
	got, ok := scanHead(doc)
	if !ok {
		return false
	}
	want, err := probeHead(doc)
	if err != nil {
		t.Errorf("%s: scanHead read %+v from JSON the probe refuses (%v): %q", what, got, err, doc)
	} else if got != want {
		t.Errorf("%s: scanHead %+v, probe %+v: %q", what, got, want, doc)
	}
	return true
}

// TestScanHeadIsProbe: on every document of the repository's manifests and
// of perf/world, as JSON, and on thousands of edits of them, scanHead
// either declines or reads what encoding/json's probe reads (never from
// JSON the probe refuses); it reads every unedited document.
func TestScanHeadIsProbe(t *testing.T) {
	docs := corpusAndWorldDocuments(t)
	rng := rand.New(rand.NewPCG(38, 48))
	read, edited, editsRead := 0, 0, 0
	for i, raw := range docs {
		doc, err := yaml.YAMLToJSON(raw)
		if err != nil || !bytes.HasPrefix(doc, []byte("{")) {
			continue
		}
		if !agreesWithProbe(t, "document", doc) {
			t.Errorf("document %d: scanHead declined a plain document: %q", i, doc)
		}
		read++
		for range 40 {
			m := mutateJSON(rng, doc)
			edited++
			if agreesWithProbe(t, "edit", m) {
				editsRead++
			}
		}
	}
	if read < 100 {
		t.Fatalf("only %d documents read: the corpus is missing", read)
	}
	t.Logf("%d documents read, %d edits, %d of them read by scanHead", read, edited, editsRead)
}

// mutateJSON inserts, replaces or deletes at a random place, mostly near
// a head key so that the edits reach what scanHead reads.
func mutateJSON(rng *rand.Rand, doc []byte) []byte {
	at := rng.IntN(len(doc) + 1)
	if rng.IntN(2) == 0 {
		for _, key := range []string{`"apiVersion"`, `"kind"`, `"metadata"`, `"name"`, `"namespace"`} {
			if i := bytes.Index(doc, []byte(key)); i >= 0 && rng.IntN(3) == 0 {
				at = min(len(doc), i+rng.IntN(len(key)+12))
				break
			}
		}
	}
	edit := jsonMutations[rng.IntN(len(jsonMutations))]
	out := append([]byte(nil), doc[:at]...)
	switch rng.IntN(3) {
	case 0: // insert
		out = append(out, edit...)
		out = append(out, doc[at:]...)
	case 1: // replace
		out = append(out, edit...)
		out = append(out, doc[min(len(doc), at+len(edit)):]...)
	default: // delete
		out = append(out, doc[min(len(doc), at+1+rng.IntN(4)):]...)
	}
	return out
}

// TestScanHeadDeclines: what the probe reads differently from a plain
// reading of the keys goes to the probe.
func TestScanHeadDeclines(t *testing.T) {
	for _, doc := range []string{
		`{"apiVersion":"v1","kind":"Service","APIVersion":"v2"}`,       // encoding/json folds case
		`{"apiVersion":"v1","kind":"Service","kind":"ConfigMap"}`,      // the last wins
		`{"apiVersion":"v1","kind":"Ser\u0076ice"}`,                    // an escape
		`{"apiVersion":"v1","kind":"Service","metadata":{"Name":"a"}}`, // folded inside metadata
		`{"apiVersion":"v1","kind":"Service","metadata":null}`,         // not an object
		`{"apiVersion":1,"kind":"Service"}`,                            // not a string
		`{"apiVersion":"v1","kind":"Service","metadata":{"name":"a"},"metadata":{}}`,
		`{"apiVersion":"v1","kind":"Service","spec":01}`,               // invalid JSON
		`{"apiVersion":"v1","kind":"Service"} x`,                       // trailing text
		`{"apiVersion":"v1","kind":"Service","\u017fpec":{}}`,          // a key outside ASCII
		`{"apiVersion":"v1","kind":"Service","spec":"` + "\x01" + `"}`, // a control byte
	} {
		if h, ok := scanHead([]byte(doc)); ok {
			t.Errorf("scanHead read %+v from %s; want it to decline", h, doc)
		}
	}
	h, ok := scanHead([]byte(`{"kind":"Service","spec":{"ports":[{"port":-1.5e+3,"x":[true,false,null,"\"\\\/\b\f\n\r\t\u00e9"]}]},"metadata":{"namespace":"shop","labels":{"name":"x"},"name":"pay"},"apiVersion":"v1"}`))
	if want := (objectHead{"v1", "Service", "pay", "shop"}); !ok || h != want {
		t.Errorf("scanHead = %+v, %v; want %+v", h, ok, want)
	}
}

// FuzzScanHead holds scanHead to the probe on any input.
func FuzzScanHead(f *testing.F) {
	f.Add([]byte(`{"apiVersion":"v1","kind":"Service","metadata":{"name":"a","namespace":"b"}}`))
	f.Add([]byte(`{"apiVersion":"v1","kind":"List","items":[{"a":1.5e3}]}`))
	f.Fuzz(func(t *testing.T, doc []byte) { agreesWithProbe(t, "fuzz", doc) })
}

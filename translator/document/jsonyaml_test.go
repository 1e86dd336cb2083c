package document

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"testing"
)

// TestJSONTextYAMLIsDecodedYAML: for random JSON (what encoding/json
// writes of random values, HTML escapes and non-ASCII included, and
// hand-written text with spaces and escapes), the YAML the text walk
// writes is byte for byte what decoding it and writing the tree wrote;
// and the walk writes most of them.
func TestJSONTextYAMLIsDecodedYAML(t *testing.T) {
	r := rand.New(rand.NewPCG(37, 3))
	texts := [][]byte{
		[]byte(` { "b" : [ 1 , -0.5e3 , "x\u003cy\/z\"\\\n" ] , "a" : { } , "c" : [ ] , "d" : null } `),
		[]byte(`{"a":"caf\u00e9"}`), []byte(`{"a":"\ud83d\ude00"}`), []byte(`{"a":1,"a":2}`),
		[]byte(`{"k":"<&>","n":[true,false,null,1e400,9223372036854775808]}`),
	}
	const n = 20000
	for range n {
		v := randomYAMLValue(r, 0)
		if r.IntN(10) == 0 {
			v = map[string]any{"html": "a<b>&c", "text": v, "u": "\u00e9\u2028"}
		}
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		texts = append(texts, b)
	}
	walked := 0
	for i, text := range texts {
		plain, err := decodeJSON(text)
		if err != nil {
			t.Fatalf("text %d %s: %v", i, text, err)
		}
		want, err := elementYAML("policies", plain, true)
		if err != nil {
			t.Fatal(err)
		}
		got, ok := emittedElement(nil, "policies", jsonText(text))
		if !ok {
			continue
		}
		walked++
		if !bytes.Equal(got, want) {
			t.Fatalf("text %d %s:\ngot (text walk):\n%s\nwant (decodeJSON, emitter):\n%s", i, text, got, want)
		}
	}
	if walked < n/2 {
		t.Errorf("the walk wrote %d of %d texts; want at least half", walked, len(texts))
	}
	for _, declined := range []string{`{"a":1,"a":2}`, `{"a":"\ud83d\ude00"}`, `{"a":}`, `[1,]`, `{"a":01}`} {
		if _, ok := emittedElement(nil, "policies", jsonText(declined)); ok {
			t.Errorf("the walk wrote %s, which it leaves to decodeJSON", declined)
		}
	}
	t.Logf("walked %d of %d", walked, len(texts))
}

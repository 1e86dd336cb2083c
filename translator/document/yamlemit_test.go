package document

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"

	yamlv2 "go.yaml.in/yaml/v2"
)

// yamlTrickyStrings are strings whose style yaml.v2 decides by their
// content: types they would read back as, indicators, spaces and
// newlines at each end, keys it sorts by their digits.
var yamlTrickyStrings = []string{
	"", " ", "a", "true", "True", "yes", "n", "off", "~", "null", "<<", ".inf", "-.Inf", ".nan", ".5", ".x", "+1", "-1", "1_000",
	"0x1F", "0o17", "0b101", "-0b1", "0b2", "1e3", "1.5e-3", "1.", "01", "-", "--", "---", "--- a", "...", "..a", "- a", "-a",
	"a: b", "a:b", "a:", ":a", "? a", "?a", "a #b", "a#b", "#a", "@type", "`a", "'a'", "a'b", "\"a\"", "a\"b", `a\b`, "%a", "!a",
	"&a", "*a", "|a", ">a", "[a]", "{a}", "a,b", "a]", "a}", "1:20", "-1:20:30.5", "1:70", "2023-11-14T22:13:20Z", "2023-1-2",
	"2023-11-14 22:13:20", "2023-13-45", "12345-01-01", " lead", "trail ", "in  two", "a\nb", "a\n", "\n", "a\n\n", "\na", " \na",
	"a \nb", "a\n b", "a\n\nb", "a\n ", "team-0/svc-10/443", "a10", "a9", "a09", "a009", "a0", "b1c2", "A", "Z1", "z",
	"type.googleapis.com/envoy.extensions.transport_sockets.tls.v3.UpstreamTlsContext",
	"no address: set spec.addresses, or label a Service of namespace edge gateway.networking.k8s.io/gateway-name=web",
}

// randomYAMLString draws words from an alphabet rich in what changes a
// style, long enough to fold at every depth.
func randomYAMLString(r *rand.Rand) string {
	if r.IntN(3) == 0 {
		return yamlTrickyStrings[r.IntN(len(yamlTrickyStrings))]
	}
	const alphabet = "abcxyz0129-_./:#'\"\\@,?[]{} \n"
	var b strings.Builder
	for n := r.IntN(160); n > 0; n-- {
		if r.IntN(4) == 0 {
			b.WriteByte(alphabet[r.IntN(len(alphabet))])
		} else {
			b.WriteString(strings.Repeat("w", 1+r.IntN(9)))
			b.WriteByte(' ')
		}
	}
	return b.String()
}

func randomYAMLValue(r *rand.Rand, depth int) any {
	switch k := r.IntN(10); {
	case depth < 4 && k < 3:
		m := map[string]any{}
		for n := r.IntN(5); n > 0; n-- {
			key := yamlTrickyStrings[r.IntN(len(yamlTrickyStrings))]
			if r.IntN(2) == 0 {
				key = randomYAMLString(r)
			}
			m[key] = randomYAMLValue(r, depth+1)
		}
		return m
	case depth < 4 && k < 5:
		var l []any
		for n := r.IntN(4); n > 0; n-- {
			l = append(l, randomYAMLValue(r, depth+1))
		}
		return append([]any{}, l...)
	case k == 5:
		return json.Number([]string{"0", "-12", "1.0", "1e3", "0.25", "1e400", "9223372036854775808", "-0"}[r.IntN(8)])
	case k == 6:
		return []any{true, false, nil}[r.IntN(3)]
	}
	return randomYAMLString(r)
}

// TestYAMLEmitterMatchesYAMLv2: for every value the emitter writes, its
// bytes are yaml.v2's for the same element; and it writes most of them
// (it declines only what it leaves to yaml.v2).
func TestYAMLEmitterMatchesYAMLv2(t *testing.T) {
	r := rand.New(rand.NewPCG(37, 1))
	written := 0
	const n = 20000
	for i := range n {
		v := randomYAMLValue(r, 0)
		got, ok := emittedElement(nil, "fleets", v)
		if !ok {
			continue
		}
		written++
		y, err := yamlv2.Marshal(map[string]any{"fleets": []any{v}})
		if err != nil {
			t.Fatal(err)
		}
		want := bytes.TrimPrefix(y, []byte("fleets:\n"))
		if !bytes.Equal(got, want) {
			t.Fatalf("value %d %#v:\ngot:\n%s\nwant (yaml.v2):\n%s", i, v, got, want)
		}
	}
	// It declines a value with a string kept by `|+` (two newlines at its
	// end), frequent in these random ones and absent from translations.
	if written < n*2/3 {
		t.Errorf("the emitter wrote %d of %d values; want at least two thirds", written, n)
	}
	for _, declined := range []any{"caf\u00e9", "a\tb", "a\r\n", "a\n\n", 1.5, map[string]any{strings.Repeat("k", 129): "v"}} {
		if _, ok := emittedElement(nil, "fleets", declined); ok {
			t.Errorf("the emitter wrote %#v, which it leaves to yaml.v2", declined)
		}
	}
}

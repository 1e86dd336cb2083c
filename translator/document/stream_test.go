package document

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// TestEncodeYAMLMatchesWholeDocument: the element-at-a-time YAML is
// byte for byte JSONToYAML of the whole document, on values that test
// yaml.v2's folding (long strings with spaces, at two depths), literal
// blocks, numbers as JSON writes them, and strings that need quoting.
func TestEncodeYAMLMatchesWholeDocument(t *testing.T) {
	long := strings.Repeat("no address: set spec.addresses, or label a Service ", 4)
	pem := "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"
	doc := map[string][]any{"clusters": {}, "secrets": {}}
	for i := range 300 {
		v := map[string]any{
			"name":    fmt.Sprintf("svc-%d", i),
			"message": long[:40+i%160],
			"nested":  map[string]any{"deeper": []any{map[string]any{"message": long[i%50:], "pem": pem}}},
			"numbers": []any{json.Number("1.0"), json.Number("1e3"), json.Number(fmt.Sprint(i)), json.Number("0.25")},
			"quoted":  []any{"true", "123", "", "a: b", "- x", "#c", "yes", nil, false},
			"list":    []any{[]any{"a", []any{"b"}}, map[string]any{}},
		}
		key := []string{"fleets", "policies", "gateways"}[i%3]
		doc[key] = append(doc[key], v)
	}
	j, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	want, err := yaml.JSONToYAML(j)
	if err != nil {
		t.Fatal(err)
	}
	got, err := Encode(doc, FormatYAML)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		gl, wl := strings.Split(string(got), "\n"), strings.Split(string(want), "\n")
		for i := 0; i < len(gl) && i < len(wl); i++ {
			if gl[i] != wl[i] {
				t.Fatalf("line %d: got %q, want %q", i+1, gl[i], wl[i])
			}
		}
		t.Fatalf("got %d lines, want %d", len(gl), len(wl))
	}
}

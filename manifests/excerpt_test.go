package manifests

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestExcerpt(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"web", "web"},
		{strings.Repeat("a", MaxExcerptBytes), strings.Repeat("a", MaxExcerptBytes)},
		{strings.Repeat("a", 200000), strings.Repeat("a", MaxExcerptBytes) + "…(200000 bytes)"},
		// Cut on a rune boundary: 255 bytes of 'a', then a 2-byte rune.
		{strings.Repeat("a", MaxExcerptBytes-1) + strings.Repeat("é", 10), strings.Repeat("a", MaxExcerptBytes-1) + "…(275 bytes)"},
	} {
		if got := Excerpt(c.in); got != c.want {
			t.Errorf("Excerpt(%.20q… of %d bytes) = %.300q, want %.300q", c.in, len(c.in), got, c.want)
		}
	}
}

// A 200 KB value in a manifest makes a message of a few hundred bytes that
// still names the file, the document, the object and the field.
func TestMessagesQuoteLongValuesInPart(t *testing.T) {
	long := strings.Repeat("a", 200000)
	doc := func(v any) []byte {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	meta := func(name string) map[string]any { return map[string]any{"name": name, "namespace": "shop"} }
	for _, c := range []struct {
		name string
		doc  []byte
		// want are parts of the one error or warning expected.
		want []string
	}{
		{"metadata.name", doc(map[string]any{"apiVersion": "v1", "kind": "Service", "metadata": meta(long),
			"spec": map[string]any{"ports": []any{map[string]any{"name": "https", "port": 443}}}}),
			[]string{"m/long.json:1: Service shop/aaaa", "metadata.name: Invalid value: \"aaaa", "…(200000 bytes)"}},
		{"metadata.namespace", doc(map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "ca", "namespace": long}}),
			[]string{"m/long.json:1: ConfigMap aaaa", "metadata.namespace: Invalid value: \"aaaa", "…(200000 bytes)"}},
		{"port name", doc(map[string]any{"apiVersion": "v1", "kind": "Service", "metadata": meta("web"),
			"spec": map[string]any{"ports": []any{map[string]any{"name": long, "port": 443}}}}),
			[]string{"m/long.json:1: Service shop/web: ", "spec.ports[0].name: Invalid value: \"aaaa", "…(200000 bytes)"}},
		{"kind (a warning)", doc(map[string]any{"apiVersion": "v1", "kind": "Foo" + long, "metadata": meta(long)}),
			[]string{"m/long.json: document 1 (v1 Fooaaaa", "…(200003 bytes) shop/aaaa", "…(200000 bytes))"}},
		{"a Gateway API spec string (its CRD's maxLength)", doc(map[string]any{"apiVersion": "gateway.networking.k8s.io/v1", "kind": "HTTPRoute", "metadata": meta("web"),
			"spec": map[string]any{"rules": []any{map[string]any{"backendRefs": []any{map[string]any{"name": long, "port": 443}}}}}}),
			[]string{"m/long.json:1: HTTPRoute shop/web: spec.rules[0].backendRefs[0].name: Too long: may not be more than 253 bytes"}},
		{"a decoder's error quoting the value", doc(map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
			"metadata": map[string]any{"name": "ca", "namespace": "shop", "creationTimestamp": long}}),
			[]string{"m/long.json: document 1 (v1 ConfigMap shop/ca): ", "aaaa", "…("}},
	} {
		var warnings []string
		_, err := Parse("m/long.json", c.doc, func(w string) { warnings = append(warnings, w) })
		msgs := warnings
		if err != nil {
			msgs = append(msgs, err.Error())
		}
		if len(msgs) != 1 {
			t.Errorf("%s: %d errors and warnings, want 1: %.500q", c.name, len(msgs), msgs)
			continue
		}
		if len(msgs[0]) > 2048 {
			t.Errorf("%s: message of %d bytes, want at most 2 KiB: %.500q", c.name, len(msgs[0]), msgs[0])
		}
		for _, w := range c.want {
			if !strings.Contains(msgs[0], w) {
				t.Errorf("%s: message %.600q does not contain %q", c.name, msgs[0], w)
			}
		}
	}
}

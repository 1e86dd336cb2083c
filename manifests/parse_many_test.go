package manifests

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
)

// In a directory's file, documents that are not Kubernetes objects are
// skipped with a warning, first, each under its own number; the others
// are read as Parse reads them. Parse refuses the same file.
func TestParseSkippingForeign(t *testing.T) {
	file := `admin: {address: 0.0.0.0}
---
apiVersion: v1
kind: Service
metadata: {name: pay, namespace: shop}
spec: {ports: [{name: https, port: 443}]}
---
- a list
---
apiVersion: 5
kind: Five
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: shop}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: ca, namespace: shop}
datta: {}
`
	var warnings []string
	in, err := DefaultLimits.ParseSkippingForeign("d/mixed.yaml", []byte(file), func(w string) { warnings = append(warnings, w) })
	if err != nil {
		t.Fatal(err)
	}
	if len(in.Services) != 1 || len(in.ConfigMaps) != 1 {
		t.Errorf("read %d Services, %d ConfigMaps; want 1 and 1", len(in.Services), len(in.ConfigMaps))
	}
	want := []string{
		"d/mixed.yaml: document 1: skipped: not a Kubernetes object (no apiVersion)",
		"d/mixed.yaml: document 3: skipped: not a Kubernetes object (not a YAML mapping)",
		"d/mixed.yaml: document 4: skipped: not a Kubernetes object (no apiVersion)",
		"d/mixed.yaml: document 5 (apps/v1 Deployment shop/web): ",
		"d/mixed.yaml: document 6 (v1 ConfigMap shop/ca): ",
	}
	if len(warnings) != len(want) {
		t.Fatalf("warnings = %q, want %d", warnings, len(want))
	}
	for i, w := range want {
		if !strings.HasPrefix(warnings[i], w) {
			t.Errorf("warning %d = %q, want it to start with %q", i+1, warnings[i], w)
		}
	}
	if _, err := Parse("d/mixed.yaml", []byte(file), nil); err == nil || !strings.Contains(err.Error(), "d/mixed.yaml: document 1: not a Kubernetes object") {
		t.Errorf("Parse: %v, want document 1 refused", err)
	}

	// A document that does not parse is an error, skipping or not.
	if _, err := DefaultLimits.ParseSkippingForeign("d/bad.yaml", []byte("admin: {}\n---\na: [b\n"), nil); err == nil || !strings.Contains(err.Error(), "d/bad.yaml: document 2") {
		t.Errorf("YAML that does not parse: %v, want document 2 refused", err)
	}
}

// A file refused as a whole, here by its aliases, skips nothing: its
// first document that is not an object is the error, as translate's
// reader has always said it.
func TestParseSkippingForeignOfARefusedFileSkipsNothing(t *testing.T) {
	file := append([]byte("admin: {}\n---\n"), aliasedConfigMap(1<<10, 10)...)
	var warnings []string
	_, err := Limits{AliasBytes: 4 << 10}.ParseSkippingForeign("d/expands.yaml", file, func(w string) { warnings = append(warnings, w) })
	if err == nil || !strings.Contains(err.Error(), "d/expands.yaml: document 1: not a Kubernetes object") {
		t.Errorf("error %v, want document 1 refused", err)
	}
	if len(warnings) != 1 || !strings.Contains(warnings[0], "document 1: skipped") {
		t.Errorf("warnings = %q, want document 1's", warnings)
	}
	if _, err := (Limits{AliasBytes: 16 << 10}).ParseSkippingForeign("d/expands.yaml", file, nil); err != nil {
		t.Errorf("within the bound: %v", err)
	}
}

// A file of many documents (converted on every core) gives the objects
// in order, each document's warnings in order, and every refused object,
// each on its line of the file, as its documents parsed one at a time do.
func TestParseOfManyDocumentsIsParseOfEach(t *testing.T) {
	var docs []string
	for i := range 600 {
		switch {
		case i == 371 || i == 480:
			docs = append(docs, fmt.Sprintf("apiVersion: v1\nkind: Service\nmetadata: {name: bad-%d}\nspec: {ports: [{port: 99999}]}\n", i))
		case i%7 == 0:
			docs = append(docs, fmt.Sprintf("apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d-%d}\n", i))
		case i%5 == 0:
			docs = append(docs, fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c-%d}\ndatta: {}\n", i))
		default:
			docs = append(docs, fmt.Sprintf("apiVersion: v1\nkind: Service\nmetadata: {name: s-%d}\nspec: {ports: [{port: 443}]}\n", i))
		}
	}
	var wantWarnings, wantServices []string
	var wantRefusals []Refusal
	line := 1 // where document i starts in the joined file
	for i, d := range docs {
		renumber := func(s string) string {
			return strings.Replace(s, "f.yaml: document 1", fmt.Sprintf("f.yaml: document %d", i+1), 1)
		}
		in, err := Parse("f.yaml", []byte(d), func(w string) { wantWarnings = append(wantWarnings, renumber(w)) })
		var re *RefusedError
		switch {
		case errors.As(err, &re):
			for _, r := range re.Refusals {
				r.Line += line - 1
				wantRefusals = append(wantRefusals, r)
			}
		case err != nil:
			t.Fatal(err)
		}
		for _, s := range in.Services {
			if i < 371 {
				wantServices = append(wantServices, s.Name)
			}
		}
		line += strings.Count(d, "\n") + 1 // and its separator
	}
	if len(wantRefusals) != 2 {
		t.Fatalf("%d refusals one at a time, want the 2 bad Services'", len(wantRefusals))
	}
	var warnings []string
	_, err := Parse("f.yaml", []byte(strings.Join(docs, "---\n")), func(w string) { warnings = append(warnings, w) })
	var re *RefusedError
	if !errors.As(err, &re) || err.Error() != (&RefusedError{wantRefusals}).Error() {
		t.Errorf("error = %v, want\n%s", err, &RefusedError{wantRefusals})
	}
	if !slices.Equal(warnings, wantWarnings) {
		t.Errorf("%d warnings, want %d; first differing: %q", len(warnings), len(wantWarnings), firstDifference(warnings, wantWarnings))
	}

	// Without the error, every object, in order.
	in, err := Parse("f.yaml", []byte(strings.Join(docs[:371], "---\n")), nil)
	if err != nil {
		t.Fatal(err)
	}
	var services []string
	for _, s := range in.Services {
		services = append(services, s.Name)
	}
	if !slices.Equal(services, wantServices) {
		t.Errorf("Services %q, want %q", services, wantServices)
	}
}

func firstDifference(a, b []string) [2]string {
	for i := 0; i < len(a) || i < len(b); i++ {
		var x, y string
		if i < len(a) {
			x = a[i]
		}
		if i < len(b) {
			y = b[i]
		}
		if x != y {
			return [2]string{x, y}
		}
	}
	return [2]string{}
}

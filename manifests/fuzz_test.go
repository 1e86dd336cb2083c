package manifests

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tlsplane/tlsplane/translator"
)

// FuzzReadManifests parses arbitrary bytes as one file: no panic, and
// either an error naming the file or objects that each have a namespace
// (Secrets with stringData merged into data). The objects are then
// translated, which must not panic either: the directory source hands
// them over without the API server's validation.
func FuzzReadManifests(f *testing.F) {
	for _, seed := range fuzzManifestSeeds(f) {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var warnings []string
		in, err := Parse("fuzz.yaml", data, func(w string) { warnings = append(warnings, w) })
		if err != nil {
			if !strings.HasPrefix(err.Error(), "fuzz.yaml: ") {
				t.Fatalf("error does not name the file: %v", err)
			}
			if in.Policies != nil || in.Services != nil || in.EndpointSlices != nil || in.ConfigMaps != nil || in.Secrets != nil {
				t.Fatalf("an error and objects: %v", err)
			}
			return
		}
		for _, w := range warnings {
			if !strings.HasPrefix(w, "fuzz.yaml: ") {
				t.Errorf("warning does not name the file: %q", w)
			}
		}
		for _, p := range in.Policies {
			noNamespace(t, "BackendTLSPolicy", p.Namespace, p.Name)
		}
		for _, s := range in.Services {
			noNamespace(t, "Service", s.Namespace, s.Name)
		}
		for _, es := range in.EndpointSlices {
			noNamespace(t, "EndpointSlice", es.Namespace, es.Name)
		}
		for _, cm := range in.ConfigMaps {
			noNamespace(t, "ConfigMap", cm.Namespace, cm.Name)
		}
		for _, s := range in.Secrets {
			noNamespace(t, "Secret", s.Namespace, s.Name)
			if s.StringData != nil {
				t.Errorf("Secret %s/%s keeps stringData", s.Namespace, s.Name)
			}
		}
		in = Merge([]Part{{Source: "fuzz.yaml", Inputs: in}}, nil)
		out := translator.Translate(in, nil, time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), translator.Options{})
		if len(out.Statuses) > len(in.Policies) {
			t.Errorf("%d statuses for %d policies", len(out.Statuses), len(in.Policies))
		}
	})
}

func noNamespace(t *testing.T, kind, namespace, name string) {
	t.Helper()
	if namespace == "" {
		t.Errorf("%s %q has no namespace", kind, name)
	}
}

// fuzzManifestSeeds are the golden translator inputs and the files under
// testdata/fuzz/manifests (hand-made edge cases of YAML and JSON).
func fuzzManifestSeeds(tb testing.TB) [][]byte {
	tb.Helper()
	var paths []string
	for _, pattern := range []string{"../testdata/translator/*.in.yaml", "../testdata/fuzz/manifests/*"} {
		found, err := filepath.Glob(pattern)
		if err != nil {
			tb.Fatal(err)
		}
		paths = append(paths, found...)
	}
	if len(paths) == 0 {
		tb.Fatal("no seed manifests")
	}
	seeds := make([][]byte, 0, len(paths))
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			tb.Fatal(err)
		}
		seeds = append(seeds, data)
	}
	return seeds
}

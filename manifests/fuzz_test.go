package manifests

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tlsplane/tlsplane/translator"
	"github.com/tlsplane/tlsplane/translator/plan"
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
		var refused *RefusedError
		if errors.As(err, &refused) {
			// Refused one by one: the file's other objects come with it.
			for _, r := range refused.Refusals {
				if r.File != "fuzz.yaml" {
					t.Fatalf("refusal does not name the file: %v", r)
				}
			}
		} else if err != nil {
			// "fuzz.yaml: document 3: …".
			if !strings.HasPrefix(err.Error(), "fuzz.yaml:") {
				t.Fatalf("error does not name the file: %v", err)
			}
			if in.Policies != nil || in.Services != nil || in.EndpointSlices != nil || in.ConfigMaps != nil || in.Secrets != nil ||
				in.GatewayClasses != nil || in.Gateways != nil || in.HTTPRoutes != nil || in.GRPCRoutes != nil ||
				in.TLSRoutes != nil || in.TCPRoutes != nil || in.UDPRoutes != nil || in.ReferenceGrants != nil || in.Namespaces != nil {
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
		for _, o := range in.Gateways {
			noNamespace(t, "Gateway", o.Namespace, o.Name)
		}
		for _, o := range in.HTTPRoutes {
			noNamespace(t, "HTTPRoute", o.Namespace, o.Name)
		}
		for _, o := range in.GRPCRoutes {
			noNamespace(t, "GRPCRoute", o.Namespace, o.Name)
		}
		for _, o := range in.TLSRoutes {
			noNamespace(t, "TLSRoute", o.Namespace, o.Name)
		}
		for _, o := range in.TCPRoutes {
			noNamespace(t, "TCPRoute", o.Namespace, o.Name)
		}
		for _, o := range in.UDPRoutes {
			noNamespace(t, "UDPRoute", o.Namespace, o.Name)
		}
		for _, o := range in.ReferenceGrants {
			noNamespace(t, "ReferenceGrant", o.Namespace, o.Name)
			if o.APIVersion != "gateway.networking.k8s.io/v1" {
				t.Errorf("ReferenceGrant %s/%s read as %q, want v1", o.Namespace, o.Name, o.APIVersion)
			}
		}
		for _, o := range in.GatewayClasses {
			noClusterNamespace(t, "GatewayClass", o.Namespace, o.Name)
		}
		for _, o := range in.Namespaces {
			noClusterNamespace(t, "Namespace", o.Namespace, o.Name)
		}
		in = Merge([]Part{{Source: "fuzz.yaml", Inputs: in}}, nil)
		out := translator.Translate(in, nil, time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), translator.Options{})
		if len(out.Statuses) > len(in.Policies) {
			t.Errorf("%d statuses for %d policies", len(out.Statuses), len(in.Policies))
		}
		// A fleet is a Gateway's or a mesh namespace's (docs/mesh.md).
		meshFleets := 0
		for name := range out.Fleets {
			if _, ok := plan.MeshFleetNamespace(name); ok {
				meshFleets++
			}
		}
		if len(out.Fleets)-meshFleets > len(in.Gateways) || meshFleets > len(in.Namespaces) {
			t.Errorf("%d fleets (%d of the mesh) for %d gateways and %d namespaces", len(out.Fleets), meshFleets, len(in.Gateways), len(in.Namespaces))
		}
	})
}

func noNamespace(t *testing.T, kind, namespace, name string) {
	t.Helper()
	if namespace == "" {
		t.Errorf("%s %q has no namespace", kind, name)
	}
}

func noClusterNamespace(t *testing.T, kind, namespace, name string) {
	t.Helper()
	if namespace != "" {
		t.Errorf("%s %q has namespace %q; it is cluster-scoped", kind, name, namespace)
	}
}

// fuzzManifestSeeds are the golden translator inputs (the gateway-*
// cases seed every Gateway API kind), the files under
// testdata/fuzz/manifests (hand-made edge cases of YAML and JSON), and
// examples/gateway.
func fuzzManifestSeeds(tb testing.TB) [][]byte {
	tb.Helper()
	var paths []string
	for _, pattern := range []string{"../testdata/translator/*.in.yaml", "../testdata/fuzz/manifests/*", "../examples/gateway/*.yaml"} {
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

// TestParseAliasBomb: YAML aliases that would expand to hundreds of
// millions of nodes ("billion laughs") are an error, quickly.
func TestParseAliasBomb(t *testing.T) {
	var b strings.Builder
	b.WriteString("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: laughs}\n")
	b.WriteString(`a0: &a0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]` + "\n")
	for i := 1; i < 9; i++ {
		refs := strings.TrimSuffix(strings.Repeat("*a"+strconv.Itoa(i-1)+",", 9), ",")
		b.WriteString("a" + strconv.Itoa(i) + ": &a" + strconv.Itoa(i) + " [" + refs + "]\n")
	}
	start := time.Now()
	_, err := Parse("bomb.yaml", []byte(b.String()), nil)
	took := time.Since(start)
	t.Logf("took %v: %v", took, err)
	if err == nil || !strings.Contains(err.Error(), "bomb.yaml: document 1") {
		t.Errorf("error = %v, want one naming bomb.yaml document 1", err)
	}
	if took > 10*time.Second {
		t.Errorf("took %v", took)
	}
}

// TestParseLargeFile: a 20 MiB CA bundle in a ConfigMap manifest (the
// directory source has no size limit) parses in bounded time and memory.
func TestParseLargeFile(t *testing.T) {
	if testing.Short() {
		t.Skip("allocates hundreds of MiB; not with -short")
	}
	line := "    " + strings.Repeat("QUFB", 16) + "\n"
	doc := "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: big, namespace: shop}\ndata:\n  ca.crt: |\n" +
		strings.Repeat(line, 12<<20/len(line)) // a large file still parsed whole
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	start := time.Now()
	in, err := Parse("big.yaml", []byte(doc), nil)
	took := time.Since(start)
	runtime.ReadMemStats(&after)
	allocated := after.TotalAlloc - before.TotalAlloc
	t.Logf("%d bytes parsed in %v, allocating %d bytes (%.1fx)", len(doc), took, allocated, float64(allocated)/float64(len(doc)))
	if err != nil || len(in.ConfigMaps) != 1 || len(in.ConfigMaps[0].Data["ca.crt"]) < 12<<20*64/69 {
		t.Fatalf("err = %v, configmaps %d: want the whole ConfigMap", err, len(in.ConfigMaps))
	}
	if took > time.Minute {
		t.Errorf("took %v", took)
	}
	if limit := uint64(30 * len(doc)); allocated > limit {
		t.Errorf("allocated %d bytes for a %d byte file, more than %d", allocated, len(doc), limit)
	}
}

package manifests

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	const doc = `# leading comment
apiVersion: v1
kind: Service
metadata: {name: pay}
spec:
  ports: [{name: https, port: 443}]
---
---
apiVersion: v1
kind: Secret
metadata: {name: pay-ca, namespace: shop}
stringData: {ca.crt: "PEM"}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: shop}
---
apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: ConfigMap
  metadata: {name: from-list}
- apiVersion: gateway.networking.k8s.io/v1
  kind: BackendTLSPolicy
  metadata: {name: pay-tls, namespace: shop}
  spec:
    targetRefs: [{group: "", kind: Service, name: pay}]
    validation: {hostname: pay.shop, wellKnownCACertificates: System}
- apiVersion: discovery.k8s.io/v1
  kind: EndpointSlice
  metadata: {name: pay-x, namespace: shop}
  addressType: IPv4
`
	var warnings []string
	in, err := Parse("m.yaml", []byte(doc), func(w string) { warnings = append(warnings, w) })
	if err != nil {
		t.Fatal(err)
	}
	if len(in.Services) != 1 || in.Services[0].Namespace != "default" || in.Services[0].Spec.Ports[0].Port != 443 {
		t.Errorf("services = %+v, want pay in default", in.Services)
	}
	if len(in.Secrets) != 1 || string(in.Secrets[0].Data["ca.crt"]) != "PEM" || in.Secrets[0].StringData != nil {
		t.Errorf("secret stringData not moved into data: %+v", in.Secrets)
	}
	if len(in.ConfigMaps) != 1 || in.ConfigMaps[0].Name != "from-list" || in.ConfigMaps[0].Namespace != "default" {
		t.Errorf("configmaps = %+v, want from-list in default", in.ConfigMaps)
	}
	if len(in.Policies) != 1 || len(in.EndpointSlices) != 1 {
		t.Errorf("got %d policies, %d slices; want 1 and 1", len(in.Policies), len(in.EndpointSlices))
	}
	if len(warnings) != 1 || !strings.Contains(warnings[0], "m.yaml: document 3 (apps/v1 Deployment shop/web): skipped") {
		t.Errorf("warnings = %q, want one naming the Deployment", warnings)
	}
}

func TestParseErrorsNameTheFileAndDocument(t *testing.T) {
	tests := []struct{ name, doc, want string }{
		{"not yaml", "a: [b\n", "bad.yaml: document 1"},
		{"scalar", "just text\n", "bad.yaml: document 1: not a Kubernetes object"},
		{"list", "- a\n- b\n", "bad.yaml: document 1: not a Kubernetes object"},
		{"no kind", "apiVersion: v1\nmetadata: {name: x}\n", "bad.yaml: document 1: not a Kubernetes object: apiVersion and kind are required"},
		{"second document", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n---\nfoo: bar\n", "bad.yaml: document 2: not a Kubernetes object"},
		{"wrong field type", "apiVersion: v1\nkind: Service\nmetadata: {name: pay}\nspec: {ports: [{port: https}]}\n", "bad.yaml: document 1 (v1 Service default/pay)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse("bad.yaml", []byte(tt.doc), nil)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error = %v, want it to contain %q", err, tt.want)
			}
		})
	}
}

func TestRead(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) {
		t.Helper()
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cm := func(name, value string) string {
		return "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: " + name + "}\ndata: {v: " + value + "}\n"
	}
	write("a.yaml", cm("one", "first"))
	write("b.yml", cm("one", "second")) // duplicate: a.yaml wins
	write("sub/c.json", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"two"}}`)
	write("notes.txt", "not read")
	write(".hidden.yaml", "not: read")
	write("..data/d.yaml", "not: read")

	var warnings []string
	in, err := Read([]string{dir}, func(w string) { warnings = append(warnings, w) })
	if err != nil {
		t.Fatal(err)
	}
	if len(in.ConfigMaps) != 2 || in.ConfigMaps[0].Data["v"] != "first" || in.ConfigMaps[1].Name != "two" {
		t.Errorf("configmaps = %+v, want one (first) and two", in.ConfigMaps)
	}
	if len(warnings) != 1 || !strings.Contains(warnings[0], "ConfigMap default/one ignored: already defined in "+filepath.Join(dir, "a.yaml")) {
		t.Errorf("warnings = %q", warnings)
	}

	if _, err := Read([]string{filepath.Join(dir, "missing.yaml")}, nil); err == nil || !strings.Contains(err.Error(), "missing.yaml") {
		t.Errorf("missing file: error = %v, want it to name the file", err)
	}
	// A file named explicitly is read whatever its extension.
	if _, err := Read([]string{filepath.Join(dir, "notes.txt")}, nil); err == nil || !strings.Contains(err.Error(), "notes.txt: document 1: not a Kubernetes object") {
		t.Errorf("explicit notes.txt: error = %v", err)
	}
}

// A last line of exactly 4096 bytes without a final newline used to vanish
// in the YAML line reader, withdrawing the file's objects.
func TestParseLastLineFillingTheReadBuffer(t *testing.T) {
	for _, size := range []int{4095, 4096, 8192} {
		head := "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: big, namespace: shop}\n"
		prefix := "data: {ca.crt: \""
		pad := size - len(prefix) - len("\"}")
		last := prefix + strings.Repeat("A", pad) + "\"}"
		if len(last) != size {
			t.Fatalf("test setup: last line is %d bytes, want %d", len(last), size)
		}
		in, err := Parse("big.yaml", []byte(head+last), nil)
		if err != nil {
			t.Fatalf("size %d: %v", size, err)
		}
		if len(in.ConfigMaps) != 1 || len(in.ConfigMaps[0].Data["ca.crt"]) != pad {
			t.Fatalf("size %d: got %d ConfigMaps, want the one with its data", size, len(in.ConfigMaps))
		}
	}
}

package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// --mesh-namespaces picks the mesh's namespaces by a selector of the
// operator's: the mesh golden's namespaces relabelled for the conformance
// suite join only with it; an empty selector is refused by name.
func TestMeshNamespacesFlag(t *testing.T) {
	t.Setenv("SOURCE_DATE_EPOCH", "1767225600")
	data, err := os.ReadFile("../../testdata/translator/mesh-routes.in.yaml")
	if err != nil {
		t.Fatal(err)
	}
	relabelled := strings.ReplaceAll(string(data), "tlsplane.io/mesh: enabled", "gateway-conformance: mesh")
	path := filepath.Join(t.TempDir(), "mesh.yaml")
	if err := os.WriteFile(path, []byte(relabelled), 0o644); err != nil {
		t.Fatal(err)
	}
	translate := func(args ...string) string {
		var stdout, stderr bytes.Buffer
		_ = runTranslate(append(args, path), &stdout, &stderr) // refusals of the golden's own (exit 3) do not matter here
		return stdout.String()
	}
	if out := translate(); strings.Contains(out, "Mesh/shop") {
		t.Errorf("without the flag, namespaces labelled gateway-conformance=mesh are in the mesh")
	}
	if out := translate("--mesh-namespaces", "gateway-conformance=mesh"); !strings.Contains(out, "Mesh/shop") || !strings.Contains(out, "Mesh/caller") {
		t.Errorf("with --mesh-namespaces gateway-conformance=mesh, no fleets Mesh/shop and Mesh/caller:\n%.2000s", out)
	}
	var stdout, stderr bytes.Buffer
	err = runTranslate([]string{"--mesh-namespaces", "", path}, &stdout, &stderr)
	if err == nil || !strings.Contains(err.Error(), "mesh-namespaces") || !strings.Contains(err.Error(), "selects every namespace") {
		t.Errorf("an empty selector: %v, want a refusal naming the flag", err)
	}
}

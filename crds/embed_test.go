package crds

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// TestEmbeddedCRDsMatchModule fails when go.mod names a gateway-api
// version whose CRDs differ from the embedded ones: run
// hack/update-crds.sh.
func TestEmbeddedCRDsMatchModule(t *testing.T) {
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "sigs.k8s.io/gateway-api").Output()
	if err != nil {
		t.Fatalf("go list -m sigs.k8s.io/gateway-api: %v", err)
	}
	dir := filepath.Join(strings.TrimSpace(string(out)), "config", "crd")
	for _, channel := range Channels {
		embedded, err := channelFiles(channel)
		if err != nil {
			t.Fatal(err)
		}
		paths, err := filepath.Glob(filepath.Join(dir, channel, "*.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		var want []string
		for _, p := range paths {
			name := filepath.Base(p)
			if name == "kustomization.yaml" || strings.HasSuffix(name, "_vap_safeupgrades.yaml") {
				continue
			}
			want = append(want, name)
			data, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(data, embedded[name]) {
				t.Errorf("crds/%s/%s differs from the module's %s: run hack/update-crds.sh", channel, name, p)
			}
		}
		var got []string
		for name := range embedded {
			got = append(got, name)
		}
		sort.Strings(got)
		if strings.Join(got, " ") != strings.Join(want, " ") {
			t.Errorf("crds/%s holds %q, the module %q: run hack/update-crds.sh", channel, got, want)
		}
	}
}

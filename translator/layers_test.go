package translator_test

import (
	"os/exec"
	"strings"
	"testing"
)

// The translator's layers point one way (doc.go of each package says what
// it must not import). TestLayers fails when an import goes the wrong way,
// directly or through another package: go list -deps is transitive.
func TestLayers(t *testing.T) {
	const tree = "github.com/tlsplane/tlsplane/translator"
	kubernetes := []string{"k8s.io/", "sigs.k8s.io/gateway-api"}
	rules := []struct {
		pkg       string
		forbidden []string // import path prefixes
	}{
		// Leaves: nothing of the translator.
		{"input", []string{tree + "/"}},
		{"condition", []string{tree + "/"}},
		{"capem", []string{tree + "/"}},
		// The ReferenceGrant rule, asked by Gateways and routes alike.
		{"referencegrant", []string{tree + "/"}},
		// The provisioner reads it too: nothing of the translator.
		{"infrastructure", []string{tree + "/"}},
		{"tlsopts", append([]string{tree + "/"}, kubernetes...)},
		// The plan: plain values, only tlsopts below it (whose Options carry
		// Envoy's TLS version enum: the one go-control-plane type it holds).
		{"plan", append([]string{tree + "/input", tree + "/condition", tree + "/capem", tree + "/envoy",
			tree + "/backendtls", tree + "/xbackend", tree + "/gateway", tree + "/gatewaytls", tree + "/route", tree + "/referencegrant", tree + "/upstream"}, kubernetes...)},
		// The emitter: no Kubernetes or Gateway API objects, no judging.
		{"envoy", append([]string{tree + "/input", tree + "/condition", tree + "/capem",
			tree + "/backendtls", tree + "/xbackend", tree + "/gateway", tree + "/gatewaytls", tree + "/route", tree + "/referencegrant", tree + "/upstream"}, kubernetes...)},
		// Judging never reaches the emitter, nor the engine.
		{"backendtls", []string{tree + "/envoy", tree + "/gateway", tree + "/route", tree + "/upstream"}},
		{"gateway", []string{tree + "/envoy", tree + "/backendtls", tree + "/upstream", tree + "/xbackend"}},
		// XBackends judged: backendtls's CA and certificate rules, no
		// emitter, no Gateway or route (routes read verdicts in the index).
		{"xbackend", []string{tree + "/envoy", tree + "/gateway", tree + "/gatewaytls", tree + "/route", tree + "/upstream"}},
		// XBackendTrafficPolicies: plans and statuses, reusing the
		// BackendTLSPolicy ancestors; no Gateway or route rules.
		{"trafficpolicy", []string{tree + "/envoy", tree + "/gateway", tree + "/route", tree + "/upstream", tree + "/fleet"}},
		// Route judging knows no Gateway or listener: gateway asks it.
		{"route", []string{tree + "/envoy", tree + "/gateway", tree + "/gatewaytls", tree + "/backendtls", tree + "/upstream", tree + "/xbackend"}},
		// A Gateway's TLS references, resolved for gateway: no listener,
		// route or status.
		{"gatewaytls", []string{tree + "/envoy", tree + "/gateway", tree + "/route", tree + "/backendtls", tree + "/upstream"}},
		{"upstream", []string{tree + "/envoy", tree + "/gateway", tree + "/route"}},
		// The mesh judges and plans; the engine emits its fleets.
		{"mesh", []string{tree + "/envoy", tree + "/gateway", tree + "/gatewaytls", tree + "/backendtls", tree + "/upstream", tree + "/xbackend", tree + "/fleet"}},
		// XMeshes judged: they read mesh's feature list (so what mesh
		// imports), and never the emitter or the Gateway rules.
		{"xmesh", []string{tree + "/envoy", tree + "/gateway", tree + "/gatewaytls", tree + "/backendtls", tree + "/upstream", tree + "/xbackend", tree + "/fleet"}},
		// A fleet's resources after emission: judged Gateways and the
		// emitter's output, never policies or Services.
		{"fleet", []string{tree + "/backendtls", tree + "/upstream", tree + "/xbackend"}},
	}
	for _, r := range rules {
		t.Run(r.pkg, func(t *testing.T) {
			out, err := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}}", tree+"/"+r.pkg).Output()
			if err != nil {
				t.Fatalf("go list -deps %s: %v", r.pkg, err)
			}
			deps := strings.Fields(string(out))
			if len(deps) < 2 {
				t.Fatalf("go list -deps %s listed %d packages: %q", r.pkg, len(deps), deps)
			}
			for _, dep := range deps {
				if dep == tree+"/"+r.pkg {
					continue // itself
				}
				if dep == tree {
					t.Errorf("%s imports the engine (%s)", r.pkg, tree)
				}
				for _, prefix := range r.forbidden {
					if strings.HasPrefix(dep, prefix) {
						t.Errorf("%s imports %s (nothing under %s is allowed)", r.pkg, dep, prefix)
					}
				}
			}
		})
	}
}

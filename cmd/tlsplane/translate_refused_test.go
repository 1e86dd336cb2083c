package main

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tlsplane/tlsplane/translator/translatortest"
)

// issueWorld is the issue's case: in namespace client, the listener
// certificate Secret client and a policy's tlsplane.io/clientCertificateRef
// certificate (once one SDS name, now Certificate/client/client and
// Client/client/certificate); and a second tenant, shop, that is fine.
func issueWorld(t *testing.T) string {
	secret := func(ns, name string) string {
		s := translatortest.TLSSecret(t, ns, name, name+".example")
		return fmt.Sprintf("apiVersion: v1\nkind: Secret\nmetadata: {name: %s, namespace: %s}\ntype: kubernetes.io/tls\ndata: {tls.crt: %s, tls.key: %s}\n---\n",
			name, ns, base64.StdEncoding.EncodeToString(s.Data["tls.crt"]), base64.StdEncoding.EncodeToString(s.Data["tls.key"]))
	}
	gateway := func(ns, cert string) string {
		return fmt.Sprintf(`apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: edge, namespace: %[1]s, generation: 1}
spec:
  gatewayClassName: tlsplane
  addresses: [{value: 192.0.2.40}]
  listeners:
  - {name: https, protocol: HTTPS, port: 443, tls: {certificateRefs: [{name: %[2]s}]}}
---
`, ns, cert)
	}
	ca := "    " + strings.ReplaceAll(strings.TrimSpace(translatortest.CA), "\n", "\n    ")
	return `apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: tlsplane, generation: 1}
spec: {controllerName: tlsplane.io/controller}
---
` + gateway("client", "client") + secret("client", "client") + secret("client", "certificate") +
		gateway("shop", "edge-cert") + secret("shop", "edge-cert") + `apiVersion: gateway.networking.k8s.io/v1
kind: BackendTLSPolicy
metadata: {name: pay, namespace: client, generation: 1, creationTimestamp: "2026-01-01T00:00:00Z"}
spec:
  targetRefs: [{group: "", kind: Service, name: pay}]
  validation:
    hostname: pay.example
    caCertificateRefs: [{group: "", kind: ConfigMap, name: pay-ca}]
  options:
    tlsplane.io/clientCertificateRef: certificate
---
apiVersion: v1
kind: Service
metadata: {name: pay, namespace: client}
spec: {ports: [{name: https, port: 443}]}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: pay-ca, namespace: client}
data:
  ca.crt: |
` + ca + "\n"
}

// missingCAPolicy is a real fault in namespace client: a policy whose
// CA ConfigMap does not exist.
const missingCAPolicy = `---
apiVersion: gateway.networking.k8s.io/v1
kind: BackendTLSPolicy
metadata: {name: ledger, namespace: client, generation: 1, creationTimestamp: "2026-01-01T00:00:00Z"}
spec:
  targetRefs: [{group: "", kind: Service, name: ledger}]
  validation:
    hostname: ledger.example
    caCertificateRefs: [{group: "", kind: ConfigMap, name: no-such-ca}]
---
apiVersion: v1
kind: Service
metadata: {name: ledger, namespace: client}
spec: {ports: [{name: https, port: 443}]}
`

// translateProcess runs `tlsplane translate dir` as a process and
// returns its exit code, stdout and stderr.
func translateProcess(t *testing.T, dir string) (int, string, string) {
	t.Helper()
	cmd := tlsplaneCommand(t, "translate", dir)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); cmd.ProcessState == nil {
		t.Fatalf("translate did not run: %v", err)
	}
	return cmd.ProcessState.ExitCode(), stdout.String(), stderr.String()
}

// TestTranslateServesTheIssueWorld: the issue's world refuses nothing
// (exit 0: no Gateway, listener or policy False), and prints both
// certificates under their own names.
func TestTranslateServesTheIssueWorld(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, "world.yaml"), issueWorld(t))
	code, stdout, stderr := translateProcess(t, dir)
	if code != 0 || strings.Contains(stderr, "refused") {
		t.Fatalf("translate: exit %d, want 0; stderr:\n%s", code, stderr)
	}
	for _, want := range []string{"name: Certificate/client/client", "name: Client/client/certificate"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("the printed document lacks secret %q", strings.TrimPrefix(want, "name: "))
		}
	}
}

// TestTranslateRefusesARealFaultBesideTheIssueWorld: beside the issue's
// world, a policy whose CA ConfigMap is missing is refused (exit 3), and
// stderr names the policy, the condition and the reason; nothing of the
// issue's world is named.
func TestTranslateRefusesARealFaultBesideTheIssueWorld(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, "world.yaml"), issueWorld(t)+missingCAPolicy)
	code, _, stderr := translateProcess(t, dir)
	if code != exitRefused {
		t.Fatalf("translate: exit %d, want %d (refused); stderr:\n%s", code, exitRefused, stderr)
	}
	for _, want := range []string{"BackendTLSPolicy client/ledger", "ResolvedRefs=False (InvalidCACertificateRef)", "no-such-ca"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
	for _, not := range []string{"Gateway client/edge", "Gateway shop/edge", "BackendTLSPolicy client/pay"} {
		if strings.Contains(stderr, not) {
			t.Errorf("stderr names %s, which is not at fault:\n%s", not, stderr)
		}
	}
}

// TestTranslateExitsZeroOnlyWhenNothingIsRefused: the examples translate
// with nothing refused; a policy with an invalid option is a refusal.
func TestTranslateExitsZeroOnlyWhenNothingIsRefused(t *testing.T) {
	var stdout, stderr bytes.Buffer
	// examples/external's XBackends name localhost: admitted by the list.
	if err := runTranslate([]string{"../../examples/", "--xbackend-hostnames", "localhost"}, &stdout, &stderr); err != nil {
		t.Fatalf("examples: %v", err)
	}
	in, err := os.ReadFile("../../testdata/translator/options-invalid.in.yaml")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	write(t, filepath.Join(dir, "p.yaml"), string(in))
	err = runTranslate([]string{dir}, &stdout, &stderr)
	var refused *refusedError
	if !errors.As(err, &refused) || !strings.Contains(err.Error(), "BackendTLSPolicy ") || !strings.Contains(err.Error(), "Accepted=False") {
		t.Fatalf("options-invalid: %v, want the policies refused", err)
	}
}

// TestTranslateShowsXMeshStatuses: `tlsplane translate` prints the XMesh
// of ours Accepted with the mesh features, refuses the one naming
// parameters (exit 3, stderr naming it, the field and the value), and
// prints nothing of another controller's XMesh.
func TestTranslateShowsXMeshStatuses(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, "meshes.yaml"), `apiVersion: gateway.networking.x-k8s.io/v1alpha1
kind: XMesh
metadata: {name: ours, generation: 1}
spec: {controllerName: tlsplane.io/controller}
---
apiVersion: gateway.networking.x-k8s.io/v1alpha1
kind: XMesh
metadata: {name: tuned, generation: 1}
spec:
  controllerName: tlsplane.io/controller
  parametersRef: {group: example.com, kind: MeshConfig, name: knobs}
---
apiVersion: gateway.networking.x-k8s.io/v1alpha1
kind: XMesh
metadata: {name: theirs, generation: 1}
spec: {controllerName: example.com/mesh}
`)
	code, stdout, stderr := translateProcess(t, dir)
	if code != exitRefused {
		t.Fatalf("translate: exit %d, want %d; stderr:\n%s", code, exitRefused, stderr)
	}
	for _, want := range []string{"XMesh tuned: Accepted=False (InvalidParameters)", `spec.parametersRef "example.com/MeshConfig knobs"`} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
	for _, notWant := range []string{"XMesh ours", "theirs"} {
		if strings.Contains(stderr, notWant) {
			t.Errorf("stderr names %q:\n%s", notWant, stderr)
		}
	}
	for _, want := range []string{"xmeshes:", "name: ours", "reason: Accepted", "supportedFeatures:\n    - name: Mesh"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("the printed document lacks %q:\n%s", want, stdout)
		}
	}
	if strings.Contains(stdout, "theirs") {
		t.Errorf("the printed document shows another controller's XMesh:\n%s", stdout)
	}
}

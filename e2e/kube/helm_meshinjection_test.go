package kube

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/tlsplane/tlsplane/e2e/apiserver"
)

// TestHelmMeshInjectionMatchesDeploy: meshInjection {enabled, certManager}
// renders exactly deploy/mesh-injection-rbac.yaml's and
// deploy/mesh-injection.yaml's objects, field by field, beside the
// defaults' (which it leaves alone); lint is clean; the other values reach
// the objects (caBundle instead of cert-manager's annotation,
// failurePolicy, selector, images, xDS address, Secret), and the API
// server accepts them (a dry run); without a CA, or with two, the chart
// refuses to render.
func TestHelmMeshInjectionMatchesDeploy(t *testing.T) {
	want := map[string]*unstructured.Unstructured{}
	for _, file := range []string{"mesh-injection-rbac.yaml", "mesh-injection.yaml"} {
		data, err := os.ReadFile(filepath.Join(deployDir(), file))
		if err != nil {
			t.Fatal(err)
		}
		objs, err := apiserver.DecodeManifest(data)
		if err != nil {
			t.Fatalf("deploy/%s: %v", file, err)
		}
		for _, o := range objs {
			want[objectKey(o)] = o
		}
	}
	enabledValues := "meshInjection: {enabled: true, certManager: true}\n"
	added := meshInjectionObjects(t, "tlsplane", "tlsplane-system", enabledValues)
	for k, w := range want {
		g, ok := added[k]
		if !ok {
			t.Errorf("deploy/ has %s, the chart with meshInjection does not render it", k)
			continue
		}
		wj, _ := json.MarshalIndent(w.Object, "", "  ")
		gj, _ := json.MarshalIndent(g.Object, "", "  ")
		if !bytes.Equal(wj, gj) {
			t.Errorf("%s differs between deploy/ and the chart: %s", k, firstDifference(string(wj), string(gj)))
		}
	}
	for k := range added {
		if _, ok := want[k]; !ok {
			t.Errorf("the chart with meshInjection adds %s, deploy/ does not have it", k)
		}
	}

	out, err := helm(t, "lint", "--strict", chartDir(), "--namespace", "tlsplane-system", "--values", valuesFile(t, enabledValues))
	if err != nil {
		t.Fatal(err)
	}
	if findings := regexp.MustCompile(`(?m)^\[(INFO|WARNING|ERROR)\].*$`).FindAll(out, -1); len(findings) > 0 {
		t.Errorf("helm lint --strict: %s", bytes.Join(findings, []byte("\n")))
	}

	t.Log("every meshInjection value reaches its object")
	ns := newNamespace(t, adminClients(t))
	objs := meshInjectionObjects(t, "mesh", ns, `
meshInjection:
  enabled: true
  replicas: 3
  caBundle: Q0EgUEVN
  namespaceSelector: {matchExpressions: [{key: team, operator: In, values: [shop]}]}
  meshNamespaces: team in (shop)
  failurePolicy: Ignore
  sidecarImage: registry.example/envoy:v1
  xdsAddress: xds.example:18000
  tlsSecretName: webhook-certs
  identityCSIDriver: ""
`)
	cfg := objs["MutatingWebhookConfiguration /mesh-mesh-injection"]
	dep := objs["Deployment "+ns+"/mesh-mesh-injection"]
	if cfg == nil || dep == nil {
		t.Fatalf("rendered %v: want the webhook configuration and the Deployment named after the release", slices.Collect(mapKeys(objs)))
	}
	if cfg.GetAnnotations() != nil {
		t.Errorf("annotations %v: with caBundle, no cert-manager annotation", cfg.GetAnnotations())
	}
	hook := cfg.Object["webhooks"].([]any)[0].(map[string]any)
	if cc := hook["clientConfig"].(map[string]any); cc["caBundle"] != "Q0EgUEVN" || cc["service"].(map[string]any)["namespace"] != ns {
		t.Errorf("clientConfig %v", cc)
	}
	if hook["failurePolicy"] != "Ignore" || !strings.Contains(mustJSON(t, hook["namespaceSelector"]), `"team"`) {
		t.Errorf("webhook %v: want failurePolicy Ignore and the team selector", hook)
	}
	depJSON := mustJSON(t, dep.Object)
	for _, s := range []string{`"replicas":3`, `"--mesh-namespaces=team in (shop)"`, `"--sidecar-image=registry.example/envoy:v1"`,
		`"--sidecar-xds-address=xds.example:18000"`, `"secretName":"webhook-certs"`, `"--tlsplane-image=tlsplane:latest"`} {
		if !strings.Contains(depJSON, s) {
			t.Errorf("Deployment: no %s in %s", s, depJSON)
		}
	}
	if strings.Contains(depJSON, "--sidecar-identity-csi-driver") {
		t.Errorf("Deployment: identityCSIDriver empty, yet %s", depJSON)
	}
	defaults := mustJSON(t, meshInjectionObjects(t, "mesh", ns, enabledValues)["Deployment "+ns+"/mesh-mesh-injection"].Object)
	for _, s := range []string{`"--sidecar-xds-address=mesh-xds.` + ns + `.svc:18000"`, `"secretName":"mesh-mesh-injection-tls"`, `"--sidecar-identity-csi-driver=spiffe.csi.cert-manager.io"`} {
		if !strings.Contains(defaults, s) {
			t.Errorf("Deployment with the defaults: no %s", s)
		}
	}
	var all []*unstructured.Unstructured
	for _, o := range objs {
		all = append(all, o)
	}
	// A dry run: a registered webhook without its Service would refuse
	// other tests' Pods.
	if _, err := apiserver.Apply(context.Background(), api.Config, encode(t, all), true); err != nil {
		t.Fatalf("the API server refuses the rendered objects: %v", err)
	}

	for _, tc := range []struct{ values, err string }{
		{"meshInjection: {enabled: true}\n", "meshInjection.enabled needs the CA of its serving certificate"},
		{"meshInjection: {enabled: true, certManager: true, caBundle: Q0E=}\n", "give caBundle or certManager, not both"},
		{"meshInjection: {enabled: true, certManager: true, failurePolicy: Sometimes}\n", "failurePolicy"},
	} {
		if _, err := helm(t, "template", "tlsplane", chartDir(), "--namespace", "tlsplane-system", "--values", valuesFile(t, tc.values)); err == nil || !strings.Contains(err.Error(), tc.err) {
			t.Errorf("values %q: error %v, want %q", tc.values, err, tc.err)
		}
	}
}

// meshInjectionObjects are the objects values add to the chart's defaults.
func meshInjectionObjects(t *testing.T, release, ns, values string) map[string]*unstructured.Unstructured {
	t.Helper()
	base := map[string]bool{}
	for _, o := range helmTemplate(t, release, ns) {
		base[objectKey(o)] = true
	}
	added := map[string]*unstructured.Unstructured{}
	for _, o := range helmTemplate(t, release, ns, valuesFile(t, values)) {
		if !base[objectKey(o)] {
			added[objectKey(o)] = o
		}
	}
	return added
}

func mapKeys(m map[string]*unstructured.Unstructured) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

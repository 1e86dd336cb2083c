package kube

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/tlsplane/tlsplane/e2e/apiserver"
)

// provisionerKinds are what the provisioner writes; no ClusterRole may
// grant a write of them.
var provisionerKinds = []string{"deployments", "serviceaccounts", "services", "configmaps"}

// TestHelmProvisionerMatchesDeploy: provisioner.enabled with
// provisioner.namespaces [gateways, shop] renders, in each of them,
// exactly deploy/provisioner-rbac.yaml's Role and RoleBinding (namespace
// aside), and deploy/provisioner-admission.yaml's policy and binding,
// field by field; no ClusterRole grants a write of what the provisioner
// writes (with the provisioner on or off, namespaces set or not); the
// Deployment's args turn the provisioner on in those namespaces, with the
// release's own xDS Service as the address; without namespaces the chart
// refuses to render.
func TestHelmProvisionerMatchesDeploy(t *testing.T) {
	want := map[string]*unstructured.Unstructured{}
	for _, file := range []string{"provisioner-rbac.yaml", "provisioner-admission.yaml"} {
		data, err := os.ReadFile(filepath.Join(deployDir(), file))
		if err != nil {
			t.Fatal(err)
		}
		objs, err := apiserver.DecodeManifest(data)
		if err != nil {
			t.Fatalf("deploy/%s: %v", file, err)
		}
		for _, o := range objs {
			if o.GetNamespace() != "" && o.GetNamespace() != "gateways" {
				t.Fatalf("deploy/%s: %s is not in the namespace gateways its header says to replace", file, objectKey(o))
			}
			want[objectKey(o)] = o
			if o.GetNamespace() == "gateways" {
				shop := o.DeepCopy()
				shop.SetNamespace("shop")
				want[objectKey(shop)] = shop
			}
		}
	}
	base := helmTemplate(t, "tlsplane", "tlsplane-system")
	enabled := helmTemplate(t, "tlsplane", "tlsplane-system", valuesFile(t, "provisioner: {enabled: true, namespaces: [gateways, shop]}\n"))
	baseKeys := map[string]bool{}
	for _, o := range base {
		baseKeys[objectKey(o)] = true
	}
	got := map[string]*unstructured.Unstructured{}
	for _, o := range enabled {
		if !baseKeys[objectKey(o)] {
			got[objectKey(o)] = o
		}
	}
	for k, w := range want {
		g, ok := got[k]
		if !ok {
			t.Errorf("deploy/ has %s, the chart with the provisioner does not render it", k)
			continue
		}
		wj, _ := json.MarshalIndent(w.Object, "", "  ")
		gj, _ := json.MarshalIndent(g.Object, "", "  ")
		if !bytes.Equal(wj, gj) {
			t.Errorf("%s differs between deploy/ and the chart: %s", k, firstDifference(string(wj), string(gj)))
		}
	}
	for k := range got {
		if _, ok := want[k]; !ok {
			t.Errorf("the chart with the provisioner adds %s, deploy/ does not have it", k)
		}
	}

	t.Log("no ClusterRole writes what the provisioner writes")
	withNamespaces := helmTemplate(t, "tlsplane", "tlsplane-system", valuesFile(t, "namespaces: [gateways, shop]\nprovisioner: {enabled: true, namespaces: [gateways]}\n"))
	for name, objs := range map[string][]*unstructured.Unstructured{"defaults": base, "provisioner": enabled, "provisioner and namespaces": withNamespaces} {
		for _, o := range objs {
			// The ClusterRole, and the Roles of namespaces (the release
			// namespace's Role writes the replicas' handshake ConfigMaps).
			if o.GetKind() != "ClusterRole" && (o.GetKind() != "Role" || strings.HasSuffix(o.GetName(), "-provisioner") || o.GetNamespace() == "tlsplane-system") {
				continue
			}
			for _, r := range ruleStrings(t, o) {
				for _, kind := range provisionerKinds {
					for _, verb := range []string{`"create"`, `"patch"`, `"update"`, `"delete"`, `"*"`} {
						if strings.Contains(r, `"`+kind+`"`) && strings.Contains(r, verb) {
							t.Errorf("%s: %s grants %s on %s: %s", name, objectKey(o), verb, kind, r)
						}
					}
				}
			}
		}
	}

	var args []string
	for _, o := range enabled {
		if o.GetKind() == "Deployment" {
			containers, _, _ := unstructured.NestedSlice(o.Object, "spec", "template", "spec", "containers")
			for _, a := range containers[0].(map[string]any)["args"].([]any) {
				args = append(args, a.(string))
			}
		}
	}
	for _, a := range []string{"--provision-gateways", "--provision-namespaces=gateways,shop", "--provision-allowed-label-keys=*",
		"--provision-allowed-annotation-keys=*", "--gateway-xds-address=tlsplane-xds.tlsplane-system.svc:18000",
		"--gateway-xds-client-secret={gateway}-xds-client", "--gateway-service-type=LoadBalancer"} {
		if !slices.Contains(args, a) {
			t.Errorf("Deployment args %q lack %s", args, a)
		}
	}
	if slices.ContainsFunc(args, func(a string) bool { return strings.HasPrefix(a, "--provision-denied-keys") }) {
		t.Errorf("Deployment args %q set --provision-denied-keys: the default is tlsplane's", args)
	}
	checkServeAccepts(t, args)

	t.Log("another release, with every provisioner value: the API server takes its Roles and admission policy")
	c := adminClients(t)
	rel := newNamespace(t, c)
	gw := rel + "-gw"
	createNamespace(t, c, gw)
	other := helmTemplate(t, "edge-plane", rel, valuesFile(t, "provisioner:\n  enabled: true\n  namespaces: ["+gw+"]\n"+
		"  allowedLabelKeys: [team, example.com/*]\n  allowedAnnotationKeys: [example.com/*]\n  deniedKeys: [eks.amazonaws.com/*, secret.example.com/*]\n"))
	applied := applyRendered(t, other)
	for _, key := range []string{"Role " + gw + "/edge-plane-provisioner", "RoleBinding " + gw + "/edge-plane-provisioner",
		"ValidatingAdmissionPolicy /edge-plane-provisioner", "ValidatingAdmissionPolicyBinding /edge-plane-provisioner"} {
		if applied[key] == nil {
			t.Errorf("%s not applied", key)
		}
	}
	if cond, _, _ := unstructured.NestedSlice(applied["ValidatingAdmissionPolicy /edge-plane-provisioner"].Object, "spec", "matchConditions"); !strings.Contains(mustJSON(t, cond), "system:serviceaccount:"+rel+":edge-plane") {
		t.Errorf("the policy's matchConditions %s do not name the release's ServiceAccount", mustJSON(t, cond))
	}
	args = nil
	for _, o := range other {
		if o.GetKind() == "Deployment" {
			containers, _, _ := unstructured.NestedSlice(o.Object, "spec", "template", "spec", "containers")
			for _, a := range containers[0].(map[string]any)["args"].([]any) {
				args = append(args, a.(string))
			}
		}
	}
	for _, a := range []string{"--provision-namespaces=" + gw, "--provision-allowed-label-keys=team,example.com/*",
		"--provision-allowed-annotation-keys=example.com/*", "--provision-denied-keys=eks.amazonaws.com/*,secret.example.com/*"} {
		if !slices.Contains(args, a) {
			t.Errorf("Deployment args %q lack %s", args, a)
		}
	}
	checkServeAccepts(t, args)

	for _, tc := range []struct{ values, refusal string }{
		{"provisioner: {enabled: true}\n", "provisioner.enabled needs provisioner.namespaces"},
		{"namespaces: [shop]\nprovisioner: {enabled: true, namespaces: [pay]}\n", "provisioner.namespaces: pay is not one of namespaces"},
	} {
		out, err := helm(t, "template", "tlsplane", chartDir(), "--namespace", "tlsplane-system", "--values", valuesFile(t, tc.values))
		if err == nil || !strings.Contains(err.Error()+string(out), tc.refusal) {
			t.Errorf("helm template with %q: %v, want the refusal %q", tc.values, err, tc.refusal)
		}
	}
}

func ruleStrings(t *testing.T, o *unstructured.Unstructured) []string {
	rules, _, _ := unstructured.NestedSlice(o.Object, "rules")
	var out []string
	for _, r := range rules {
		b, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, string(b))
	}
	return out
}

package kube

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/tlsplane/tlsplane/e2e/apiserver"
)

// TestHelmProvisionerMatchesDeploy: provisioner.enabled adds to the
// chart's ClusterRole exactly deploy/provisioner-rbac.yaml's rules (and
// the defaults have none of them), and the Deployment's args turn the
// provisioner on with the release's own xDS Service as the address.
func TestHelmProvisionerMatchesDeploy(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(deployDir(), "provisioner-rbac.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	objs, err := apiserver.DecodeManifest(data)
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, o := range objs {
		if o.GetKind() == "ClusterRole" {
			want = ruleStrings(t, o)
		}
	}
	if len(want) == 0 {
		t.Fatal("deploy/provisioner-rbac.yaml has no ClusterRole rules")
	}
	rulesOf := func(objs []*unstructured.Unstructured) []string {
		for _, o := range objs {
			if o.GetKind() == "ClusterRole" && o.GetName() == "tlsplane" {
				return ruleStrings(t, o)
			}
		}
		t.Fatal("no ClusterRole tlsplane rendered")
		return nil
	}
	base := rulesOf(helmTemplate(t, "tlsplane", "tlsplane-system"))
	enabled := helmTemplate(t, "tlsplane", "tlsplane-system", valuesFile(t, "provisioner: {enabled: true}\n"))
	got := rulesOf(enabled)
	for _, r := range want {
		if slices.Contains(base, r) {
			t.Errorf("the default ClusterRole already has %s", r)
		}
		if !slices.Contains(got, r) {
			t.Errorf("with provisioner.enabled the ClusterRole lacks %s", r)
		}
	}
	if len(got) != len(base)+len(want) {
		t.Errorf("with provisioner.enabled: %d rules, want the %d default ones plus %d:\n%s", len(got), len(base), len(want), strings.Join(got, "\n"))
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
	for _, a := range []string{"--provision-gateways", "--gateway-xds-address=tlsplane-xds.tlsplane-system.svc:18000", "--gateway-xds-client-secret={gateway}-xds-client", "--gateway-service-type=LoadBalancer"} {
		if !slices.Contains(args, a) {
			t.Errorf("Deployment args %q lack %s", args, a)
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

package kube

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/tlsplane/tlsplane/e2e/apiserver"
	"github.com/tlsplane/tlsplane/e2e/harness"
)

// deployDir is the repository's deploy/ folder.
func deployDir() string {
	return filepath.Join(harness.RepoRoot(), "deploy")
}

// applyDeploy server-side applies deploy/<file>, for real or as a dry run.
func applyDeploy(t *testing.T, file string, dryRun bool) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(deployDir(), file))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := apiserver.Apply(context.Background(), api.Config, data, dryRun); err != nil {
		t.Fatalf("apply deploy/%s (dry run %v): %v", file, dryRun, err)
	}
}

// serviceAccountKubeconfig applies deploy/'s namespace and RBAC and returns
// a kubeconfig with a token of the tlsplane ServiceAccount, so tlsplane
// runs in the tests with exactly the privileges the manifests grant.
func serviceAccountKubeconfig(t *testing.T) string {
	t.Helper()
	applyDeploy(t, "namespace.yaml", false)
	applyDeploy(t, "rbac.yaml", false)
	c := adminClients(t)
	expiry := int64(3600)
	tok, err := c.kube.CoreV1().ServiceAccounts("tlsplane-system").CreateToken(context.Background(), "tlsplane",
		&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: &expiry}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("TokenRequest for ServiceAccount tlsplane-system/tlsplane: %v", err)
	}
	path := filepath.Join(t.TempDir(), "tlsplane.kubeconfig")
	if err := api.WriteKubeconfig(path, "tlsplane", tok.Status.Token); err != nil {
		t.Fatal(err)
	}
	return path
}

// leaseFlags puts each test's Lease apart, in the namespace deploy/'s Role covers.
func leaseFlags(id string) []string {
	return []string{"--leader-election-namespace", "tlsplane-system", "--leader-election-id", id}
}

// applyProvisionerRBAC applies deploy/provisioner-rbac.yaml's Role and
// RoleBinding in each of namespaces, as its header says to (one copy per
// namespace where Gateways are provisioned), and
// deploy/provisioner-admission.yaml.
func applyProvisionerRBAC(t *testing.T, namespaces ...string) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(deployDir(), "provisioner-rbac.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	objs, err := apiserver.DecodeManifest(data)
	if err != nil {
		t.Fatal(err)
	}
	for _, ns := range namespaces {
		for _, o := range objs {
			o.SetNamespace(ns)
		}
		if _, err := apiserver.Apply(context.Background(), api.Config, encode(t, objs), false); err != nil {
			t.Fatalf("apply deploy/provisioner-rbac.yaml in %s: %v", ns, err)
		}
	}
	applyDeploy(t, "provisioner-admission.yaml", false)
}

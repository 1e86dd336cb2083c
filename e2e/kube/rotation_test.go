package kube

import (
	"testing"

	"github.com/tlsplane/tlsplane/e2e/harness"
)

// TestCARotationReachesSDSWithoutClusterChange: a new ca.crt in the
// referenced ConfigMap changes the served SDS Secret and its version, while
// the clusters (which only name the secret) keep their version, so Envoy
// rotates trust without draining connections.
func TestCARotationReachesSDSWithoutClusterChange(t *testing.T) {
	c := adminClients(t)
	ns := newNamespace(t, c)
	cp := startTLSPlane(t, "tlsplane", serviceAccountKubeconfig(t), append(leaseFlags("rotation"), "--namespaces", ns)...)
	createService(t, c, ns, "pay")
	createCAConfigMap(t, c, ns, "ca", string(harness.NewAuthority(t, "CA before rotation").PEM))
	createPolicy(t, c, policy(ns, "pay", "pay", "", "ca", "pay.example.com"))
	expectStatus(t, c, ns, "pay", acceptedTrue, resolvedTrue)
	before := expectServedCA(t, cp, ns, "CA before rotation")

	setCA(t, c, ns, "ca", string(harness.NewAuthority(t, "CA after rotation").PEM))
	after := expectServedCA(t, cp, ns, "CA after rotation")
	if after.secretVersion == before.secretVersion {
		t.Errorf("SDS secret version stayed %q across a CA rotation", after.secretVersion)
	}
	if after.clusterVersion != before.clusterVersion {
		t.Errorf("cluster version changed from %q to %q on a CA rotation: Envoy would rebuild the clusters", before.clusterVersion, after.clusterVersion)
	}
	expectStatus(t, c, ns, "pay", acceptedTrue, resolvedTrue)
}

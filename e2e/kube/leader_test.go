package kube

import (
	"context"
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/tlsplane/tlsplane/e2e/harness"
)

// Short Lease timings, so a handover is measured in seconds.
const (
	leaseDuration = 4 * time.Second
	renewDeadline = 3 * time.Second
	retryPeriod   = 500 * time.Millisecond
)

// TestTwoReplicasLeaderHandover: two replicas serve identical snapshot
// versions; only one holds the Lease; when it crashes (SIGKILL, no release)
// the other takes over within the lease time and keeps status current.
func TestTwoReplicasLeaderHandover(t *testing.T) {
	c := adminClients(t)
	ns := newNamespace(t, c)
	kubeconfig := serviceAccountKubeconfig(t)
	lease := "handover"
	flags := append(leaseFlags(lease), "--namespaces", ns,
		"--leader-election-lease-duration", leaseDuration.String(),
		"--leader-election-renew-deadline", renewDeadline.String(),
		"--leader-election-retry-period", retryPeriod.String())
	replicas := map[string]*controlPlane{
		"tlsplane-a": startTLSPlane(t, "tlsplane-a", kubeconfig, flags...),
		"tlsplane-b": startTLSPlane(t, "tlsplane-b", kubeconfig, flags...),
	}
	createService(t, c, ns, "pay")
	createCAConfigMap(t, c, ns, "ca", string(harness.NewAuthority(t, "handover CA").PEM))
	createPolicy(t, c, policy(ns, "pay", "pay", "", "ca", "pay.example.com"))
	expectStatus(t, c, ns, "pay", acceptedTrue, resolvedTrue)

	t.Log("both replicas serve identical versions")
	for _, cp := range replicas {
		expectServedCA(t, cp, ns, "handover CA")
	}
	eventually(t, statusWait, "identical versions on both replicas", func() error {
		a, b := replicas["tlsplane-a"].snapshot(t), replicas["tlsplane-b"].snapshot(t)
		if a.clusterVersion == "" || a.clusterVersion != b.clusterVersion || a.secretVersion != b.secretVersion {
			return fmt.Errorf("a: clusters %q secrets %q; b: clusters %q secrets %q", a.clusterVersion, a.secretVersion, b.clusterVersion, b.secretVersion)
		}
		return nil
	})

	leader := holder(t, c, lease)
	follower := "tlsplane-a"
	if leader == "tlsplane-a" {
		follower = "tlsplane-b"
	}
	// Only the Lease holder writes: the policy's status is current, so the
	// holder has written and the other replica must not have.
	if w := replicas[leader].statusWrites(t); w == "0" {
		t.Errorf("leader %s wrote no status, yet the status is current", leader)
	}
	if w := replicas[follower].statusWrites(t); w != "0" {
		t.Errorf("follower %s wrote status %s times while not holding the Lease", follower, w)
	}
	t.Logf("leader %s crashes (SIGKILL)", leader)
	crashed := time.Now()
	replicas[leader].stop(syscall.SIGKILL)
	eventually(t, leaseDuration+renewDeadline+2*time.Second, "the follower takes the Lease", func() error {
		if h := holder(t, c, lease); h != follower {
			return fmt.Errorf("holder %q", h)
		}
		return nil
	})
	took := time.Since(crashed)
	t.Logf("%s holds the Lease %s after the crash (lease duration %s)", follower, took.Round(10*time.Millisecond), leaseDuration)
	if limit := leaseDuration + 2*retryPeriod + time.Second; took > limit {
		t.Errorf("handover took %s, want within the lease time (%s)", took, limit)
	}

	t.Log("the new leader writes status")
	setCA(t, c, ns, "ca", "")
	written := time.Now()
	expectStatus(t, c, ns, "pay", noValidCA, invalidCARef)
	t.Logf("status followed the edit %s after it, written by %s (%s writes)", time.Since(written).Round(10*time.Millisecond), follower, replicas[follower].statusWrites(t))
	if w := replicas[follower].statusWrites(t); w == "0" {
		t.Errorf("the new leader %s counts no status write", follower)
	}
	expectServedCA(t, replicas[follower], ns, "")
}

// holder is the replica name (POD_NAME) in the Lease's holderIdentity.
func holder(t *testing.T, c clients, lease string) string {
	t.Helper()
	l, err := c.kube.CoordinationV1().Leases("tlsplane-system").Get(context.Background(), lease, metav1.GetOptions{})
	if err != nil || l.Spec.HolderIdentity == nil {
		return ""
	}
	name, _, _ := strings.Cut(*l.Spec.HolderIdentity, "_")
	return name
}

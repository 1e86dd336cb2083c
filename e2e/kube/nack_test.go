package kube

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/tlsplane/tlsplane/e2e/harness"
)

const dataPlaneAccepted = "tlsplane.io/DataPlaneAccepted"

// dataPlaneCondition waits until every entry of ours on ns/name has
// (present) or lacks (!present) tlsplane.io/DataPlaneAccepted, and returns
// the first entry's.
func dataPlaneCondition(t *testing.T, c clients, ns, name string, present bool, check func(metav1.Condition) error) *metav1.Condition {
	t.Helper()
	var found *metav1.Condition
	eventually(t, statusWait, fmt.Sprintf("BackendTLSPolicy %s/%s %s present=%v", ns, name, dataPlaneAccepted, present), func() error {
		p, err := c.gateway.GatewayV1().BackendTLSPolicies(ns).Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		found = nil
		for _, a := range p.Status.Ancestors {
			if a.ControllerName != controller {
				continue
			}
			got := findCondition(a.Conditions, dataPlaneAccepted)
			switch {
			case got == nil && present:
				return fmt.Errorf("no %s in %+v", dataPlaneAccepted, a.Conditions)
			case got != nil && !present:
				return fmt.Errorf("%s still there: %+v", dataPlaneAccepted, *got)
			case got != nil && check != nil:
				if err := check(*got); err != nil {
					return err
				}
			}
			if found == nil {
				found = got
			}
		}
		return nil
	})
	return found
}

// TestNACKOnPolicyStatus: an Envoy (a scripted ADS client) rejecting the
// cluster of a policy puts tlsplane.io/DataPlaneAccepted=False with the
// fleet, node, type and Envoy's message on the policy, without any input
// change; a second rejection keeps lastTransitionTime; once a newer
// version is accepted the condition is removed.
func TestNACKOnPolicyStatus(t *testing.T) {
	c := adminClients(t)
	ns := newNamespace(t, c)
	cp := startTLSPlane(t, "tlsplane", serviceAccountKubeconfig(t), append(leaseFlags("nack"), "--namespaces", ns)...)
	createService(t, c, ns, "pay")
	createCAConfigMap(t, c, ns, "ca", string(harness.NewAuthority(t, "NACK CA").PEM))
	createPolicy(t, c, policy(ns, "pay", "pay", "", "ca", "pay.example.com"))
	expectStatus(t, c, ns, "pay", acceptedTrue, resolvedTrue)
	dataPlaneCondition(t, c, ns, "pay", false, nil)

	cluster := clusterName(ns, "pay", 443)
	envoy1 := harness.DialADS(t, cp.xds, "envoy-1", "edge")
	rejected := envoy1.RecvCluster(t, cluster, 20*time.Second)
	envoy1.NACK(t, rejected, "Error adding/updating cluster(s) "+cluster+": scripted rejection "+strings.Repeat("x", 4000))

	first := dataPlaneCondition(t, c, ns, "pay", true, func(got metav1.Condition) error {
		if got.Status != metav1.ConditionFalse || got.Reason != "Rejected" {
			return fmt.Errorf("condition %s/%s, want False/Rejected", got.Status, got.Reason)
		}
		for _, want := range []string{`"envoy-1"`, `fleet "edge"`, "Cluster version " + rejected.GetVersionInfo(), cluster + ": scripted rejection"} {
			if !strings.Contains(got.Message, want) {
				return fmt.Errorf("message %.200q lacks %q", got.Message, want)
			}
		}
		if len(got.Message) > 1024 {
			return fmt.Errorf("message of %d bytes: Envoy's error_detail not cut", len(got.Message))
		}
		return nil
	})
	// The spec conditions are the translator's and stay as they were.
	p := expectStatus(t, c, ns, "pay", acceptedTrue, resolvedTrue)
	if first.ObservedGeneration != p.Generation {
		t.Errorf("%s observedGeneration %d, generation %d", dataPlaneAccepted, first.ObservedGeneration, p.Generation)
	}

	// Another Envoy of the fleet rejects the same version: the message
	// follows, lastTransitionTime does not (the status stayed False).
	time.Sleep(1100 * time.Millisecond) // lastTransitionTime has a 1 s resolution
	envoy2 := harness.DialADS(t, cp.xds, "envoy-2", "edge")
	envoy2.NACK(t, envoy2.RecvCluster(t, cluster, 20*time.Second), "scripted rejection by envoy-2")
	second := dataPlaneCondition(t, c, ns, "pay", true, func(got metav1.Condition) error {
		if !strings.Contains(got.Message, `"envoy-2"`) {
			return fmt.Errorf("message %.200q does not name envoy-2 yet", got.Message)
		}
		return nil
	})
	if !second.LastTransitionTime.Equal(&first.LastTransitionTime) {
		t.Errorf("lastTransitionTime moved from %v to %v while the condition stayed False", first.LastTransitionTime, second.LastTransitionTime)
	}

	// A fixed policy: a newer cluster version, accepted, lifts the condition.
	pol, err := c.gateway.GatewayV1().BackendTLSPolicies(ns).Get(context.Background(), "pay", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	pol.Spec.Validation.Hostname = gwv1.PreciseHostname("pay-fixed.example.com")
	if _, err := c.gateway.GatewayV1().BackendTLSPolicies(ns).Update(context.Background(), pol, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	newer := envoy1.RecvCluster(t, cluster, 20*time.Second)
	if newer.GetVersionInfo() == rejected.GetVersionInfo() {
		t.Fatalf("the rejected version %s was sent again", rejected.GetVersionInfo())
	}
	envoy1.ACK(t, newer)
	dataPlaneCondition(t, c, ns, "pay", false, nil)
	expectStatus(t, c, ns, "pay", acceptedTrue, resolvedTrue)
}

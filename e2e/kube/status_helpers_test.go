package kube

import (
	"context"
	"fmt"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
)

const controller gwv1.GatewayController = "tlsplane.io/controller"

// statusWait bounds how long a status may take to follow a change: the
// debounce (≤1 s), the writer, and a watch round trip.
const statusWait = 30 * time.Second

// cond is an expected condition: status and reason ("" for any reason).
type cond struct {
	status metav1.ConditionStatus
	reason string
}

// expectStatus waits until every entry of our controller on policy ns/name
// has the expected Accepted and ResolvedRefs conditions, observed at the
// policy's current generation.
func expectStatus(t *testing.T, c clients, ns, name string, accepted, resolved cond) *gwv1.BackendTLSPolicy {
	t.Helper()
	return expectStatusWithin(t, statusWait, c, ns, name, accepted, resolved)
}

// expectStatusWithin is expectStatus with its own bound.
func expectStatusWithin(t *testing.T, timeout time.Duration, c clients, ns, name string, accepted, resolved cond) *gwv1.BackendTLSPolicy {
	t.Helper()
	var last *gwv1.BackendTLSPolicy
	eventually(t, timeout, fmt.Sprintf("BackendTLSPolicy %s/%s Accepted=%v ResolvedRefs=%v", ns, name, accepted, resolved), func() error {
		p, err := c.gateway.GatewayV1().BackendTLSPolicies(ns).Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		last = p
		ours := 0
		for _, a := range p.Status.Ancestors {
			if a.ControllerName != controller {
				continue
			}
			ours++
			for typ, want := range map[string]cond{"Accepted": accepted, "ResolvedRefs": resolved} {
				got := findCondition(a.Conditions, typ)
				if got == nil {
					return fmt.Errorf("no %s condition in %+v", typ, a.Conditions)
				}
				if got.Status != want.status || (want.reason != "" && got.Reason != want.reason) {
					return fmt.Errorf("%s = %s/%s (%s), want %v", typ, got.Status, got.Reason, got.Message, want)
				}
				if got.ObservedGeneration != p.Generation {
					return fmt.Errorf("%s observedGeneration %d, generation %d", typ, got.ObservedGeneration, p.Generation)
				}
			}
		}
		if ours == 0 {
			return fmt.Errorf("no ancestor entry of %s: %+v", controller, p.Status)
		}
		return nil
	})
	return last
}

func findCondition(conds []metav1.Condition, typ string) *metav1.Condition {
	for i := range conds {
		if conds[i].Type == typ {
			return &conds[i]
		}
	}
	return nil
}

var (
	acceptedTrue    = cond{metav1.ConditionTrue, string(gwv1.PolicyReasonAccepted)}
	resolvedTrue    = cond{metav1.ConditionTrue, string(gwv1.BackendTLSPolicyReasonResolvedRefs)}
	noValidCA       = cond{metav1.ConditionFalse, string(gwv1.BackendTLSPolicyReasonNoValidCACertificate)}
	invalidCARef    = cond{metav1.ConditionFalse, string(gwv1.BackendTLSPolicyReasonInvalidCACertificateRef)}
	conflicted      = cond{metav1.ConditionFalse, string(gwv1.PolicyReasonConflicted)}
	targetNotFound  = cond{metav1.ConditionFalse, string(gwv1.PolicyReasonTargetNotFound)}
	anyResolvedRefs = cond{metav1.ConditionTrue, ""}
)

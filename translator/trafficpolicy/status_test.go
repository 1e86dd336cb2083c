package trafficpolicy

import (
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
	gwxv1a1 "sigs.k8s.io/gateway-api/apisx/v1alpha1"
)

// TestStatus: one ancestor per Gateway reaching a target, the worst
// verdict where a Gateway reaches several; the target itself where none
// does; other controllers' entries kept.
func TestStatus(t *testing.T) {
	edge, back := types.NamespacedName{Namespace: "shop", Name: "edge"}, types.NamespacedName{Namespace: "shop", Name: "back"}
	spec := gwxv1a1.BackendTrafficPolicySpec{
		TargetRefs:      []gwv1.LocalPolicyTargetReference{{Kind: "Service", Name: "api"}, {Group: gwxv1a1.GroupName, Kind: "XBackend", Name: "pay"}, {Kind: "Service", Name: "gone"}},
		RetryConstraint: &gwxv1a1.RetryConstraint{},
	}
	older := policy("older", 0, gwxv1a1.BackendTrafficPolicySpec{TargetRefs: []gwv1.LocalPolicyTargetReference{{Group: gwxv1a1.GroupName, Kind: "XBackend", Name: "pay"}}})
	p := policy("p", time.Hour, spec)
	other := gwv1.PolicyAncestorStatus{AncestorRef: gwv1.ParentReference{Name: "theirs"}, ControllerName: "example.com/other"}
	p.Status.Ancestors = []gwv1.PolicyAncestorStatus{other}
	res := Judge([]*gwxv1a1.XBackendTrafficPolicy{p, older}, services(), xbackends())
	var v *Verdict
	for _, x := range res.Verdicts {
		if x.Name.Name == "p" {
			v = x
		}
	}
	reach := func(t Target) []types.NamespacedName {
		switch t {
		case ServiceTarget(api):
			return []types.NamespacedName{back, edge}
		case XBackendTarget(pay):
			return []types.NamespacedName{edge}
		}
		return nil
	}
	now := metav1.NewTime(born)
	st := Status(v, reach, "tlsplane.io/controller", p.Status, now)
	type entry struct{ ancestor, status, reason, message string }
	var got []entry
	for _, a := range st.Ancestors {
		e := entry{ancestor: string(a.AncestorRef.Name)}
		if a.AncestorRef.Kind != nil {
			e.ancestor = string(*a.AncestorRef.Kind) + " " + e.ancestor
		}
		if len(a.Conditions) > 0 {
			c := a.Conditions[0]
			e.status, e.reason, e.message = string(c.Status), c.Reason, c.Message
		}
		got = append(got, e)
	}
	want := []entry{
		{ancestor: "theirs"},
		{ancestor: "Gateway back", status: "True", reason: "Accepted", message: "XBackendTrafficPolicy shop/p governs Service shop/api: retry budget"},
		// edge reaches api (accepted) and pay (Conflicted): the worse.
		{ancestor: "Gateway edge", status: "False", reason: "Conflicted", message: "XBackend.gateway.networking.x-k8s.io shop/pay is governed by XBackendTrafficPolicy shop/older"},
		{ancestor: "Service gone", status: "False", reason: "TargetNotFound", message: "spec.targetRefs[2]: Service shop/gone does not exist"},
	}
	if len(got) != len(want) {
		t.Fatalf("ancestors = %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i].ancestor != want[i].ancestor || got[i].status != want[i].status || got[i].reason != want[i].reason || !strings.Contains(got[i].message, want[i].message) {
			t.Errorf("ancestors[%d] = %+v, want %+v", i, got[i], want[i])
		}
	}
}

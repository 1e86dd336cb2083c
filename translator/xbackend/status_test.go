package xbackend_test

import (
	"fmt"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
	gwxv1a1 "sigs.k8s.io/gateway-api/apisx/v1alpha1"

	"github.com/tlsplane/tlsplane/translator/backendtls"
	"github.com/tlsplane/tlsplane/translator/xbackend"
)

// TestStatus: one parent per Gateway (at most 32), other controllers'
// entries kept first, lastTransitionTime kept while a condition holds,
// observedGeneration the XBackend's.
func TestStatus(t *testing.T) {
	const ours gwv1.GatewayController = "tlsplane.io/controller"
	earlier := metav1.NewTime(time.Date(2025, 6, 1, 0, 0, 0, 0, time.UTC))
	now := metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	group, kind, ns := gwv1.Group(gwv1.GroupName), gwv1.Kind("Gateway"), gwv1.Namespace("shop")
	edge := gwv1.ParentReference{Group: &group, Kind: &kind, Namespace: &ns, Name: "edge"}
	prev := gwxv1a1.BackendStatus{Ancestors: []gwxv1a1.BackendAncestorStatus{
		{ControllerName: "example.com/other", AncestorRef: edge, Conditions: []metav1.Condition{{Type: "Accepted", Status: metav1.ConditionFalse, Reason: "Theirs"}}},
		{ControllerName: ours, AncestorRef: edge, Conditions: []metav1.Condition{
			{Type: "Accepted", Status: metav1.ConditionTrue, Reason: "Accepted", LastTransitionTime: earlier},
			{Type: "ResolvedRefs", Status: metav1.ConditionFalse, Reason: "InvalidCACertificateRef", LastTransitionTime: earlier},
		}},
	}}
	v := xbackend.Judge(backend(nil), index(t), cfg, backendtls.Memos{})
	st := xbackend.Status(v, []types.NamespacedName{{Namespace: "shop", Name: "edge"}, {Namespace: "shop", Name: "inner"}}, prev, ours, now, "")
	if len(st.Ancestors) != 3 || st.Ancestors[0].ControllerName != "example.com/other" || st.Ancestors[0].Conditions[0].Reason != "Theirs" {
		t.Fatalf("parents %+v: want the other controller's first, then edge and inner", st.Ancestors)
	}
	edgeConds := st.Ancestors[1].Conditions
	if edgeConds[0].LastTransitionTime != earlier || edgeConds[1].LastTransitionTime != now {
		t.Errorf("edge: Accepted since %v (want kept %v), ResolvedRefs since %v (want now: it changed)", edgeConds[0].LastTransitionTime, earlier, edgeConds[1].LastTransitionTime)
	}
	if inner := st.Ancestors[2]; inner.AncestorRef.Name != "inner" || inner.ControllerName != ours || inner.Conditions[0].LastTransitionTime != now || inner.Conditions[0].ObservedGeneration != 3 {
		t.Errorf("inner: %+v", inner)
	}

	var many []types.NamespacedName
	for i := range 40 {
		many = append(many, types.NamespacedName{Namespace: "shop", Name: fmt.Sprintf("gw-%02d", i)})
	}
	if st := xbackend.Status(v, many, gwxv1a1.BackendStatus{}, ours, now, ""); len(st.Ancestors) != xbackend.MaxParents {
		t.Errorf("%d parents, want the API's limit %d", len(st.Ancestors), xbackend.MaxParents)
	}
}

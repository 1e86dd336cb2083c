package statuswriter

import (
	"context"
	"slices"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
	gwxv1a1 "sigs.k8s.io/gateway-api/apisx/v1alpha1"
	gwfake "sigs.k8s.io/gateway-api/pkg/client/clientset/versioned/fake"

	"github.com/tlsplane/tlsplane/translator"
)

var (
	payXB    = types.NamespacedName{Namespace: "shop", Name: "pay"}
	budgetTP = types.NamespacedName{Namespace: "shop", Name: "budget"}
)

func xParent(controller gwv1.GatewayController, gateway, reason string) gwxv1a1.BackendAncestorStatus {
	p := parent(controller, gateway, reason)
	return gwxv1a1.BackendAncestorStatus{ControllerName: p.ControllerName, AncestorRef: p.ParentRef, Conditions: p.Conditions}
}

func xAncestor(controller gwv1.GatewayController, gateway, reason string) gwv1.PolicyAncestorStatus {
	return gwv1.PolicyAncestorStatus{ControllerName: controller, AncestorRef: gwv1.ParentReference{Name: gwv1.ObjectName(gateway)}, Conditions: accepted(reason)}
}

// xStatuses wants our parent web on shop/pay (after a stale copy of the
// other controller's) and our ancestor web on shop/budget.
func xStatuses(reason string) translator.GatewayAPIStatuses {
	return translator.GatewayAPIStatuses{
		XBackends: map[types.NamespacedName]gwxv1a1.BackendStatus{payXB: {Ancestors: []gwxv1a1.BackendAncestorStatus{
			xParent(otherCn, "theirs", "Stale"), xParent(me, "web", reason),
		}}},
		XBackendTrafficPolicies: map[types.NamespacedName]gwv1.PolicyStatus{budgetTP: {Ancestors: []gwv1.PolicyAncestorStatus{
			xAncestor(otherCn, "theirs", "Stale"), xAncestor(me, "web", reason),
		}}},
	}
}

// xFixture is shop/pay and shop/budget, each with the other controller's
// live entry.
func xFixture(t *testing.T) *gwfake.Clientset {
	t.Helper()
	ctx := context.Background()
	c := gwfake.NewSimpleClientset()
	x := &gwxv1a1.XBackend{ObjectMeta: metav1.ObjectMeta{Namespace: payXB.Namespace, Name: payXB.Name},
		Status: gwxv1a1.BackendStatus{Ancestors: []gwxv1a1.BackendAncestorStatus{xParent(otherCn, "theirs", "Live")}}}
	if _, err := c.ExperimentalV1alpha1().XBackends("shop").Create(ctx, x, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	p := &gwxv1a1.XBackendTrafficPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: budgetTP.Namespace, Name: budgetTP.Name},
		Status: gwv1.PolicyStatus{Ancestors: []gwv1.PolicyAncestorStatus{xAncestor(otherCn, "theirs", "Live")}}}
	if _, err := c.ExperimentalV1alpha1().XBackendTrafficPolicies("shop").Create(ctx, p, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	c.ClearActions()
	return c
}

func TestWriterWritesXBackendStatuses(t *testing.T) {
	c := xFixture(t)
	w, err := New(Options{Gateway: c, Controller: me, Cache: apiCache{c}})
	if err != nil {
		t.Fatal(err)
	}
	parents := func() []string {
		x, _ := apiCache{c}.XBackend(payXB)
		return names2(asRouteStatus(x.Status))
	}
	ancestors := func() []string {
		p, _ := apiCache{c}.XBackendTrafficPolicy(budgetTP)
		var out []string
		for _, a := range p.Status.Ancestors {
			out = append(out, string(a.ControllerName)+"/"+string(a.AncestorRef.Name)+"/"+a.Conditions[0].Reason)
		}
		return out
	}

	// Not leading yet: nothing is written.
	w.ReportGatewayAPI(xStatuses("Accepted"))
	time.Sleep(100 * time.Millisecond)
	if n := statusUpdates(c); len(n) != 0 {
		t.Fatalf("written before a term: %v", n)
	}
	runWriter(t, w)
	eventuallyParents(t, "XBackend parents written", parents, "example.com/other/theirs/Live", "tlsplane.io/controller/web/Accepted")
	eventuallyParents(t, "XBackendTrafficPolicy ancestors written", ancestors, "example.com/other/theirs/Live", "tlsplane.io/controller/web/Accepted")
	if n := statusUpdates(c); n["xbackends"] != 1 || n["xbackendtrafficpolicies"] != 1 {
		t.Errorf("status updates = %v, want one of each", n)
	}

	// The same statuses again (new maps): nothing differs, nothing written.
	c.ClearActions()
	w.ReportGatewayAPI(xStatuses("Accepted"))
	time.Sleep(200 * time.Millisecond)
	if n := statusUpdates(c); len(n) != 0 {
		t.Errorf("unchanged statuses rewritten: %v", n)
	}

	// Ours change: rewritten, theirs kept.
	w.ReportGatewayAPI(xStatuses("Invalid"))
	eventuallyParents(t, "XBackend parent updated", parents, "example.com/other/theirs/Live", "tlsplane.io/controller/web/Invalid")
	eventuallyParents(t, "XBackendTrafficPolicy ancestor updated", ancestors, "example.com/other/theirs/Live", "tlsplane.io/controller/web/Invalid")

	// No route of ours reaches the XBackend any more: our parent goes,
	// theirs stays. The policy, gone from the statuses, is left as it is.
	w.ReportGatewayAPI(translator.GatewayAPIStatuses{})
	eventuallyParents(t, "our parent removed from an XBackend no longer reached", parents, "example.com/other/theirs/Live")
	time.Sleep(100 * time.Millisecond)
	if got := ancestors(); !slices.Equal(got, []string{"example.com/other/theirs/Live", "tlsplane.io/controller/web/Invalid"}) {
		t.Errorf("XBackendTrafficPolicy ancestors = %v after it left the statuses, want them untouched", got)
	}
	w.mu.Lock()
	left := len(w.cleared)
	w.mu.Unlock()
	if left != 0 {
		t.Errorf("%d objects still to be cleared after the write", left)
	}
}

// Someone else's write over our entries (a status-only change the cache
// reports) is compared at once and ours written back.
func TestWriterRestoresXBackendParents(t *testing.T) {
	c := xFixture(t)
	w, err := New(Options{Gateway: c, Controller: me, Cache: apiCache{c}})
	if err != nil {
		t.Fatal(err)
	}
	runWriter(t, w)
	w.ReportGatewayAPI(xStatuses("Accepted"))
	parents := func() []string {
		x, _ := apiCache{c}.XBackend(payXB)
		return names2(asRouteStatus(x.Status))
	}
	eventuallyParents(t, "XBackend parents written", parents, "example.com/other/theirs/Live", "tlsplane.io/controller/web/Accepted")
	ctx := context.Background()
	x, _ := apiCache{c}.XBackend(payXB)
	x.Status.Ancestors = x.Status.Ancestors[:1]
	if _, err := c.ExperimentalV1alpha1().XBackends("shop").UpdateStatus(ctx, x, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	w.liveChanged(string(KindXBackend), payXB, true)
	eventuallyParents(t, "our parent written back", parents, "example.com/other/theirs/Live", "tlsplane.io/controller/web/Accepted")
}

func TestMergeXBackendKeepsOtherControllersParents(t *testing.T) {
	var live gwxv1a1.BackendStatus
	for i := range 31 {
		live.Ancestors = append(live.Ancestors, xParent(otherCn, "gw"+string(rune('a'+i%26)), "Accepted"))
	}
	desired := gwxv1a1.BackendStatus{Ancestors: []gwxv1a1.BackendAncestorStatus{xParent(me, "web", "Accepted"), xParent(me, "api", "Accepted")}}
	if !xBackendNeedsWrite(live, desired, me) {
		t.Fatal("xBackendNeedsWrite = false with none of ours live")
	}
	got := mergeXBackend(live, desired, me)
	if len(got.Ancestors) != maxRouteParents || got.Ancestors[0].ControllerName != otherCn || got.Ancestors[31].AncestorRef.Name != "web" {
		t.Errorf("merged %d parents, last %s; want the API's limit %d, all 31 of theirs, then our first", len(got.Ancestors), got.Ancestors[len(got.Ancestors)-1].AncestorRef.Name, maxRouteParents)
	}
	if xBackendNeedsWrite(gwxv1a1.BackendStatus{Ancestors: []gwxv1a1.BackendAncestorStatus{xParent(otherCn, "x", "A")}}, gwxv1a1.BackendStatus{}, me) {
		t.Error("xBackendNeedsWrite = true with nothing of ours on either side")
	}
}

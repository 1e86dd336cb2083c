package informers

import (
	"context"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	kubefake "k8s.io/client-go/kubernetes/fake"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
	gwfake "sigs.k8s.io/gateway-api/pkg/client/clientset/versioned/fake"

	"github.com/tlsplane/tlsplane/statuswriter"
	"github.com/tlsplane/tlsplane/translator"
)

// The status writer hears of status changes from the Source it reads.
var _ statuswriter.LiveChanges = (*Source)(nil)

// statusNote is one call of NotifyStatusChanges's callback.
type statusNote struct {
	kind       string
	nn         types.NamespacedName
	statusOnly bool
}

// TestStatusOnlyUpdatesAreNotTranslated: an update of nothing but a
// status signals no translation and is handed to the status writer's
// callback instead; a spec edit is translated and handed to it too. The
// translator gets a status-only change with the next translation, except a
// policy's that had no ancestors before.
func TestStatusOnlyUpdatesAreNotTranslated(t *testing.T) {
	gw := gwfake.NewClientset()
	kube := kubefake.NewClientset()
	src, signals := runSource(t, kube, gw, map[string][]string{"gateway.networking.k8s.io/v1": {"backendtlspolicies", "httproutes"}})
	var (
		mu    sync.Mutex
		notes []statusNote
	)
	src.NotifyStatusChanges(func(kind string, nn types.NamespacedName, statusOnly bool) {
		mu.Lock()
		defer mu.Unlock()
		notes = append(notes, statusNote{kind, nn, statusOnly})
	})
	waitNote := func(want statusNote) {
		t.Helper()
		deadline := time.Now().Add(5 * time.Second)
		for {
			mu.Lock()
			got := notes
			notes = nil
			mu.Unlock()
			if len(got) == 1 && got[0] == want {
				return
			}
			if len(got) > 0 || time.Now().After(deadline) {
				t.Fatalf("status notes %+v, want %+v", got, want)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	src.Changes() // the first call is a resync
	ctx := context.Background()
	nn := types.NamespacedName{Namespace: "shop", Name: "pay"}
	pol := &gwv1.BackendTLSPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: nn.Namespace, Name: nn.Name},
		Spec: gwv1.BackendTLSPolicySpec{Validation: gwv1.BackendTLSPolicyValidation{Hostname: "pay.example"}}}
	pol, err := gw.GatewayV1().BackendTLSPolicies(nn.Namespace).Create(ctx, pol, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	waitNote(statusNote{kindPolicy, nn, false})
	if got := waitChanges(t, src, signals, 1); got[0].Kind != translator.KindBackendTLSPolicy {
		t.Fatalf("changes %+v, want the policy", got)
	}

	// Our first status write: no translation, and no change for the next
	// one (the policy had no ancestors).
	before := signals.Load()
	pol.Status.Ancestors = []gwv1.PolicyAncestorStatus{{AncestorRef: gwv1.ParentReference{Name: "pay"}, ControllerName: "tlsplane.io/controller",
		Conditions: []metav1.Condition{{Type: "Accepted", Status: metav1.ConditionTrue, Reason: "Accepted", LastTransitionTime: metav1.Now()}}}}
	if pol, err = gw.GatewayV1().BackendTLSPolicies(nn.Namespace).UpdateStatus(ctx, pol, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitNote(statusNote{kindPolicy, nn, true})
	if got := src.Changes().Objects; len(got) != 0 {
		t.Errorf("changes %+v after our first status write, want none", got)
	}
	// Someone else's write over ours: no translation either, but the next
	// one reads it.
	pol.Status.Ancestors[0].Conditions[0].Reason = "Overwritten"
	if pol, err = gw.GatewayV1().BackendTLSPolicies(nn.Namespace).UpdateStatus(ctx, pol, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitNote(statusNote{kindPolicy, nn, true})
	if got := signals.Load(); got != before {
		t.Errorf("%d change signals after status-only updates, want none", got-before)
	}
	if got := src.Changes().Objects; len(got) != 1 || got[0].Object.(*gwv1.BackendTLSPolicy).Status.Ancestors[0].Conditions[0].Reason != "Overwritten" {
		t.Errorf("changes %+v, want the policy with the status written over ours", got)
	}

	// A spec edit is translated, and noted.
	pol.Spec.Validation.Hostname = "pay2.example"
	if _, err = gw.GatewayV1().BackendTLSPolicies(nn.Namespace).Update(ctx, pol, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitNote(statusNote{kindPolicy, nn, false})
	waitChanges(t, src, signals, 1)

	// A route's status goes with the next translation (its conditions'
	// lastTransitionTime lives there), without one of its own.
	route, err := gw.GatewayV1().HTTPRoutes(nn.Namespace).Create(ctx, &gwv1.HTTPRoute{ObjectMeta: metav1.ObjectMeta{Namespace: nn.Namespace, Name: "shop"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	routeNN := types.NamespacedName{Namespace: nn.Namespace, Name: "shop"}
	waitNote(statusNote{string(translator.KindHTTPRoute), routeNN, false})
	waitChanges(t, src, signals, 1)
	before = signals.Load()
	route.Status.Parents = []gwv1.RouteParentStatus{{ParentRef: gwv1.ParentReference{Name: "web"}, ControllerName: "tlsplane.io/controller",
		Conditions: []metav1.Condition{{Type: "Accepted", Status: metav1.ConditionTrue, Reason: "Accepted", LastTransitionTime: metav1.Now()}}}}
	if _, err = gw.GatewayV1().HTTPRoutes(nn.Namespace).UpdateStatus(ctx, route, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitNote(statusNote{string(translator.KindHTTPRoute), routeNN, true})
	if got := signals.Load(); got != before {
		t.Errorf("%d change signals after a route's status-only update, want none", got-before)
	}
	if got := src.Changes().Objects; len(got) != 1 || got[0].Kind != translator.KindHTTPRoute {
		t.Errorf("changes %+v, want the route with its status", got)
	}
}

func TestChangeOfTellsStatusFromSpec(t *testing.T) {
	a := &gwv1.HTTPRoute{ObjectMeta: metav1.ObjectMeta{Name: "shop", ResourceVersion: "1", Generation: 1}}
	b := a.DeepCopy()
	b.ResourceVersion = "2"
	if got := changeOf(a, b, true); got != changedBookkeeping {
		t.Errorf("resourceVersion only: %v, want changedBookkeeping", got)
	}
	b.Status.Parents = []gwv1.RouteParentStatus{{ControllerName: "x"}}
	if got := changeOf(a, b, true); got != changedStatus {
		t.Errorf("status: %v, want changedStatus", got)
	}
	if got := changeOf(a, b, false); got != changedMore {
		t.Errorf("status of a kind whose status matters: %v, want changedMore", got)
	}
	b.Labels = map[string]string{"team": "web"}
	if got := changeOf(a, b, true); got != changedMore {
		t.Errorf("status and a label: %v, want changedMore", got)
	}
	if len(a.Status.Parents) != 0 || len(b.Status.Parents) != 1 {
		t.Error("changeOf mutated its input")
	}
}

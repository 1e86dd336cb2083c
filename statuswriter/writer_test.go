package statuswriter

import (
	"context"
	"maps"
	"sync"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	k8stesting "k8s.io/client-go/testing"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
	gwfake "sigs.k8s.io/gateway-api/pkg/client/clientset/versioned/fake"

	"github.com/tlsplane/tlsplane/translator/condition"
)

// liveCache is an apiCache that tells of changes as the informers do,
// when the test calls changed.
type liveCache struct {
	apiCache
	mu      sync.Mutex
	changed func(kind string, nn types.NamespacedName, statusOnly bool)
}

func (l *liveCache) NotifyStatusChanges(changed func(kind string, nn types.NamespacedName, statusOnly bool)) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.changed = changed
}

func (l *liveCache) notify(kind Kind, nn types.NamespacedName, statusOnly bool) {
	l.mu.Lock()
	f := l.changed
	l.mu.Unlock()
	f(string(kind), nn, statusOnly)
}

var (
	payNN  = types.NamespacedName{Namespace: "shop", Name: "pay"}
	cartNN = types.NamespacedName{Namespace: "shop", Name: "cart"}
)

func createPolicy(t *testing.T, c *gwfake.Clientset, nn types.NamespacedName) {
	t.Helper()
	if _, err := c.GatewayV1().BackendTLSPolicies(nn.Namespace).Create(context.Background(),
		&gwv1.BackendTLSPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: nn.Namespace, Name: nn.Name}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// policyReason is our Accepted reason on the live policy nn, "" without one.
func policyReason(c *gwfake.Clientset, nn types.NamespacedName) string {
	p, ok := apiCache{c}.Policy(nn)
	if !ok {
		return ""
	}
	for _, a := range condition.OurAncestors(p.Status, me) {
		return a.Conditions[0].Reason
	}
	return ""
}

func policyStatus(reason string) gwv1.PolicyStatus {
	return gwv1.PolicyStatus{Ancestors: []gwv1.PolicyAncestorStatus{entry(me, "svc", reason)}}
}

func policyUpdates(c *gwfake.Clientset) int {
	return statusUpdates(c)["backendtlspolicies"]
}

// TestWriterWritesWhatChangedAndRestoresOurs: a report writes the statuses
// that changed since the last one; our status overwritten by someone else
// is written back on the informers' word alone, with no report (no
// translation follows a status-only change); a policy created again as it
// was is written after the next report, although its status did not
// change there.
func TestWriterWritesWhatChangedAndRestoresOurs(t *testing.T) {
	c := gwfake.NewSimpleClientset()
	createPolicy(t, c, payNN)
	createPolicy(t, c, cartNN)
	cache := &liveCache{apiCache: apiCache{c}}
	w, err := New(Options{Gateway: c, Controller: me, Cache: cache})
	if err != nil {
		t.Fatal(err)
	}
	runWriter(t, w)
	eventually(t, "term started", w.IsLeader)
	first := map[types.NamespacedName]gwv1.PolicyStatus{payNN: policyStatus("Accepted"), cartNN: policyStatus("Accepted")}
	w.Report(first)
	eventually(t, "both written", func() bool { return policyReason(c, payNN) == "Accepted" && policyReason(c, cartNN) == "Accepted" })

	t.Log("one status changes: only it is written")
	c.ClearActions()
	second := maps.Clone(first)
	second[cartNN] = policyStatus("Changed")
	w.Report(second)
	eventually(t, "cart written", func() bool { return policyReason(c, cartNN) == "Changed" })
	w.Report(second)
	time.Sleep(100 * time.Millisecond)
	if n := policyUpdates(c); n != 1 {
		t.Errorf("%d status writes, want 1 (cart's)", n)
	}

	t.Log("someone else overwrites ours: written back without a report")
	c.ClearActions()
	p, _ := apiCache{c}.Policy(payNN)
	p.Status = policyStatus("Overwritten")
	if _, err := c.GatewayV1().BackendTLSPolicies(payNN.Namespace).UpdateStatus(context.Background(), p, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	cache.notify(KindBackendTLSPolicy, payNN, true)
	eventually(t, "ours written back", func() bool { return policyReason(c, payNN) == "Accepted" })
	t.Log("our own write comes back: nothing to write")
	cache.notify(KindBackendTLSPolicy, payNN, true)
	time.Sleep(100 * time.Millisecond)
	if n := policyUpdates(c); n != 2 {
		t.Errorf("%d status writes, want 2 (theirs, ours back)", n)
	}

	t.Log("deleted and created again as it was: written after the next report")
	if err := c.GatewayV1().BackendTLSPolicies(cartNN.Namespace).Delete(context.Background(), cartNN.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	createPolicy(t, c, cartNN)
	cache.notify(KindBackendTLSPolicy, cartNN, false)
	time.Sleep(100 * time.Millisecond)
	if got := policyReason(c, cartNN); got != "" {
		t.Fatalf("recreated policy written before the report, with %q", got)
	}
	w.Report(second) // the translation changed no status
	eventually(t, "recreated policy written", func() bool { return policyReason(c, cartNN) == "Changed" })
}

// TestWriterRetriesRefusedWritesAtTheNextReport: a write the API server
// refuses (invalid, forbidden) is not retried at once, but at every
// report, even one where its status did not change.
func TestWriterRetriesRefusedWritesAtTheNextReport(t *testing.T) {
	c := gwfake.NewSimpleClientset()
	createPolicy(t, c, payNN)
	var (
		mu      sync.Mutex
		refuse  = true
		refused int
	)
	c.PrependReactor("update", "backendtlspolicies", func(a k8stesting.Action) (bool, runtime.Object, error) {
		mu.Lock()
		defer mu.Unlock()
		if refuse {
			refused++
			return true, nil, apierrors.NewForbidden(schema.GroupResource{Group: gwv1.GroupName, Resource: "backendtlspolicies"}, payNN.Name, nil)
		}
		return false, nil, nil
	})
	w, err := New(Options{Gateway: c, Controller: me, Cache: &liveCache{apiCache: apiCache{c}}})
	if err != nil {
		t.Fatal(err)
	}
	runWriter(t, w)
	eventually(t, "term started", w.IsLeader)
	statuses := map[types.NamespacedName]gwv1.PolicyStatus{payNN: policyStatus("Accepted")}
	w.Report(statuses)
	eventually(t, "write refused", func() bool { mu.Lock(); defer mu.Unlock(); return refused == 1 })
	time.Sleep(100 * time.Millisecond)
	mu.Lock()
	refuse = false
	if refused != 1 {
		t.Errorf("refused write tried %d times before the next report, want once", refused)
	}
	mu.Unlock()
	w.Report(statuses)
	eventually(t, "written at the next report", func() bool { return policyReason(c, payNN) == "Accepted" })
}

package handshakes

import (
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
	gwxv1a1 "sigs.k8s.io/gateway-api/apisx/v1alpha1"

	"github.com/tlsplane/tlsplane/translator"
)

// An XBackend's clusters feed its own condition, on our parent entries
// only, and never a policy of the same name.
func TestXBackendConditionFollowsItsClusters(t *testing.T) {
	c := &clock{now: t0}
	var flips atomic.Int32
	tr := newTracker(c, &flips, prometheus.NewRegistry())
	const cluster = "XBackend/shop/pay/443"
	backs := map[string][]types.NamespacedName{cluster: {pay}}
	xbackends := map[types.NamespacedName]gwxv1a1.BackendStatus{pay: {Ancestors: []gwxv1a1.BackendAncestorStatus{
		{ControllerName: translator.DefaultControllerName, AncestorRef: gwv1.ParentReference{Name: "web"},
			Conditions: []metav1.Condition{{Type: "Accepted", Status: metav1.ConditionTrue, Reason: "Accepted", ObservedGeneration: 3}}},
		{ControllerName: "example.com/other", AncestorRef: gwv1.ParentReference{Name: "theirs"}},
	}}}
	tr.Apply(statuses(pay), origins, nil, "", t0)
	tr.ApplyXBackends(xbackends, backs, nil, "", t0)

	xreport := func(node string, counters map[string]uint64) Report {
		return Report{Node: node, Fleet: "shop/web", Counters: map[string]map[string]uint64{cluster: counters}}
	}
	tr.Record(xreport("e1", nil))
	c.advance(time.Second)
	tr.Record(xreport("e1", map[string]uint64{counterVerifyError: 3, counterConnError: 3}))

	out := tr.ApplyXBackends(xbackends, backs, nil, "", c.now)
	if len(xbackends[pay].Ancestors[0].Conditions) != 1 {
		t.Fatal("ApplyXBackends changed its input")
	}
	var cond *metav1.Condition
	for i, x := range out[pay].Ancestors[0].Conditions {
		if x.Type == ConditionHandshakesSucceeding {
			cond = &out[pay].Ancestors[0].Conditions[i]
		}
	}
	if cond == nil || cond.Status != metav1.ConditionFalse || cond.Reason != ReasonCertificateVerifyFailed || cond.ObservedGeneration != 3 ||
		!strings.Contains(cond.Message, "cluster "+cluster) {
		t.Fatalf("XBackend shop/pay after verify failures: %+v", cond)
	}
	if n := len(out[pay].Ancestors[1].Conditions); n != 0 {
		t.Fatalf("another controller's parent got %d conditions", n)
	}
	// The policy shop/pay governs other clusters: the XBackend's failures
	// are not its own.
	for _, x := range tr.Apply(statuses(pay), origins, nil, "", c.now)[pay].Ancestors[0].Conditions {
		if x.Type == ConditionHandshakesSucceeding {
			t.Fatalf("the policy shop/pay got the XBackend's condition: %+v", x)
		}
	}
	if d := tr.Debug(); len(d) != 1 || len(d[0].XBackends) != 1 || d[0].XBackends[0] != pay {
		t.Fatalf("debug windows %+v, want the XBackend's cluster naming it", d)
	}
}

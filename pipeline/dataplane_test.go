package pipeline

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/tlsplane/tlsplane/translator"
)

const cdsType = "type.googleapis.com/envoy.config.cluster.v3.Cluster"

func TestWithRejections(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	pay := types.NamespacedName{Namespace: "shop", Name: "payments"}
	other := types.NamespacedName{Namespace: "shop", Name: "other"}
	theirs := acceptedStatus(t0)
	theirs.Ancestors[0].ControllerName = "example.com/another"
	mixed := acceptedStatus(t0)
	mixed.Ancestors = append([]gwv1.PolicyAncestorStatus{theirs.Ancestors[0]}, mixed.Ancestors...)
	in := map[types.NamespacedName]gwv1.PolicyStatus{pay: mixed, other: acceptedStatus(t0)}
	nack := Rejection{Node: "envoy-1", Fleet: "edge", TypeURL: cdsType, Version: "v2",
		Message: "Error adding/updating cluster(s) shop/payments/443: " + strings.Repeat("x", 3000), Policies: []types.NamespacedName{pay}}

	now := t0.Add(time.Hour)
	got := withRejections(in, nil, []Rejection{nack}, nil, "", now)
	if len(in[pay].Ancestors[1].Conditions) != 1 {
		t.Fatal("the translator's output was mutated")
	}
	if len(got[other].Ancestors[0].Conditions) != 1 {
		t.Errorf("a policy no rejection implicates got %+v", got[other].Ancestors[0].Conditions)
	}
	if len(got[pay].Ancestors[0].Conditions) != 1 {
		t.Errorf("another controller's entry changed: %+v", got[pay].Ancestors[0].Conditions)
	}
	c := got[pay].Ancestors[1].Conditions[1]
	if c.Type != ConditionDataPlaneAccepted || c.Status != metav1.ConditionFalse || c.Reason != ReasonRejected ||
		!c.LastTransitionTime.Time.Equal(now) {
		t.Fatalf("condition = %+v", c)
	}
	for _, want := range []string{`Envoy node "envoy-1" of fleet "edge" rejected Cluster version v2: Error adding/updating cluster(s) shop/payments/443: xxx`} {
		if !strings.HasPrefix(c.Message, want) {
			t.Errorf("message %q lacks %q", c.Message[:120], want)
		}
	}
	if len(c.Message) > maxRejectionMessage || !strings.HasSuffix(c.Message, "…") {
		t.Errorf("message of %d bytes, want at most %d and marked cut", len(c.Message), maxRejectionMessage)
	}

	// Still rejected an hour later: the condition's lastTransitionTime stays.
	prev := translator.PreviousStatus{pay: got[pay]}
	again := withRejections(in, prev, []Rejection{nack}, nil, "", now.Add(time.Hour))
	if c := again[pay].Ancestors[1].Conditions[1]; !c.LastTransitionTime.Time.Equal(now) {
		t.Errorf("lastTransitionTime moved to %v while still rejected", c.LastTransitionTime)
	}
	if same := withRejections(in, prev, nil, nil, "", now); len(same[pay].Ancestors[1].Conditions) != 1 {
		t.Errorf("no rejection, yet conditions %+v", same[pay].Ancestors[1].Conditions)
	}
}

// statusRecorder is a publisher and sink keeping the reported statuses.
type statusRecorder struct {
	mu      sync.Mutex
	reports []map[types.NamespacedName]gwv1.PolicyStatus
}

func (r *statusRecorder) Publish(translator.Output) (bool, error) { return false, nil }
func (r *statusRecorder) Report(s map[types.NamespacedName]gwv1.PolicyStatus) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.reports = append(r.reports, s)
}

// waitCondition waits (at most 5s) for a report whose payments entry has
// ConditionDataPlaneAccepted (want true) or lacks it.
func (r *statusRecorder) waitCondition(t *testing.T, key types.NamespacedName, want bool) *metav1.Condition {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		r.mu.Lock()
		var last map[types.NamespacedName]gwv1.PolicyStatus
		if n := len(r.reports); n > 0 {
			last = r.reports[n-1]
		}
		r.mu.Unlock()
		if st, ok := last[key]; ok {
			c := findCondition(st.Ancestors[0].Conditions, ConditionDataPlaneAccepted)
			if (c != nil) == want {
				return c
			}
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("no report with %s present=%v", ConditionDataPlaneAccepted, want)
	return nil
}

func findCondition(conds []metav1.Condition, typ string) *metav1.Condition {
	for i := range conds {
		if conds[i].Type == typ {
			return &conds[i]
		}
	}
	return nil
}

func TestPipelineReportsANACKWithoutAnInputChange(t *testing.T) {
	src, rec, out := newFakeSource(), &recorder{}, &statusRecorder{}
	src.set(translator.Inputs{Policies: []*gwv1.BackendTLSPolicy{policy("payments", gwv1.PolicyStatus{})}})
	pay := types.NamespacedName{Namespace: "shop", Name: "payments"}
	p, err := New(Options{Source: src, Publisher: out, Sink: out, Translate: rec.translate,
		Quiet: 10 * time.Millisecond, MaxDelay: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	startRun(t, p)
	out.waitCondition(t, pay, false)

	p.RecordNACK(Rejection{Node: "envoy-1", Fleet: "edge", TypeURL: cdsType, Version: "v2",
		Message: "bad SNI", Policies: []types.NamespacedName{pay}})
	c := out.waitCondition(t, pay, true)
	if c.Status != metav1.ConditionFalse || !strings.Contains(c.Message, "bad SNI") {
		t.Fatalf("condition = %+v", c)
	}

	p.RecordACK("canary", cdsType, "v3") // another fleet
	p.RecordACK("edge", cdsType, "v2")   // a request naming the rejected version is no acceptance
	time.Sleep(100 * time.Millisecond)
	out.waitCondition(t, pay, true)

	p.RecordACK("edge", cdsType, "v3")
	out.waitCondition(t, pay, false)
	if got := p.Rejections(); len(got) != 0 {
		t.Fatalf("rejections after a newer version was accepted: %+v", got)
	}
}

// startRun runs p until the test ends.
func startRun(t *testing.T, p *Pipeline) {
	t.Helper()
	done := make(chan struct{})
	ctx, cancel := context.WithCancel(context.Background())
	go func() { _ = p.Run(ctx); close(done) }()
	t.Cleanup(func() {
		cancel()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			t.Error("Run did not return within 5s of cancel")
		}
	})
}

package handshakes

import (
	"maps"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/tlsplane/tlsplane/translator"
)

var (
	pay     = types.NamespacedName{Namespace: "shop", Name: "pay"}
	other   = types.NamespacedName{Namespace: "shop", Name: "other"}
	origins = map[string][]types.NamespacedName{"shop/pay/443": {pay}, "shop/other/443": {other}}
	t0      = time.Date(2026, 1, 2, 3, 4, 0, 0, time.UTC)
)

// clock is a fixed, movable now.
type clock struct{ now time.Time }

func (c *clock) Now() time.Time          { return c.now }
func (c *clock) advance(d time.Duration) { c.now = c.now.Add(d) }
func newTracker(c *clock, flips *atomic.Int32, reg prometheus.Registerer) *Tracker {
	return New(Options{Window: time.Minute, Now: c.Now, Registerer: reg, OnChange: func() { flips.Add(1) }})
}

// statuses is one accepted policy per name, with our entry.
func statuses(keys ...types.NamespacedName) map[types.NamespacedName]gwv1.PolicyStatus {
	out := map[types.NamespacedName]gwv1.PolicyStatus{}
	for _, k := range keys {
		out[k] = gwv1.PolicyStatus{Ancestors: []gwv1.PolicyAncestorStatus{{
			AncestorRef:    gwv1.ParentReference{Name: gwv1.ObjectName(k.Name)},
			ControllerName: translator.DefaultControllerName,
			Conditions:     []metav1.Condition{{Type: "Accepted", Status: metav1.ConditionTrue, Reason: "Accepted", ObservedGeneration: 4}},
		}}}
	}
	return out
}

// handshakeCondition is the condition Apply put on key, nil when absent.
func handshakeCondition(t *testing.T, tr *Tracker, key types.NamespacedName) *metav1.Condition {
	t.Helper()
	in := statuses(pay, other)
	out := tr.Apply(in, origins, nil, "", t0)
	if len(in[key].Ancestors[0].Conditions) != 1 {
		t.Fatal("Apply changed its input")
	}
	for _, c := range out[key].Ancestors[0].Conditions {
		if c.Type == ConditionHandshakesSucceeding {
			return &c
		}
	}
	return nil
}

func report(node string, counters map[string]uint64) Report {
	return Report{Node: node, Fleet: "edge", Counters: map[string]map[string]uint64{"shop/pay/443": counters}}
}

func TestConditionFollowsTheCounters(t *testing.T) {
	c := &clock{now: t0}
	var flips atomic.Int32
	tr := newTracker(c, &flips, prometheus.NewRegistry())
	tr.Apply(statuses(pay, other), origins, nil, "", t0) // origins known, as after the first translation

	if cond := handshakeCondition(t, tr, pay); cond != nil {
		t.Fatalf("no Envoy reported, yet %+v", cond)
	}
	// A first report is a baseline: failures from before tlsplane started
	// say nothing about now.
	tr.Record(report("e1", map[string]uint64{counterVerifyError: 50, counterConnError: 50}))
	if cond := handshakeCondition(t, tr, pay); cond != nil {
		t.Fatalf("a baseline alone set %+v", cond)
	}

	c.advance(time.Second)
	tr.Record(report("e1", map[string]uint64{counterVerifyError: 52, counterConnError: 57, counterVerifySAN: 4, counterConnectFailed: 1}))
	cond := handshakeCondition(t, tr, pay)
	if cond == nil || cond.Status != metav1.ConditionFalse || cond.Reason != ReasonSubjectAltNameMismatch || cond.ObservedGeneration != 4 {
		t.Fatalf("after SAN failures: %+v", cond)
	}
	for _, want := range []string{`fleet "edge"`, "report 4 TLS handshakes to cluster shop/pay/443 failed in the last 1m0s", "7 failed in all", "ssl.fail_verify_san", "1 upstream connections failed"} {
		if !strings.Contains(cond.Message, want) {
			t.Errorf("message %q lacks %q", cond.Message, want)
		}
	}
	if cond := handshakeCondition(t, tr, other); cond != nil {
		t.Fatalf("a policy of another cluster got %+v", cond)
	}
	want := map[string]float64{"shop/pay CertificateVerifyFailed": 2, "shop/pay HandshakeFailed": 1, "shop/pay SubjectAltNameMismatch": 4}
	if got := series(t, tr.metrics.failures); !maps.Equal(got, want) {
		t.Fatalf("tlsplane_upstream_tls_failures_total = %v, want %v", got, want)
	}

	// Another Envoy of the fleet sees handshakes succeed: the backend is
	// fixed, and the condition turns True at once, not a window later.
	c.advance(time.Second)
	tr.Record(report("e2", map[string]uint64{counterHandshake: 1}))
	tr.Record(report("e2", map[string]uint64{counterHandshake: 5}))
	cond = handshakeCondition(t, tr, pay)
	if cond == nil || cond.Status != metav1.ConditionTrue || cond.Reason != ReasonHandshakesSucceeding || !strings.Contains(cond.Message, "successful TLS handshakes in the last 1m0s") {
		t.Fatalf("after handshakes succeeded: %+v", cond)
	}

	// Envoy restarted: its counters start again from zero, and count.
	c.advance(time.Second)
	tr.Record(report("e1", map[string]uint64{counterVerifyHash: 2, counterConnError: 2}))
	if cond = handshakeCondition(t, tr, pay); cond == nil || cond.Reason != ReasonCertificateHashMismatch {
		t.Fatalf("after a restart and pin failures: %+v", cond)
	}

	// A handshake failure of its own is counted as such, however many
	// verification failures the window holds.
	c.advance(time.Second)
	tr.Record(report("e1", map[string]uint64{counterVerifyHash: 2, counterConnError: 5}))
	if cond = handshakeCondition(t, tr, pay); cond == nil || cond.Reason != ReasonHandshakeFailed ||
		!strings.Contains(cond.Message, "report 4 TLS handshakes to cluster shop/pay/443 failed") { // 3 now, 1 earlier in the window
		t.Fatalf("after connection errors alone: %+v", cond)
	}

	// The latest failure names the cause, not the most specific one of the
	// window: the backend changed its certificate again.
	c.advance(time.Second)
	tr.Record(report("e1", map[string]uint64{counterVerifyHash: 2, counterVerifyError: 1, counterConnError: 6}))
	if cond = handshakeCondition(t, tr, pay); cond == nil || cond.Reason != ReasonCertificateVerifyFailed {
		t.Fatalf("after pin failures, then chain failures: %+v", cond)
	}

	// Nobody reports for a window: the condition goes away.
	c.advance(time.Minute)
	before := flips.Load()
	if !tr.expire() {
		t.Fatal("expiring a silent fleet flipped nothing")
	}
	if cond = handshakeCondition(t, tr, pay); cond != nil {
		t.Fatalf("a window after the last report: %+v", cond)
	}
	if before < 3 {
		t.Fatalf("OnChange called %d times, want one per flip (failing, succeeding, failing)", before)
	}

	// A deleted policy's series go.
	tr.Apply(statuses(other), origins, nil, "", t0)
	if got := series(t, tr.metrics.failures); len(got) != 0 {
		t.Fatalf("series left for a deleted policy: %v", got)
	}
}

func TestSteadyFailuresDoNotFlip(t *testing.T) {
	c := &clock{now: t0}
	var flips atomic.Int32
	tr := newTracker(c, &flips, nil)
	tr.Record(report("e1", map[string]uint64{}))
	for i := range uint64(20) {
		c.advance(time.Second)
		tr.Record(report("e1", map[string]uint64{counterVerifyError: i + 1, counterConnError: i + 1}))
	}
	// Reported (baseline), then failing: two flips, not one per flush.
	if n := flips.Load(); n != 2 {
		t.Fatalf("OnChange called %d times for 20 flushes of one failure, want 2", n)
	}
}

func TestLastTransitionTimeHoldsWhileTheStatusDoes(t *testing.T) {
	c := &clock{now: t0}
	var flips atomic.Int32
	tr := newTracker(c, &flips, nil)
	tr.Record(report("e1", nil))
	tr.Record(report("e1", map[string]uint64{counterConnError: 1}))
	first := tr.Apply(statuses(pay), origins, nil, "", t0)
	later := tr.Apply(statuses(pay), origins, first, "", t0.Add(time.Hour))
	got := later[pay].Ancestors[0].Conditions[1]
	if got.Reason != ReasonHandshakeFailed || !got.LastTransitionTime.Time.Equal(t0) {
		t.Fatalf("condition %+v, want HandshakeFailed since %v", got, t0)
	}
}

func TestFailuresTableMatchesCounterSlots(t *testing.T) {
	for i, f := range failures {
		if counters[i] != f.counter {
			t.Fatalf("failures[%d] is %s but slot %d counts %s", i, f.counter, i, counters[i])
		}
	}
	if counters[slotConnError] != counterConnError || counters[slotHandshake] != counterHandshake || counters[slotConnectFailed] != counterConnectFailed {
		t.Fatal("slot constants do not match counters")
	}
}

// series reads a counter or gauge vector as "policy reason" → value,
// without prometheus/testutil, which would add a dependency for a few lines.
func series(t *testing.T, v prometheus.Collector) map[string]float64 {
	t.Helper()
	ch := make(chan prometheus.Metric, 64)
	v.Collect(ch)
	close(ch)
	out := map[string]float64{}
	for m := range ch {
		var d dto.Metric
		if err := m.Write(&d); err != nil {
			t.Fatal(err)
		}
		labels := map[string]string{}
		for _, l := range d.GetLabel() {
			labels[l.GetName()] = l.GetValue()
		}
		out[labels["policy"]+" "+labels["reason"]] = d.GetCounter().GetValue() + d.GetGauge().GetValue()
	}
	return out
}

// Every batch of an Envoy's first flush (batch_size) is baseline: a cluster
// in the second batch is not new to the Envoy, only to tlsplane.
func TestFirstFlushBatchesAreBaseline(t *testing.T) {
	c := &clock{now: t0}
	var flips atomic.Int32
	tr := newTracker(c, &flips, prometheus.NewRegistry())
	tr.Apply(statuses(pay, other), origins, nil, "", t0)
	flush := t0.Add(-time.Second)
	batch := func(flush time.Time, cluster string, v map[string]uint64) Report {
		return Report{Node: "e1", Fleet: "edge", Flush: flush, Counters: map[string]map[string]uint64{cluster: v}}
	}
	tr.Record(batch(flush, "shop/other/443", map[string]uint64{counterHandshake: 9}))
	tr.Record(batch(flush, "shop/pay/443", map[string]uint64{counterVerifyError: 40, counterConnError: 40}))
	if cond := handshakeCondition(t, tr, pay); cond != nil {
		t.Fatalf("failures from before tlsplane started, in the first flush's second batch: %+v", cond)
	}
	// The next flush splits one cluster's counters over two batches: the
	// connection error is the verification failure's, not one of its own.
	next := flush.Add(5 * time.Second)
	tr.Record(batch(next, "shop/pay/443", map[string]uint64{counterConnError: 41}))
	tr.Record(batch(next, "shop/pay/443", map[string]uint64{counterVerifyError: 41}))
	tr.Record(batch(next, "shop/other/443", map[string]uint64{counterHandshake: 9}))
	if cond := handshakeCondition(t, tr, pay); cond != nil {
		t.Fatalf("a flush shown before its batches settled: %+v", cond)
	}
	c.advance(settleAfter)
	if !tr.settle() {
		t.Fatal("settling the flush flipped nothing")
	}
	if got := series(t, tr.metrics.failures); len(got) != 1 || got["shop/pay CertificateVerifyFailed"] != 1 {
		t.Fatalf("failures counted %v, want one CertificateVerifyFailed", got)
	}
	if cond := handshakeCondition(t, tr, pay); cond == nil || cond.Reason != ReasonCertificateVerifyFailed || !strings.Contains(cond.Message, "report 1 TLS") || strings.Contains(cond.Message, "in all") {
		t.Fatalf("a failure in the next flush: %+v", cond)
	}
}

// A window that expired is found again when its Envoy reports on it once
// more: the Envoy's cached window must not be the forgotten one.
func TestExpiredWindowComesBack(t *testing.T) {
	c := &clock{now: t0}
	var flips atomic.Int32
	tr := newTracker(c, &flips, nil)
	both := func(payCounters map[string]uint64) Report {
		r := report("e1", payCounters)
		r.Counters["shop/other/443"] = map[string]uint64{counterHandshake: 1}
		return r
	}
	tr.Record(both(map[string]uint64{counterHandshake: 1}))
	tr.Record(both(map[string]uint64{counterHandshake: 2}))
	// For two windows e1 reports only the other cluster: pay's window goes.
	for range 4 {
		c.advance(31 * time.Second)
		tr.Record(Report{Node: "e1", Fleet: "edge", Counters: map[string]map[string]uint64{"shop/other/443": {counterHandshake: 1}}})
		tr.expire()
	}
	if cond := handshakeCondition(t, tr, pay); cond != nil {
		t.Fatalf("pay's window outlived two windows of silence: %+v", cond)
	}
	tr.Record(both(map[string]uint64{counterHandshake: 2, counterVerifySAN: 1}))
	if cond := handshakeCondition(t, tr, pay); cond == nil || cond.Reason != ReasonSubjectAltNameMismatch {
		t.Fatalf("after pay's counters moved again: %+v", cond)
	}
}

// A window first reported without handshakes (an Envoy that only failed to
// connect, or a peer's silent window) flips when handshakes then succeed:
// the condition appears, True, without waiting for another change.
func TestFirstSuccessFlips(t *testing.T) {
	c := &clock{now: t0}
	var flips atomic.Int32
	tr := newTracker(c, &flips, nil)
	tr.Record(report("e1", map[string]uint64{counterConnectFailed: 1}))
	c.advance(time.Second)
	tr.Record(report("e1", map[string]uint64{counterConnectFailed: 2}))
	before := flips.Load()
	c.advance(time.Second)
	tr.Record(report("e1", map[string]uint64{counterConnectFailed: 2, counterHandshake: 1}))
	if flips.Load() != before+1 {
		t.Fatalf("the first successful handshake flipped %d times, want 1", flips.Load()-before)
	}
	if cond := handshakeCondition(t, tr, pay); cond == nil || cond.Status != metav1.ConditionTrue {
		t.Fatalf("after the first success: %+v", cond)
	}
}

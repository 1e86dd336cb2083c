package handshakes

import (
	"encoding/json"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// viaJSON is what a peer reads back from the object a replica wrote.
func viaJSON(t *testing.T, s Shared) Shared {
	t.Helper()
	data, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	var out Shared
	if err := json.Unmarshal(data, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// A failure only a peer's Envoys saw shows on the leader's condition,
// a success the leader's own Envoys see later clears it, and the peer's
// windows leave with the window, whether or not its object goes.
func TestPeersWindowsCountAsOwn(t *testing.T) {
	c := &clock{now: t0}
	var leaderFlips, peerFlips atomic.Int32
	leader := newTracker(c, &leaderFlips, nil)
	peer := newTracker(c, &peerFlips, nil)
	leader.Apply(statuses(pay, other), origins, nil, "", t0)

	peer.Record(report("e9", map[string]uint64{counterConnError: 5}))
	c.advance(time.Second)
	peer.Record(report("e9", map[string]uint64{counterConnError: 8, counterVerifySAN: 3}))
	leader.SetPeer("replica-b", viaJSON(t, peer.Export()))
	if leaderFlips.Load() != 1 {
		t.Fatalf("a peer's failure flipped the leader %d times, want 1", leaderFlips.Load())
	}
	cond := handshakeCondition(t, leader, pay)
	if cond == nil || cond.Status != metav1.ConditionFalse || cond.Reason != ReasonSubjectAltNameMismatch ||
		!strings.Contains(cond.Message, "report 3 TLS handshakes to cluster shop/pay/443 failed") {
		t.Fatalf("leader's condition after the peer's failures: %+v", cond)
	}
	// The window gauge counts the peer's Envoys; this replica's counter
	// only its own (none).
	if got := series(t, leader.metrics.window); len(got) != 1 || got["shop/pay SubjectAltNameMismatch"] != 3 {
		t.Fatalf("tlsplane_upstream_tls_window_failures = %v, want shop/pay SubjectAltNameMismatch 3", got)
	}
	if got := series(t, leader.metrics.failures); len(got) != 0 {
		t.Fatalf("the leader's own counter counts a peer's failures: %v", got)
	}
	// The same Shared again is no flip.
	leader.SetPeer("replica-b", viaJSON(t, peer.Export()))
	if leaderFlips.Load() != 1 {
		t.Fatalf("the same peer data flipped the leader again")
	}

	// The leader's own Envoy sees a handshake succeed later: the backend
	// was fixed, whichever replica heard it.
	c.advance(time.Second)
	leader.Record(report("e1", map[string]uint64{counterHandshake: 1}))
	leader.Record(report("e1", map[string]uint64{counterHandshake: 2}))
	if cond := handshakeCondition(t, leader, pay); cond == nil || cond.Status != metav1.ConditionTrue {
		t.Fatalf("after the leader's own success: %+v", cond)
	}
	// And the other way round: the peer fails again, later than that.
	c.advance(time.Second)
	peer.Record(report("e9", map[string]uint64{counterConnError: 9}))
	leader.SetPeer("replica-b", viaJSON(t, peer.Export()))
	if cond := handshakeCondition(t, leader, pay); cond == nil || cond.Reason != ReasonHandshakeFailed ||
		!strings.Contains(cond.Message, "report 1 TLS handshakes") {
		t.Fatalf("after the peer's later failure: %+v", cond)
	}
	debug := leader.Debug()
	if len(debug) != 1 || debug[0].Increases[counterHandshake] != 1 || debug[0].Increases[counterVerifySAN] != 3 {
		t.Fatalf("/debug/status shows %+v, want the sum of both replicas", debug)
	}

	// The peer dies (its object stays): its failure counts until the
	// window is over, then the condition shows the leader's Envoys only.
	c.advance(40 * time.Second)
	leader.Record(report("e1", map[string]uint64{counterHandshake: 2}))
	if cond := handshakeCondition(t, leader, pay); cond == nil || cond.Status != metav1.ConditionFalse {
		t.Fatalf("the dead peer's failure within the window was lost: %+v", cond)
	}
	c.advance(25 * time.Second) // the failure is 65 s old, the window 1 m
	if !leader.expire() {
		t.Fatal("the peer's failure leaving the window flipped nothing")
	}
	if cond := handshakeCondition(t, leader, pay); cond != nil { // and no success within it either
		t.Fatalf("a dead peer's failure outlived the window: %+v", cond)
	}
	// Its object deleted: nothing of it stays.
	leader.ForgetPeer("replica-b")
	if got := leader.Export(); len(got.Windows) != 1 || got.Windows[0].LastFailure != (time.Time{}) {
		t.Fatalf("the leader exports %+v, want its own success only", got.Windows)
	}
}

// A window only a peer reported goes when the peer's object does.
func TestForgetPeerClearsItsWindows(t *testing.T) {
	c := &clock{now: t0}
	var flips, peerFlips atomic.Int32
	leader := newTracker(c, &flips, nil)
	peer := newTracker(c, &peerFlips, nil)
	peer.Record(report("e9", nil))
	peer.Record(report("e9", map[string]uint64{counterVerifyError: 1, counterConnError: 1}))
	leader.SetPeer("b", peer.Export())
	if cond := handshakeCondition(t, leader, pay); cond == nil || cond.Reason != ReasonCertificateVerifyFailed {
		t.Fatalf("peer's failure: %+v", cond)
	}
	leader.ForgetPeer("b")
	if cond := handshakeCondition(t, leader, pay); cond != nil {
		t.Fatalf("after the peer's object went: %+v", cond)
	}
	if flips.Load() != 2 {
		t.Fatalf("flips %d, want 2 (failing, gone)", flips.Load())
	}
}

// A failing condition's counts follow new failures within a refresh,
// though the state did not flip; no failure, no refresh.
func TestFailingCountsRefresh(t *testing.T) {
	c := &clock{now: t0}
	var flips atomic.Int32
	tr := newTracker(c, &flips, nil)
	tr.Record(report("e1", nil))
	tr.Record(report("e1", map[string]uint64{counterVerifyError: 3, counterConnError: 3}))
	if !tr.countsMoved() {
		t.Fatal("the first failing counts did not count as moved")
	}
	if cond := handshakeCondition(t, tr, pay); cond == nil || !strings.Contains(cond.Message, "report 3 TLS") {
		t.Fatalf("after 3 failures: %+v", cond)
	}
	if tr.countsMoved() {
		t.Fatal("a refresh without new failures asked for a pass")
	}
	before := flips.Load()
	c.advance(time.Second)
	tr.Record(report("e1", map[string]uint64{counterVerifyError: 6, counterConnError: 6}))
	if flips.Load() != before {
		t.Fatal("more failures of the same cause flipped the state")
	}
	if !tr.countsMoved() {
		t.Fatal("3 more failures did not ask for a pass")
	}
	if cond := handshakeCondition(t, tr, pay); cond == nil || !strings.Contains(cond.Message, "report 6 TLS") {
		t.Fatalf("after 6 failures: %+v", cond)
	}
	// Successes alone never refresh: their count is not in the message.
	c.advance(time.Second)
	tr.Record(report("e1", map[string]uint64{counterVerifyError: 6, counterConnError: 6, counterHandshake: 1}))
	tr.countsMoved() // the failing window left
	c.advance(time.Second)
	tr.Record(report("e1", map[string]uint64{counterVerifyError: 6, counterConnError: 6, counterHandshake: 9}))
	if tr.countsMoved() {
		t.Fatal("successes asked for a pass")
	}
}

package pipeline

import (
	"testing"
	"time"
)

// testQuiet and testMaxDelay: a cap above the quiet period, so the state
// machine's two bounds can both be seen (the default cap is below it).
const testQuiet, testMaxDelay = 100 * time.Millisecond, 200 * time.Millisecond

func TestHoldoff(t *testing.T) {
	t0 := time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC)
	ms := func(n int) time.Time { return t0.Add(time.Duration(n) * time.Millisecond) }
	tests := []struct {
		name    string
		changes []int // ms offsets of changes
		wantDue int   // ms offset the burst is due
	}{
		{"single change waits for quiet", []int{0}, 100},
		{"burst extends the quiet period", []int{0, 50, 90}, 190},
		{"trickle is capped at the max delay", []int{0, 90, 180, 270}, 200},
		{"change after a gap", []int{0, 99}, 199},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := holdoff{quiet: testQuiet, maxDelay: testMaxDelay}
			if _, ok := h.due(); ok {
				t.Fatal("due before any change")
			}
			for _, c := range tt.changes {
				h.changed(ms(c))
			}
			at, ok := h.due()
			if !ok || !at.Equal(ms(tt.wantDue)) {
				t.Fatalf("due = %v, %v; want +%dms", at.Sub(t0), ok, tt.wantDue)
			}
			if h.take(ms(tt.wantDue - 1)) {
				t.Fatal("taken 1ms before due")
			}
			if !h.take(ms(tt.wantDue)) {
				t.Fatal("not taken when due")
			}
			if h.take(ms(tt.wantDue + 5000)) {
				t.Fatal("taken twice")
			}
		})
	}
}

// TestHoldoffPacing: passes that take long stretch the cap on a trickle,
// so the pipeline is not kept busy translating.
func TestHoldoffPacing(t *testing.T) {
	t0 := time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC)
	h := holdoff{quiet: testQuiet, maxDelay: testMaxDelay}
	h.passed(150 * time.Millisecond)
	for ms := 0; ms <= 900; ms += 50 {
		h.changed(t0.Add(time.Duration(ms) * time.Millisecond))
	}
	if at, _ := h.due(); !at.Equal(t0.Add(600 * time.Millisecond)) {
		t.Fatalf("due %v after a 150ms pass, want 600ms (4 passes' time)", at.Sub(t0))
	}
	h.passed(time.Millisecond)
	if at, _ := h.due(); !at.Equal(t0.Add(testMaxDelay)) {
		t.Fatalf("due %v after a 1ms pass, want MaxDelay", at.Sub(t0))
	}
}

// TestHoldoffLeadingEdge: a change that comes alone is handled at once;
// one that follows another within the quiet period belongs to a burst,
// which waits for the quiet period as before.
func TestHoldoffLeadingEdge(t *testing.T) {
	t0 := time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC)
	ms := func(n int) time.Time { return t0.Add(time.Duration(n) * time.Millisecond) }
	h := holdoff{quiet: testQuiet, maxDelay: testMaxDelay}
	if !h.leading(ms(1000)) {
		t.Fatal("a lone change is not handled at once")
	}
	if !h.leading(ms(1100)) {
		t.Fatal("an edit a quiet period after the last, with nothing pending, is not handled at once")
	}
	// A directory source's reads of one burst come 50 ms apart (its settle).
	if h.leading(ms(1150)) {
		t.Fatal("a change 50ms after the last is handled at once: a burst would take a pass per change")
	}
	h.changed(ms(1150))
	for _, c := range []int{1160, 1200, 1230} {
		if h.leading(ms(c)) {
			t.Fatalf("a change at +%dms while a burst is pending is handled at once", c)
		}
		h.changed(ms(c))
	}
	if at, _ := h.due(); !at.Equal(ms(1330)) {
		t.Fatalf("the burst is due at %v, want +1330ms (quiet after its last change)", at.Sub(t0))
	}
	if !h.take(ms(1330)) {
		t.Fatal("the burst is not taken when due")
	}
}

// TestHoldoffDefaultsCapATrickle: with the defaults, a steady trickle of
// changes 5 ms apart (200 a second) is handled every MaxDelay, so each
// reaches Envoy within about MaxDelay, not a quiet period that never comes.
func TestHoldoffDefaultsCapATrickle(t *testing.T) {
	t0 := time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC)
	h := holdoff{quiet: Quiet, maxDelay: MaxDelay}
	h.passed(time.Millisecond)
	for ms := 5; ms <= 60; ms += 5 {
		h.changed(t0.Add(time.Duration(ms) * time.Millisecond))
	}
	if at, _ := h.due(); !at.Equal(t0.Add(5*time.Millisecond + MaxDelay)) {
		t.Fatalf("due %v, want the first change's time plus MaxDelay %v", at.Sub(t0), MaxDelay)
	}
	if MaxDelay > Quiet/2 {
		t.Fatalf("MaxDelay %v: a trickle of endpoint updates would wait most of a quiet period", MaxDelay)
	}
}

package pipeline

import "time"

const (
	// Quiet is how long changes must stop before translating: one edit or
	// one informer resync arrives as a burst of events.
	Quiet = 100 * time.Millisecond
	// MaxDelay caps the wait since the first change of a burst, so a
	// steady trickle of changes (EndpointSlices of a rolling deployment,
	// endpoint churn) reaches Envoy at least this often. A pass costs what
	// changed, so a short cap costs little (200 updates a second at 10,000
	// Services: 20 passes of about a millisecond); passes that take long
	// stretch it (pacing).
	MaxDelay = 50 * time.Millisecond
	// StatusMaxDelay caps how long statuses wait for a quiet period while
	// changes keep coming: they are reported after Quiet without a change,
	// or this long after the first pass they wait for.
	StatusMaxDelay = time.Second
	// pacing stretches the cap to this many times the last pass's
	// duration, so a steady trickle keeps the pipeline busy at most a
	// fifth of the time, however large the world.
	pacing = 4
)

// holdoff decides when a burst of changes is due. It is a pure state
// machine over the times it is given, so tests need no clock.
//
// A change that comes alone (nothing pending, and no change for a quiet
// period before it) is due at once, the leading edge: a pass costs what
// changed, so an edit need not wait for the quiet period to reach Envoy.
// A change that follows another within the quiet period belongs to a
// burst (the reads of one save, one kubectl apply, one informer resync,
// a rolling deployment's EndpointSlices), handled after the quiet period
// or at the cap, however many changes it gathers. Statuses wait for the
// quiet period whatever the pass (the pipeline's statusDue), so a burst
// half applied never shows.
type holdoff struct {
	quiet, maxDelay time.Duration
	pending         bool
	first, last     time.Time
	// lastPass is how long the last pass took.
	lastPass time.Duration
	// seen is when the last change came, pending or handled at once.
	seen time.Time
}

// passed records how long a pass took.
func (h *holdoff) passed(d time.Duration) { h.lastPass = d }

// leading reports whether a change at now comes alone, and notes it.
func (h *holdoff) leading(now time.Time) bool {
	alone := !h.pending && now.Sub(h.seen) >= h.quiet
	h.seen = now
	return alone
}

// changed records a change at now.
func (h *holdoff) changed(now time.Time) {
	if !h.pending {
		h.pending = true
		h.first = now
	}
	h.last, h.seen = now, now
}

// due returns the time the pending burst should be handled; ok is false
// when nothing is pending.
func (h *holdoff) due() (at time.Time, ok bool) {
	if !h.pending {
		return time.Time{}, false
	}
	at = h.last.Add(h.quiet)
	if limit := h.first.Add(max(h.maxDelay, pacing*h.lastPass)); limit.Before(at) {
		at = limit
	}
	return at, true
}

// take reports whether the burst is due at now, and if so clears it.
func (h *holdoff) take(now time.Time) bool {
	at, ok := h.due()
	if !ok || now.Before(at) {
		return false
	}
	h.pending = false
	return true
}

package pipeline

import "time"

const (
	// Quiet is how long changes must stop before translating: one edit or
	// one informer resync arrives as a burst of events.
	Quiet = 100 * time.Millisecond
	// MaxDelay caps the wait since the first change of a burst, so a
	// steady trickle of changes cannot starve Envoy of updates.
	MaxDelay = time.Second
)

// holdoff decides when a burst of changes is due. It is a pure state
// machine over the times it is given, so tests need no clock.
type holdoff struct {
	quiet, maxDelay time.Duration
	pending         bool
	first, last     time.Time
}

// changed records a change at now.
func (h *holdoff) changed(now time.Time) {
	if !h.pending {
		h.pending = true
		h.first = now
	}
	h.last = now
}

// due returns the time the pending burst should be handled; ok is false
// when nothing is pending.
func (h *holdoff) due() (at time.Time, ok bool) {
	if !h.pending {
		return time.Time{}, false
	}
	at = h.last.Add(h.quiet)
	if limit := h.first.Add(h.maxDelay); limit.Before(at) {
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

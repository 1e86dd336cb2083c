package handshakes

import "time"

// buckets divide a window: increases older than the window leave it a
// bucket at a time, so memory per cluster is fixed whatever the flush rate.
const buckets = 6

// bucket is the increases that arrived in [start, start+width).
type bucket struct {
	start time.Time
	inc   counts
}

// clusterWindow is what the Envoys of one fleet reported about one
// cluster: increases in buckets, and when handshakes last failed and
// last succeeded.
type clusterWindow struct {
	ring        [buckets]bucket
	lastReport  time.Time
	lastFailure time.Time
	lastSuccess time.Time
	// lastCause is the most specific counter that rose in the last failing
	// report: the cause now, whatever failed earlier in the window.
	lastCause failure
	// forgotten is set when the window expired and left the tracker.
	forgotten bool
	// shown is the state last announced, to call onChange on a flip only.
	shown state
}

// state is what a window says, compared to tell a flip.
type state struct {
	reported bool
	failing  bool
	cause    failure
}

// add counts one report's increases at t. A report whose failure counters
// rose is a failure; one whose handshakes rose and no failure counter did
// is a success, which clears earlier failures.
func (w *clusterWindow) add(t time.Time, width time.Duration, inc counts) {
	w.lastReport = t
	start := t.Truncate(width)
	b := &w.ring[int(start.UnixNano()/int64(width))%buckets]
	if !b.start.Equal(start) {
		*b = bucket{start: start}
	}
	b.inc.add(inc)
	if f, _, failed := inc.failed(); failed {
		w.lastFailure, w.lastCause = t, f
	} else if inc[slotHandshake] > 0 {
		w.lastSuccess = t
	}
}

// sum is the increases within window before now.
func (w *clusterWindow) sum(now time.Time, window time.Duration) counts {
	var total counts
	for _, b := range w.ring {
		if !b.start.IsZero() && b.start.After(now.Add(-window)) {
			total.add(b.inc)
		}
	}
	return total
}

// stateAt says whether the window is reported and failing at now: failing
// when handshakes failed within the window and none succeeded since.
func (w *clusterWindow) stateAt(now time.Time, window time.Duration) state {
	if !w.lastReport.After(now.Add(-window)) {
		return state{}
	}
	if w.lastFailure.After(now.Add(-window)) && !w.lastSuccess.After(w.lastFailure) {
		if _, _, ok := w.sum(now, window).failed(); !ok {
			// The failures' bucket left the window before lastFailure did.
			return state{reported: true}
		}
		return state{reported: true, failing: true, cause: w.lastCause}
	}
	return state{reported: true}
}

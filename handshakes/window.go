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

// clusterWindow is what the Envoys of one fleet connected to this replica
// reported about one cluster: increases in buckets, and when handshakes
// last failed and last succeeded.
type clusterWindow struct {
	ring [buckets]bucket
	marks
	// forgotten is set when the window expired and left the tracker.
	forgotten bool
	// shown is the state across replicas last announced, to call
	// onChange on a flip only.
	shown state
}

// marks are a window's last report, failure and success.
type marks struct {
	lastReport  time.Time
	lastFailure time.Time
	lastSuccess time.Time
	// lastCause is the most specific counter that rose in the last failing
	// report: the cause now, whatever failed earlier in the window.
	lastCause failure
}

// state is what a window says, compared to tell a flip: it changes
// exactly when the condition it gives does (present, True or False, and
// the cause).
type state struct {
	reported bool
	failing  bool
	// succeeded: handshakes succeeded within the window (True when not
	// failing; absent when neither).
	succeeded bool
	cause     failure
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

// view is the window as the merge of replicas sees it; it shares the ring.
func (w *clusterWindow) view() windowView {
	return windowView{buckets: w.ring[:], marks: w.marks}
}

// windowView is one (fleet, cluster) window as all replicas together saw
// it: this replica's ring and the buckets its peers published.
type windowView struct {
	buckets []bucket
	marks
}

// merge adds another replica's view: increases add up, and the latest
// report, failure and success win, with the cause of the latest failure.
func (v *windowView) merge(o windowView) {
	v.buckets = append(v.buckets[:len(v.buckets):len(v.buckets)], o.buckets...)
	v.lastReport = later(v.lastReport, o.lastReport)
	v.lastSuccess = later(v.lastSuccess, o.lastSuccess)
	if o.lastFailure.After(v.lastFailure) {
		v.lastFailure, v.lastCause = o.lastFailure, o.lastCause
	}
}

func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// sum is the increases within window before now.
func (v windowView) sum(now time.Time, window time.Duration) counts {
	var total counts
	for _, b := range v.buckets {
		if !b.start.IsZero() && b.start.After(now.Add(-window)) {
			total.add(b.inc)
		}
	}
	return total
}

// stateAt says whether the window is reported and failing at now: failing
// when handshakes failed within the window and none succeeded since.
func (v windowView) stateAt(now time.Time, window time.Duration) state {
	if !v.lastReport.After(now.Add(-window)) {
		return state{}
	}
	if v.lastFailure.After(now.Add(-window)) && !v.lastSuccess.After(v.lastFailure) {
		if _, _, ok := v.sum(now, window).failed(); !ok {
			// The failures' bucket left the window before lastFailure did.
			return state{reported: true}
		}
		return state{reported: true, failing: true, cause: v.lastCause}
	}
	return state{reported: true, succeeded: v.handshakes(now, window) > 0}
}

// handshakes is the successful handshakes within window before now.
func (v windowView) handshakes(now time.Time, window time.Duration) uint64 {
	var n uint64
	for _, b := range v.buckets {
		if !b.start.IsZero() && b.start.After(now.Add(-window)) {
			n += b.inc[slotHandshake]
		}
	}
	return n
}

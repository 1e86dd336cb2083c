package handshakes

import (
	"cmp"
	"slices"
	"time"
)

// Shared is what the Envoys connected to one replica reported, as that
// replica publishes it for the others: the windows' buckets and marks,
// never cumulative counters, so a peer adds them up without knowing who
// reported what.
type Shared struct {
	// Window is the publisher's --handshake-window; buckets start on
	// multiples of Window/6, and a peer with another window still sums
	// them by their start times.
	Window  time.Duration  `json:"window"`
	Windows []SharedWindow `json:"windows"`
}

// SharedWindow is one (fleet, cluster) window of one replica.
type SharedWindow struct {
	Fleet       string         `json:"fleet"`
	Cluster     string         `json:"cluster"`
	Buckets     []SharedBucket `json:"buckets"`
	LastReport  time.Time      `json:"lastReport"`
	LastFailure time.Time      `json:"lastFailure,omitzero"`
	LastSuccess time.Time      `json:"lastSuccess,omitzero"`
	// Cause is the counter that names the last failure.
	Cause string `json:"cause,omitempty"`
}

// SharedBucket is the increases of one bucket, by counter name; counters
// that did not move are left out.
type SharedBucket struct {
	Start  time.Time         `json:"start"`
	Counts map[string]uint64 `json:"counts"`
}

// Export is this replica's windows reported on within the window, sorted
// by fleet and cluster, for its peers. Equal reports export equal values.
func (t *Tracker) Export() Shared {
	now := t.now()
	t.mu.Lock()
	defer t.mu.Unlock()
	out := Shared{Window: t.window}
	for key, w := range t.clusters {
		own := w.view()
		if !own.stateAt(now, t.window).reported {
			continue // a window only peers reported, or an old one
		}
		sw := SharedWindow{Fleet: key.fleet, Cluster: key.cluster, LastReport: own.lastReport.UTC(),
			LastFailure: own.lastFailure.UTC(), LastSuccess: own.lastSuccess.UTC(), Cause: own.lastCause.counter}
		if own.lastFailure.IsZero() {
			sw.LastFailure = time.Time{}
		}
		if own.lastSuccess.IsZero() {
			sw.LastSuccess = time.Time{}
		}
		for _, b := range own.buckets {
			if b.start.IsZero() || !b.start.After(now.Add(-t.window)) || b.inc == (counts{}) {
				continue
			}
			sb := SharedBucket{Start: b.start.UTC(), Counts: map[string]uint64{}}
			for i, v := range b.inc {
				if v > 0 {
					sb.Counts[counters[i]] = v
				}
			}
			sw.Buckets = append(sw.Buckets, sb)
		}
		slices.SortFunc(sw.Buckets, func(a, b SharedBucket) int { return a.Start.Compare(b.Start) })
		out.Windows = append(out.Windows, sw)
	}
	slices.SortFunc(out.Windows, func(a, b SharedWindow) int {
		return cmp.Or(cmp.Compare(a.Fleet, b.Fleet), cmp.Compare(a.Cluster, b.Cluster))
	})
	return out
}

// SetPeer replaces what another replica's Envoys reported (its latest
// Shared): the conditions then count them as this replica's own.
func (t *Tracker) SetPeer(replica string, s Shared) {
	windows := make(map[fleetCluster]windowView, len(s.Windows))
	for _, sw := range s.Windows {
		v := windowView{marks: marks{lastReport: sw.LastReport, lastFailure: sw.LastFailure, lastSuccess: sw.LastSuccess, lastCause: failureOf(sw.Cause)}}
		for _, sb := range sw.Buckets {
			b := bucket{start: sb.Start}
			for name, n := range sb.Counts {
				if i := index(name); i >= 0 {
					b.inc[i] = n
				}
			}
			v.buckets = append(v.buckets, b)
		}
		windows[fleetCluster{sw.Fleet, sw.Cluster}] = v
	}
	t.replacePeer(replica, windows)
}

// ForgetPeer drops a replica's windows: its object is gone.
func (t *Tracker) ForgetPeer(replica string) { t.replacePeer(replica, nil) }

func (t *Tracker) replacePeer(replica string, windows map[fleetCluster]windowView) {
	now := t.now()
	t.mu.Lock()
	old := t.peers[replica]
	if windows == nil {
		delete(t.peers, replica)
	} else {
		t.peers[replica] = windows
	}
	flipped := false
	for _, keys := range []map[fleetCluster]windowView{old, windows} {
		for key := range keys {
			w := t.clusters[key]
			if w == nil {
				// Keeps the state announced for a window only peers report.
				w = &clusterWindow{}
				t.clusters[key] = w
			}
			flipped = t.reevaluate(key, w, now) || flipped
		}
	}
	t.mu.Unlock()
	if flipped && t.onChange != nil {
		t.onChange()
	}
}

// failureOf is the failure a counter names; the zero failure for none.
func failureOf(counter string) failure {
	for _, f := range failures {
		if f.counter == counter {
			return f
		}
	}
	return failure{}
}

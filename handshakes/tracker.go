package handshakes

import (
	"context"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/types"
)

// DefaultWindow is how far back increases count, and how long a cluster
// nobody reports on keeps its condition.
const DefaultWindow = 5 * time.Minute

// Report is one Envoy's cumulative counters per cluster its fleet is
// served (report_counters_as_deltas off, Envoy's default).
type Report struct {
	Node, Fleet string
	// Counters maps a cluster to counter name to cumulative value.
	Counters map[string]map[string]uint64
}

// Options configure a Tracker.
type Options struct {
	// Window defaults to DefaultWindow.
	Window time.Duration
	// OnChange is called, without locks held, when a cluster's state
	// flips (first reported, failing, succeeding again, forgotten): the
	// pipeline then recomputes statuses. It must not block.
	OnChange   func()
	Registerer prometheus.Registerer
	// Now defaults to time.Now.
	Now func() time.Time
}

// Tracker keeps the windows of every (fleet, cluster) Envoys report on.
// Record is called from the xDS server's goroutines, Apply from the
// pipeline's.
type Tracker struct {
	window   time.Duration
	onChange func()
	now      func() time.Time
	metrics  *metrics

	mu sync.Mutex
	// nodes hold each Envoy's last cumulative values, to turn them into
	// increases; bounded by the Envoys that reported within the window.
	nodes    map[fleetNode]*nodeCounters
	clusters map[fleetCluster]*clusterWindow
	// governs is the last translation's cluster → policies.
	governs map[string][]types.NamespacedName
}

type fleetCluster struct{ fleet, cluster string }

// fleetNode keys an Envoy: node IDs need only be unique within a fleet.
type fleetNode struct{ fleet, node string }

type nodeCounters struct {
	lastSeen time.Time
	values   map[string]counts
}

// New returns a Tracker; Run expires what nobody reports on.
func New(opts Options) *Tracker {
	if opts.Window <= 0 {
		opts.Window = DefaultWindow
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	return &Tracker{
		window: opts.Window, onChange: opts.OnChange, now: opts.Now, metrics: newMetrics(opts.Registerer),
		nodes: map[fleetNode]*nodeCounters{}, clusters: map[fleetCluster]*clusterWindow{},
	}
}

// Window is how far back increases count.
func (t *Tracker) Window() time.Duration { return t.window }

// width is a bucket's span.
func (t *Tracker) width() time.Duration { return max(t.window/buckets, time.Millisecond) }

// Record turns one report into increases. An Envoy's first report is its
// baseline (its counters may date from before tlsplane started); after
// that a counter that appears counts in full, and one that went down means
// Envoy restarted and counts from zero.
func (t *Tracker) Record(r Report) {
	now := t.now()
	t.mu.Lock()
	n := t.nodes[fleetNode{r.Fleet, r.Node}]
	first := n == nil
	if first {
		n = &nodeCounters{values: map[string]counts{}}
		t.nodes[fleetNode{r.Fleet, r.Node}] = n
	}
	n.lastSeen = now
	flipped := false
	for cluster, values := range r.Counters {
		var cur counts
		for name, v := range values {
			if i := index(name); i >= 0 {
				cur[i] = v
			}
		}
		prev, seen := n.values[cluster]
		n.values[cluster] = cur
		var inc counts
		if !first {
			for i := range cur {
				switch {
				case !seen, cur[i] < prev[i]:
					inc[i] = cur[i]
				default:
					inc[i] = cur[i] - prev[i]
				}
			}
		}
		inc = attribute(inc)
		key := fleetCluster{r.Fleet, cluster}
		w := t.clusters[key]
		if w == nil {
			w = &clusterWindow{}
			t.clusters[key] = w
		}
		w.add(now, t.width(), inc)
		t.metrics.count(t.governs[cluster], inc)
		if s := w.stateAt(now, t.window); s != w.shown {
			w.shown, flipped = s, true
		}
	}
	t.mu.Unlock()
	if flipped && t.onChange != nil {
		t.onChange()
	}
}

// expire forgets Envoys and clusters nobody reported on within the window
// and re-evaluates the rest; it reports whether a state flipped.
func (t *Tracker) expire() bool {
	now := t.now()
	t.mu.Lock()
	defer t.mu.Unlock()
	for node, n := range t.nodes {
		if !n.lastSeen.After(now.Add(-t.window)) {
			delete(t.nodes, node)
		}
	}
	flipped := false
	for key, w := range t.clusters {
		s := w.stateAt(now, t.window)
		if s != w.shown {
			w.shown, flipped = s, true
		}
		if !s.reported {
			delete(t.clusters, key)
		}
	}
	return flipped
}

// Run expires old windows every bucket width until ctx ends, so that a
// failure clears and a silent fleet's condition goes away on time.
func (t *Tracker) Run(ctx context.Context) {
	tick := time.NewTicker(t.width())
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			if t.expire() && t.onChange != nil {
				t.onChange()
			}
		}
	}
}

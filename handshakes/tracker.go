package handshakes

import (
	"context"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/types"
)

// settleAfter is how long after a flush's last batch it is committed.
const settleAfter = 250 * time.Millisecond

// DefaultRefresh keeps a failing condition's counts within two of Envoy's
// default stats flushes (5 s) without a status write on every flush.
const DefaultRefresh = 10 * time.Second

// DefaultWindow is how far back increases count, and how long a cluster
// nobody reports on keeps its condition.
const DefaultWindow = 5 * time.Minute

// Report is one Envoy's cumulative counters per cluster its fleet is
// served (report_counters_as_deltas off, Envoy's default).
type Report struct {
	Node, Fleet string
	// Flush is the time of the Envoy's stats snapshot, shared by the
	// batches of one flush; zero when unknown.
	Flush time.Time
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
	OnChange func()
	// Refresh is how often a failing condition's counts are brought up
	// to date when only they changed (state flips are announced at once);
	// defaults to DefaultRefresh.
	Refresh    time.Duration
	Registerer prometheus.Registerer
	// Now defaults to time.Now.
	Now func() time.Time
}

// Tracker keeps the windows of every (fleet, cluster) Envoys report on.
// Record is called from the xDS server's goroutines, Apply from the
// pipeline's.
type Tracker struct {
	window   time.Duration
	refresh  time.Duration
	onChange func()
	now      func() time.Time
	metrics  *metrics

	mu sync.Mutex
	// nodes hold each Envoy's last cumulative values, to turn them into
	// increases; bounded by the Envoys that reported within the window.
	nodes map[fleetNode]*nodeCounters
	// clusters holds this replica's windows, and an empty one for each
	// window only peers reported, to keep the state last announced.
	clusters map[fleetCluster]*clusterWindow
	// peers are the other replicas' windows, by replica (SetPeer).
	peers map[string]map[fleetCluster]windowView
	// announced is the digest of the failing counts the last refresh saw.
	announced uint64
	// governs is the last translation's cluster → policies; backs its
	// cluster → XBackends.
	governs, backs map[string][]types.NamespacedName
}

type fleetCluster struct{ fleet, cluster string }

// fleetNode keys an Envoy: node IDs need only be unique within a fleet.
type fleetNode struct{ fleet, node string }

type nodeCounters struct {
	pendingFlush time.Time
	// pending says that some cluster holds increases of pendingFlush.
	pending bool
	// firstFlush is the flush of the node's first report: every batch of
	// that flush is baseline too.
	firstFlush time.Time
	lastSeen   time.Time
	clusters   map[string]*nodeCluster
}

// nodeCluster is one Envoy's view of one cluster: its last cumulative
// values, the raw increases of the flush being received until its last
// batch is in, and the fleet's window they go to (looked up once).
type nodeCluster struct {
	values, pending counts
	pendingSet      bool
	window          *clusterWindow
}

// New returns a Tracker; Run expires what nobody reports on.
func New(opts Options) *Tracker {
	if opts.Window <= 0 {
		opts.Window = DefaultWindow
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Refresh <= 0 {
		opts.Refresh = DefaultRefresh
	}
	return &Tracker{
		window: opts.Window, refresh: opts.Refresh, onChange: opts.OnChange, now: opts.Now, metrics: newMetrics(opts.Registerer),
		nodes: map[fleetNode]*nodeCounters{}, clusters: map[fleetCluster]*clusterWindow{}, peers: map[string]map[fleetCluster]windowView{},
	}
}

// Window is how far back increases count.
func (t *Tracker) Window() time.Duration { return t.window }

// width is a bucket's span.
func (t *Tracker) width() time.Duration { return max(t.window/buckets, time.Millisecond) }

// Record turns one report into increases. An Envoy's first flush (every
// batch of it) is its baseline: its counters may date from before tlsplane
// started. After that a counter that appears counts in full, and one that
// went down means Envoy restarted and counts from zero.
func (t *Tracker) Record(r Report) {
	now := t.now()
	t.mu.Lock()
	key := fleetNode{r.Fleet, r.Node}
	n := t.nodes[key]
	first := n == nil || (!r.Flush.IsZero() && r.Flush.Equal(n.firstFlush))
	if n == nil {
		n = &nodeCounters{firstFlush: r.Flush, clusters: map[string]*nodeCluster{}}
		t.nodes[key] = n
	}
	n.lastSeen = now
	flipped := false
	if !n.pendingFlush.Equal(r.Flush) {
		// A new flush: the previous one is complete.
		flipped = t.commit(r.Fleet, n, now)
	}
	n.pendingFlush = r.Flush
	for cluster, values := range r.Counters {
		c := n.clusters[cluster]
		if c == nil {
			c = &nodeCluster{}
			n.clusters[cluster] = c
		}
		// Only the counters in this report move: Envoy sends a counter once
		// it was used, and a batch (batch_size) may hold some of a
		// cluster's counters only. A counter that appears counts in full.
		for name, v := range values {
			i := index(name)
			if i < 0 {
				continue
			}
			switch {
			case first:
			case v < c.values[i]: // Envoy restarted
				c.pending[i] += v
			default:
				c.pending[i] += v - c.values[i]
			}
			c.values[i] = v
		}
		c.pendingSet, n.pending = true, true
	}
	if r.Flush.IsZero() {
		// No timestamps: no batches to wait for.
		flipped = t.commit(r.Fleet, n, now) || flipped
	}
	t.mu.Unlock()
	if flipped && t.onChange != nil {
		t.onChange()
	}
}

// commit adds a node's pending flush to the windows, attributing its
// failures once every batch of the flush is in; t.mu is held. It reports
// whether a cluster's state flipped.
func (t *Tracker) commit(fleet string, n *nodeCounters, now time.Time) bool {
	if !n.pending {
		return false
	}
	flipped := false
	for cluster, c := range n.clusters {
		if !c.pendingSet {
			continue
		}
		inc := attribute(c.pending)
		c.pending, c.pendingSet = counts{}, false
		w := c.window
		key := fleetCluster{fleet, cluster}
		if w == nil || w.forgotten {
			if w = t.clusters[key]; w == nil {
				w = &clusterWindow{}
				t.clusters[key] = w
			}
			c.window = w
		}
		w.add(now, t.width(), inc)
		t.metrics.count(t.governs[cluster], inc)
		flipped = t.reevaluate(key, w, now) || flipped
	}
	n.pending = false
	return flipped
}

// settle commits the flushes no batch arrived for within settleAfter:
// Envoy sends a flush's batches back to back.
func (t *Tracker) settle() bool {
	now := t.now()
	t.mu.Lock()
	defer t.mu.Unlock()
	flipped := false
	for key, n := range t.nodes {
		if n.pending && now.Sub(n.lastSeen) >= settleAfter {
			flipped = t.commit(key.fleet, n, now) || flipped
		}
	}
	return flipped
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
		flipped = t.reevaluate(key, w, now) || flipped
		if !w.shown.reported {
			w.forgotten = true // a node's cached pointer must look it up again
			delete(t.clusters, key)
		}
	}
	return flipped
}

// stateOf is what every replica's Envoys together say of key; t.mu held.
func (t *Tracker) stateOf(key fleetCluster, w *clusterWindow, now time.Time) state {
	if len(t.peers) == 0 {
		return w.view().stateAt(now, t.window)
	}
	return t.merged(key, w).stateAt(now, t.window)
}

// reevaluate records key's state in w and reports whether it flipped
// since last announced; t.mu held.
func (t *Tracker) reevaluate(key fleetCluster, w *clusterWindow, now time.Time) bool {
	s := t.stateOf(key, w, now)
	if s == w.shown {
		return false
	}
	w.shown = s
	return true
}

// merged is key's window across replicas: w's (nil for none) and the
// peers'; t.mu held.
func (t *Tracker) merged(key fleetCluster, w *clusterWindow) windowView {
	var v windowView
	if w != nil {
		v = w.view()
	}
	for _, p := range t.peers {
		if o, ok := p[key]; ok {
			v.merge(o)
		}
	}
	return v
}

// Run commits settled flushes, and expires old windows every bucket width,
// until ctx ends, so that a failure clears and a silent fleet's condition
// goes away on time.
func (t *Tracker) Run(ctx context.Context) {
	tick := time.NewTicker(t.width())
	defer tick.Stop()
	settle := time.NewTicker(settleAfter)
	defer settle.Stop()
	refresh := time.NewTicker(t.refresh)
	defer refresh.Stop()
	for {
		flipped := false
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			flipped = t.expire()
		case <-settle.C:
			flipped = t.settle()
		case <-refresh.C:
			flipped = t.countsMoved()
		}
		if flipped && t.onChange != nil {
			t.onChange()
		}
	}
}

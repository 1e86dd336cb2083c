package backendcerts

import (
	"context"
	"sync"
	"time"

	clusterv3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/types"
)

// Defaults of the flags that configure an Inventory.
const (
	// DefaultRetention is how long a host nobody saw again stays.
	DefaultRetention = 24 * time.Hour
	// DefaultExpiryWarning is how long before its notAfter a backend's
	// certificate makes the condition False with reason Expiring.
	DefaultExpiryWarning = 30 * 24 * time.Hour
	// DefaultMaxEntries bounds the (fleet, cluster, host) entries kept.
	DefaultMaxEntries = 10_000
)

// tick is how often Run forgets old entries and looks for certificates
// that crossed into their warning or expired: a minute late at most.
const tick = time.Minute

// Options configure an Inventory.
type Options struct {
	// Retention defaults to DefaultRetention; ExpiryWarning to
	// DefaultExpiryWarning (negative: never Expiring, Expired still is);
	// MaxEntries to DefaultMaxEntries.
	Retention     time.Duration
	ExpiryWarning time.Duration
	MaxEntries    int
	// OnChange is called, without locks held, when what a condition says
	// may have changed (a host appeared or went, a certificate or version
	// changed, a certificate entered its warning or expired): the pipeline
	// then recomputes statuses. It must not block.
	OnChange   func()
	Registerer prometheus.Registerer
	// Now defaults to time.Now.
	Now func() time.Time
}

// Entry is one (fleet, cluster, upstream host): the certificate the host
// presented last, what was negotiated, and when tlsplane heard of it.
type Entry struct {
	Fleet   string `json:"fleet"`
	Cluster string `json:"cluster"`
	Host    string `json:"host"`
	// Node is the Envoy that reported it last.
	Node string `json:"node"`
	Certificate
	Version string `json:"version"`
	Cipher  string `json:"cipher"`
	// FirstSeen is when this certificate was first reported for the host;
	// LastSeen when last (tlsplane's clock: Envoys' may differ).
	FirstSeen time.Time `json:"firstSeen"`
	LastSeen  time.Time `json:"lastSeen"`
}

type entryKey struct{ fleet, cluster, host string }

func (e *Entry) key() entryKey { return entryKey{e.Fleet, e.Cluster, e.Host} }

// Inventory keeps what the Envoys connected to this replica, and its
// peers', reported. Record is called from the xDS server's goroutines,
// Apply from the pipeline's.
type Inventory struct {
	retention, warning time.Duration
	max                int
	onChange           func()
	now                func() time.Time
	metrics            *metrics

	mu      sync.Mutex
	entries map[entryKey]*Entry
	// peers are the other replicas' entries, by replica (SetPeer).
	peers map[string][]Entry
	// shown is the digest of what the conditions said when last checked.
	shown uint64
	// governs is the last translation's cluster → policies; backs its
	// cluster → XBackends; clusters its clusters, read for the versions
	// they allow, with preferred the versions read so far.
	governs, backs map[string][]types.NamespacedName
	clusters       []*clusterv3.Cluster
	preferred      map[string]preference
}

// New returns an Inventory; Run forgets what nobody saw again.
func New(opts Options) *Inventory {
	if opts.Retention <= 0 {
		opts.Retention = DefaultRetention
	}
	if opts.ExpiryWarning < 0 {
		opts.ExpiryWarning = 0
	} else if opts.ExpiryWarning == 0 {
		opts.ExpiryWarning = DefaultExpiryWarning
	}
	if opts.MaxEntries <= 0 {
		opts.MaxEntries = DefaultMaxEntries
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	return &Inventory{
		retention: opts.Retention, warning: opts.ExpiryWarning, max: opts.MaxEntries, onChange: opts.OnChange, now: opts.Now,
		metrics: newMetrics(opts.Registerer), entries: map[entryKey]*Entry{}, peers: map[string][]Entry{},
		preferred: map[string]preference{},
	}
}

// Retention is how long a host nobody saw again stays.
func (inv *Inventory) Retention() time.Duration { return inv.retention }

// Record keeps one sighting. A host new to the inventory, or presenting
// another certificate, or negotiating another version, calls OnChange;
// the same again only moves its last seen. When the inventory is full,
// the entry seen longest ago makes room.
func (inv *Inventory) Record(s Sighting) {
	s = s.bounded()
	now := inv.now()
	inv.mu.Lock()
	key := entryKey{s.Fleet, s.Cluster, s.Host}
	e := inv.entries[key]
	changed, evicted := false, false
	switch {
	case e == nil:
		if len(inv.entries) >= inv.max {
			inv.evictOldest()
			evicted = true
		}
		e = &Entry{Fleet: s.Fleet, Cluster: s.Cluster, Host: s.Host, FirstSeen: now}
		inv.entries[key] = e
		changed = true
	case e.Serial != s.Certificate.Serial || e.Issuer != s.Certificate.Issuer:
		e.FirstSeen, changed = now, true
	case !e.NotAfter.Equal(s.Certificate.NotAfter) || e.Version != s.Version:
		changed = true
	}
	e.Node, e.Certificate, e.Version, e.Cipher, e.LastSeen = s.Node, s.Certificate, s.Version, s.Cipher, now
	n := len(inv.entries)
	inv.mu.Unlock()
	inv.metrics.recorded(evicted, n)
	if changed && inv.onChange != nil {
		inv.onChange()
	}
}

// evictOldest drops the entry seen longest ago; inv.mu held. A scan: it
// runs only when the inventory is full, and costs what one pass does.
func (inv *Inventory) evictOldest() {
	var oldest *Entry
	for _, e := range inv.entries {
		if oldest == nil || e.LastSeen.Before(oldest.LastSeen) ||
			e.LastSeen.Equal(oldest.LastSeen) && compareKeys(e.key(), oldest.key()) < 0 {
			oldest = e
		}
	}
	if oldest != nil {
		delete(inv.entries, oldest.key())
	}
}

// expire forgets entries not seen within the retention, and reports
// whether what the conditions say changed since last checked.
func (inv *Inventory) expire() bool {
	now := inv.now()
	inv.mu.Lock()
	for key, e := range inv.entries {
		if !e.LastSeen.After(now.Add(-inv.retention)) {
			delete(inv.entries, key)
		}
	}
	n := len(inv.entries)
	flipped := inv.reevaluate(now)
	inv.mu.Unlock()
	inv.metrics.entries.Set(float64(n))
	return flipped
}

// reevaluate compares the digest of the merged view with the last one;
// inv.mu held.
func (inv *Inventory) reevaluate(now time.Time) bool {
	d := inv.digest(now)
	if d == inv.shown {
		return false
	}
	inv.shown = d
	return true
}

// Run forgets old entries, and notices certificates entering their
// warning or expiring, every minute until ctx ends.
func (inv *Inventory) Run(ctx context.Context) {
	t := time.NewTicker(min(tick, inv.retention))
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if inv.expire() && inv.onChange != nil {
			inv.onChange()
		}
	}
}

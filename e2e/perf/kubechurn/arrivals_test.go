package kubechurn

import (
	"slices"
	"sync"
	"time"
)

// arrivals pairs each update written with the first load assignment that
// carries it (or a later generation of the same Service: a load assignment
// is a state, and a newer one holds the update's effect too).
type arrivals struct {
	mu sync.Mutex
	// pending[i] are Service i's updates not seen yet, by generation.
	pending map[int]map[int]time.Time
	// seen[i] is the highest generation served for Service i.
	seen      map[int]int
	latencies []time.Duration
	// applied are the updates that arrived, each once.
	applied []appliedUpdate
	changed chan struct{} // a slot: something arrived
}

// appliedUpdate is update (service, gen): written at sent, arrived at at.
type appliedUpdate struct {
	service, gen int
	sent, at     time.Time
}

func newArrivals() *arrivals {
	return &arrivals{pending: map[int]map[int]time.Time{}, seen: map[int]int{}, changed: make(chan struct{}, 1)}
}

// sent records update (i, g) as written at at; called before the write,
// so its arrival cannot be observed first.
func (a *arrivals) sent(i, g int, at time.Time) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.pending[i] == nil {
		a.pending[i] = map[int]time.Time{}
	}
	a.pending[i][g] = at
}

// failed forgets an update the API server refused.
func (a *arrivals) failed(i, g int) {
	a.mu.Lock()
	defer a.mu.Unlock()
	delete(a.pending[i], g)
}

// served records that Service i's load assignment at generation g arrived
// at at: every pending update of i up to g is applied.
func (a *arrivals) served(i, g int, at time.Time) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if s, ok := a.seen[i]; !ok || g > s {
		a.seen[i] = g
	}
	for pg, sentAt := range a.pending[i] {
		if pg <= g {
			a.latencies = append(a.latencies, at.Sub(sentAt))
			a.applied = append(a.applied, appliedUpdate{service: i, gen: pg, sent: sentAt, at: at})
			delete(a.pending[i], pg)
		}
	}
	select {
	case a.changed <- struct{}{}:
	default:
	}
}

// servedAll reports whether every Service i has been served at least at
// generation gens[i].
func (a *arrivals) servedAll(gens []int) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	for i, g := range gens {
		if s, ok := a.seen[i]; !ok || s < g {
			return false
		}
	}
	return true
}

// outstanding is how many updates written have not arrived.
func (a *arrivals) outstanding() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	n := 0
	for _, p := range a.pending {
		n += len(p)
	}
	return n
}

// sorted are the latencies of the updates that arrived, ascending.
func (a *arrivals) sorted() []time.Duration {
	a.mu.Lock()
	defer a.mu.Unlock()
	out := slices.Clone(a.latencies)
	slices.Sort(out)
	return out
}

// appliedUpdates are the updates that arrived, in the order they did.
func (a *arrivals) appliedUpdates() []appliedUpdate {
	a.mu.Lock()
	defer a.mu.Unlock()
	return slices.Clone(a.applied)
}

// percentile is the nearest-rank percentile of sorted values; 0 for none.
func percentile(sorted []time.Duration, p int) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	rank := (p*len(sorted) + 99) / 100
	return sorted[max(rank, 1)-1]
}

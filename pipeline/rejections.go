package pipeline

import (
	"cmp"
	"slices"
	"sync"

	"k8s.io/apimachinery/pkg/types"
)

// Rejection is a response an Envoy rejected (a NACK), traced to the
// policies whose translation produced the rejected resources.
type Rejection struct {
	Node      string                 `json:"node"`
	Fleet     string                 `json:"fleet"`
	TypeURL   string                 `json:"typeURL"`
	Version   string                 `json:"version"`
	Message   string                 `json:"message"`
	Resources []string               `json:"resources,omitempty"`
	Policies  []types.NamespacedName `json:"policies,omitempty"`
}

// rejectionKey keeps one rejection per fleet and type: fleets are served
// alike, and a newer rejection of a type supersedes the older one.
type rejectionKey struct{ fleet, typeURL string }

// rejectionLog holds the latest rejection per fleet and type, bounded by
// the number of fleets times the three served types. It is written from
// the xDS server's goroutines.
type rejectionLog struct {
	mu     sync.RWMutex
	latest map[rejectionKey]Rejection
}

func (l *rejectionLog) record(r Rejection) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.latest == nil {
		l.latest = map[rejectionKey]Rejection{}
	}
	l.latest[rejectionKey{r.Fleet, r.TypeURL}] = r
}

// accepted drops fleet's rejection of typeURL when version is another
// one: the fleet moved past the rejected version. It reports a removal.
func (l *rejectionLog) accepted(fleet, typeURL, version string) bool {
	key := rejectionKey{fleet, typeURL}
	l.mu.Lock()
	defer l.mu.Unlock()
	if r, ok := l.latest[key]; !ok || r.Version == version {
		return false
	}
	delete(l.latest, key)
	return true
}

// list returns the rejections sorted by fleet and type.
func (l *rejectionLog) list() []Rejection {
	l.mu.RLock()
	defer l.mu.RUnlock()
	out := make([]Rejection, 0, len(l.latest))
	for _, r := range l.latest {
		out = append(out, r)
	}
	slices.SortFunc(out, func(a, b Rejection) int {
		return cmp.Or(cmp.Compare(a.Fleet, b.Fleet), cmp.Compare(a.TypeURL, b.TypeURL))
	})
	return out
}

// RecordNACK keeps an Envoy rejection and schedules a pass that reports
// it on the policies' status (ConditionDataPlaneAccepted), even when no
// input changed; the xDS server has logged and counted it already. Safe
// from any goroutine.
func (p *Pipeline) RecordNACK(r Rejection) {
	p.rejections.record(r)
	p.changed()
}

// RecordACK lifts fleet's rejection of typeURL once one of its Envoys
// accepts another version of that type, and schedules a pass that removes
// the condition. Called for every ACK: cheap when nothing was rejected.
// Safe from any goroutine.
func (p *Pipeline) RecordACK(fleet, typeURL, version string) {
	if p.rejections.accepted(fleet, typeURL, version) {
		p.changed()
	}
}

// Rejections returns the latest rejection per fleet and type.
func (p *Pipeline) Rejections() []Rejection { return p.rejections.list() }

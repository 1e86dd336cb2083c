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

// RecordNACK keeps an Envoy rejection, so a later stage can report it on
// the policies' status; the xDS server has logged and counted it already.
// Safe from any goroutine.
func (p *Pipeline) RecordNACK(r Rejection) { p.rejections.record(r) }

// Rejections returns the latest rejection per fleet and type.
func (p *Pipeline) Rejections() []Rejection { return p.rejections.list() }

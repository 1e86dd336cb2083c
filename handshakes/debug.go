package handshakes

import (
	"cmp"
	"slices"
	"time"

	"k8s.io/apimachinery/pkg/types"
)

// DebugWindow is one (fleet, cluster) window as /debug/status shows it:
// what the Envoys of every replica reported, this one's and its peers'.
type DebugWindow struct {
	Fleet    string                 `json:"fleet"`
	Cluster  string                 `json:"cluster"`
	Policies []types.NamespacedName `json:"policies,omitempty"`
	// XBackends are those whose cluster it is (an XBackend's own TLS).
	XBackends []types.NamespacedName `json:"xBackends,omitempty"`
	Failing   bool                   `json:"failing"`
	Reason    string                 `json:"reason,omitempty"`
	// Increases are the counters' increases within the window, by name;
	// counters that did not move are left out, and ssl.connection_error
	// counts only the errors no verification counter explains.
	Increases  map[string]uint64 `json:"increases"`
	LastReport time.Time         `json:"lastReport"`
}

// Debug lists the windows reported on within the window, sorted by fleet
// and cluster, with the policies of the last translation that govern them.
func (t *Tracker) Debug() []DebugWindow {
	now := t.now()
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make([]DebugWindow, 0, len(t.clusters))
	for key, w := range t.clusters {
		v := t.merged(key, w)
		s := v.stateAt(now, t.window)
		if !s.reported {
			continue
		}
		d := DebugWindow{Fleet: key.fleet, Cluster: key.cluster, Policies: t.governs[key.cluster], XBackends: t.backs[key.cluster],
			Failing: s.failing, Reason: s.cause.reason, Increases: map[string]uint64{}, LastReport: v.lastReport.UTC()}
		for i, v := range v.sum(now, t.window) {
			if v > 0 {
				d.Increases[counters[i]] = v
			}
		}
		out = append(out, d)
	}
	slices.SortFunc(out, func(a, b DebugWindow) int {
		return cmp.Or(cmp.Compare(a.Fleet, b.Fleet), cmp.Compare(a.Cluster, b.Cluster))
	})
	return out
}

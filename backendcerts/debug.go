package backendcerts

import (
	"slices"

	"k8s.io/apimachinery/pkg/types"
)

// DebugEntry is one (fleet, cluster, host) as /debug/status and
// `tlsplane status` show it: what the Envoys of every replica reported.
type DebugEntry struct {
	Entry
	Policies []types.NamespacedName `json:"policies,omitempty"`
	// XBackends are those whose cluster it is (an XBackend's own TLS).
	XBackends []types.NamespacedName `json:"xBackends,omitempty"`
	// State is what the entry says alone: Valid, Expiring or Expired
	// (the version is judged against the cluster's policy in the condition).
	State string `json:"state"`
}

// Debug lists the entries within the retention, sorted by fleet, cluster
// and host, with the policies and XBackends of the last translation that
// govern them.
func (inv *Inventory) Debug() []DebugEntry {
	now := inv.now()
	inv.mu.Lock()
	defer inv.mu.Unlock()
	view := inv.view(now)
	out := make([]DebugEntry, 0, len(view))
	for _, p := range view {
		e := *p
		e.FirstSeen, e.LastSeen, e.NotBefore, e.NotAfter = e.FirstSeen.UTC(), e.LastSeen.UTC(), e.NotBefore.UTC(), e.NotAfter.UTC()
		d := DebugEntry{Entry: e, Policies: inv.governs[e.Cluster], XBackends: inv.backs[e.Cluster], State: ReasonValid}
		switch inv.expiry(e, now) {
		case certExpired:
			d.State = ReasonExpired
		case certExpiring:
			d.State = ReasonExpiring
		}
		out = append(out, d)
	}
	slices.SortFunc(out, func(a, b DebugEntry) int { return compareKeys(a.key(), b.key()) })
	return out
}

func sortEntries(entries []Entry) {
	slices.SortFunc(entries, func(a, b Entry) int { return compareKeys(a.key(), b.key()) })
}

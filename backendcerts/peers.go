package backendcerts

import (
	"time"
)

// Shared is what the Envoys connected to one replica reported, as that
// replica publishes it for the others (package peers).
type Shared struct {
	// Retention is the publisher's --backend-certificate-retention.
	Retention time.Duration `json:"retention"`
	Entries   []Entry       `json:"entries"`
}

// Export is this replica's entries within the retention, sorted by fleet,
// cluster and host, for its peers. Equal entries export equal values.
func (inv *Inventory) Export() Shared {
	now := inv.now()
	inv.mu.Lock()
	defer inv.mu.Unlock()
	out := Shared{Retention: inv.retention, Entries: make([]Entry, 0, len(inv.entries))}
	for _, e := range inv.entries {
		if e.LastSeen.After(now.Add(-inv.retention)) {
			c := *e
			c.FirstSeen, c.LastSeen = c.FirstSeen.UTC(), c.LastSeen.UTC()
			out.Entries = append(out.Entries, c)
		}
	}
	sortEntries(out.Entries)
	return out
}

// SetPeer replaces what another replica's Envoys reported (its latest
// Shared): the conditions then count its entries as this replica's own.
func (inv *Inventory) SetPeer(replica string, s Shared) {
	entries := make([]Entry, 0, len(s.Entries))
	for _, e := range s.Entries {
		// A peer is trusted, but its entries are bounded as sightings are.
		sg := Sighting{Node: e.Node, Fleet: e.Fleet, Cluster: e.Cluster, Host: e.Host, Certificate: e.Certificate, Version: e.Version, Cipher: e.Cipher}.bounded()
		entries = append(entries, Entry{Fleet: sg.Fleet, Cluster: sg.Cluster, Host: sg.Host, Node: sg.Node, Certificate: sg.Certificate,
			Version: sg.Version, Cipher: sg.Cipher, FirstSeen: e.FirstSeen, LastSeen: e.LastSeen})
		if len(entries) >= inv.max {
			break
		}
	}
	inv.replacePeer(replica, entries)
}

// ForgetPeer drops a replica's entries: its object is gone.
func (inv *Inventory) ForgetPeer(replica string) { inv.replacePeer(replica, nil) }

func (inv *Inventory) replacePeer(replica string, entries []Entry) {
	now := inv.now()
	inv.mu.Lock()
	if entries == nil {
		delete(inv.peers, replica)
	} else {
		inv.peers[replica] = entries
	}
	flipped := inv.reevaluate(now)
	inv.mu.Unlock()
	if flipped && inv.onChange != nil {
		inv.onChange()
	}
}

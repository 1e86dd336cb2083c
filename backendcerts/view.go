package backendcerts

import (
	"cmp"
	"encoding/binary"
	"hash/fnv"
	"time"
)

// view is every entry within the retention at now, this replica's and
// its peers': of a host several replicas' Envoys saw, the latest sighting
// wins. Unsorted; the entries are shared, read-only; inv.mu held.
func (inv *Inventory) view(now time.Time) map[entryKey]*Entry {
	horizon := now.Add(-inv.retention)
	merged := make(map[entryKey]*Entry, len(inv.entries))
	add := func(e *Entry) {
		if !e.LastSeen.After(horizon) {
			return
		}
		k := e.key()
		if o, ok := merged[k]; ok && !e.LastSeen.After(o.LastSeen) {
			return
		}
		merged[k] = e
	}
	for _, e := range inv.entries {
		add(e)
	}
	for _, entries := range inv.peers {
		for i := range entries {
			add(&entries[i])
		}
	}
	return merged
}

func compareKeys(a, b entryKey) int {
	return cmp.Or(cmp.Compare(a.fleet, b.fleet), cmp.Compare(a.cluster, b.cluster), cmp.Compare(a.host, b.host))
}

// digest hashes what the conditions read of the merged view at now: the
// hosts, their certificates and versions, and whether each certificate
// expired or is within the warning. A sum, so order does not matter.
func (inv *Inventory) digest(now time.Time) uint64 {
	var d uint64
	for _, e := range inv.view(now) {
		h := fnv.New64a()
		for _, s := range []string{e.Fleet, e.Cluster, e.Host, e.Serial, e.Issuer, e.Version} {
			h.Write([]byte(s))
			h.Write([]byte{0})
		}
		h.Write(binary.LittleEndian.AppendUint64(nil, uint64(e.NotAfter.UnixNano())))
		h.Write([]byte{byte(inv.expiry(*e, now))})
		d += h.Sum64()
	}
	return d
}

// expiryState is where a certificate stands against the clock.
type expiryState int

const (
	certValid expiryState = iota
	certExpiring
	certExpired
)

func (inv *Inventory) expiry(e Entry, now time.Time) expiryState {
	switch {
	case !now.Before(e.NotAfter):
		return certExpired
	case inv.warning > 0 && e.NotAfter.Sub(now) <= inv.warning:
		return certExpiring
	}
	return certValid
}

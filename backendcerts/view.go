package backendcerts

import (
	"cmp"
	"encoding/binary"
	"hash/fnv"
	"slices"
	"time"
)

// view is every entry within the retention at now, this replica's and
// its peers': of a host several replicas' Envoys saw, the latest sighting
// wins. Sorted by fleet, cluster and host; inv.mu held.
func (inv *Inventory) view(now time.Time) []Entry {
	horizon := now.Add(-inv.retention)
	merged := make(map[entryKey]Entry, len(inv.entries))
	add := func(e Entry) {
		if !e.LastSeen.After(horizon) {
			return
		}
		if o, ok := merged[e.key()]; ok && !e.LastSeen.After(o.LastSeen) {
			return
		}
		merged[e.key()] = e
	}
	for _, e := range inv.entries {
		add(*e)
	}
	for _, entries := range inv.peers {
		for _, e := range entries {
			add(e)
		}
	}
	out := make([]Entry, 0, len(merged))
	for _, e := range merged {
		out = append(out, e)
	}
	slices.SortFunc(out, func(a, b Entry) int { return compareKeys(a.key(), b.key()) })
	return out
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
		h.Write([]byte{byte(inv.expiry(e, now))})
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

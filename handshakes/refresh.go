package handshakes

import (
	"encoding/binary"
	"hash/fnv"
	"time"
)

// countsMoved reports whether the counts a failing condition's message
// quotes changed since the last refresh: Run then asks for a pass, so the
// message follows the counts within Refresh, and a status is written at
// most that often, not on every flush.
func (t *Tracker) countsMoved() bool {
	now := t.now()
	t.mu.Lock()
	d := t.failingDigest(now)
	moved := d != t.announced
	t.announced = d
	t.mu.Unlock()
	return moved
}

// failingDigest sums a hash of every failing window's key and counts, so
// the order of the map does not matter; t.mu held.
func (t *Tracker) failingDigest(now time.Time) uint64 {
	var d uint64
	for key, w := range t.clusters {
		if !w.shown.failing {
			continue
		}
		h := fnv.New64a()
		h.Write([]byte(key.fleet))
		h.Write([]byte{0})
		h.Write([]byte(key.cluster))
		for _, v := range t.merged(key, w).sum(now, t.window) {
			h.Write(binary.LittleEndian.AppendUint64(nil, v))
		}
		d += h.Sum64()
	}
	return d
}

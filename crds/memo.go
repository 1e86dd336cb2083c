package crds

import (
	"crypto/sha256"
	"encoding/binary"
	"sync"
	"sync/atomic"
)

// memoEntries bounds a channel's memo: an entry is a key of 56 bytes
// (node, kind, SHA-256), a cost of 8 and a flag, 72 bytes, so a channel's
// memo is under 5 MB, allocated when the channel is loaded. 65,536 holds the shared
// values (parentRefs, matches, listeners) of a world of 10,000 Services
// beside the values each object has alone, which churn through it.
const memoEntries = 1 << 16

// memoShards lets both cores admit at once without contending on one lock.
const memoShards = 64

// memoKey is one schema node's value: the node (a *celNode or a
// *schemaNode) by identity, the value
// by the SHA-256 of its canonical encoding (canonical.go), so two values
// share a key only if they are equal.
type memoKey struct {
	node any
	// own: the node's own rules on what they read of the value
	// (celreads.go), not its subtree on the whole value.
	own bool
	sum [sha256.Size]byte
}

// valueMemo remembers, for a node and a value, that the library's
// validation found no error in it, and for CEL the cost it consumed: the
// API server's answer for it again, without running it. Safe for
// concurrent use. Its table is allocated once: a map that forgets as it
// remembers rehashes, and was a quarter of admission's allocations.
type valueMemo struct {
	shards [memoShards]memoShard
	// hits and misses count lookups, so that a test can tell the memo
	// answered.
	hits, misses atomic.Uint64
}

// memoShard is a table of two-entry sets: a key is in the set its sum
// names, or not remembered; a full set forgets its two entries in turn,
// so the table stays bounded.
type memoShard struct {
	mu    sync.Mutex
	slots []memoSlot
	// older is, for each set, which of its two slots a new key replaces.
	older []uint8
}

type memoSlot struct {
	key  memoKey
	cost int64
	full bool
}

const memoSets = memoEntries / memoShards / 2

func newMemo() *valueMemo {
	m := &valueMemo{}
	for i := range m.shards {
		m.shards[i].slots = make([]memoSlot, 2*memoSets)
		m.shards[i].older = make([]uint8, memoSets)
	}
	return m
}

// place is k's shard and set: parts of its SHA-256, uniform.
func (m *valueMemo) place(k memoKey) (*memoShard, int) {
	return &m.shards[int(k.sum[0])%memoShards], int(binary.LittleEndian.Uint64(k.sum[1:9]) % memoSets)
}

// get is the CEL cost remembered for k.
func (m *valueMemo) get(k memoKey) (cost int64, ok bool) {
	s, set := m.place(k)
	s.mu.Lock()
	for i := 2 * set; i < 2*set+2; i++ {
		if e := &s.slots[i]; e.full && e.key == k {
			cost, ok = e.cost, true
			break
		}
	}
	s.mu.Unlock()
	if ok {
		m.hits.Add(1)
	} else {
		m.misses.Add(1)
	}
	return cost, ok
}

// put remembers k's cost, in place of one of its set's entries in turn
// when both are taken.
func (m *valueMemo) put(k memoKey, cost int64) {
	s, set := m.place(k)
	s.mu.Lock()
	defer s.mu.Unlock()
	slot := -1
	for i := 2 * set; i < 2*set+2; i++ {
		if e := &s.slots[i]; !e.full || e.key == k {
			slot = i
			break
		}
	}
	if slot < 0 {
		slot = 2*set + int(s.older[set])
		s.older[set] ^= 1
	}
	s.slots[slot] = memoSlot{key: k, cost: cost, full: true}
}

// len is how many entries m holds.
func (m *valueMemo) len() int {
	n := 0
	for i := range m.shards {
		s := &m.shards[i]
		s.mu.Lock()
		for _, e := range s.slots {
			if e.full {
				n++
			}
		}
		s.mu.Unlock()
	}
	return n
}

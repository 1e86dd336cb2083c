package crds

import (
	"crypto/sha256"
	"sync"
	"sync/atomic"
)

// memoEntries bounds a channel's memo: an entry is a key of 56 bytes
// (node, kind, SHA-256) and a cost of 8, about 100 bytes with the map's
// overhead, so a channel's memo stays under 7 MB. 65,536 holds the shared
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
// concurrent use.
type valueMemo struct {
	shards [memoShards]memoShard
	// hits and misses count lookups, so that a test can tell the memo
	// answered.
	hits, misses atomic.Uint64
}

type memoShard struct {
	mu   sync.Mutex
	cost map[memoKey]int64
}

func newMemo() *valueMemo {
	m := &valueMemo{}
	for i := range m.shards {
		m.shards[i].cost = make(map[memoKey]int64)
	}
	return m
}

func (m *valueMemo) shard(k memoKey) *memoShard {
	return &m.shards[int(k.sum[0])%memoShards]
}

// cost is the CEL cost remembered for k.
func (m *valueMemo) get(k memoKey) (cost int64, ok bool) {
	s := m.shard(k)
	s.mu.Lock()
	cost, ok = s.cost[k]
	s.mu.Unlock()
	if ok {
		m.hits.Add(1)
	} else {
		m.misses.Add(1)
	}
	return cost, ok
}

// put remembers k's cost; a full shard forgets an arbitrary entry (Go's
// map iteration starts at a random one), which keeps it bounded.
func (m *valueMemo) put(k memoKey, cost int64) {
	s := m.shard(k)
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.cost[k]; !ok && len(s.cost) >= memoEntries/memoShards {
		for old := range s.cost {
			delete(s.cost, old)
			break
		}
	}
	s.cost[k] = cost
}

// len is how many entries m holds.
func (m *valueMemo) len() int {
	n := 0
	for i := range m.shards {
		s := &m.shards[i]
		s.mu.Lock()
		n += len(s.cost)
		s.mu.Unlock()
	}
	return n
}

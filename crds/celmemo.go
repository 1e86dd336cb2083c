package crds

import (
	"crypto/sha256"
	"sync"
	"sync/atomic"
)

// celMemoEntries bounds a channel's CEL memo: an entry is a key of 48
// bytes (node, kind, SHA-256) and a cost of 8, about 100 bytes with the map's
// overhead, so a channel's memo stays under 7 MB. 65,536 holds the shared
// values (parentRefs, matches, listeners) of a world of 10,000 Services
// beside the values each object has alone, which churn through it.
const celMemoEntries = 1 << 16

// celMemoShards lets both cores admit at once without contending on one lock.
const celMemoShards = 64

// celMemoKey is one schema node's value: the node by identity, the value
// by the SHA-256 of its canonical encoding (canonical.go), so two values
// share a key only if they are equal.
type celMemoKey struct {
	node any
	// own: the node's own rules on what they read of the value
	// (celreads.go), not its subtree on the whole value.
	own bool
	sum [sha256.Size]byte
}

// celMemo remembers, for a node and a value, the CEL cost of a validation
// of that value's subtree that found no error: the API server's answer
// for it again, without running its rules. Safe for concurrent use.
type celMemo struct {
	shards [celMemoShards]celMemoShard
	// hits and misses count lookups, so that a test can tell the memo
	// answered.
	hits, misses atomic.Uint64
}

type celMemoShard struct {
	mu   sync.Mutex
	cost map[celMemoKey]int64
}

func newCELMemo() *celMemo {
	m := &celMemo{}
	for i := range m.shards {
		m.shards[i].cost = make(map[celMemoKey]int64)
	}
	return m
}

func (m *celMemo) shard(k celMemoKey) *celMemoShard {
	return &m.shards[int(k.sum[0])%celMemoShards]
}

// cost is the CEL cost remembered for k.
func (m *celMemo) get(k celMemoKey) (cost int64, ok bool) {
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
func (m *celMemo) put(k celMemoKey, cost int64) {
	s := m.shard(k)
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.cost[k]; !ok && len(s.cost) >= celMemoEntries/celMemoShards {
		for old := range s.cost {
			delete(s.cost, old)
			break
		}
	}
	s.cost[k] = cost
}

// len is how many entries m holds.
func (m *celMemo) len() int {
	n := 0
	for i := range m.shards {
		s := &m.shards[i]
		s.mu.Lock()
		n += len(s.cost)
		s.mu.Unlock()
	}
	return n
}

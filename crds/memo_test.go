package crds

import "testing"

// TestMemoSets: keys of one set are remembered two at a time, each with
// its own cost, the older forgotten first; a key of the same sum and
// another node is another key.
func TestMemoSets(t *testing.T) {
	m := newMemo()
	a, b := &celNode{}, &celNode{}
	key := func(node *celNode, i byte) memoKey {
		k := memoKey{node: node}
		k.sum[9] = i // outside the bytes that choose shard and set
		return k
	}
	k1, k2, k3, other := key(a, 1), key(a, 2), key(a, 3), key(b, 1)
	m.put(k1, 10)
	m.put(k2, 20)
	if c, ok := m.get(k1); !ok || c != 10 {
		t.Errorf("k1: %d, %v; want 10", c, ok)
	}
	if _, ok := m.get(other); ok {
		t.Error("a key of another node found")
	}
	m.put(k2, 21)
	if c, _ := m.get(k2); c != 21 {
		t.Errorf("k2 rewritten: %d, want 21", c)
	}
	m.put(k3, 30)
	if _, ok := m.get(k1); ok {
		t.Error("k1 is still remembered after a third key of its set")
	}
	if c, ok := m.get(k2); !ok || c != 21 {
		t.Errorf("k2: %d, %v; want 21", c, ok)
	}
	if c, ok := m.get(k3); !ok || c != 30 {
		t.Errorf("k3: %d, %v; want 30", c, ok)
	}
	if n := m.len(); n != 2 {
		t.Errorf("%d entries, want 2", n)
	}
}

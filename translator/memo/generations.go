// Package memo keeps what a Translator computed across its calls: each
// entry is stamped with the last call that used it, and the end of a call
// drops those it did not use, so memory follows the inputs.
package memo

// Generations holds entries across calls, each stamped with the last call
// that used it; Done drops those the current call did not use.
type Generations[K comparable, V any] struct {
	call    uint64
	entries map[K]*stamped[V]
}

type stamped[V any] struct {
	call  uint64
	value V
}

// Get returns k's entry, marked used by this call.
func (g *Generations[K, V]) Get(k K) (V, bool) {
	e, ok := g.entries[k]
	if !ok {
		var zero V
		return zero, false
	}
	e.call = g.call
	return e.value, true
}

// Put stores v as k's entry, used by this call.
func (g *Generations[K, V]) Put(k K, v V) {
	if e, ok := g.entries[k]; ok {
		e.call, e.value = g.call, v
		return
	}
	if g.entries == nil {
		g.entries = map[K]*stamped[V]{}
	}
	g.entries[k] = &stamped[V]{call: g.call, value: v}
}

// Done ends a call: the entries it did not use go.
func (g *Generations[K, V]) Done() {
	for k, e := range g.entries {
		if e.call != g.call {
			delete(g.entries, k)
		}
	}
	g.call++
}

// Peek returns k's entry without marking it used.
func (g *Generations[K, V]) Peek(k K) (V, bool) {
	e, ok := g.entries[k]
	if !ok {
		var zero V
		return zero, false
	}
	return e.value, true
}

// Delete drops k's entry.
func (g *Generations[K, V]) Delete(k K) { delete(g.entries, k) }

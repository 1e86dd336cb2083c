package translator

import (
	"slices"

	discoveryv1 "k8s.io/api/discovery/v1"

	"github.com/tlsplane/tlsplane/translator/input"
)

// generations holds entries across calls, each stamped with the last call
// that used it; done drops those the current call did not use.
type generations[K comparable, V any] struct {
	call    uint64
	entries map[K]*stamped[V]
}

type stamped[V any] struct {
	call  uint64
	value V
}

// get returns k's entry, marked used by this call.
func (g *generations[K, V]) get(k K) (V, bool) {
	e, ok := g.entries[k]
	if !ok {
		var zero V
		return zero, false
	}
	e.call = g.call
	return e.value, true
}

// put stores v as k's entry, used by this call.
func (g *generations[K, V]) put(k K, v V) {
	if e, ok := g.entries[k]; ok {
		e.call, e.value = g.call, v
		return
	}
	if g.entries == nil {
		g.entries = map[K]*stamped[V]{}
	}
	g.entries[k] = &stamped[V]{call: g.call, value: v}
}

func (g *generations[K, V]) done() {
	for k, e := range g.entries {
		if e.call != g.call {
			delete(g.entries, k)
		}
	}
	g.call++
}

func sameSlices(a, b []*discoveryv1.EndpointSlice) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !input.SameObject(a[i], b[i]) {
			return false
		}
	}
	return true
}

func samePointers[T any](a, b []*T) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func equalPorts(a, b []int32) bool { return slices.Equal(a, b) }

package snapshots

import (
	"maps"
	"sync"
	"weak"

	"github.com/envoyproxy/go-control-plane/pkg/cache/types"
)

// weakMap holds values weakly: a value lives while something else holds
// it. Keys of collected values are swept when the map has doubled since
// the last sweep (amortised: no cleanup per value, which at 10,000
// entries a publish cost more than the lookups). Safe for concurrent use.
type weakMap[K comparable, V any] struct {
	mu        sync.Mutex
	m         map[K]weak.Pointer[V]
	nextSweep int
}

func newWeakMap[K comparable, V any]() *weakMap[K, V] {
	return &weakMap[K, V]{m: map[K]weak.Pointer[V]{}, nextSweep: minSweep}
}

// minSweep is the size below which collected keys are left in the map.
const minSweep = 1024

// get is k's value, or nil.
func (w *weakMap[K, V]) get(k K) *V {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.m[k].Value()
}

// getOrMake is k's value, or the one build makes and puts there.
func (w *weakMap[K, V]) getOrMake(k K, build func() *V) *V {
	w.mu.Lock()
	defer w.mu.Unlock()
	if held := w.m[k].Value(); held != nil {
		return held
	}
	v := build()
	w.m[k] = weak.Make(v)
	if len(w.m) >= w.nextSweep {
		maps.DeleteFunc(w.m, func(_ K, wp weak.Pointer[V]) bool { return wp.Value() == nil })
		w.nextSweep = max(minSweep, 2*len(w.m))
	}
	return v
}

// held is how many values are alive, for tests.
func (w *weakMap[K, V]) held() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := 0
	for _, wp := range w.m {
		if wp.Value() != nil {
			n++
		}
	}
	return n
}

// feedEntries shares FeedEntries between the feeds of one Publisher: an
// entry is a function of its resource and version, and its encodings,
// made once on first send, are then made once for every fleet that
// serves the resource, not once per fleet.
type feedEntries struct{ m *weakMap[entryKey, FeedEntry] }

type entryKey struct {
	resource types.Resource
	version  string
}

func newFeedEntries() *feedEntries { return &feedEntries{newWeakMap[entryKey, FeedEntry]()} }

// entry is the shared entry of r at version, made by build when none is
// held; a nil s makes one for the caller alone.
func (s *feedEntries) entry(r types.Resource, version string, build func() *FeedEntry) *FeedEntry {
	if s == nil {
		return build()
	}
	return s.m.getOrMake(entryKey{r, version}, build)
}

// fullAnswers shares FullAnswers between the feeds of one Publisher: two
// fleets served the same content of a type (the mesh fleets' clusters,
// and every listener and route configuration no consumer route changes;
// Gateway fleets with the same scope) would otherwise each hold its own
// encoding of it, the largest part of a fleet's memory.
type fullAnswers struct{ m *weakMap[fullKey, FullAnswer] }

// fullKey is one encoding (delta or SotW) of one content of a type.
type fullKey struct {
	typeURL, version string
	sotw             bool
}

func newFullAnswers() *fullAnswers { return &fullAnswers{newWeakMap[fullKey, FullAnswer]()} }

// lookup is the answer held for k if it lists exactly entries (names and
// versions, sorted by name): a type version is a hash, and an answer
// another fleet receives must never reach this one on a collision.
func (s *fullAnswers) lookup(k fullKey, entries []*FeedEntry) *FullAnswer {
	if s == nil {
		return nil
	}
	full := s.m.get(k)
	if full == nil || len(full.Names) != len(entries) {
		return nil
	}
	for i, e := range entries {
		if full.Names[i] != e.Name || full.Versions[i] != e.Version {
			return nil
		}
	}
	return full
}

// store offers full for k, unless an answer is held for k already.
func (s *fullAnswers) store(k fullKey, full *FullAnswer) {
	if s != nil {
		s.m.getOrMake(k, func() *FullAnswer { return full })
	}
}

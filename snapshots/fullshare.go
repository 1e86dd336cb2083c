package snapshots

import (
	"runtime"
	"sync"
	"weak"

	"github.com/envoyproxy/go-control-plane/pkg/cache/types"
)

// feedEntries shares FeedEntries between the feeds of one Publisher: an
// entry is a function of its resource and version, and its encodings,
// made once on first send, are then made once for every fleet that
// serves the resource, not once per fleet. Held weakly, as fullAnswers.
type feedEntries struct {
	mu sync.Mutex
	m  map[entryKey]weak.Pointer[FeedEntry]
}

type entryKey struct {
	resource types.Resource
	version  string
}

func newFeedEntries() *feedEntries {
	return &feedEntries{m: map[entryKey]weak.Pointer[FeedEntry]{}}
}

// entry is the shared entry of r at version, made by build when none is
// held; a nil s makes one for the caller alone.
func (s *feedEntries) entry(r types.Resource, version string, build func() *FeedEntry) *FeedEntry {
	if s == nil {
		return build()
	}
	k := entryKey{r, version}
	s.mu.Lock()
	defer s.mu.Unlock()
	if e := s.m[k].Value(); e != nil {
		return e
	}
	e := build()
	wp := weak.Make(e)
	s.m[k] = wp
	runtime.AddCleanup(e, func(k entryKey) {
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.m[k] == wp {
			delete(s.m, k)
		}
	}, k)
	return e
}

// fullAnswers shares FullAnswers between the feeds of one Publisher: two
// fleets served the same content of a type (the mesh fleets' clusters,
// and every listener and route configuration no consumer route changes;
// Gateway fleets with the same scope) would otherwise each hold its own
// encoding of it, the largest part of a fleet's memory. It holds answers
// weakly: an answer lives while a feed table holds it, and its entry goes
// with it.
type fullAnswers struct {
	mu sync.Mutex
	m  map[fullKey]weak.Pointer[FullAnswer]
}

// fullKey is one encoding (delta or SotW) of one content of a type.
type fullKey struct {
	typeURL, version string
	sotw             bool
}

func newFullAnswers() *fullAnswers {
	return &fullAnswers{m: map[fullKey]weak.Pointer[FullAnswer]{}}
}

// lookup is the answer held for k if it lists exactly entries (names and
// versions, sorted by name): a type version is a hash, and an answer
// another fleet receives must never reach this one on a collision.
func (s *fullAnswers) lookup(k fullKey, entries []*FeedEntry) *FullAnswer {
	if s == nil {
		return nil
	}
	s.mu.Lock()
	full := s.m[k].Value()
	s.mu.Unlock()
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

// store offers full for k; the entry is dropped once full is collected.
func (s *fullAnswers) store(k fullKey, full *FullAnswer) {
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.m[k].Value() != nil {
		return
	}
	wp := weak.Make(full)
	s.m[k] = wp
	runtime.AddCleanup(full, func(k fullKey) {
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.m[k] == wp {
			delete(s.m, k)
		}
	}, k)
}

// held is how many answers are held, for tests.
func (s *fullAnswers) held() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, wp := range s.m {
		if wp.Value() != nil {
			n++
		}
	}
	return n
}

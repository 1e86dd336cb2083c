// Package smallset is a set that holds its first member without a map of
// its own, for reverse indexes whose keys almost always have one member:
// the translator's (a Service's policies, a CA's policies, a Service's
// EndpointSlices) and the publisher's (the clusters reading a load
// assignment or a secret). A one-member Go map costs about 300 bytes; at
// 100,000 Services those indexes held some 200 MB of them.
//
// A Set is a value kept in a map (map[K]Set[V]); Add and Remove change it
// there. It owns no state beyond its members and knows nothing of them.
package smallset

import "iter"

// Set is a set of comparable members; its zero value is empty.
type Set[V comparable] struct {
	first V
	n     int
	// rest are the members other than first; nil for one or none.
	rest map[V]struct{}
}

// Len is the number of members.
func (s Set[V]) Len() int { return s.n }

// Has reports whether v is a member.
func (s Set[V]) Has(v V) bool {
	if s.n == 0 {
		return false
	}
	if v == s.first {
		return true
	}
	_, ok := s.rest[v]
	return ok
}

// All yields every member once, in no particular order.
func (s Set[V]) All() iter.Seq[V] {
	return func(yield func(V) bool) {
		if s.n == 0 || !yield(s.first) {
			return
		}
		for v := range s.rest {
			if !yield(v) {
				return
			}
		}
	}
}

func (s *Set[V]) add(v V) {
	switch {
	case s.n == 0:
		s.first, s.n = v, 1
	case v == s.first:
	default:
		if _, ok := s.rest[v]; ok {
			return
		}
		if s.rest == nil {
			s.rest = map[V]struct{}{}
		}
		s.rest[v] = struct{}{}
		s.n++
	}
}

func (s *Set[V]) remove(v V) {
	switch {
	case s.n == 0:
		return
	case v == s.first:
		var zero V
		s.first = zero
		for r := range s.rest {
			s.first = r
			delete(s.rest, r)
			break
		}
	default:
		if _, ok := s.rest[v]; !ok {
			return
		}
		delete(s.rest, v)
	}
	s.n--
	if len(s.rest) == 0 {
		s.rest = nil
	}
}

// Add makes v a member of m[k].
func Add[K, V comparable](m map[K]Set[V], k K, v V) {
	s := m[k]
	s.add(v)
	m[k] = s
}

// Remove takes v out of m[k], and k out of m when its set is left empty.
func Remove[K, V comparable](m map[K]Set[V], k K, v V) {
	s, ok := m[k]
	if !ok {
		return
	}
	s.remove(v)
	if s.n == 0 {
		delete(m, k)
		return
	}
	m[k] = s
}

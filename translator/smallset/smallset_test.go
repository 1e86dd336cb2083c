package smallset

import (
	"maps"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestSetMatchesMap: a random run of adds and removes over a few keys and
// members leaves every key's Set with the members a map of maps holds,
// and no key whose set is empty.
func TestSetMatchesMap(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	got := map[int]Set[string]{}
	want := map[int]map[string]bool{}
	members := []string{"a", "b", "c", "d"}
	for step := range 5000 {
		k, v := r.IntN(3), members[r.IntN(len(members))]
		if r.IntN(2) == 0 {
			Add(got, k, v)
			if want[k] == nil {
				want[k] = map[string]bool{}
			}
			want[k][v] = true
		} else {
			Remove(got, k, v)
			delete(want[k], v)
			if len(want[k]) == 0 {
				delete(want, k)
			}
		}
		if len(got) != len(want) {
			t.Fatalf("step %d: %d keys, want %d", step, len(got), len(want))
		}
		for k, w := range want {
			s := got[k]
			all := slices.Sorted(s.All())
			if s.Len() != len(w) || !slices.Equal(all, slices.Sorted(maps.Keys(w))) {
				t.Fatalf("step %d: key %d holds %q (Len %d), want %q", step, k, all, s.Len(), slices.Sorted(maps.Keys(w)))
			}
			for _, m := range members {
				if s.Has(m) != w[m] {
					t.Fatalf("step %d: key %d Has(%q) = %v, want %v", step, k, m, s.Has(m), w[m])
				}
			}
		}
	}
}

// TestOneMemberHoldsNoMap: the point of the type; a second member makes
// the map, and removing it again drops it.
func TestOneMemberHoldsNoMap(t *testing.T) {
	m := map[string]Set[int]{}
	Add(m, "k", 1)
	Add(m, "k", 1)
	if s := m["k"]; s.rest != nil || s.Len() != 1 {
		t.Fatalf("one member: rest %v, Len %d", s.rest, s.Len())
	}
	Add(m, "k", 2)
	Remove(m, "k", 1)
	if s := m["k"]; s.rest != nil || s.Len() != 1 || !s.Has(2) {
		t.Fatalf("after removing the first of two: rest %v, Len %d, Has(2) %v", s.rest, s.Len(), s.Has(2))
	}
	Remove(m, "k", 2)
	if _, ok := m["k"]; ok {
		t.Fatal("an emptied set's key stays in the map")
	}
}

func TestAllStopsWhenAsked(t *testing.T) {
	m := map[string]Set[int]{}
	for i := range 5 {
		Add(m, "k", i)
	}
	n := 0
	for range m["k"].All() {
		n++
		if n == 2 {
			break
		}
	}
	if n != 2 {
		t.Fatalf("iterated %d members after break at 2", n)
	}
}

package xds

import (
	"fmt"
	"testing"
)

func TestSeenNamesAddsEachNameOnce(t *testing.T) {
	many := make([]string, 3*fewNames)
	for i := range many {
		many[i] = fmt.Sprintf("secret-%d", i)
	}
	for _, tc := range []struct {
		name  string
		hint  int
		names []string
		want  []bool
	}{
		{name: "none", hint: 0},
		{name: "one", hint: 1, names: []string{"a"}, want: []bool{true}},
		{name: "a repeat among few", hint: 3, names: []string{"a", "b", "a"}, want: []bool{true, true, false}},
		{name: "more than the hint", hint: 1, names: []string{"a", "b", "c", "b"}, want: []bool{true, true, true, false}},
		{name: "a map from the start", hint: fewNames + 1, names: []string{"a", "a"}, want: []bool{true, false}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newSeenNames(tc.hint)
			for i, name := range tc.names {
				if got := s.add(name); got != tc.want[i] {
					t.Errorf("add(%q) #%d = %v, want %v", name, i, got, tc.want[i])
				}
			}
		})
	}
	// Past fewNames the set moves to a map and still knows the first ones.
	t.Run("growing past the few", func(t *testing.T) {
		var s seenNames
		for _, name := range many {
			if !s.add(name) {
				t.Fatalf("add(%q) the first time = false", name)
			}
		}
		for _, name := range many {
			if s.add(name) {
				t.Errorf("add(%q) the second time = true", name)
			}
		}
	})
}

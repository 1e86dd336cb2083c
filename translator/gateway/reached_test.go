package gateway

import (
	"slices"
	"testing"
)

func TestPatchReached(t *testing.T) {
	reached := []string{"a/b/1", "a/c/1", "a/d/1"}
	for _, tc := range []struct {
		name  string
		flips map[string]bool
		want  []string
		same  bool // reached itself comes back
	}{
		{"nothing", nil, reached, true},
		{"flipped back", map[string]bool{"a/c/1": true, "a/z/1": false}, reached, true},
		{"added first", map[string]bool{"a/a/1": true}, []string{"a/a/1", "a/b/1", "a/c/1", "a/d/1"}, false},
		{"added last", map[string]bool{"a/e/1/grpc": true}, []string{"a/b/1", "a/c/1", "a/d/1", "a/e/1/grpc"}, false},
		{"removed and added", map[string]bool{"a/c/1": false, "a/c/1/tcp": true}, []string{"a/b/1", "a/c/1/tcp", "a/d/1"}, false},
		{"all removed", map[string]bool{"a/b/1": false, "a/c/1": false, "a/d/1": false}, nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := slices.Clone(reached)
			got := PatchReached(reached, tc.flips)
			if !slices.Equal(got, tc.want) {
				t.Fatalf("PatchReached(%q, %v) = %q, want %q", reached, tc.flips, got, tc.want)
			}
			if same := len(got) > 0 && &got[0] == &reached[0]; same != tc.same {
				t.Errorf("returned reached itself: %v, want %v", same, tc.same)
			}
			if !slices.Equal(reached, before) {
				t.Errorf("reached was written: %q", reached)
			}
		})
	}
}

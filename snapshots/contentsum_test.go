package snapshots

import (
	"strconv"
	"testing"
)

// TestContentSumPatches: adding, then taking away, resources in any order
// gives the sum of what is left, so a patched version is the whole one.
func TestContentSumPatches(t *testing.T) {
	var whole, patched contentSum
	for i := range 100 {
		whole.add(elementOf("cluster-"+strconv.Itoa(i), "v1"), 1)
	}
	for i := 99; i >= 0; i-- {
		patched.add(elementOf("cluster-"+strconv.Itoa(i), "v1"), 1)
	}
	if whole != patched {
		t.Fatal("order changed the sum")
	}
	patched.add(elementOf("cluster-7", "v1"), -1)
	patched.add(elementOf("cluster-7", "v2"), 1)
	if patched.version() == whole.version() {
		t.Fatal("a changed resource kept the version")
	}
	patched.add(elementOf("cluster-7", "v2"), -1)
	patched.add(elementOf("cluster-7", "v1"), 1)
	if patched != whole {
		t.Fatal("changing a resource back did not give the sum back")
	}
	// A name's bytes cannot move into its content hash unnoticed.
	if elementOf("ab", "c") == elementOf("a", "bc") {
		t.Fatal(`("ab","c") and ("a","bc") give one element`)
	}
	var empty contentSum
	if empty.version() == whole.version() || len(whole.version()) != 16 {
		t.Fatalf("versions %q and %q", empty.version(), whole.version())
	}
}

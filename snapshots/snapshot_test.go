package snapshots

import (
	"maps"
	"reflect"
	"slices"
	"testing"

	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"

	st "github.com/tlsplane/tlsplane/snapshots/snapshotstest"
)

// backendTypes are the types every fleet is served resources of.
var backendTypes = []string{resource.ClusterType, resource.EndpointType, resource.SecretType}

// The feeds read GetResources at every publish: it hands out one map, not
// a copy per call.
func TestServedSnapshotSharesItsMaps(t *testing.T) {
	snap, err := newSnapshot(newDigests(), everything(st.Output(payments, ledger)))
	if err != nil {
		t.Fatal(err)
	}
	for _, typeURL := range backendTypes {
		first, again := snap.GetResources(typeURL), snap.GetResources(typeURL)
		if reflect.ValueOf(first).UnsafePointer() != reflect.ValueOf(again).UnsafePointer() {
			t.Errorf("%s: two calls, two maps", typeURL)
		}
		if got := slices.Sorted(maps.Keys(first)); len(got) != 2 || len(snap.VersionMap[typeURL]) != 2 {
			t.Errorf("%s: names %v and %d versions, want the two resources'", typeURL, got, len(snap.VersionMap[typeURL]))
		}
	}
	for _, typeURL := range []string{resource.ListenerType, resource.RouteType} {
		if got := snap.GetResources(typeURL); got == nil || len(got) != 0 || snap.GetVersion(typeURL) == "" {
			t.Errorf("%s without a Gateway: %v at version %q, want none at a version", typeURL, got, snap.GetVersion(typeURL))
		}
	}
	if snap.GetResources(resource.RuntimeType) != nil {
		t.Error("a type tlsplane does not serve has resources")
	}
}

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

// go-control-plane calls GetResources per delta request and per delta
// watch: it must hand out one map, not build a copy each time.
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
		want := slices.Sorted(maps.Keys(snap.GetResourcesAndTTL(typeURL)))
		if got := slices.Sorted(maps.Keys(first)); !slices.Equal(got, want) || len(got) != 2 {
			t.Errorf("%s: names %v, want the snapshot's %v", typeURL, got, want)
		}
		for name, r := range first {
			if r != snap.GetResourcesAndTTL(typeURL)[name].Resource {
				t.Errorf("%s %s: not the snapshot's resource", typeURL, name)
			}
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

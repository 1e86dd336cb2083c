package translator_test

import (
	"slices"
	"testing"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/known/anypb"

	"github.com/tlsplane/tlsplane/translator"
)

// invalidBackend is the name a share refused with 500 goes to: no cluster.
const invalidBackend = "tlsplane.invalid-backend"

// checkReachedCovers: every cluster a Gateway fleet's listeners and route
// configurations name (read from the protos, typed configs unpacked) is
// in its Reached, which is sorted and unique: the fleet is served nothing
// it needs less than that.
func checkReachedCovers(t *testing.T, out translator.Output) {
	t.Helper()
	for name, fleet := range out.Fleets {
		if !slices.IsSorted(fleet.Reached) || len(slices.Compact(slices.Clone(fleet.Reached))) != len(fleet.Reached) {
			t.Errorf("fleet %s: Reached %q is not sorted and unique", name, fleet.Reached)
		}
		for _, c := range fleetClusterRefs(t, fleet) {
			if _, found := slices.BinarySearch(fleet.Reached, c); !found {
				t.Errorf("fleet %s names cluster %q, which its Reached %q lacks", name, c, fleet.Reached)
			}
		}
	}
}

// fleetClusterRefs are the cluster names a fleet's listeners and route
// configurations send traffic to: every string field named cluster and
// every weighted cluster's name, anywhere, inside typed configs too.
func fleetClusterRefs(t *testing.T, fleet *translator.FleetResources) []string {
	t.Helper()
	var out []string
	var walk func(m protoreflect.Message)
	walk = func(m protoreflect.Message) {
		if a, ok := m.Interface().(*anypb.Any); ok {
			inner, err := a.UnmarshalNew()
			if err != nil {
				t.Fatalf("typed config %s: %v", a.GetTypeUrl(), err)
			}
			walk(inner.ProtoReflect())
			return
		}
		weight := m.Descriptor().Name() == "ClusterWeight"
		m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
			switch {
			case fd.Kind() == protoreflect.StringKind && !fd.IsList() && (fd.Name() == "cluster" || weight && fd.Name() == "name"):
				if s := v.String(); s != "" && s != invalidBackend {
					out = append(out, s)
				}
			case fd.Kind() == protoreflect.MessageKind && fd.IsList():
				for i := range v.List().Len() {
					walk(v.List().Get(i).Message())
				}
			case fd.Kind() == protoreflect.MessageKind && fd.IsMap():
				v.Map().Range(func(_ protoreflect.MapKey, mv protoreflect.Value) bool {
					if fd.MapValue().Kind() == protoreflect.MessageKind {
						walk(mv.Message())
					}
					return true
				})
			case fd.Kind() == protoreflect.MessageKind:
				walk(v.Message())
			}
			return true
		})
	}
	for _, l := range fleet.Listeners {
		walk(proto.Message(l).ProtoReflect())
	}
	for _, r := range fleet.Routes {
		walk(proto.Message(r).ProtoReflect())
	}
	slices.Sort(out)
	return slices.Compact(out)
}

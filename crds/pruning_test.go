package crds

import (
	"math/rand/v2"
	"reflect"
	"testing"

	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	structuralpruning "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/pruning"
	"k8s.io/apimachinery/pkg/runtime"
)

// TestWouldPruneIsTheLibrarys: on random values (unknown fields now and
// then) of every CRD version's schema and of one of preserved unknown
// fields and embedded resources, wouldPrune says whether the library's
// pruning drops a field or names one.
func TestWouldPruneIsTheLibrarys(t *testing.T) {
	r := rand.New(rand.NewPCG(38, 6))
	check := func(name string, s *structuralschema.Structural, n int) (pruned, kept int) {
		node := newPruneNode(s)
		for i := range n {
			obj := randomValue(r, s, 0)
			if m, ok := obj.(map[string]any); ok && i%3 == 0 {
				m["metadata"] = map[string]any{"name": "x"}
				m["kind"] = "K"
			}
			lib := runtime.DeepCopyJSONValue(obj)
			paths := structuralpruning.PruneWithOptions(lib, s, true, structuralschema.UnknownFieldPathOptions{TrackUnknownFieldPaths: true})
			libPrunes := len(paths) > 0 || !reflect.DeepEqual(lib, obj)
			if got := node.wouldPrune(obj, true); got != libPrunes {
				t.Fatalf("%s value %d: wouldPrune %v, the library pruned %v (%v)\n%v", name, i, got, libPrunes, paths, obj)
			}
			if libPrunes {
				pruned++
			} else {
				kept++
			}
		}
		return pruned, kept
	}
	for _, channel := range Channels {
		v, err := build(channel)
		if err != nil {
			t.Fatal(err)
		}
		pruned, kept := 0, 0
		for gvk, ver := range compiledVersions(t, v) {
			p, k := check(gvk.String(), ver.structural, 200)
			pruned, kept = pruned+p, kept+k
		}
		if pruned == 0 || kept == 0 {
			t.Errorf("%s: %d values pruned, %d kept: the test needs both", channel, pruned, kept)
		}
	}
	obj := func(props map[string]structuralschema.Structural, ext structuralschema.Extensions) structuralschema.Structural {
		return structuralschema.Structural{Generic: structuralschema.Generic{Type: "object"}, Properties: props, Extensions: ext}
	}
	str := structuralschema.Structural{Generic: structuralschema.Generic{Type: "string"}}
	inner := obj(map[string]structuralschema.Structural{"a": str}, structuralschema.Extensions{})
	embedded := obj(map[string]structuralschema.Structural{"a": str}, structuralschema.Extensions{XEmbeddedResource: true})
	preserved := obj(map[string]structuralschema.Structural{"o": inner, "e": embedded}, structuralschema.Extensions{XPreserveUnknownFields: true})
	s := obj(map[string]structuralschema.Structural{
		"p": preserved,
		"l": {Generic: structuralschema.Generic{Type: "array"}, Items: &preserved},
		"e": embedded,
		"m": {Generic: structuralschema.Generic{Type: "object"}, AdditionalProperties: &structuralschema.StructuralOrBool{Bool: true, Structural: &inner}},
		"n": {Generic: structuralschema.Generic{Type: "object"}, AdditionalProperties: &structuralschema.StructuralOrBool{Bool: true}},
	}, structuralschema.Extensions{})
	s.Properties["pl"] = structuralschema.Structural{Generic: structuralschema.Generic{Type: "array"}, Items: &inner, Extensions: structuralschema.Extensions{XPreserveUnknownFields: true}}
	if pruned, kept := check("preserved and embedded", &s, 3000); pruned == 0 || kept == 0 {
		t.Errorf("preserved and embedded: %d pruned, %d kept: the test needs both", pruned, kept)
	}
	node := newPruneNode(&s)
	for _, tt := range []struct {
		name  string
		value map[string]any
	}{
		{"the root's meta fields", map[string]any{"kind": "K", "metadata": map[string]any{"x": "y"}}},
		{"an unknown field at the root", map[string]any{"kind": "K", "zz": int64(1)}},
		{"an embedded resource's meta fields", map[string]any{"e": map[string]any{"kind": "K", "a": "x"}}},
		{"an embedded resource's unknown field", map[string]any{"e": map[string]any{"kind": "K", "zz": "x"}}},
		{"an object of no schema under additionalProperties", map[string]any{"n": map[string]any{"k": map[string]any{"z": int64(1)}}}},
		{"an empty object of no schema", map[string]any{"n": map[string]any{"k": map[string]any{}}}},
		{"a scalar of no schema", map[string]any{"n": map[string]any{"k": "s"}}},
		{"unknown fields kept", map[string]any{"p": map[string]any{"zz": int64(1)}}},
		{"a known field's unknown field under kept ones", map[string]any{"p": map[string]any{"o": map[string]any{"zz": int64(1)}}}},
		{"an embedded resource under kept fields", map[string]any{"p": map[string]any{"e": map[string]any{"kind": int64(1), "zz": int64(2)}}}},
		{"items of a kept list keep theirs", map[string]any{"pl": []any{map[string]any{"zz": int64(1)}}}},
		{"items of kept objects", map[string]any{"l": []any{map[string]any{"x": int64(1)}, map[string]any{"o": map[string]any{"zz": int64(1)}}}}},
	} {
		lib := runtime.DeepCopyJSONValue(tt.value)
		paths := structuralpruning.PruneWithOptions(lib, &s, true, structuralschema.UnknownFieldPathOptions{TrackUnknownFieldPaths: true})
		libPrunes := len(paths) > 0 || !reflect.DeepEqual(lib, any(tt.value))
		if got := node.wouldPrune(tt.value, true); got != libPrunes {
			t.Errorf("%s: wouldPrune %v, the library pruned %v (%v)", tt.name, got, libPrunes, paths)
		}
	}
}

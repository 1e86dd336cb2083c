package crds

import (
	"math/rand/v2"
	"reflect"
	"testing"

	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	schemaobjectmeta "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/objectmeta"
	"k8s.io/apimachinery/pkg/runtime"
)

// TestWithoutEmbeddedResourcesObjectMetaDoesNothing: for every CRD
// version of no embedded resource, the library's ObjectMeta coercion and
// validation below the root change and find nothing in random values; a
// schema of one is told apart.
func TestWithoutEmbeddedResourcesObjectMetaDoesNothing(t *testing.T) {
	r := rand.New(rand.NewPCG(38, 5))
	for _, channel := range Channels {
		v, err := build(channel)
		if err != nil {
			t.Fatal(err)
		}
		without := 0
		for gvk, ver := range compiledVersions(t, v) {
			if ver.embedded {
				continue
			}
			without++
			for i := range 100 {
				obj := randomValue(r, ver.structural, 0)
				if m, ok := obj.(map[string]any); ok && i%2 == 0 {
					m["metadata"] = map[string]any{"name": int64(1), "x": "y"} // malformed: only a root or embedded resource's is read
				}
				before := runtime.DeepCopyJSONValue(obj)
				ferr, paths := schemaobjectmeta.CoerceWithOptions(nil, obj, ver.structural, false, schemaobjectmeta.CoerceOptions{ReturnUnknownFieldPaths: true})
				if ferr != nil || paths != nil || !reflect.DeepEqual(obj, before) {
					t.Fatalf("%s value %d: coercion did something: %v, %v", gvk, i, ferr, paths)
				}
				if errs := schemaobjectmeta.Validate(nil, obj, ver.structural, false); len(errs) > 0 {
					t.Fatalf("%s value %d: validation found %v", gvk, i, errs)
				}
			}
		}
		if without == 0 {
			t.Errorf("%s: every version has an embedded resource: the shortcut is never taken", channel)
		}
	}
	embedded := &structuralschema.Structural{Generic: structuralschema.Generic{Type: "object"}, Properties: map[string]structuralschema.Structural{
		"l": {Generic: structuralschema.Generic{Type: "array"}, Items: &structuralschema.Structural{Generic: structuralschema.Generic{Type: "object"}, Extensions: structuralschema.Extensions{XEmbeddedResource: true}}},
	}}
	if !holdsEmbeddedResource(embedded) {
		t.Error("an embedded resource in a list's items is not found")
	}
	obj := map[string]any{"l": []any{map[string]any{"kind": int64(1)}}}
	if ferr, _ := schemaobjectmeta.CoerceWithOptions(nil, obj, embedded, false, schemaobjectmeta.CoerceOptions{}); ferr == nil {
		t.Error("the library coerces an embedded resource's kind of a number without error: the case tests nothing")
	}
}

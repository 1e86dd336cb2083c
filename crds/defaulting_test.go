package crds

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"

	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	structuraldefaulting "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/defaulting"
	"k8s.io/apimachinery/pkg/runtime"
)

// randomValue is a value for s drawn from r: fields present or absent,
// nulls, lists and maps of a few items, now and then a value of another
// type than the schema's, as a manifest can hold before validation.
func randomValue(r *rand.Rand, s *structuralschema.Structural, depth int) any {
	if s == nil || depth > 14 || r.IntN(12) == 0 {
		return nil
	}
	if r.IntN(25) == 0 {
		return []any{"x", int64(1)} // of another type
	}
	switch s.Type {
	case "object":
		m := map[string]any{}
		for name, p := range s.Properties {
			if r.IntN(2) == 0 {
				m[name] = randomValue(r, &p, depth+1)
			}
		}
		if ap := s.AdditionalProperties; ap != nil && ap.Structural != nil {
			for i := range r.IntN(3) {
				m[fmt.Sprintf("k%d", i)] = randomValue(r, ap.Structural, depth+1)
			}
		}
		if r.IntN(8) == 0 {
			m["unknown"] = "x" // neither a property nor an additional one
		}
		return m
	case "array":
		l := []any{}
		for range r.IntN(3) {
			l = append(l, randomValue(r, s.Items, depth+1))
		}
		return l
	case "string":
		return "s"
	case "integer":
		return int64(r.IntN(100))
	case "number":
		return float64(r.IntN(100)) / 4
	case "boolean":
		return r.IntN(2) == 0
	}
	return "v"
}

// TestDefaulterIsTheLibrarys: on random values of every CRD version's
// schema, the defaulter changes them exactly as the library's Default
// does, and a value of no null field is one the library's null pruning
// leaves alone.
func TestDefaulterIsTheLibrarys(t *testing.T) {
	r := rand.New(rand.NewPCG(38, 2))
	for _, channel := range Channels {
		v, err := build(channel)
		if err != nil {
			t.Fatal(err)
		}
		changed, withoutNulls := 0, 0
		for gvk, ver := range compiledVersions(t, v) {
			for i := range 200 {
				obj := randomValue(r, ver.structural, 0)
				lib := runtime.DeepCopyJSONValue(obj)
				ours := runtime.DeepCopyJSONValue(obj)
				structuraldefaulting.Default(lib, ver.structural)
				ver.defaulter.apply(ours)
				if !reflect.DeepEqual(ours, lib) {
					t.Fatalf("%s value %d: defaulted\n%v\nby the library\n%v", gvk, i, ours, lib)
				}
				if !reflect.DeepEqual(lib, obj) {
					changed++
				}
				if !holdsNullField(obj) {
					withoutNulls++
					pruned := runtime.DeepCopyJSONValue(obj)
					structuraldefaulting.PruneNonNullableNullsWithoutDefaults(pruned, ver.structural)
					if !reflect.DeepEqual(pruned, obj) {
						t.Fatalf("%s value %d: no null field, yet the library pruned\n%v\nto\n%v", gvk, i, obj, pruned)
					}
				}
			}
		}
		if changed == 0 || withoutNulls == 0 {
			t.Errorf("%s: %d values defaulted, %d without nulls: the test needs both", channel, changed, withoutNulls)
		}
	}
	// What the CRDs do not have: defaults of additional properties and
	// list items, nullable or not.
	s := defaultsSchema()
	d := newDefaulter(s)
	for i := range 2000 {
		obj := randomValue(r, s, 0)
		lib, ours := runtime.DeepCopyJSONValue(obj), runtime.DeepCopyJSONValue(obj)
		structuraldefaulting.Default(lib, s)
		d.apply(ours)
		if !reflect.DeepEqual(ours, lib) {
			t.Fatalf("value %d: defaulted\n%v\nby the library\n%v", i, ours, lib)
		}
	}
}

// defaultsSchema has a default of every kind: a property's, nullable or
// not; an additional property's, nullable or not; a list item's; one
// under a property of no default.
func defaultsSchema() *structuralschema.Structural {
	str := func(def any, nullable bool) structuralschema.Structural {
		return structuralschema.Structural{Generic: structuralschema.Generic{Type: "string", Nullable: nullable, Default: structuralschema.JSON{Object: def}}}
	}
	mapOf := func(v structuralschema.Structural) structuralschema.Structural {
		return structuralschema.Structural{Generic: structuralschema.Generic{Type: "object"}, AdditionalProperties: &structuralschema.StructuralOrBool{Bool: true, Structural: &v}}
	}
	item := structuralschema.Structural{Generic: structuralschema.Generic{Type: "integer", Default: structuralschema.JSON{Object: int64(1)}}}
	return &structuralschema.Structural{Generic: structuralschema.Generic{Type: "object"}, Properties: map[string]structuralschema.Structural{
		"a":  str("d", false),
		"n":  str("d", true),
		"m":  mapOf(str("x", false)),
		"mn": mapOf(str("x", true)),
		"l":  {Generic: structuralschema.Generic{Type: "array"}, Items: &item},
		"o": {Generic: structuralschema.Generic{Type: "object"}, Properties: map[string]structuralschema.Structural{
			"b": str("e", false),
			"m": mapOf(structuralschema.Structural{Generic: structuralschema.Generic{Type: "object"}, Properties: map[string]structuralschema.Structural{"c": str("f", false)}}),
		}},
	}}
}

func TestHoldsNullField(t *testing.T) {
	tests := []struct {
		value any
		want  bool
	}{
		{map[string]any{"a": "x", "l": []any{map[string]any{"b": int64(1)}}}, false},
		{map[string]any{"a": nil}, true},
		{map[string]any{"l": []any{map[string]any{"b": nil}}}, true},
		{map[string]any{"l": []any{nil}}, false}, // a null item is no field
		{[]any{map[string]any{"m": map[string]any{"k": nil}}}, true},
	}
	for _, tt := range tests {
		if got := holdsNullField(tt.value); got != tt.want {
			t.Errorf("holdsNullField(%v) = %v, want %v", tt.value, got, tt.want)
		}
	}
}

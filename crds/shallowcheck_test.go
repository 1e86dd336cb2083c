package crds

import (
	"math/rand/v2"
	"strings"
	"testing"

	"k8s.io/kube-openapi/pkg/validation/spec"
)

// randomSpecValue is a value for s drawn from r, mostly valid (enum
// values, short names, fields mostly present), now and then not (a null,
// a missing required field, an unknown field, a wrong type, a long string).
func randomSpecValue(r *rand.Rand, s *spec.Schema, depth int) any {
	if s == nil || depth > 12 || r.IntN(30) == 0 {
		return nil
	}
	if r.IntN(40) == 0 {
		return int64(7) // of another type, mostly
	}
	if len(s.Enum) > 0 && r.IntN(10) > 0 {
		return s.Enum[r.IntN(len(s.Enum))]
	}
	typ := ""
	if len(s.Type) > 0 {
		typ = s.Type[0]
	}
	switch {
	case typ == "object" || len(s.Properties) > 0:
		m := map[string]any{}
		for name := range s.Properties {
			if r.IntN(5) > 0 {
				p := s.Properties[name]
				m[name] = randomSpecValue(r, &p, depth+1)
			}
		}
		if ap := s.AdditionalProperties; ap != nil && r.IntN(3) == 0 {
			m["extra"] = randomSpecValue(r, ap.Schema, depth+1)
		}
		if r.IntN(20) == 0 {
			m["unknown"] = "x"
		}
		return m
	case typ == "array":
		l := []any{}
		for range r.IntN(4) {
			var items *spec.Schema
			if s.Items != nil {
				items = s.Items.Schema
			}
			l = append(l, randomSpecValue(r, items, depth+1))
		}
		return l
	case typ == "string":
		return []string{"a", "gw", "example.com", "/", "Service", "", "-x-", strings.Repeat("a", 64), strings.Repeat("a", 254)}[r.IntN(9)]
	case typ == "integer":
		return []int64{0, 1, 80, 443, 65535, 65536, -1, 1 << 31}[r.IntN(8)]
	case typ == "boolean":
		return r.IntN(2) == 0
	case typ == "number":
		return 1.5
	}
	return "v"
}

// TestShallowCheckAgreesWithLibrary: on random values of every split
// node of every CRD, a value shallowValid passes is one the library's
// validator of the node's shallow schema passes; and it passes some.
func TestShallowCheckAgreesWithLibrary(t *testing.T) {
	r := rand.New(rand.NewPCG(38, 3))
	for _, channel := range Channels {
		v, err := build(channel)
		if err != nil {
			t.Fatal(err)
		}
		nodes, passed, refusedByLibrary := 0, 0, 0
		var walk func(path string, n *schemaNode)
		walk = func(path string, n *schemaNode) {
			if n == nil {
				return
			}
			if n.shape != shapeLibrary {
				nodes++
				for range 40 {
					value := randomSpecValue(r, n.shallow, 0)
					libValid := n.validator.Validate(value).IsValid()
					if !libValid {
						refusedByLibrary++
					}
					if n.shallowValid(value) {
						passed++
						if !libValid {
							t.Errorf("%s: %v passes shallowValid, the library says %v", path, value, n.validator.Validate(value).Errors)
						}
					}
				}
			}
			for name, c := range n.properties {
				walk(path+"."+name, c)
			}
			walk(path+"[]", n.itemsNode)
			walk(path+"{}", n.additionalProperties)
		}
		for gvk, ver := range compiledVersions(t, v) {
			walk(gvk.Kind+"."+gvk.Version, ver.schemaTree)
		}
		t.Logf("%s: %d nodes checked, %d values passed, %d refused by the library", channel, nodes, passed, refusedByLibrary)
		if nodes == 0 || passed == 0 || refusedByLibrary == 0 {
			t.Errorf("%s: the test needs nodes, values passed and values refused", channel)
		}
	}
}

// TestShallowCheckCases: what no CRD of the pin has (additional
// properties refused, counts of properties) and the edges of what they
// have, each decided as the library decides it.
func TestShallowCheckCases(t *testing.T) {
	n := func(v int64) *int64 { return &v }
	str := spec.Schema{SchemaProps: spec.SchemaProps{Type: spec.StringOrArray{"string"}, MaxLength: n(3)}}
	object := func(props spec.SchemaProps) *spec.Schema {
		props.Type = spec.StringOrArray{"object"}
		props.Properties = map[string]spec.Schema{"a": str, "b": str}
		return &spec.Schema{SchemaProps: props}
	}
	list := &spec.Schema{SchemaProps: spec.SchemaProps{Type: spec.StringOrArray{"array"}, MinItems: n(1), MaxItems: n(2), Items: &spec.SchemaOrArray{Schema: &str}}}
	tests := []struct {
		name  string
		s     *spec.Schema
		value any
		valid bool
	}{
		{"declared fields", object(spec.SchemaProps{}), map[string]any{"a": "x", "b": "y"}, true},
		{"a declared field too long", object(spec.SchemaProps{}), map[string]any{"a": "xxxx"}, false},
		{"a null field", object(spec.SchemaProps{}), map[string]any{"a": nil}, false},
		{"an undeclared field, additional properties unsaid", object(spec.SchemaProps{}), map[string]any{"c": int64(1)}, true},
		{"an undeclared field, additional properties refused", object(spec.SchemaProps{AdditionalProperties: &spec.SchemaOrBool{Allows: false}}), map[string]any{"a": "x", "c": "y"}, false},
		{"declared fields only, additional properties refused", object(spec.SchemaProps{AdditionalProperties: &spec.SchemaOrBool{Allows: false}}), map[string]any{"a": "x"}, true},
		{"an additional property of its schema", object(spec.SchemaProps{AdditionalProperties: &spec.SchemaOrBool{Allows: true, Schema: &str}}), map[string]any{"c": "y"}, true},
		{"an additional property too long", object(spec.SchemaProps{AdditionalProperties: &spec.SchemaOrBool{Allows: true, Schema: &str}}), map[string]any{"c": "yyyy"}, false},
		{"a required field missing", object(spec.SchemaProps{Required: []string{"a"}}), map[string]any{"b": "y"}, false},
		{"a required field null", object(spec.SchemaProps{Required: []string{"a"}, Nullable: true}), map[string]any{"a": nil}, false},
		{"too many fields", object(spec.SchemaProps{MaxProperties: n(1)}), map[string]any{"a": "x", "b": "y"}, false},
		{"too few fields", object(spec.SchemaProps{MinProperties: n(2)}), map[string]any{"a": "x"}, false},
		{"fields enough", object(spec.SchemaProps{MinProperties: n(2), MaxProperties: n(2)}), map[string]any{"a": "x", "b": "y"}, true},
		{"a list for an object", object(spec.SchemaProps{}), []any{}, false},
		{"items", list, []any{"x", "y"}, true},
		{"no item", list, []any{}, false},
		{"too many items", list, []any{"x", "y", "z"}, false},
		{"an item too long", list, []any{"x", "yyyy"}, false},
		{"an object for a list", list, map[string]any{}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			node := newSchemaNode(tt.s)
			if node.shape == shapeLibrary {
				t.Fatal("no shape: the case tests nothing")
			}
			lib := node.validator.Validate(tt.value).IsValid()
			got := node.shallowValid(tt.value)
			if lib != tt.valid || got != tt.valid {
				t.Errorf("shallowValid %v, the library %v, want %v", got, lib, tt.valid)
			}
		})
	}
}

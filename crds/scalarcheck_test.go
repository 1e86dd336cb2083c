package crds

import (
	"math"
	"strings"
	"testing"

	"k8s.io/kube-openapi/pkg/validation/spec"
	"k8s.io/kube-openapi/pkg/validation/strfmt"
	"k8s.io/kube-openapi/pkg/validation/validate"
)

// scalarValues are values at and around the CRDs' limits, of every type.
func scalarValues(s *spec.Schema) []any {
	values := []any{nil, "", "a", "A", "gw", "-bad-", "bad-", "Service", "PathPrefix", "HTTP", "HTTPS", "example.com", "*.example.com", "/", "/api", "a b", "sha256:x", "é",
		int64(-1), int64(0), int64(1), int64(65535), int64(65536), int64(math.MaxInt32), int64(math.MaxInt32) + 1, int64(math.MinInt32) - 1, int64(1000000),
		true, false, float64(1), 1.5, []any{}, map[string]any{}}
	for _, n := range []int{62, 63, 64, 252, 253, 254, 255, 256, 4095, 4096, 4097} {
		values = append(values, strings.Repeat("x", n), strings.Repeat("é", n))
	}
	for _, e := range s.Enum {
		values = append(values, e)
		if str, ok := e.(string); ok {
			values = append(values, str+"x", strings.ToLower(str))
		}
	}
	for _, b := range []*float64{s.Minimum, s.Maximum} {
		if b != nil {
			values = append(values, int64(*b)-1, int64(*b), int64(*b)+1, *b)
		}
	}
	return values
}

// TestScalarCheckAgreesWithLibrary: for every scalar a split schema node
// of every CRD asks a validator for, a value its check finds valid is one
// the library's validator finds valid; and the checks are used.
func TestScalarCheckAgreesWithLibrary(t *testing.T) {
	for _, channel := range Channels {
		v, err := build(channel)
		if err != nil {
			t.Fatal(err)
		}
		checks, passed := 0, 0
		var walk func(path string, n *schemaNode)
		try := func(path string, vv validate.ValueValidator) {
			c, ok := vv.(checkedValidator)
			if !ok {
				return
			}
			checks++
			for _, value := range scalarValues(c.Schema) {
				if !c.check.valid(value) {
					continue
				}
				passed++
				if res := c.SchemaValidator.Validate(value); !res.IsValid() {
					t.Errorf("%s: %#v passes the check, the library says %v", path, value, res.Errors)
				}
			}
		}
		walk = func(path string, n *schemaNode) {
			if n == nil {
				return
			}
			for name, f := range n.fields {
				try(path+"."+name, f)
			}
			if n.items != nil {
				try(path+"[]", n.items)
			}
			if n.additional != nil {
				try(path+"{}", n.additional)
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
		t.Logf("%s: %d checks, %d values passed", channel, checks, passed)
		if checks == 0 || passed == 0 {
			t.Errorf("%s: %d checks, %d values passed: the test needs both", channel, checks, passed)
		}
	}
}

// TestScalarCheckRefusesWhatItDoesNotRead: schemas of anything beyond
// the check's keywords get none, and each keyword it reads can fail.
func TestScalarCheckRefusesWhatItDoesNotRead(t *testing.T) {
	i := func(n int64) *int64 { return &n }
	f := func(n float64) *float64 { return &n }
	str := func(props spec.SchemaProps) *spec.Schema {
		props.Type = spec.StringOrArray{"string"}
		return &spec.Schema{SchemaProps: props}
	}
	integer := func(format string, min, max *float64) *spec.Schema {
		return &spec.Schema{SchemaProps: spec.SchemaProps{Type: spec.StringOrArray{"integer"}, Format: format, Minimum: min, Maximum: max}}
	}
	none := []struct {
		name string
		s    *spec.Schema
	}{
		{"a format", str(spec.SchemaProps{Format: "uri"})},
		{"anyOf", str(spec.SchemaProps{AnyOf: []spec.Schema{*str(spec.SchemaProps{})}})},
		{"an exclusive maximum", &spec.Schema{SchemaProps: spec.SchemaProps{Type: spec.StringOrArray{"integer"}, Maximum: f(3), ExclusiveMaximum: true}}},
		{"multipleOf", &spec.Schema{SchemaProps: spec.SchemaProps{Type: spec.StringOrArray{"integer"}, MultipleOf: f(2)}}},
		{"a fractional bound", integer("", f(0.5), nil)},
		{"an int32 bound beyond int32", integer("int32", nil, f(1<<40))},
		{"a number", &spec.Schema{SchemaProps: spec.SchemaProps{Type: spec.StringOrArray{"number"}}}},
		{"two types", &spec.Schema{SchemaProps: spec.SchemaProps{Type: spec.StringOrArray{"string", "integer"}}}},
		{"an enum of a number", str(spec.SchemaProps{Enum: []any{int64(1)}})},
		{"an int format of strings", str(spec.SchemaProps{Format: "int32"})},
	}
	for _, tt := range none {
		if newScalarCheck(tt.s) != nil {
			t.Errorf("%s: a check was built", tt.name)
		}
	}
	fails := []struct {
		name  string
		s     *spec.Schema
		value any
	}{
		{"too long in runes", str(spec.SchemaProps{MaxLength: i(3)}), "éééé"},
		{"too short", str(spec.SchemaProps{MinLength: i(1)}), ""},
		{"not the pattern", str(spec.SchemaProps{Pattern: "^[a-z]+$"}), "A"},
		{"not in the enum", str(spec.SchemaProps{Enum: []any{"Exact", "PathPrefix"}}), "Prefix"},
		{"beyond int32", integer("int32", nil, nil), int64(math.MaxInt32) + 1},
		{"above the maximum", integer("", nil, f(65535)), int64(65536)},
		{"below the minimum", integer("int32", f(1), nil), int64(0)},
		{"a fraction for an integer", integer("", nil, nil), 1.5},
		{"a number for a string", str(spec.SchemaProps{}), int64(1)},
		{"a null", str(spec.SchemaProps{}), nil},
	}
	for _, tt := range fails {
		c := newScalarCheck(tt.s)
		if c == nil {
			t.Errorf("%s: no check was built", tt.name)
			continue
		}
		if c.valid(tt.value) {
			t.Errorf("%s: %#v passes", tt.name, tt.value)
		}
		if validate.NewSchemaValidator(tt.s, nil, "", strfmt.Default).Validate(tt.value).IsValid() && tt.value != nil {
			t.Errorf("%s: the library finds %#v valid: the case tests nothing", tt.name, tt.value)
		}
	}
}

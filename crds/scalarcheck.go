package crds

import (
	"math"
	"reflect"
	"regexp"
	"slices"
	"unicode/utf8"

	"k8s.io/kube-openapi/pkg/validation/spec"
	"k8s.io/kube-openapi/pkg/validation/strfmt"
	"k8s.io/kube-openapi/pkg/validation/validate"
)

// scalarCheck answers "valid" for a string, integer or boolean against a
// schema of nothing but a type, lengths, a pattern, an enum of strings and
// inclusive integral bounds, in a few comparisons where kube-openapi runs
// eight validators and allocates a result for each. It only ever says
// valid when each of those validators would (each condition below is
// theirs); anything else is asked of the library's validator.
type scalarCheck struct {
	kind                 string // "string", "integer", "boolean", or "any" for the empty schema
	minLength, maxLength int64  // -1 for none
	pattern              *regexp.Regexp
	enum                 []string
	int32                bool
	minimum, maximum     int64 // math.MinInt64, math.MaxInt64 for none
}

// maxExactInteger bounds the bounds taken: below it a float64 bound and
// its int64 conversion are one number.
const maxExactInteger = 1 << 53

// newScalarCheck is the check of s, nil when s has anything the check
// does not read the library's way.
func newScalarCheck(s *spec.Schema) *scalarCheck {
	if reflect.DeepEqual(*s, spec.Schema{}) {
		return &scalarCheck{kind: "any"} // a split child, validated by its own node
	}
	if len(s.Type) != 1 {
		return nil
	}
	rest := *s
	// Annotations and what only a null reads; the check answers no null.
	rest.Description, rest.Title, rest.Default, rest.Example, rest.Nullable = "", "", nil, nil, false
	rest.VendorExtensible, rest.ExtraProps = spec.VendorExtensible{}, nil
	rest.Type, rest.Format = nil, ""
	rest.MinLength, rest.MaxLength, rest.Pattern, rest.Enum = nil, nil, "", nil
	rest.Minimum, rest.Maximum = nil, nil
	if !reflect.DeepEqual(rest, spec.Schema{}) {
		return nil
	}
	c := &scalarCheck{kind: s.Type[0], minLength: -1, maxLength: -1, minimum: math.MinInt64, maximum: math.MaxInt64}
	switch c.kind {
	case "string":
		if s.Format != "" || s.Minimum != nil || s.Maximum != nil {
			return nil
		}
		if s.MinLength != nil {
			c.minLength = *s.MinLength
		}
		if s.MaxLength != nil {
			c.maxLength = *s.MaxLength
		}
		if s.Pattern != "" {
			re, err := regexp.Compile(s.Pattern)
			if err != nil {
				return nil
			}
			c.pattern = re
		}
		for _, e := range s.Enum {
			str, ok := e.(string)
			if !ok {
				return nil
			}
			c.enum = append(c.enum, str)
		}
		if s.Enum != nil && len(c.enum) == 0 {
			return nil
		}
	case "integer":
		if s.MinLength != nil || s.MaxLength != nil || s.Pattern != "" || s.Enum != nil {
			return nil
		}
		switch s.Format {
		case "", "int64":
		case "int32":
			c.int32 = true
		default:
			return nil
		}
		var ok bool
		if c.minimum, ok = integralBound(s.Minimum, math.MinInt64, c.int32); !ok {
			return nil
		}
		if c.maximum, ok = integralBound(s.Maximum, math.MaxInt64, c.int32); !ok {
			return nil
		}
	case "boolean":
		if s.Format != "" || s.MinLength != nil || s.MaxLength != nil || s.Pattern != "" || s.Enum != nil || s.Minimum != nil || s.Maximum != nil {
			return nil
		}
	default:
		return nil
	}
	return c
}

// integralBound is b as an int64 (none when nil) if it is a whole number
// the library takes as it stands: within int32 for an int32 field, whose
// bounds it checks against that range too.
func integralBound(b *float64, none int64, int32 bool) (int64, bool) {
	if b == nil {
		return none, true
	}
	if *b != math.Trunc(*b) || math.Abs(*b) >= maxExactInteger {
		return 0, false
	}
	if int32 && (*b < math.MinInt32 || *b > math.MaxInt32) {
		return 0, false
	}
	return int64(*b), true
}

// valid: the library's validator finds no error in v. false means ask it.
func (c *scalarCheck) valid(v any) bool {
	switch c.kind {
	case "string":
		s, ok := v.(string)
		if !ok {
			return false
		}
		if c.minLength >= 0 || c.maxLength >= 0 {
			n := int64(utf8.RuneCountInString(s))
			if c.minLength >= 0 && n < c.minLength || c.maxLength >= 0 && n > c.maxLength {
				return false
			}
		}
		if c.pattern != nil && !c.pattern.MatchString(s) {
			return false
		}
		return c.enum == nil || slices.Contains(c.enum, s)
	case "integer":
		i, ok := v.(int64)
		if !ok {
			return false
		}
		if c.int32 && (i < math.MinInt32 || i > math.MaxInt32) {
			return false
		}
		return i >= c.minimum && i <= c.maximum
	case "boolean":
		_, ok := v.(bool)
		return ok
	case "any":
		return true
	}
	return false
}

// passes: vv, a field's validator, finds v valid.
func passes(vv validate.ValueValidator, v any) bool {
	if c, ok := vv.(checkedValidator); ok && c.check.valid(v) {
		return true
	}
	r := vv.Validate(v)
	return r == nil || r.IsValid()
}

// checkedValidator is a field's library validator with its check in
// front: a value the check finds valid has no result (as one of no
// error, to the object and list validators that merge it).
type checkedValidator struct {
	check *scalarCheck
	*validate.SchemaValidator
}

func (c checkedValidator) Validate(v any) *validate.Result {
	if c.check.valid(v) {
		return nil
	}
	return c.SchemaValidator.Validate(v)
}

// fieldValidator is s's library validator, behind its check when it has one.
func fieldValidator(s *spec.Schema, path string) validate.ValueValidator {
	lib := validate.NewSchemaValidator(s, nil, path, strfmt.Default)
	if check := newScalarCheck(s); check != nil {
		return checkedValidator{check: check, SchemaValidator: lib}
	}
	return lib
}

package crds

import (
	"reflect"

	"k8s.io/kube-openapi/pkg/validation/spec"
)

// shape is what a split node's own schema (its shallow schema) asks of
// its value, when that is simple enough to check here.
type shape int

const (
	// shapeLibrary: only the library's validator answers.
	shapeLibrary shape = iota
	// shapeObject: a map of properties, required ones, a count of them and
	// additional properties allowed, refused or of a schema.
	shapeObject
	// shapeList: a list of a count of items of a schema.
	shapeList
)

// shapeOf is the shape of shallow, a split node's own schema.
func shapeOf(shallow *spec.Schema) shape {
	rest := *shallow
	rest.Description, rest.Title, rest.Default, rest.Example, rest.Nullable = "", "", nil, nil, false
	rest.VendorExtensible, rest.ExtraProps = spec.VendorExtensible{}, nil
	rest.Type = nil
	switch {
	case len(shallow.Type) == 1 && shallow.Type[0] == "object":
		rest.Properties, rest.Required, rest.AdditionalProperties, rest.MinProperties, rest.MaxProperties = nil, nil, nil, nil, nil
		if reflect.DeepEqual(rest, spec.Schema{}) {
			return shapeObject
		}
	case len(shallow.Type) == 1 && shallow.Type[0] == "array":
		if shallow.Items == nil || shallow.Items.Schema == nil || shallow.Items.Schemas != nil {
			return shapeLibrary
		}
		rest.Items, rest.MinItems, rest.MaxItems = nil, nil, nil
		if reflect.DeepEqual(rest, spec.Schema{}) {
			return shapeList
		}
	}
	return shapeLibrary
}

// shallowValid: value is valid to n's shallow schema, checked as the
// library's type, object and slice validators check it, each field, item
// or additional property by its validator. false means ask the library.
func (n *schemaNode) shallowValid(value any) bool {
	s := n.shallow
	switch n.shape {
	case shapeObject:
		m, ok := value.(map[string]any)
		if !ok {
			return false
		}
		if s.MinProperties != nil && int64(len(m)) < *s.MinProperties || s.MaxProperties != nil && int64(len(m)) > *s.MaxProperties {
			return false
		}
		for _, k := range s.Required {
			if _, ok := m[k]; !ok {
				return false
			}
		}
		ap := s.AdditionalProperties
		for k, v := range m {
			if f, declared := n.fields[k]; declared {
				if !passes(f, v) {
					return false
				}
				continue
			}
			if ap == nil {
				continue
			}
			if !ap.Allows || ap.Schema != nil && !passes(n.additional, v) {
				return false
			}
		}
		return true
	case shapeList:
		l, ok := value.([]any)
		if !ok {
			return false
		}
		if s.MinItems != nil && int64(len(l)) < *s.MinItems || s.MaxItems != nil && int64(len(l)) > *s.MaxItems {
			return false
		}
		for _, e := range l {
			if !passes(n.items, e) {
				return false
			}
		}
		return true
	}
	return false
}

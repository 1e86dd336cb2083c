package crds

import (
	"k8s.io/kube-openapi/pkg/validation/spec"
	"k8s.io/kube-openapi/pkg/validation/strfmt"
	"k8s.io/kube-openapi/pkg/validation/validate"
)

// schemaNode is one object or list of the CRD's OpenAPI schema, split so
// that an object's value is valid when it is valid to its own schema with
// its object and list fields accepted as anything, and each of those is
// valid to its own schema: JSON Schema's properties, items and
// additionalProperties apply to each child alone, so this is the
// library's answer when it says "valid". A subtree once valid is
// remembered; anything invalid is validated again by the library whole,
// so refusals are the library's own.
type schemaNode struct {
	// shallow is the node's schema without its split children (or with
	// them as empty schemas, which accept any value, beside
	// additionalProperties).
	shallow *spec.Schema
	// validator is shallow's. The API server builds one an object; it is
	// built once here, as Validate changes nothing in it (only SetPath
	// does, which its parents call on the validators they make).
	validator *validate.SchemaValidator
	// fields, items and additional are the validators shallow's
	// validator asks for its fields, list items and additional
	// properties, built once: kube-openapi builds one a value.
	fields               map[string]validate.ValueValidator
	items                validate.ValueValidator
	additional           validate.ValueValidator
	properties           map[string]*schemaNode
	itemsNode            *schemaNode
	additionalProperties *schemaNode
	// shape says whether shallowValid can answer for validator.
	shape shape
	// root is an object's whole value, its own: not memoized.
	root bool
}

// newSchemaNode splits s; a schema of combinators, patterns, references
// or tuples stays whole (validated by its full schema, not memoized in
// parts).
func newSchemaNode(s *spec.Schema) *schemaNode {
	n := &schemaNode{shallow: s}
	if !splittable(s) {
		n.validator = validate.NewSchemaValidator(s, nil, "", strfmt.Default)
		return n
	}
	shallow := *s
	if len(s.Properties) > 0 {
		shallow.Properties = make(map[string]spec.Schema, len(s.Properties))
		for k, p := range s.Properties {
			if !container(&p) {
				shallow.Properties[k] = p
				continue
			}
			if s.AdditionalProperties != nil {
				// Kept, as anything, so that it is not an additional property.
				shallow.Properties[k] = spec.Schema{}
			}
			if n.properties == nil {
				n.properties = map[string]*schemaNode{}
			}
			n.properties[k] = newSchemaNode(&p)
		}
	}
	if s.Items != nil && s.Items.Schema != nil && container(s.Items.Schema) {
		shallow.Items = &spec.SchemaOrArray{Schema: &spec.Schema{}}
		n.itemsNode = newSchemaNode(s.Items.Schema)
	}
	if ap := s.AdditionalProperties; ap != nil && ap.Schema != nil && container(ap.Schema) {
		shallow.AdditionalProperties = &spec.SchemaOrBool{Allows: ap.Allows, Schema: &spec.Schema{}}
		n.additionalProperties = newSchemaNode(ap.Schema)
	}
	n.shallow = &shallow
	n.validator = n.childValidators()
	n.shape = shapeOf(n.shallow)
	return n
}

// childValidators is shallow's validator, which takes its children's
// validators from n, built here once (a scalar's behind its check,
// scalarcheck.go). A validator's Validate changes
// nothing in it; paths in their errors are not read (an invalid object is
// validated again by the library).
func (n *schemaNode) childValidators() *validate.SchemaValidator {
	s := n.shallow
	for name := range s.Properties {
		p := s.Properties[name]
		if n.fields == nil {
			n.fields = make(map[string]validate.ValueValidator, len(s.Properties))
		}
		n.fields[name] = fieldValidator(&p, name)
	}
	if s.Items != nil && s.Items.Schema != nil {
		n.items = fieldValidator(s.Items.Schema, "")
	}
	if ap := s.AdditionalProperties; ap != nil && ap.Schema != nil {
		n.additional = fieldValidator(ap.Schema, "")
	}
	return validate.NewSchemaValidator(s, nil, "", strfmt.Default, func(o *validate.SchemaValidatorOptions) {
		o.NewValidatorForField = n.validatorForField
		o.NewValidatorForIndex = n.validatorForIndex
	})
}

// validatorForField is the validator the object validator asks for a
// property (by its name, with a copy of its schema) or an additional
// property (by its key, with additionalProperties' schema itself).
func (n *schemaNode) validatorForField(name string, s *spec.Schema, root any, path string, formats strfmt.Registry, opts ...validate.Option) validate.ValueValidator {
	if ap := n.shallow.AdditionalProperties; ap != nil && ap.Schema == s {
		return n.additional
	}
	if v, ok := n.fields[name]; ok {
		return v
	}
	return validate.NewSchemaValidator(s, root, path, formats, opts...)
}

// validatorForIndex is the validator the slice validator asks for an item,
// with items' schema itself.
func (n *schemaNode) validatorForIndex(_ int, s *spec.Schema, root any, path string, formats strfmt.Registry, opts ...validate.Option) validate.ValueValidator {
	if n.shallow.Items != nil && n.shallow.Items.Schema == s {
		return n.items
	}
	return validate.NewSchemaValidator(s, root, path, formats, opts...)
}

// splittable: only properties, items and additionalProperties reach a
// child; everything else of the schema is about the node's own value.
func splittable(s *spec.Schema) bool {
	return len(s.AllOf) == 0 && len(s.AnyOf) == 0 && len(s.OneOf) == 0 && s.Not == nil &&
		len(s.PatternProperties) == 0 && len(s.Dependencies) == 0 && s.AdditionalItems == nil &&
		s.Ref.String() == "" && (s.Items == nil || len(s.Items.Schemas) == 0)
}

// container is a schema of an object or a list, worth a node of its own.
func container(s *spec.Schema) bool {
	return s.Type.Contains("object") || s.Type.Contains("array") || len(s.Properties) > 0 || s.Items != nil || s.AdditionalProperties != nil
}

// valid says the library's schema validation finds no error in value:
// false means "ask the library", not "refused".
func (n *schemaNode) valid(memo *valueMemo, value any) bool {
	var key memoKey
	keyed := false
	// A node checked here (shallowValid) is walked: hashing its value
	// (each byte once per depth) costs more than the walk it would save.
	if !n.root && n.shape == shapeLibrary {
		key.node = n
		key.sum, keyed = canonicalSum(value)
	}
	if keyed {
		if _, ok := memo.get(key); ok {
			return true
		}
	}
	if !n.shallowValid(value) && !n.validator.Validate(value).IsValid() {
		return false
	}
	switch v := value.(type) {
	case map[string]any:
		for k, e := range v {
			if c, ok := n.properties[k]; ok {
				if !c.valid(memo, e) {
					return false
				}
			} else if _, declared := n.shallow.Properties[k]; !declared && n.additionalProperties != nil {
				if !n.additionalProperties.valid(memo, e) {
					return false
				}
			}
		}
	case []any:
		if n.itemsNode != nil {
			for _, e := range v {
				if !n.itemsNode.valid(memo, e) {
					return false
				}
			}
		}
	}
	if keyed {
		memo.put(key, 0)
	}
	return true
}

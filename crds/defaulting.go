package crds

import (
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apimachinery/pkg/runtime"
)

// defaulter is the library's defaulting (structuraldefaulting.Default) of
// one schema node, built once: the library copies each property's schema
// to the heap as it walks, a sixth of admission's allocations, and walks
// subtrees that hold no default. A node exists only where its subtree
// has a default, as elsewhere the library's walk changes nothing.
type defaulter struct {
	schema *structuralschema.Structural
	// defaults are the properties that have one, set when absent or a
	// null the schema does not allow.
	defaults   []propertyDefault
	properties map[string]*defaulter
	// additional walks additional properties; additionalDefault replaces
	// one that is a null its schema does not allow.
	additional        *defaulter
	additionalDefault any
	items             *defaulter
	itemsDefault      any
}

type propertyDefault struct {
	name     string
	value    any
	nullable bool
}

// newDefaulter is s's defaulter, nil when nothing under s has a default.
func newDefaulter(s *structuralschema.Structural) *defaulter {
	if s == nil {
		return nil
	}
	d := &defaulter{schema: s}
	for name, p := range s.Properties {
		if p.Default.Object != nil {
			d.defaults = append(d.defaults, propertyDefault{name: name, value: p.Default.Object, nullable: p.Nullable})
		}
		if c := newDefaulter(&p); c != nil {
			if d.properties == nil {
				d.properties = map[string]*defaulter{}
			}
			d.properties[name] = c
		}
	}
	if ap := s.AdditionalProperties; ap != nil && ap.Structural != nil {
		d.additional = newDefaulter(ap.Structural)
		if !ap.Structural.Nullable {
			d.additionalDefault = ap.Structural.Default.Object
		}
	}
	if s.Items != nil {
		d.items = newDefaulter(s.Items)
		if !s.Items.Nullable {
			d.itemsDefault = s.Items.Default.Object
		}
	}
	if d.defaults == nil && d.properties == nil && d.additional == nil && d.additionalDefault == nil && d.items == nil && d.itemsDefault == nil {
		return nil
	}
	return d
}

// apply defaults x as structuraldefaulting.Default(x, d.schema) does.
func (d *defaulter) apply(x any) {
	if d == nil {
		return
	}
	switch x := x.(type) {
	case map[string]any:
		for _, p := range d.defaults {
			if v, found := x[p.name]; !found || v == nil && !p.nullable {
				x[p.name] = runtime.DeepCopyJSONValue(p.value)
			}
		}
		if d.properties == nil && d.additional == nil && d.additionalDefault == nil {
			return
		}
		for k, v := range x {
			if _, declared := d.schema.Properties[k]; declared {
				d.properties[k].apply(v)
				continue
			}
			if d.schema.AdditionalProperties == nil {
				continue
			}
			if v == nil && d.additionalDefault != nil {
				v = runtime.DeepCopyJSONValue(d.additionalDefault)
				x[k] = v
			}
			d.additional.apply(v)
		}
	case []any:
		for i, v := range x {
			if v == nil && d.itemsDefault != nil {
				v = runtime.DeepCopyJSONValue(d.itemsDefault)
				x[i] = v
			}
			d.items.apply(v)
		}
	}
}

// holdsNullField says whether a map in x has a null value: only those are
// what structuraldefaulting.PruneNonNullableNullsWithoutDefaults removes,
// so without one it changes nothing.
func holdsNullField(x any) bool {
	switch x := x.(type) {
	case map[string]any:
		for _, v := range x {
			if v == nil || holdsNullField(v) {
				return true
			}
		}
	case []any:
		for _, v := range x {
			if holdsNullField(v) {
				return true
			}
		}
	}
	return false
}

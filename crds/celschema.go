package crds

import (
	"reflect"
	"strings"
	"sync"
	"unsafe"

	"github.com/google/cel-go/interpreter"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel/model"
	"k8s.io/apiserver/pkg/cel/common"
)

// celSchema is the library's CEL view of a schema node (model.Structural)
// with its children's views built once: the library builds a map of every
// property each time a rule reads a field, a tenth of admission's CPU.
// Every answer is model.Structural's.
type celSchema struct {
	*model.Structural
	properties           func() map[string]common.Schema
	items                func() common.Schema
	additionalProperties func() common.SchemaOrBool
}

var _ common.Schema = (*celSchema)(nil)

func newCELSchema(s *structuralschema.Structural) *celSchema {
	c := &celSchema{Structural: &model.Structural{Structural: s}}
	c.properties = sync.OnceValue(func() map[string]common.Schema {
		if s.Properties == nil {
			return nil // a nil map tells the library "not an object of properties"
		}
		m := make(map[string]common.Schema, len(s.Properties))
		for name, p := range s.Properties {
			m[name] = newCELSchema(&p)
		}
		return m
	})
	c.items = sync.OnceValue(func() common.Schema {
		if s.Items == nil {
			return nil
		}
		return newCELSchema(s.Items)
	})
	c.additionalProperties = sync.OnceValue(func() common.SchemaOrBool {
		if s.AdditionalProperties == nil {
			return nil
		}
		sb := &celSchemaOrBool{allows: s.AdditionalProperties.Bool}
		if s.AdditionalProperties.Structural != nil {
			sb.schema = newCELSchema(s.AdditionalProperties.Structural)
		}
		return sb
	})
	return c
}

func (c *celSchema) Properties() map[string]common.Schema { return c.properties() }
func (c *celSchema) Items() common.Schema                 { return c.items() }
func (c *celSchema) AdditionalProperties() common.SchemaOrBool {
	return c.additionalProperties()
}

// celSchemaOrBool is model.StructuralOrBool with its schema's view built once.
type celSchemaOrBool struct {
	schema *celSchema
	allows bool
}

func (sb *celSchemaOrBool) Schema() common.Schema {
	if sb.schema == nil {
		return nil
	}
	return sb.schema
}

func (sb *celSchemaOrBool) Allows() bool { return sb.allows }

// selfActivation is the library's activation on a create
// (validationActivationWithoutOldSelf): self, and no oldSelf.
type selfActivation struct{ self any }

func (a *selfActivation) ResolveName(name string) (any, bool) {
	if name == cel.ScopedVarName {
		return a.self, true
	}
	return nil, false
}

func (a *selfActivation) Parent() interpreter.Activation { return nil }

// useCELSchema makes v's rules see their value through c's views instead
// of views the library builds per call. The library's Validator takes no
// such option, so its activation factory (an unexported field) is set;
// false when that field is not there or v's rules may read oldSelf (the
// library then keeps its own), so a library upgrade cannot change answers.
func useCELSchema(v *cel.Validator, c *celSchema) bool {
	for _, rule := range v.Schema.XValidations {
		if strings.Contains(rule.Rule, cel.OldScopedVarName) || strings.Contains(rule.MessageExpression, cel.OldScopedVarName) {
			return false
		}
	}
	f := reflect.ValueOf(v).Elem().FieldByName("celActivationFactory")
	factory := func(sts *structuralschema.Structural, obj, _ any) (interpreter.Activation, interpreter.Activation) {
		var a *selfActivation
		if sts == c.Structural.Structural {
			a = &selfActivation{self: common.UnstructuredToVal(obj, c)}
		} else {
			// The resource root's schema, copied with type and object meta each call.
			a = &selfActivation{self: cel.UnstructuredToVal(obj, sts)}
		}
		return a, a
	}
	if !f.IsValid() || f.Type() != reflect.TypeOf(factory) {
		return false
	}
	reflect.NewAt(f.Type(), unsafe.Pointer(f.UnsafeAddr())).Elem().Set(reflect.ValueOf(factory))
	return true
}

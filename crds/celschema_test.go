package crds

import (
	"fmt"
	"reflect"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel/model"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/cel/common"
)

var (
	schemaType       = reflect.TypeFor[common.Schema]()
	schemaListType   = reflect.TypeFor[[]common.Schema]()
	schemaMapType    = reflect.TypeFor[map[string]common.Schema]()
	schemaOrBoolType = reflect.TypeFor[common.SchemaOrBool]()
)

// sameViews reports where got answers any method of common.Schema
// otherwise than want, following every child view to the leaves.
func sameViews(t *testing.T, path string, got, want common.Schema) {
	t.Helper()
	if (got == nil) != (want == nil) {
		t.Errorf("%s: view %v, the library's %v", path, got, want)
		return
	}
	if got == nil {
		return
	}
	for i := range schemaType.NumMethod() {
		m := schemaType.Method(i)
		if m.Type.NumIn() != 0 || m.Name == "WithTypeAndObjectMeta" {
			continue // WithTypeAndObjectMeta is model.Structural's own, unchanged
		}
		at := path + "." + m.Name
		g, gotPanic := call(got, m.Name)
		w, wantPanic := call(want, m.Name)
		if gotPanic || wantPanic {
			if gotPanic != wantPanic {
				t.Errorf("%s: panics %v, the library's %v", at, gotPanic, wantPanic)
			}
			continue // the library's AllOf of a schema without value validations
		}
		switch m.Type.Out(0) {
		case schemaType:
			sameViews(t, at, asSchema(g), asSchema(w))
		case schemaListType:
			gl, wl := g.Interface().([]common.Schema), w.Interface().([]common.Schema)
			if len(gl) != len(wl) || (gl == nil) != (wl == nil) {
				t.Errorf("%s: %d views, the library's %d", at, len(gl), len(wl))
				continue
			}
			for j := range gl {
				sameViews(t, fmt.Sprintf("%s[%d]", at, j), gl[j], wl[j])
			}
		case schemaMapType:
			gm, wm := g.Interface().(map[string]common.Schema), w.Interface().(map[string]common.Schema)
			if len(gm) != len(wm) || (gm == nil) != (wm == nil) {
				t.Errorf("%s: %d properties (nil %v), the library's %d (nil %v)", at, len(gm), gm == nil, len(wm), wm == nil)
				continue
			}
			for k := range wm {
				sameViews(t, at+"."+k, gm[k], wm[k])
			}
		case schemaOrBoolType:
			gs, _ := g.Interface().(common.SchemaOrBool)
			ws, _ := w.Interface().(common.SchemaOrBool)
			if (gs == nil) != (ws == nil) {
				t.Errorf("%s: %v, the library's %v", at, gs, ws)
				continue
			}
			if gs != nil {
				if gs.Allows() != ws.Allows() {
					t.Errorf("%s.Allows: %v, the library's %v", at, gs.Allows(), ws.Allows())
				}
				sameViews(t, at, gs.Schema(), ws.Schema())
			}
		default:
			if !reflect.DeepEqual(g.Interface(), w.Interface()) {
				t.Errorf("%s: %v, the library's %v", at, g.Interface(), w.Interface())
			}
		}
	}
}

// call is s's method name; panicked when it panics, as the library's
// AllOf does on a schema without value validations.
func call(s common.Schema, name string) (out reflect.Value, panicked bool) {
	defer func() {
		if recover() != nil {
			panicked = true
		}
	}()
	return reflect.ValueOf(s).MethodByName(name).Call(nil)[0], false
}

func asSchema(v reflect.Value) common.Schema {
	s, _ := v.Interface().(common.Schema)
	return s
}

// TestCELSchemaViewsAreTheLibrarys: through every node of every CRD of
// both channels, the views CEL reads values by answer what the library's
// do, nil maps and nil children included.
func TestCELSchemaViewsAreTheLibrarys(t *testing.T) {
	for _, channel := range Channels {
		v, err := build(channel)
		if err != nil {
			t.Fatal(err)
		}
		for gvk, ver := range compiledVersions(t, v) {
			sameViews(t, gvk.String(), newCELSchema(ver.structural), &model.Structural{Structural: ver.structural})
		}
	}
	// A schema of no properties and one of an empty map differ to the
	// library (an object of properties or not).
	sameViews(t, "empty", newCELSchema(&structuralschema.Structural{Generic: structuralschema.Generic{Type: "object"}, Properties: map[string]structuralschema.Structural{}}),
		&model.Structural{Structural: &structuralschema.Structural{Generic: structuralschema.Generic{Type: "object"}, Properties: map[string]structuralschema.Structural{}}})
}

// TestCELSchemaIsUsed: the activation factory is installed on a node of
// rules (so the views are used), and refused on one whose rules read oldSelf.
func TestCELSchemaIsUsed(t *testing.T) {
	v, err := Load(Standard)
	if err != nil {
		t.Fatal(err)
	}
	ver := compiledVersions(t, v)[schema.GroupVersionKind{Group: "gateway.networking.k8s.io", Version: "v1", Kind: "HTTPRoute"}]
	spec := ver.cel.Properties["spec"]
	rules := spec
	if !useCELSchema(&rules, newCELSchema(rules.Schema)) {
		t.Error("HTTPRoute spec: the library's activation factory was not replaced")
	}
	transition := spec
	s := *spec.Schema
	s.XValidations = append(s.XValidations[:len(s.XValidations):len(s.XValidations)], apiextensionsv1.ValidationRule{Rule: "self == oldSelf"})
	transition.Schema = &s
	if useCELSchema(&transition, newCELSchema(transition.Schema)) {
		t.Error("a node of a transition rule: the factory was replaced")
	}
}

// compiledVersions is every version of v, compiled.
func compiledVersions(t testing.TB, v *Validator) map[schema.GroupVersionKind]*version {
	t.Helper()
	vs, err := v.compiledVersions()
	if err != nil {
		t.Fatal(err)
	}
	return vs
}

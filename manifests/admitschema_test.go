package manifests

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"

	"github.com/tlsplane/tlsplane/crds"
	"github.com/tlsplane/tlsplane/translator"
)

// TestSchemasHaveGoFields holds what admitted.decode assumes: every field
// a served CRD version's schema keeps through pruning is a field of the
// Go type its objects decode into, and no schema keeps unknown fields,
// so an admitted tree has no key the Go type would drop. It fails on a
// schema property the Go type lacks (a CRD newer than the Go module).
func TestSchemasHaveGoFields(t *testing.T) {
	checked := 0
	for _, channel := range []string{crds.Standard, crds.Experimental} {
		v, err := crds.Load(channel)
		if err != nil {
			t.Fatal(err)
		}
		for key, kind := range kinds {
			if !isGatewayAPI(key.apiVersion) {
				continue
			}
			val, err := (reader{crds: v}).validatorFor(key.apiVersion)
			if err != nil {
				t.Fatal(err)
			}
			s, ok := val.Schema(key.apiVersion, key.kind)
			if !ok {
				continue // not served on this channel
			}
			var typ reflect.Type
			var in translator.Inputs
			_ = kind.read(func(o any) error { typ = reflect.TypeOf(o); return fmt.Errorf("only the type") }, "ns", &in)
			var missing []string
			schemaFieldsIn(s, typ, key.kind, true, &missing)
			for _, m := range missing {
				t.Errorf("%s channel, %s %s: %s", channel, key.apiVersion, key.kind, m)
			}
			checked++
		}
	}
	if checked < 12 {
		t.Fatalf("%d schemas checked, want every Gateway API kind of both channels", checked)
	}
	t.Logf("%d served schemas checked against their Go types", checked)
}

// schemaFieldsIn adds to missing each property of s with no field in typ.
func schemaFieldsIn(s *structuralschema.Structural, typ reflect.Type, path string, root bool, missing *[]string) {
	for typ.Kind() == reflect.Pointer {
		typ = typ.Elem()
	}
	if s.XPreserveUnknownFields {
		*missing = append(*missing, path+": the schema keeps unknown fields")
	}
	switch {
	case len(s.Properties) > 0:
		if typ.Kind() != reflect.Struct {
			*missing = append(*missing, fmt.Sprintf("%s: an object in the schema, %s in Go", path, typ))
			return
		}
		fields := jsonFields(typ)
		names := make([]string, 0, len(s.Properties))
		for name := range s.Properties {
			names = append(names, name)
		}
		slices.Sort(names)
		for _, name := range names {
			if root && name == "metadata" {
				continue // ObjectMeta: the API server keeps only its fields
			}
			ft, ok := fields[name]
			if !ok {
				*missing = append(*missing, fmt.Sprintf("%s.%s: no field of %s", path, name, typ))
				continue
			}
			prop := s.Properties[name]
			schemaFieldsIn(&prop, ft, path+"."+name, false, missing)
		}
	case s.Items != nil:
		if typ.Kind() != reflect.Slice {
			*missing = append(*missing, fmt.Sprintf("%s: a list in the schema, %s in Go", path, typ))
			return
		}
		schemaFieldsIn(s.Items, typ.Elem(), path+"[]", false, missing)
	case s.AdditionalProperties != nil && s.AdditionalProperties.Structural != nil:
		if typ.Kind() != reflect.Map {
			*missing = append(*missing, fmt.Sprintf("%s: a map in the schema, %s in Go", path, typ))
			return
		}
		schemaFieldsIn(s.AdditionalProperties.Structural, typ.Elem(), path+"{}", false, missing)
	}
}

// jsonFields maps the JSON names of struct typ's fields, inlined ones
// included, to their types.
func jsonFields(typ reflect.Type) map[string]reflect.Type {
	out := map[string]reflect.Type{}
	for i := range typ.NumField() {
		f := typ.Field(i)
		name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" {
			continue
		}
		if name == "" && (f.Anonymous || strings.Contains(opts, "inline")) {
			for k, v := range jsonFields(f.Type) {
				out[k] = v
			}
			continue
		}
		if name == "" {
			name = f.Name
		}
		out[name] = f.Type
	}
	return out
}

package input

import (
	"reflect"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// Every field of Inputs has one ObjectKind, in the order of the fields:
// a kind added to Inputs without its row would be dropped by every
// source that walks the table.
func TestObjectKindsAreTheFieldsOfInputs(t *testing.T) {
	fields := reflect.TypeOf(Inputs{})
	if len(ObjectKinds) != fields.NumField() {
		t.Fatalf("%d object kinds for %d fields of Inputs", len(ObjectKinds), fields.NumField())
	}
	for i, k := range ObjectKinds {
		var in Inputs
		o := k.New()
		if !k.Add(&in, o) {
			t.Fatalf("%s: Add refuses its own New", k.Kind())
		}
		f := reflect.ValueOf(in).Field(i)
		if f.Len() != 1 || f.Index(0).Interface() != any(o) {
			t.Errorf("%s went elsewhere than field %d (%s) of Inputs", k.Kind(), i, fields.Field(i).Name)
		}
		if got := k.Objects(&in); len(got) != 1 || got[0] != o {
			t.Errorf("%s: Objects = %v, want the object added", k.Kind(), got)
		}
		if name := reflect.TypeOf(o).Elem().Name(); name != string(k.Kind()) {
			t.Errorf("kind %s holds %s objects", k.Kind(), name)
		}
		for _, other := range ObjectKinds {
			if other.Kind() != k.Kind() && other.Add(&in, o) {
				t.Errorf("%s also takes a %s", other.Kind(), k.Kind())
			}
		}
	}
}

// Each route kind's description reads its own objects: parents, backend
// ports, status, and a resource the Gateway API scheme knows.
func TestRouteKindsDescribeTheirObjects(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := gwv1.Install(scheme); err != nil {
		t.Fatal(err)
	}
	port := gwv1.PortNumber(53)
	ref := gwv1.BackendRef{BackendObjectReference: gwv1.BackendObjectReference{Name: "dns", Port: &port}}
	for _, rk := range RouteKinds {
		if got, ok := RouteKindOf(rk.Kind()); !ok || got.Kind() != rk.Kind() {
			t.Errorf("RouteKindOf(%s) = %v, %v", rk.Kind(), got, ok)
		}
		r := rk.Resource()
		if !scheme.Recognizes(r.GroupVersion().WithKind(string(rk.Kind()))) || r.Resource != strings.ToLower(string(rk.Kind()))+"s" {
			t.Errorf("%s: resource %s is not the kind's", rk.Kind(), r)
		}
		if rk.CRD() != r.Resource+".gateway.networking.k8s.io" {
			t.Errorf("%s: CRD %q", rk.Kind(), rk.CRD())
		}
		o := routeOf(t, rk, ref)
		if p := rk.ParentRefs(o); len(p) != 1 || p[0].Name != "web" {
			t.Errorf("%s: parentRefs = %v, want web", rk.Kind(), p)
		}
		if got := rk.BackendPorts(o); !reflect.DeepEqual(got, []ServicePort{{NameOf("shop", "dns"), 53}}) {
			t.Errorf("%s: backend ports = %v, want shop/dns:53", rk.Kind(), got)
		}
		rk.RouteStatus(o).Parents = []gwv1.RouteParentStatus{{ControllerName: "me"}}
		if st := reflect.ValueOf(o).Elem().FieldByName("Status").Field(0).Interface().(gwv1.RouteStatus); len(st.Parents) != 1 {
			t.Errorf("%s: RouteStatus does not point into the object's status", rk.Kind())
		}
		other := routeKindOtherThan(rk).New()
		if rk.RouteStatus(other) != nil || rk.ParentRefs(other) != nil || rk.BackendPorts(other) != nil {
			t.Errorf("%s reads a %T", rk.Kind(), other)
		}
	}
}

// routeOf is a route of kind rk in namespace shop, with parent web and
// one rule whose backendRef is ref; set by field name, as each kind's
// rules differ in type, not in these fields.
func routeOf(t *testing.T, rk RouteKind, ref gwv1.BackendRef) metav1.Object {
	t.Helper()
	o := rk.New()
	v := reflect.ValueOf(o).Elem()
	o.SetNamespace("shop")
	spec := v.FieldByName("Spec")
	spec.FieldByName("ParentRefs").Set(reflect.ValueOf([]gwv1.ParentReference{{Name: "web"}}))
	rules := spec.FieldByName("Rules")
	rules.Set(reflect.MakeSlice(rules.Type(), 1, 1))
	refs := rules.Index(0).FieldByName("BackendRefs")
	refs.Set(reflect.MakeSlice(refs.Type(), 1, 1))
	if b := refs.Index(0); b.Type() == reflect.TypeOf(ref) {
		b.Set(reflect.ValueOf(ref))
	} else {
		b.FieldByName("BackendRef").Set(reflect.ValueOf(ref))
	}
	return o
}

func routeKindOtherThan(rk RouteKind) RouteKind {
	for _, other := range RouteKinds {
		if other.Kind() != rk.Kind() {
			return other
		}
	}
	return nil
}

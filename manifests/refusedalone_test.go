package manifests

import (
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/tlsplane/tlsplane/translator/input"
)

// An object the API server would refuse is refused alone: the file's
// other objects, a List's admitted items among them, are read, as
// `kubectl apply -f` creates them; the refusal names the refused object
// whole, however long its name.
func TestRefusedObjectLeavesItsSiblingsRead(t *testing.T) {
	long := strings.Repeat("n", 300) // over the 253 a name may have, and over the excerpt bound
	file := `apiVersion: v1
kind: Service
metadata: {name: pay, namespace: shop}
spec: {ports: [{name: https, port: 443}]}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: ` + long + `, namespace: shop}
spec: {}
---
apiVersion: v1
kind: List
items:
- apiVersion: gateway.networking.k8s.io/v1
  kind: HTTPRoute
  metadata: {name: good, namespace: shop}
  spec: {rules: [{backendRefs: [{name: pay, port: 443}]}]}
- apiVersion: gateway.networking.k8s.io/v1
  kind: HTTPRoute
  metadata: {name: many-rules, namespace: shop}
  spec:
    rules: [{}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}]
`
	in, err := Parse("m.yaml", []byte(file), nil)
	var re *RefusedError
	if !errors.As(err, &re) {
		t.Fatalf("error %v, want a *RefusedError", err)
	}
	var read []string
	for _, k := range input.ObjectKinds {
		for _, o := range k.Objects(&in) {
			read = append(read, string(k.Kind())+" "+o.GetNamespace()+"/"+o.GetName())
		}
	}
	if want := []string{"Service shop/pay", "HTTPRoute shop/good"}; !reflect.DeepEqual(read, want) {
		t.Errorf("read %q, want %q", read, want)
	}
	var refused []string
	for _, r := range re.Refusals {
		apiVersion, kind, ns, name := r.Object()
		if apiVersion != "gateway.networking.k8s.io/v1" {
			t.Errorf("refusal %v: apiVersion %q", r, apiVersion)
		}
		if id := kind + " " + ns + "/" + name; !slices.Contains(refused, id) {
			refused = append(refused, id)
		}
	}
	if want := []string{"HTTPRoute shop/" + long, "HTTPRoute shop/many-rules"}; !reflect.DeepEqual(refused, want) {
		t.Errorf("refused %q, want %q", refused, want)
	}
	if r := re.Refusals[0]; r.Name == long {
		t.Errorf("the refusal's Name quotes the 300-character name whole: %v", r)
	}
}

// Any error but refusals comes with no objects: a file that is not YAML
// is not half read.
func TestBrokenFileReadsNothing(t *testing.T) {
	file := `apiVersion: v1
kind: Service
metadata: {name: pay, namespace: shop}
spec: {ports: [{name: https, port: 443}]}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: bad, namespace: shop}
spec: {}
---
kind: [unclosed
`
	in, err := Parse("m.yaml", []byte(file), nil)
	var re *RefusedError
	if err == nil || errors.As(err, &re) {
		t.Fatalf("error %v, want a YAML error", err)
	}
	if len(in.Services) != 0 || len(in.HTTPRoutes) != 0 {
		t.Errorf("read %d Services, %d HTTPRoutes with the error", len(in.Services), len(in.HTTPRoutes))
	}
}

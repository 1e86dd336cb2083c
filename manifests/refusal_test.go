package manifests

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

// A file's refusal lists every refused object, in file order, each at the
// line of its field (or of the field's deepest ancestor the file has).
func TestRefusalsListEveryRefusedObjectAtItsLine(t *testing.T) {
	const file = `apiVersion: v1
kind: Service
metadata: {name: ok, namespace: shop}
spec: {ports: [{name: https, port: 443}]}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: edge, namespace: shop}
spec:
  gatewayClassName: tlsplane
  listeners:
  - name: http
    port: 80
---
apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: ConfigMap
  metadata: {name: ca}
  data:
    "bad key": x
- apiVersion: gateway.networking.k8s.io/v1alpha1
  kind: HTTPRoute
  metadata: {name: old}
`
	_, err := Parse("d/m.yaml", []byte(file), nil)
	var re *RefusedError
	if !errors.As(err, &re) {
		t.Fatalf("error %v, want a *RefusedError", err)
	}
	type got struct {
		Line                  int
		Kind, Namespace, Name string
		Field                 string
	}
	var gots []got
	for _, r := range re.Refusals {
		if r.File != "d/m.yaml" || r.Message == "" {
			t.Errorf("refusal %+v: want the file and a message", r)
		}
		gots = append(gots, got{r.Line, r.Kind, r.Namespace, r.Name, r.Field})
	}
	want := []got{
		// No protocol: the listener's line (the field itself is absent).
		{12, "Gateway", "shop", "edge", "spec.listeners[0].protocol"},
		// The CEL rules skipped: the object's first line.
		{6, "Gateway", "shop", "edge", ""},
		{22, "ConfigMap", "default", "ca", "data[bad key]"},
		{23, "HTTPRoute", "default", "old", "apiVersion"},
	}
	if !reflect.DeepEqual(gots, want) {
		t.Errorf("refusals\n%+v\nwant\n%+v\nerror:\n%v", gots, want, err)
	}
	wantFirst := `d/m.yaml:12: Gateway shop/edge: spec.listeners[0].protocol: Required value`
	if first := re.Refusals[0].String(); first != wantFirst {
		t.Errorf("first line %q, want %q", first, wantFirst)
	}
}

func TestFieldSteps(t *testing.T) {
	for _, c := range []struct {
		in   string
		want []pathStep
	}{
		{"spec.rules[0].matches", []pathStep{{"spec", -1}, {"rules", -1}, {index: 0}, {"matches", -1}}},
		{"data[ca.crt]", []pathStep{{"data", -1}, {"ca.crt", -1}}},
		{"metadata.annotations[a.io/b]", []pathStep{{"metadata", -1}, {"annotations", -1}, {"a.io/b", -1}}},
		{"", nil},
	} {
		if got := fieldSteps(c.in); !reflect.DeepEqual(got, c.want) {
			t.Errorf("fieldSteps(%q) = %+v, want %+v", c.in, got, c.want)
		}
	}
}

// An object over the API server's request body bound is refused before
// it is decoded, as the API server refuses it (413).
func TestObjectOverTheRequestBodyBoundIsRefused(t *testing.T) {
	doc := "apiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\nmetadata: {name: big, namespace: shop}\nspec:\n  rules:\n  - filters:\n    - type: RequestHeaderModifier\n      requestHeaderModifier: {remove: [\"" + strings.Repeat("x", maxRequestBodyBytes) + "\"]}\n"
	_, err := Parse("big.yaml", []byte(doc), nil)
	var re *RefusedError
	if !errors.As(err, &re) || len(re.Refusals) != 1 || re.Refusals[0].Message != "Request entity too large: limit is 3145728" || re.Refusals[0].Line != 1 {
		t.Errorf("error %v, want one refusal of the object at line 1 as too large", err)
	}
}

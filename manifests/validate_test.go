package manifests

import (
	"strings"
	"testing"
)

// Objects the API server would refuse are refused, naming the file, the
// object and the field: a '/' in a namespace would make the cluster
// shop/sneaky/web/80 pass for namespace shop's.
func TestObjectsTheAPIServerWouldRefuseAreRefused(t *testing.T) {
	for _, c := range []struct{ name, doc, want string }{
		{"namespace with a slash", "apiVersion: v1\nkind: Service\nmetadata: {name: web, namespace: shop/sneaky}\n",
			`m.yaml:3: Service shop/sneaky/web: metadata.namespace: Invalid value: "shop/sneaky"`},
		{"service name not a DNS-1035 label", "apiVersion: v1\nkind: Service\nmetadata: {name: 9web, namespace: shop}\n",
			`metadata.name: Invalid value: "9web"`},
		{"configmap name with a slash", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a/b, namespace: shop}\n",
			`m.yaml:3: ConfigMap shop/a/b: metadata.name: Invalid value: "a/b"`},
		{"policy without a name", "apiVersion: gateway.networking.k8s.io/v1\nkind: BackendTLSPolicy\nmetadata: {namespace: shop}\n",
			`metadata.name: Required value`},
		{"upper-case namespace", "apiVersion: v1\nkind: Secret\nmetadata: {name: ca, namespace: Shop}\n",
			`metadata.namespace: Invalid value: "Shop"`},
		{"namespace object with a dot", "apiVersion: v1\nkind: Namespace\nmetadata: {name: shop.example}\n",
			`metadata.name: Invalid value: "shop.example"`},
		{"port out of range", "apiVersion: v1\nkind: Service\nmetadata: {name: web, namespace: shop}\nspec:\n  ports: [{name: https, port: 70000}]\n",
			`spec.ports[0].port: Invalid value: 70000`},
		{"port name with a slash", "apiVersion: v1\nkind: Service\nmetadata: {name: web, namespace: shop}\nspec:\n  ports: [{name: a/b, port: 443}]\n",
			`spec.ports[0].name: Invalid value: "a/b"`},
	} {
		_, err := Parse("m.yaml", []byte(c.doc), nil)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want it to contain %q", c.name, err, c.want)
		}
	}
	in, err := Parse("m.yaml", []byte("apiVersion: v1\nkind: Service\nmetadata: {name: web, namespace: shop-1}\nspec:\n  ports: [{name: https, port: 443}]\n"), nil)
	if err != nil || len(in.Services) != 1 {
		t.Fatalf("a valid Service: %v, %d Services", err, len(in.Services))
	}
}

// Misspelled fields are reported as kubectl apply --validate=strict does:
// file, object and field; the object is still read.
func TestUnknownFieldsAreWarnedAbout(t *testing.T) {
	doc := `apiVersion: gateway.networking.k8s.io/v1
kind: BackendTLSPolicy
metadata: {name: pay, namespace: shop, lables: {a: b}}
spec:
  targetRefs: [{group: "", kind: Service, name: payments}]
  validation:
    hostname: payments.shop.example
    hostnme: payments.shop.example
    caCertificateRef: [{group: "", kind: ConfigMap, name: ca}]
    wellKnownCACertificates: System
`
	var warnings []string
	in, err := Parse("m/pay.yaml", []byte(doc), func(w string) { warnings = append(warnings, w) })
	if err != nil {
		t.Fatal(err)
	}
	if len(in.Policies) != 1 {
		t.Fatalf("%d policies, want the policy read", len(in.Policies))
	}
	got := strings.Join(warnings, "\n")
	for _, want := range []string{
		`m/pay.yaml: document 1 (gateway.networking.k8s.io/v1 BackendTLSPolicy shop/pay): unknown field "spec.validation.hostnme"`,
		`m/pay.yaml: document 1 (gateway.networking.k8s.io/v1 BackendTLSPolicy shop/pay): unknown field "spec.validation.caCertificateRef"`,
		`unknown field "metadata.lables"`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("warnings lack %q; got:\n%s", want, got)
		}
	}
	// Field names are case-sensitive, as for the API server.
	warnings = nil
	if _, err := Parse("m/case.yaml", []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: ca, namespace: shop}\nData: {ca.crt: x}\n"), func(w string) { warnings = append(warnings, w) }); err != nil {
		t.Fatal(err)
	}
	if len(warnings) != 1 || !strings.Contains(warnings[0], `unknown field "Data"`) {
		t.Errorf("warnings %q, want one for Data", warnings)
	}
}

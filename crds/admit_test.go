package crds

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/yaml"
)

// object decodes a YAML object as the API server sees a request body.
func object(t testing.TB, doc string) map[string]any {
	t.Helper()
	data, err := yaml.YAMLToJSON([]byte(doc))
	if err != nil {
		t.Fatalf("test object: %v", err)
	}
	obj, err := Decode(data)
	if err != nil {
		t.Fatalf("test object: %v", err)
	}
	return obj
}

// crdText is the embedded CRD file of channel named by suffix, so that
// expected messages are checked against the CRD rather than guessed.
func crdText(t *testing.T, channel, suffix string) string {
	t.Helper()
	named, err := channelFiles(channel)
	if err != nil {
		t.Fatal(err)
	}
	for name, data := range named {
		if strings.HasSuffix(name, suffix) {
			return string(data)
		}
	}
	t.Fatalf("no CRD %s/*%s", channel, suffix)
	return ""
}

// at is the value at a path of keys and indexes.
func at(t *testing.T, obj any, path ...any) any {
	t.Helper()
	for _, p := range path {
		switch p := p.(type) {
		case string:
			m, ok := obj.(map[string]any)
			if !ok {
				t.Fatalf("at %v: not an object at %q", path, p)
			}
			obj = m[p]
		case int:
			l, ok := obj.([]any)
			if !ok || p >= len(l) {
				t.Fatalf("at %v: no index %d", path, p)
			}
			obj = l[p]
		}
	}
	return obj
}

func TestAdmitAcceptsAndDefaults(t *testing.T) {
	tests := []struct {
		name     string
		doc      string
		path     []any
		want     any
		warnings []string
	}{
		{
			name: "an HTTPRoute rule without matches matches PathPrefix /",
			doc: `
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: shop, namespace: default}
spec:
  parentRefs: [{name: gw}]
  rules:
  - backendRefs: [{name: shop, port: 8080}]`,
			path: []any{"spec", "rules", 0, "matches"},
			want: []any{map[string]any{"path": map[string]any{"type": "PathPrefix", "value": "/"}}},
		},
		{
			name: "an HTTPRoute parentRef defaults to a Gateway of the Gateway API group",
			doc: `
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: shop, namespace: default}
spec:
  parentRefs: [{name: gw}]`,
			path: []any{"spec", "parentRefs", 0},
			want: map[string]any{"name": "gw", "group": "gateway.networking.k8s.io", "kind": "Gateway"},
		},
		{
			name: "an HTTPRoute backendRef defaults to a core Service of weight 1",
			doc: `
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: shop, namespace: default}
spec:
  rules:
  - backendRefs: [{name: shop, port: 8080}]`,
			path: []any{"spec", "rules", 0, "backendRefs", 0},
			want: map[string]any{"name": "shop", "port": int64(8080), "group": "", "kind": "Service", "weight": int64(1)},
		},
		{
			name: "a Gateway listener allows routes from its namespace",
			doc: `
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw, namespace: default}
spec:
  gatewayClassName: tlsplane
  listeners: [{name: http, port: 80, protocol: HTTP}]`,
			path: []any{"spec", "listeners", 0, "allowedRoutes"},
			want: map[string]any{"namespaces": map[string]any{"from": "Same"}},
		},
		{
			name: "an unknown field is dropped with the API server's warning",
			doc: `
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw, namespace: default}
spec:
  gatewayClassName: tlsplane
  colour: blue
  listeners: [{name: http, port: 80, protocol: HTTP}]`,
			path:     []any{"spec", "colour"},
			want:     nil,
			warnings: []string{`unknown field "spec.colour"`},
		},
		{
			name: "status is dropped on create",
			doc: `
apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: tlsplane}
spec: {controllerName: tlsplane.io/gateway}
status: {conditions: []}`,
			path: []any{"status"},
			want: nil,
		},
		{
			name: "a cluster-scoped object keeps no namespace",
			doc: `
apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: tlsplane, namespace: shop}
spec: {controllerName: tlsplane.io/gateway}`,
			path: []any{"metadata", "namespace"},
			want: nil,
		},
	}
	v, err := Load(Experimental)
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			obj := object(t, tt.doc)
			errs, warnings, err := v.Admit(obj)
			if err != nil || len(errs) > 0 {
				t.Fatalf("Admit: %v %v", err, errs)
			}
			if got := at(t, obj, tt.path...); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("at %v: %#v, want %#v", tt.path, got, tt.want)
			}
			if !reflect.DeepEqual(warnings, tt.warnings) {
				t.Errorf("warnings %q, want %q", warnings, tt.warnings)
			}
		})
	}
}

// httpRouteWithRules is an HTTPRoute of n rules.
func httpRouteWithRules(n int) string {
	doc := "apiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\nmetadata: {name: shop, namespace: default}\nspec:\n  rules:\n"
	for range n {
		doc += "  - backendRefs: [{name: shop, port: 8080}]\n"
	}
	return doc
}

func TestAdmitRefuses(t *testing.T) {
	tests := []struct {
		name, channel, doc string
		// want is the first error's path, type and message (ErrorBody's
		// detail); fromCRD says the message is quoted from this CRD file.
		field   string
		typ     field.ErrorType
		message string
		fromCRD string
	}{
		{
			name: "a 300-character name",
			doc: `
apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: ` + strings.Repeat("a", 300) + `}
spec: {controllerName: tlsplane.io/gateway}`,
			field: "metadata.name", typ: field.ErrorTypeInvalid, message: "must be no more than 253 characters",
		},
		{
			name: "a namespaced object without a namespace",
			doc: `
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw}
spec:
  gatewayClassName: tlsplane
  listeners: [{name: http, port: 80, protocol: HTTP}]`,
			field: "metadata.namespace", typ: field.ErrorTypeRequired,
		},
		{
			name: "a listener without a protocol",
			doc: `
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw, namespace: default}
spec:
  gatewayClassName: tlsplane
  listeners: [{name: http, port: 80}]`,
			field: "spec.listeners[0].protocol", typ: field.ErrorTypeRequired,
		},
		{
			name:  "an HTTPRoute of 17 rules",
			doc:   httpRouteWithRules(17),
			field: "spec.rules", typ: field.ErrorTypeTooMany, message: "must have at most 16 items",
		},
		{
			name: "a BackendTLSPolicy with both caCertificateRefs and wellKnownCACertificates",
			doc: `
apiVersion: gateway.networking.k8s.io/v1
kind: BackendTLSPolicy
metadata: {name: pay, namespace: shop}
spec:
  targetRefs: [{group: "", kind: Service, name: pay}]
  validation:
    hostname: pay.shop
    caCertificateRefs: [{group: "", kind: ConfigMap, name: ca}]
    wellKnownCACertificates: System`,
			field: "spec.validation", typ: field.ErrorTypeInvalid,
			message: "must not contain both CACertificateRefs and WellKnownCACertificates", fromCRD: "_backendtlspolicies.yaml",
		},
		{
			name: "two listeners of one name",
			doc: `
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw, namespace: default}
spec:
  gatewayClassName: tlsplane
  listeners:
  - {name: http, port: 80, protocol: HTTP}
  - {name: http, port: 81, protocol: HTTP}`,
			field: "spec.listeners[1]", typ: field.ErrorTypeDuplicate,
		},
		{
			name: "a listener name twice, by the CEL rule",
			doc: `
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw, namespace: default}
spec:
  gatewayClassName: tlsplane
  listeners:
  - {name: http, port: 80, protocol: HTTP}
  - {name: http, port: 81, protocol: HTTP}`,
			field: "spec.listeners", typ: field.ErrorTypeInvalid,
			message: "Listener name must be unique within the Gateway", fromCRD: "_gateways.yaml",
		},
		{
			name:    "a policy targeting one Service twice without sectionName, standard channel",
			channel: Standard,
			doc: `
apiVersion: gateway.networking.k8s.io/v1
kind: BackendTLSPolicy
metadata: {name: pay, namespace: shop}
spec:
  targetRefs:
  - {group: "", kind: Service, name: pay}
  - {group: "", kind: Service, name: pay, sectionName: https}
  validation: {hostname: pay.shop, wellKnownCACertificates: System}`,
			field: "spec.targetRefs", typ: field.ErrorTypeInvalid,
			message: "sectionName must be specified when targetRefs includes 2 or more references to the same target", fromCRD: "_backendtlspolicies.yaml",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			channel := tt.channel
			if channel == "" {
				channel = Experimental
			}
			v, err := Load(channel)
			if err != nil {
				t.Fatal(err)
			}
			if tt.fromCRD != "" && !strings.Contains(strings.Join(strings.Fields(crdText(t, channel, tt.fromCRD)), " "), tt.message) {
				t.Fatalf("the %s CRD has no message %q", tt.fromCRD, tt.message)
			}
			errs, _, err := v.Admit(object(t, tt.doc))
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range errs {
				if e.Field == tt.field && e.Type == tt.typ && strings.Contains(e.ErrorBody(), tt.message) {
					return
				}
			}
			t.Errorf("no %s error at %s with %q; got %v", tt.typ, tt.field, tt.message, errs)
		})
	}
}

func TestAdmitTooManyRulesSkipsCEL(t *testing.T) {
	v, err := Load(Experimental)
	if err != nil {
		t.Fatal(err)
	}
	errs, _, _ := v.Admit(object(t, httpRouteWithRules(17)))
	last := errs[len(errs)-1]
	if !strings.Contains(last.Error(), "some validation rules were not checked because the object was invalid") {
		t.Errorf("last error %q, want the API server's note that CEL rules were skipped", last)
	}
}

func TestAdmitNotServed(t *testing.T) {
	tests := []struct {
		name, channel, apiVersion, kind string
		served                          []string
	}{
		{"an HTTPRoute version no CRD has", Experimental, "gateway.networking.k8s.io/v1alpha1", "HTTPRoute", []string{"v1", "v1beta1"}},
		{"XBackend in the standard channel", Standard, "gateway.networking.x-k8s.io/v1alpha1", "XBackend", nil},
		{"a core kind", Experimental, "v1", "Service", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, err := Load(tt.channel)
			if err != nil {
				t.Fatal(err)
			}
			_, _, err = v.Admit(map[string]any{"apiVersion": tt.apiVersion, "kind": tt.kind, "metadata": map[string]any{"name": "a", "namespace": "b"}})
			var ns *NotServedError
			if !errors.As(err, &ns) || !errors.Is(err, ErrNotServed) {
				t.Fatalf("err %v, want a NotServedError", err)
			}
			if !reflect.DeepEqual(ns.Served, tt.served) {
				t.Errorf("served %q, want %q", ns.Served, tt.served)
			}
			if v.Serves(tt.apiVersion, tt.kind) {
				t.Error("Serves says yes")
			}
		})
	}
}

func TestAdmitWarnsOfDeprecatedVersion(t *testing.T) {
	v, err := Load(Experimental)
	if err != nil {
		t.Fatal(err)
	}
	errs, warnings, err := v.Admit(object(t, `
apiVersion: gateway.networking.k8s.io/v1alpha2
kind: TCPRoute
metadata: {name: db, namespace: default}
spec:
  parentRefs: [{name: gw}]
  rules: [{backendRefs: [{name: db, port: 5432}]}]`))
	if err != nil || len(errs) > 0 {
		t.Fatalf("Admit: %v %v", err, errs)
	}
	if len(warnings) != 1 || !strings.HasPrefix(warnings[0], "The v1alpha2 version of TCPRoute has been deprecated") {
		t.Fatalf("warnings %q, want the CRD's deprecationWarning", warnings)
	}
	if !strings.Contains(strings.Join(strings.Fields(crdText(t, Experimental, "_tcproutes.yaml")), " "), warnings[0]) {
		t.Errorf("warning %q is not the CRD's", warnings[0])
	}
}

func TestLoadUnknownChannel(t *testing.T) {
	if _, err := Load("nightly"); err == nil || !strings.Contains(err.Error(), `"nightly"`) {
		t.Errorf("Load(nightly): %v", err)
	}
}

func TestLoadIsShared(t *testing.T) {
	a, err := Load(Standard)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := Load(Standard)
	if a != b {
		t.Error("two Validators for one channel")
	}
	if a.Serves("gateway.networking.x-k8s.io/v1alpha1", "XBackend") || !a.Serves("gateway.networking.k8s.io/v1", "HTTPRoute") {
		t.Error("standard channel serves the wrong kinds")
	}
}

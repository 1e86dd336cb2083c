package crds

import (
	"fmt"
	"strings"
	"testing"

	apiservervalidation "k8s.io/apiextensions-apiserver/pkg/apiserver/validation"
)

// TestSchemaSplitAgreesWithLibrary: after the memo has seen valid
// objects, the split says valid exactly when the library finds no schema
// error, for values valid and invalid at every depth.
func TestSchemaSplitAgreesWithLibrary(t *testing.T) {
	gateway := func(name, listeners string) string {
		return fmt.Sprintf("apiVersion: gateway.networking.k8s.io/v1\nkind: Gateway\nmetadata: {name: %s, namespace: infra}\nspec:\n  gatewayClassName: tlsplane\n  listeners: %s\n", name, listeners)
	}
	tests := []struct {
		name, doc string
		valid     bool
	}{
		{"a route", route("s1", `[{name: gw, port: 443}]`, "["+goodRule+"]"), true},
		{"the same parentRefs in another route", route("s2", `[{name: gw, port: 443}]`, "["+goodRule+"]"), true},
		{"a parentRef port out of range, its other fields seen", route("s3", `[{name: gw, port: 99999}]`, "["+goodRule+"]"), false},
		{"a backendRef weight below zero", route("s4", `[{name: gw}]`, `[{backendRefs: [{name: pay, port: 443, weight: -1}]}]`), false},
		{"a bad match type under a seen rule shape", route("s5", `[{name: gw}]`, `[{matches: [{path: {type: Regexy, value: /api}}], backendRefs: [{name: pay, port: 443}]}]`), false},
		{"a hostname of a bad pattern", `
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: s6, namespace: shop}
spec:
  hostnames: ["-bad-"]`, false},
		{"a Gateway", gateway("g1", `[{name: http, port: 80, protocol: HTTP}]`), true},
		{"a Gateway of a port 0", gateway("g2", `[{name: http, port: 0, protocol: HTTP}]`), false},
		{"a Gateway without listeners", gateway("g3", `[]`), false},
		{"a Gateway's listener of a wrong type", gateway("g4", `[{name: http, port: "eighty", protocol: HTTP}]`), false},
		// A Gateway's addresses are of oneOf: the one node still
		// validated whole by the library and remembered by its value.
		{"a Gateway's address", gateway("g8", `[{name: http, port: 80, protocol: HTTP}]`) + "  addresses: [{type: IPAddress, value: 10.0.0.1}]\n", true},
		{"a Gateway's address too long, another seen", gateway("g9", `[{name: http, port: 80, protocol: HTTP}]`) + "  addresses: [{type: IPAddress, value: " + strings.Repeat("a", 254) + "}]\n", false},
		// Scalars an object validator asks its children's validators
		// for (built once a node): additional properties and list items.
		{"a Gateway's infrastructure labels", gateway("g5", `[{name: http, port: 80, protocol: HTTP}]`) + "  infrastructure: {labels: {team: shop, tier: web}}\n", true},
		{"a Gateway's infrastructure label of a bad value", gateway("g6", `[{name: http, port: 80, protocol: HTTP}]`) + "  infrastructure: {labels: {team: shop, tier: -web-}}\n", false},
		{"a Gateway's infrastructure annotation too long", gateway("g7", `[{name: http, port: 80, protocol: HTTP}]`) + "  infrastructure: {annotations: {a: " + strings.Repeat("x", 4097) + "}}\n", false},
		{"a route's second hostname bad, its first seen", `
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: s7, namespace: shop}
spec:
  hostnames: [s1.example.com, "-bad-"]`, false},
		{"a route's hostnames, each seen", `
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: s8, namespace: shop}
spec:
  hostnames: [s1.example.com, s2.example.com]`, true},
	}
	for _, channel := range Channels {
		t.Run(channel, func(t *testing.T) {
			v, err := Load(channel)
			if err != nil {
				t.Fatal(err)
			}
			for _, tt := range tests {
				admitted(t, v, tt.doc)
			}
			for _, tt := range tests {
				t.Run(tt.name, func(t *testing.T) {
					ver, obj := admitted(t, v, tt.doc)
					lib := apiservervalidation.ValidateCustomResource(nil, obj, ver.schema)
					split := ver.schemaTree.valid(ver.memo, obj)
					if split != (len(lib) == 0) || split != tt.valid {
						t.Errorf("split says valid %v, the library's errors %v, want valid %v", split, lib, tt.valid)
					}
				})
			}
		})
	}
}

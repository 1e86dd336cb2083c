package manifests

import (
	"strings"
	"testing"

	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// The Gateway API kinds and Namespaces are read into their Inputs fields:
// namespaced ones default to "default", cluster-scoped ones keep no
// namespace even when the file gives one, and a v1beta1 ReferenceGrant
// becomes a v1 one.
func TestParseGatewayAPIKinds(t *testing.T) {
	const doc = `apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: tlsplane, namespace: ignored}
spec: {controllerName: tlsplane.io/controller}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: edge, namespace: shop}
spec:
  gatewayClassName: tlsplane
  listeners: [{name: http, protocol: HTTP, port: 10080}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: pay}
spec:
  parentRefs: [{name: edge, namespace: shop, sectionName: http}]
  hostnames: [pay.shop.example]
  rules: [{backendRefs: [{name: payments, port: 443, weight: 3}]}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: GRPCRoute
metadata: {name: checkout, namespace: shop}
spec:
  parentRefs: [{name: edge, sectionName: http}]
  hostnames: [grpc.shop.example]
  rules: [{matches: [{method: {service: shop.Checkout, method: Pay}}], backendRefs: [{name: checkout, port: 9000, weight: 2}]}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: TLSRoute
metadata: {name: vault, namespace: shop}
spec:
  parentRefs: [{name: edge, sectionName: tls}]
  hostnames: [vault.shop.example]
  rules: [{backendRefs: [{name: vault, port: 8443, weight: 4}]}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: TCPRoute
metadata: {name: db}
spec:
  parentRefs: [{name: edge, namespace: shop, sectionName: tcp}]
  rules: [{backendRefs: [{name: postgres, port: 5432, weight: 5}]}]
---
apiVersion: gateway.networking.k8s.io/v1beta1
kind: ReferenceGrant
metadata: {name: from-default, namespace: shop}
spec:
  from: [{group: gateway.networking.k8s.io, kind: HTTPRoute, namespace: default}]
  to: [{group: "", kind: Service}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: ReferenceGrant
metadata: {name: certs, namespace: certs}
spec:
  from: [{group: gateway.networking.k8s.io, kind: Gateway, namespace: shop}]
  to: [{group: "", kind: Secret}]
---
apiVersion: v1
kind: Namespace
metadata: {name: shop, labels: {tier: edge}}
---
apiVersion: gateway.networking.k8s.io/v1beta1
kind: HTTPRoute
metadata: {name: old, namespace: shop}
spec: {parentRefs: [{name: edge}]}
---
apiVersion: gateway.networking.k8s.io/v1
kind: UDPRoute
metadata: {name: dns}
spec:
  parentRefs: [{name: edge, namespace: shop, sectionName: dns}]
  rules: [{backendRefs: [{name: coredns, port: 53, weight: 2}]}]
`
	var warnings []string
	in, err := Parse("gw.yaml", []byte(doc), func(w string) { warnings = append(warnings, w) })
	if err != nil {
		t.Fatal(err)
	}
	if len(in.GatewayClasses) != 1 || in.GatewayClasses[0].Namespace != "" || in.GatewayClasses[0].Spec.ControllerName != "tlsplane.io/controller" {
		t.Errorf("gatewayclasses = %+v, want tlsplane without a namespace", in.GatewayClasses)
	}
	if len(in.Gateways) != 1 || in.Gateways[0].Namespace != "shop" || in.Gateways[0].Spec.Listeners[0].Port != 10080 {
		t.Errorf("gateways = %+v, want shop/edge listening on 10080", in.Gateways)
	}
	if len(in.HTTPRoutes) != 1 || in.HTTPRoutes[0].Namespace != "default" ||
		*in.HTTPRoutes[0].Spec.Rules[0].BackendRefs[0].Weight != 3 || *in.HTTPRoutes[0].Spec.ParentRefs[0].SectionName != "http" {
		t.Errorf("httproutes = %+v, want default/pay with its parentRef section and weight", in.HTTPRoutes)
	}
	if len(in.GRPCRoutes) != 1 || in.GRPCRoutes[0].Namespace != "shop" || *in.GRPCRoutes[0].Spec.Rules[0].BackendRefs[0].Weight != 2 ||
		*in.GRPCRoutes[0].Spec.Rules[0].Matches[0].Method.Service != "shop.Checkout" || in.GRPCRoutes[0].Spec.Hostnames[0] != "grpc.shop.example" {
		t.Errorf("grpcroutes = %+v, want shop/checkout with its method match, hostname and weight", in.GRPCRoutes)
	}
	if len(in.TLSRoutes) != 1 || in.TLSRoutes[0].Namespace != "shop" || *in.TLSRoutes[0].Spec.Rules[0].BackendRefs[0].Weight != 4 ||
		*in.TLSRoutes[0].Spec.ParentRefs[0].SectionName != "tls" || in.TLSRoutes[0].Spec.Hostnames[0] != "vault.shop.example" {
		t.Errorf("tlsroutes = %+v, want shop/vault with its parentRef section, hostname and weight", in.TLSRoutes)
	}
	if len(in.TCPRoutes) != 1 || in.TCPRoutes[0].Namespace != "default" || *in.TCPRoutes[0].Spec.Rules[0].BackendRefs[0].Weight != 5 ||
		in.TCPRoutes[0].Spec.Rules[0].BackendRefs[0].Name != "postgres" || *in.TCPRoutes[0].Spec.ParentRefs[0].SectionName != "tcp" {
		t.Errorf("tcproutes = %+v, want default/db with its parentRef section, backend and weight", in.TCPRoutes)
	}
	if len(in.UDPRoutes) != 1 || in.UDPRoutes[0].Namespace != "default" || *in.UDPRoutes[0].Spec.Rules[0].BackendRefs[0].Weight != 2 ||
		in.UDPRoutes[0].Spec.Rules[0].BackendRefs[0].Name != "coredns" || *in.UDPRoutes[0].Spec.ParentRefs[0].SectionName != "dns" {
		t.Errorf("udproutes = %+v, want default/dns with its parentRef section, backend and weight", in.UDPRoutes)
	}
	if len(in.ReferenceGrants) != 2 {
		t.Fatalf("referencegrants = %d, want 2", len(in.ReferenceGrants))
	}
	for _, g := range in.ReferenceGrants {
		if g.APIVersion != gwv1.GroupVersion.String() || g.Kind != "ReferenceGrant" || len(g.Spec.From) != 1 || len(g.Spec.To) != 1 {
			t.Errorf("referencegrant %s/%s = %+v, want a v1 ReferenceGrant with its from and to", g.Namespace, g.Name, g)
		}
	}
	if in.ReferenceGrants[0].Name != "from-default" || in.ReferenceGrants[0].Spec.From[0].Namespace != "default" {
		t.Errorf("v1beta1 referencegrant = %+v", in.ReferenceGrants[0])
	}
	if len(in.Namespaces) != 1 || in.Namespaces[0].Namespace != "" || in.Namespaces[0].Labels["tier"] != "edge" {
		t.Errorf("namespaces = %+v, want shop with its labels", in.Namespaces)
	}
	if len(warnings) != 1 || !strings.Contains(warnings[0], "gw.yaml: document 10 (gateway.networking.k8s.io/v1beta1 HTTPRoute shop/old): skipped: tlsplane reads only") ||
		!strings.Contains(warnings[0], "HTTPRoute, GRPCRoute, TLSRoute, TCPRoute, UDPRoute, ListenerSet and ReferenceGrant") || !strings.Contains(warnings[0], "Namespace") {
		t.Errorf("warnings = %q, want one naming the v1beta1 HTTPRoute and what is read", warnings)
	}
}

// A cluster-scoped object's error names it without a namespace.
func TestParseClusterScopedErrorNamesTheObject(t *testing.T) {
	_, err := Parse("bad.yaml", []byte("apiVersion: gateway.networking.k8s.io/v1\nkind: GatewayClass\nmetadata: {name: tlsplane}\nspec: {controllerName: 7}\n"), nil)
	if err == nil || !strings.Contains(err.Error(), "bad.yaml:4: GatewayClass tlsplane: spec.controllerName: ") {
		t.Errorf("error = %v, want it to name the GatewayClass without a namespace", err)
	}
}

// Duplicates of the new kinds are dropped like the others (warnings come
// kind by kind, within each file); a Namespace or
// GatewayClass is keyed by name alone, and kinds do not collide.
func TestMergeGatewayAPIKinds(t *testing.T) {
	parse := func(src, doc string) Part {
		t.Helper()
		in, err := Parse(src, []byte(doc), nil)
		if err != nil {
			t.Fatal(err)
		}
		return Part{Source: src, Inputs: in}
	}
	const first = `apiVersion: v1
kind: Namespace
metadata: {name: shop, labels: {v: first}}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: shop, namespace: shop, labels: {v: first}}
spec: {gatewayClassName: tlsplane, listeners: [{name: http, port: 80, protocol: HTTP}]}
---
apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: shop, labels: {v: first}}
spec: {controllerName: tlsplane.io/controller}
---
apiVersion: gateway.networking.k8s.io/v1
kind: GRPCRoute
metadata: {name: shop, namespace: shop, labels: {v: first}}
spec: {rules: [{backendRefs: [{name: shop, port: 9000}]}]}
---
apiVersion: gateway.networking.k8s.io/v1
kind: TLSRoute
metadata: {name: shop, namespace: shop, labels: {v: first}}
spec: {hostnames: [shop.example], rules: [{backendRefs: [{name: shop, port: 443}]}]}
---
apiVersion: gateway.networking.k8s.io/v1
kind: TCPRoute
metadata: {name: shop, namespace: shop, labels: {v: first}}
spec: {rules: [{backendRefs: [{name: shop, port: 5432}]}]}
`
	const second = `apiVersion: v1
kind: Namespace
metadata: {name: shop, namespace: elsewhere, labels: {v: second}}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: shop, namespace: shop, labels: {v: second}}
spec: {gatewayClassName: tlsplane, listeners: [{name: http, port: 80, protocol: HTTP}]}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: shop, namespace: shop}
spec: {rules: [{backendRefs: [{name: shop, port: 443}]}]}
---
apiVersion: gateway.networking.k8s.io/v1
kind: GRPCRoute
metadata: {name: shop, namespace: shop, labels: {v: second}}
spec: {rules: [{backendRefs: [{name: shop, port: 9000}]}]}
---
apiVersion: gateway.networking.k8s.io/v1
kind: TLSRoute
metadata: {name: shop, namespace: shop, labels: {v: second}}
spec: {hostnames: [shop.example], rules: [{backendRefs: [{name: shop, port: 443}]}]}
---
apiVersion: gateway.networking.k8s.io/v1
kind: TCPRoute
metadata: {name: shop, namespace: shop, labels: {v: second}}
spec: {rules: [{backendRefs: [{name: shop, port: 5432}]}]}
---
apiVersion: gateway.networking.k8s.io/v1beta1
kind: ReferenceGrant
metadata: {name: shop, namespace: shop}
spec: {from: [{group: gateway.networking.k8s.io, kind: HTTPRoute, namespace: shop}], to: [{group: "", kind: Service}]}
---
apiVersion: gateway.networking.k8s.io/v1
kind: ReferenceGrant
metadata: {name: shop, namespace: shop}
spec: {from: [{group: gateway.networking.k8s.io, kind: HTTPRoute, namespace: shop}], to: [{group: "", kind: Service}]}
`
	var warnings []string
	in := Merge([]Part{parse("a.yaml", first), parse("b.yaml", second)}, func(w string) { warnings = append(warnings, w) })
	if len(in.Namespaces) != 1 || in.Namespaces[0].Labels["v"] != "first" {
		t.Errorf("namespaces = %+v, want the first shop", in.Namespaces)
	}
	if len(in.Gateways) != 1 || in.Gateways[0].Labels["v"] != "first" {
		t.Errorf("gateways = %+v, want the first shop/shop", in.Gateways)
	}
	if len(in.GatewayClasses) != 1 || len(in.HTTPRoutes) != 1 || len(in.ReferenceGrants) != 1 {
		t.Errorf("got %d classes, %d routes, %d grants; want 1 each", len(in.GatewayClasses), len(in.HTTPRoutes), len(in.ReferenceGrants))
	}
	if len(in.GRPCRoutes) != 1 || in.GRPCRoutes[0].Labels["v"] != "first" {
		t.Errorf("grpcroutes = %+v, want the first shop/shop (an HTTPRoute of that name does not collide)", in.GRPCRoutes)
	}
	if len(in.TLSRoutes) != 1 || in.TLSRoutes[0].Labels["v"] != "first" || len(in.TCPRoutes) != 1 || in.TCPRoutes[0].Labels["v"] != "first" {
		t.Errorf("tlsroutes = %+v, tcproutes = %+v; want the first shop/shop of each (routes of other kinds of that name do not collide)", in.TLSRoutes, in.TCPRoutes)
	}
	want := []string{
		"b.yaml: Gateway shop/shop ignored: already defined in a.yaml",
		"b.yaml: GRPCRoute shop/shop ignored: already defined in a.yaml",
		"b.yaml: TLSRoute shop/shop ignored: already defined in a.yaml",
		"b.yaml: TCPRoute shop/shop ignored: already defined in a.yaml",
		"b.yaml: ReferenceGrant shop/shop ignored: already defined in b.yaml",
		"b.yaml: Namespace shop ignored: already defined in a.yaml",
	}
	if strings.Join(warnings, "\n") != strings.Join(want, "\n") {
		t.Errorf("warnings:\n%s\nwant:\n%s", strings.Join(warnings, "\n"), strings.Join(want, "\n"))
	}
}

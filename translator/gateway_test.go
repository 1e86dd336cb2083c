package translator_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	hcmv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/http_connection_manager/v3"
	tlsv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/transport_sockets/tls/v3"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
	gwxv1a1 "sigs.k8s.io/gateway-api/apisx/v1alpha1"
	"sigs.k8s.io/yaml"

	"github.com/tlsplane/tlsplane/translator"
	"github.com/tlsplane/tlsplane/translator/translatortest"
)

// gatewayWorld is a Gateway with an HTTP and an HTTPS listener, routes to
// a Service with a BackendTLSPolicy, to another namespace with and without
// a ReferenceGrant, and a Service no route reaches with its own policy.
const gatewayWorld = `
apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: tlsplane}
spec: {controllerName: tlsplane.io/controller}
---
apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: other}
spec: {controllerName: example.com/other}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: edge, namespace: shop, generation: 3}
spec:
  gatewayClassName: tlsplane
  addresses: [{type: IPAddress, value: 192.0.2.10}]
  listeners:
  - {name: http, protocol: HTTP, port: 10080}
  - name: https
    protocol: HTTPS
    port: 10443
    hostname: "*.shop.example"
    tls: {certificateRefs: [{name: edge-cert}]}
  - {name: quic, protocol: example.com/quic, port: 10090}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: theirs, namespace: shop}
spec:
  gatewayClassName: other
  listeners: [{name: http, protocol: HTTP, port: 80}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: pay, namespace: shop}
spec:
  parentRefs: [{name: edge}, {name: theirs}]
  hostnames: [pay.shop.example]
  rules:
  - matches: [{path: {type: PathPrefix, value: /pay/}}]
    filters:
    - type: RequestHeaderModifier
      requestHeaderModifier: {add: [{name: x-gateway, value: edge}]}
    backendRefs:
    - {name: payments, port: 8443, weight: 80}
    - {name: missing, port: 80, weight: 20}
  - matches: [{path: {type: Exact, value: /health}}]
    backendRefs: [{name: payments, port: 8443}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: ledger, namespace: shop}
spec:
  parentRefs: [{name: edge, sectionName: http}]
  rules:
  - backendRefs: [{name: ledger, namespace: bank, port: 443}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: vault, namespace: shop}
spec:
  parentRefs: [{name: edge, sectionName: http}]
  hostnames: [vault.shop.example]
  rules:
  - backendRefs: [{name: vault, namespace: bank, port: 443}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: stray, namespace: other}
spec:
  parentRefs: [{name: edge, namespace: shop}]
  rules: [{backendRefs: [{name: anything, port: 80}]}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: elsewhere, namespace: shop}
spec:
  parentRefs: [{name: edge, sectionName: https}]
  hostnames: [shop.other.example]
  rules: [{backendRefs: [{name: payments, port: 8443}]}]
---
apiVersion: gateway.networking.k8s.io/v1beta1
kind: ReferenceGrant
metadata: {name: shop-to-ledger, namespace: bank}
spec:
  from: [{group: gateway.networking.k8s.io, kind: HTTPRoute, namespace: shop}]
  to: [{group: "", kind: Service, name: ledger}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: BackendTLSPolicy
metadata: {name: payments, namespace: shop}
spec:
  targetRefs: [{group: "", kind: Service, name: payments}]
  validation: {hostname: payments.shop.example, wellKnownCACertificates: System}
---
apiVersion: gateway.networking.k8s.io/v1
kind: BackendTLSPolicy
metadata: {name: ledger, namespace: bank}
spec:
  targetRefs: [{group: "", kind: Service, name: ledger}]
  validation: {hostname: ledger.bank.example, wellKnownCACertificates: System}
---
apiVersion: gateway.networking.k8s.io/v1
kind: BackendTLSPolicy
metadata: {name: quiet, namespace: bank}
spec:
  targetRefs: [{group: "", kind: Service, name: quiet}]
  validation: {hostname: quiet.bank.example, wellKnownCACertificates: System}
---
apiVersion: v1
kind: Service
metadata: {name: payments, namespace: shop}
spec: {ports: [{name: https, port: 8443}]}
---
apiVersion: v1
kind: Service
metadata: {name: ledger, namespace: bank}
spec: {ports: [{port: 443}]}
---
apiVersion: v1
kind: Service
metadata: {name: vault, namespace: bank}
spec: {ports: [{port: 443}]}
---
apiVersion: v1
kind: Service
metadata: {name: quiet, namespace: bank}
spec: {ports: [{port: 443}]}
`

func TestGatewayTranslation(t *testing.T) {
	in := gatewayInputs(t, gatewayWorld)
	in.Secrets = append(in.Secrets, translatortest.TLSSecret(t, "shop", "edge-cert", "*.shop.example"))
	out := translator.Translate(in, nil, time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), translator.Options{ListenerAddress: "127.0.0.1"})
	if len(out.Warnings) > 0 {
		t.Fatalf("warnings: %q", out.Warnings)
	}

	fleet := out.Fleets["shop/edge"]
	if fleet == nil || len(out.Fleets) != 1 {
		t.Fatalf("fleets = %v, want exactly shop/edge", keys(out.Fleets))
	}
	if got := names(fleet.Listeners, func(l any) string { return l.(interface{ GetName() string }).GetName() }); got != "shop/edge/10080,shop/edge/10443" {
		t.Fatalf("listeners = %s", got)
	}
	if got := names(fleet.Routes, func(r any) string { return r.(interface{ GetName() string }).GetName() }); got != "shop/edge/10080,shop/edge/10443/https" {
		t.Fatalf("routes = %s", got)
	}
	if len(fleet.Secrets) != 1 || fleet.Secrets[0].Name != "Certificate/shop/edge-cert" || fleet.Secrets[0].GetTlsCertificate().GetPrivateKey() == nil {
		t.Fatalf("secrets = %v", fleet.Secrets)
	}
	l443 := fleet.Listeners[1]
	if l443.GetAddress().GetSocketAddress().GetAddress() != "127.0.0.1" || l443.GetAddress().GetSocketAddress().GetPortValue() != 10443 {
		t.Fatalf("HTTPS listener address = %v", l443.GetAddress())
	}
	chain := l443.FilterChains[0]
	if sn := chain.GetFilterChainMatch().GetServerNames(); len(sn) != 1 || sn[0] != "*.shop.example" {
		t.Fatalf("server names = %v", sn)
	}
	dtls := &tlsv3.DownstreamTlsContext{}
	if err := chain.GetTransportSocket().GetTypedConfig().UnmarshalTo(dtls); err != nil {
		t.Fatal(err)
	}
	if sds := dtls.GetCommonTlsContext().GetTlsCertificateSdsSecretConfigs(); len(sds) != 1 || sds[0].Name != "Certificate/shop/edge-cert" || sds[0].GetSdsConfig().GetAds() == nil {
		t.Fatalf("certificate SDS = %v", sds)
	}
	hcm := &hcmv3.HttpConnectionManager{}
	if err := chain.Filters[0].GetTypedConfig().UnmarshalTo(hcm); err != nil {
		t.Fatal(err)
	}
	if hcm.GetRds().GetRouteConfigName() != "shop/edge/10443/https" {
		t.Fatalf("HTTPS chain RDS = %q", hcm.GetRds().GetRouteConfigName())
	}

	// HTTP: pay.shop.example (pay), * (ledger), vault.shop.example (vault).
	http := fleet.Routes[0]
	var domains []string
	for _, vh := range http.VirtualHosts {
		domains = append(domains, vh.Domains...)
	}
	if got := strings.Join(domains, ","); got != "*,pay.shop.example,vault.shop.example" {
		t.Fatalf("HTTP virtual hosts = %s", got)
	}
	pay := http.VirtualHosts[1].Routes
	if len(pay) != 2 || pay[0].GetMatch().GetPath() != "/health" || pay[1].GetMatch().GetPathSeparatedPrefix() != "/pay" {
		t.Fatalf("pay routes out of precedence order: %v", pay)
	}
	split := pay[1].GetRoute().GetWeightedClusters().GetClusters()
	if len(split) != 2 || split[0].Name != "shop/payments/8443" || split[0].Weight.GetValue() != 80 || split[1].Weight.GetValue() != 20 {
		t.Fatalf("weighted clusters = %v", split)
	}
	if pay[1].GetRoute().GetClusterNotFoundResponseCode().String() != "INTERNAL_SERVER_ERROR" {
		t.Fatalf("an invalid backend's share must be answered 500")
	}
	if h := pay[1].GetRequestHeadersToAdd(); len(h) != 1 || h[0].Header.Key != "x-gateway" {
		t.Fatalf("request headers = %v", h)
	}
	if c := http.VirtualHosts[0].Routes[0].GetRoute().GetCluster(); c != "bank/ledger/443" {
		t.Fatalf("ledger (granted) cluster = %q", c)
	}
	if d := http.VirtualHosts[2].Routes[0].GetDirectResponse(); d.GetStatus() != 500 {
		t.Fatalf("vault (not granted) must answer 500, got %v", http.VirtualHosts[2].Routes[0].Action)
	}

	gwStatus := out.GatewayAPI.Gateways[types.NamespacedName{Namespace: "shop", Name: "edge"}]
	wantCondition(t, "Gateway Accepted", gwStatus.Conditions, "Accepted", metav1.ConditionTrue, "ListenersNotValid")
	wantCondition(t, "Gateway Programmed", gwStatus.Conditions, "Programmed", metav1.ConditionTrue, "Programmed")
	if len(gwStatus.Addresses) != 1 || gwStatus.Addresses[0].Value != "192.0.2.10" {
		t.Fatalf("addresses = %v", gwStatus.Addresses)
	}
	attached := map[gwv1.SectionName]int32{}
	for _, l := range gwStatus.Listeners {
		attached[l.Name] = l.AttachedRoutes
		if l.Conditions[0].ObservedGeneration != 3 {
			t.Fatalf("listener %s observedGeneration = %d", l.Name, l.Conditions[0].ObservedGeneration)
		}
	}
	// http: pay, ledger, vault; https: pay (elsewhere's hostname matches
	// no listener, so it is not attached).
	if attached["http"] != 3 || attached["https"] != 1 || attached["quic"] != 0 {
		t.Fatalf("attachedRoutes = %v", attached)
	}
	wantCondition(t, "quic listener", gwStatus.Listeners[2].Conditions, "Accepted", metav1.ConditionFalse, "UnsupportedProtocol")
	if _, ok := out.GatewayAPI.Gateways[types.NamespacedName{Namespace: "shop", Name: "theirs"}]; ok {
		t.Fatalf("another controller's Gateway got a status")
	}
	if _, ok := out.GatewayAPI.GatewayClasses["other"]; ok {
		t.Fatalf("another controller's GatewayClass got a status")
	}
	wantCondition(t, "GatewayClass", out.GatewayAPI.GatewayClasses["tlsplane"].Conditions, "Accepted", metav1.ConditionTrue, "Accepted")

	route := func(ns, name string) gwv1.HTTPRouteStatus {
		return out.GatewayAPI.HTTPRoutes[types.NamespacedName{Namespace: ns, Name: name}]
	}
	if p := route("shop", "pay").Parents; len(p) != 1 || p[0].ParentRef.Name != "edge" {
		t.Fatalf("pay parents = %v (the other controller's Gateway gets no entry of ours)", p)
	}
	wantCondition(t, "pay", route("shop", "pay").Parents[0].Conditions, "ResolvedRefs", metav1.ConditionFalse, "BackendNotFound")
	wantCondition(t, "vault", route("shop", "vault").Parents[0].Conditions, "ResolvedRefs", metav1.ConditionFalse, "RefNotPermitted")
	wantCondition(t, "ledger", route("shop", "ledger").Parents[0].Conditions, "ResolvedRefs", metav1.ConditionTrue, "ResolvedRefs")
	wantCondition(t, "stray", route("other", "stray").Parents[0].Conditions, "Accepted", metav1.ConditionFalse, "NotAllowedByListeners")
	wantCondition(t, "elsewhere", route("shop", "elsewhere").Parents[0].Conditions, "Accepted", metav1.ConditionFalse, "NoMatchingListenerHostname")

	ancestors := func(ns, name string) string {
		var s []string
		for _, a := range out.Statuses[types.NamespacedName{Namespace: ns, Name: name}].Ancestors {
			s = append(s, string(*a.AncestorRef.Kind)+" "+string(*a.AncestorRef.Namespace)+"/"+string(a.AncestorRef.Name))
		}
		return strings.Join(s, ",")
	}
	if got := ancestors("shop", "payments"); got != "Gateway shop/edge" {
		t.Fatalf("payments policy ancestors = %q", got)
	}
	if got := ancestors("bank", "ledger"); got != "Gateway shop/edge" {
		t.Fatalf("ledger policy ancestors = %q", got)
	}
	if got := ancestors("bank", "quiet"); got != "Service bank/quiet" {
		t.Fatalf("a policy no Gateway reaches keeps its Service ancestor, got %q", got)
	}
}

// gatewayInputs decodes a multi-document YAML of the kinds the translator
// reads (the manifests package is the real reader; this keeps the rule
// tests independent of it).
func gatewayInputs(t *testing.T, docs string) translator.Inputs {
	t.Helper()
	var in translator.Inputs
	for _, doc := range strings.Split(docs, "\n---\n") {
		j, err := yaml.YAMLToJSON([]byte(doc))
		if err != nil {
			t.Fatal(err)
		}
		var meta metav1.TypeMeta
		if err := json.Unmarshal(j, &meta); err != nil {
			t.Fatal(err)
		}
		decode := func(o any) {
			if err := json.Unmarshal(j, o); err != nil {
				t.Fatalf("%s: %v", meta.Kind, err)
			}
		}
		switch meta.Kind {
		case "GatewayClass":
			o := &gwv1.GatewayClass{}
			decode(o)
			in.GatewayClasses = append(in.GatewayClasses, o)
		case "Gateway":
			o := &gwv1.Gateway{}
			decode(o)
			in.Gateways = append(in.Gateways, o)
		case "HTTPRoute":
			o := &gwv1.HTTPRoute{}
			decode(o)
			in.HTTPRoutes = append(in.HTTPRoutes, o)
		case "ListenerSet":
			o := &gwv1.ListenerSet{}
			decode(o)
			in.ListenerSets = append(in.ListenerSets, o)
		case "UDPRoute":
			o := &gwv1.UDPRoute{}
			decode(o)
			in.UDPRoutes = append(in.UDPRoutes, o)
		case "GRPCRoute":
			o := &gwv1.GRPCRoute{}
			decode(o)
			in.GRPCRoutes = append(in.GRPCRoutes, o)
		case "ReferenceGrant":
			o := &gwv1.ReferenceGrant{}
			decode(o)
			in.ReferenceGrants = append(in.ReferenceGrants, o)
		case "BackendTLSPolicy":
			o := &gwv1.BackendTLSPolicy{}
			decode(o)
			in.Policies = append(in.Policies, o)
		case "Service":
			o := &corev1.Service{}
			decode(o)
			in.Services = append(in.Services, o)
		case "EndpointSlice":
			o := &discoveryv1.EndpointSlice{}
			decode(o)
			in.EndpointSlices = append(in.EndpointSlices, o)
		case "Namespace":
			o := &corev1.Namespace{}
			decode(o)
			in.Namespaces = append(in.Namespaces, o)
		case "XBackend":
			o := &gwxv1a1.XBackend{}
			decode(o)
			in.XBackends = append(in.XBackends, o)
		default:
			t.Fatalf("kind %q", meta.Kind)
		}
	}
	return in
}

func wantCondition(t *testing.T, what string, conds []metav1.Condition, typ string, status metav1.ConditionStatus, reason string) {
	t.Helper()
	for _, c := range conds {
		if c.Type == typ {
			if c.Status != status || c.Reason != reason {
				t.Fatalf("%s: %s = %s/%s (%s), want %s/%s", what, typ, c.Status, c.Reason, c.Message, status, reason)
			}
			return
		}
	}
	t.Fatalf("%s: no %s condition in %v", what, typ, conds)
}

func keys[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

func names[T any](items []T, name func(any) string) string {
	var out []string
	for _, i := range items {
		out = append(out, name(i))
	}
	return strings.Join(out, ",")
}

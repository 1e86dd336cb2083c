package translator_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/tlsplane/tlsplane/translator"
	"github.com/tlsplane/tlsplane/translator/translatortest"
)

const gatewayClass = `
apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: tlsplane}
spec: {controllerName: tlsplane.io/controller}
---
`

// listenerCase checks one listener's condition (or the Gateway's, with
// listener "").
type listenerCase struct {
	yaml     string
	secrets  []*corev1.Secret
	listener gwv1.SectionName
	typ      string
	status   metav1.ConditionStatus
	reason   string
}

func TestGatewayAndListenerConditions(t *testing.T) {
	cert := func(ns, name string) *corev1.Secret { return translatortest.TLSSecret(t, ns, name, "gw.example") }
	for name, tc := range map[string]listenerCase{
		"HTTP and HTTPS on one port conflict": {yaml: `
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw, namespace: ns}
spec:
  gatewayClassName: tlsplane
  listeners:
  - {name: a, protocol: HTTP, port: 8080}
  - {name: b, protocol: HTTPS, port: 8080, tls: {certificateRefs: [{name: c}]}}`,
			secrets: []*corev1.Secret{cert("ns", "c")}, listener: "a", typ: "Conflicted", status: metav1.ConditionTrue, reason: "ProtocolConflict"},
		"two HTTP listeners with one hostname conflict": {yaml: `
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw, namespace: ns}
spec:
  gatewayClassName: tlsplane
  listeners:
  - {name: a, protocol: HTTP, port: 8080, hostname: x.example}
  - {name: b, protocol: HTTP, port: 8080, hostname: x.example}`,
			listener: "b", typ: "Conflicted", status: metav1.ConditionTrue, reason: "HostnameConflict"},
		"a missing certificate Secret": {yaml: `
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw, namespace: ns}
spec:
  gatewayClassName: tlsplane
  listeners: [{name: a, protocol: HTTPS, port: 8443, tls: {certificateRefs: [{name: nope}]}}]`,
			listener: "a", typ: "ResolvedRefs", status: metav1.ConditionFalse, reason: "InvalidCertificateRef"},
		"a Secret that is not a key pair": {yaml: `
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw, namespace: ns}
spec:
  gatewayClassName: tlsplane
  listeners: [{name: a, protocol: HTTPS, port: 8443, tls: {certificateRefs: [{name: c}]}}]`,
			secrets:  []*corev1.Secret{{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "c"}, Data: map[string][]byte{"tls.crt": []byte("x"), "tls.key": []byte("y")}}},
			listener: "a", typ: "ResolvedRefs", status: metav1.ConditionFalse, reason: "InvalidCertificateRef"},
		"a certificate in another namespace without a grant": {yaml: `
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw, namespace: ns}
spec:
  gatewayClassName: tlsplane
  listeners: [{name: a, protocol: HTTPS, port: 8443, tls: {certificateRefs: [{name: c, namespace: certs}]}}]`,
			secrets: []*corev1.Secret{cert("certs", "c")}, listener: "a", typ: "ResolvedRefs", status: metav1.ConditionFalse, reason: "RefNotPermitted"},
		"a certificate in another namespace with a grant": {yaml: `
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw, namespace: ns}
spec:
  gatewayClassName: tlsplane
  listeners: [{name: a, protocol: HTTPS, port: 8443, tls: {certificateRefs: [{name: c, namespace: certs}]}}]
---
apiVersion: gateway.networking.k8s.io/v1beta1
kind: ReferenceGrant
metadata: {name: g, namespace: certs}
spec:
  from: [{group: gateway.networking.k8s.io, kind: Gateway, namespace: ns}]
  to: [{group: "", kind: Secret}]`,
			secrets: []*corev1.Secret{cert("certs", "c")}, listener: "a", typ: "Programmed", status: metav1.ConditionTrue, reason: "Programmed"},
		"a route kind tlsplane does not serve": {yaml: `
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw, namespace: ns}
spec:
  gatewayClassName: tlsplane
  listeners: [{name: a, protocol: HTTP, port: 8080, allowedRoutes: {kinds: [{kind: TCPRoute}]}}]`,
			listener: "a", typ: "ResolvedRefs", status: metav1.ConditionFalse, reason: "InvalidRouteKinds"},
		"a named address is not supported": {yaml: `
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw, namespace: ns}
spec:
  gatewayClassName: tlsplane
  addresses: [{type: NamedAddress, value: pool}]
  listeners: [{name: a, protocol: HTTP, port: 8080}]`,
			typ: "Accepted", status: metav1.ConditionFalse, reason: "UnsupportedAddress"},
		"no address is not programmed": {yaml: `
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw, namespace: ns}
spec:
  gatewayClassName: tlsplane
  listeners: [{name: a, protocol: HTTP, port: 8080}]`,
			typ: "Programmed", status: metav1.ConditionFalse, reason: "AddressNotAssigned"},
		"a parametersRef is refused": {yaml: `
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw, namespace: ns}
spec:
  gatewayClassName: tlsplane
  addresses: [{value: 192.0.2.1}]
  infrastructure: {parametersRef: {group: invalid.io, kind: InvalidParameters, name: invalid}}
  listeners: [{name: a, protocol: HTTP, port: 8080}]`,
			typ: "Accepted", status: metav1.ConditionFalse, reason: "InvalidParameters"},
		"a requested address the Service was not given is not usable": {yaml: requestingGateway("[{value: 192.0.2.1}, {value: 10.9.250.10}]", "[{ip: 10.9.250.10}]"),
			typ: "Programmed", status: metav1.ConditionFalse, reason: "AddressNotUsable"},
		"a requested address the Service was given is programmed": {yaml: requestingGateway("[{value: 10.9.250.10}]", "[{ip: 10.9.250.10}]"),
			typ: "Programmed", status: metav1.ConditionTrue, reason: "Programmed"},
		"a requested address the load balancer has not assigned yet": {yaml: requestingGateway("[{value: 10.9.250.10}]", "[]"),
			typ: "Programmed", status: metav1.ConditionFalse, reason: "AddressNotAssigned"},
		"an address without a value takes the Service's": {yaml: requestingGateway("[{type: IPAddress}]", "[{ip: 10.9.0.3}]"),
			typ: "Programmed", status: metav1.ConditionTrue, reason: "Programmed"},
		"an address without a value and nothing to assign it": {yaml: `
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw, namespace: ns}
spec:
  gatewayClassName: tlsplane
  addresses: [{type: IPAddress}]
  listeners: [{name: a, protocol: HTTP, port: 8080}]`,
			typ: "Programmed", status: metav1.ConditionFalse, reason: "AddressNotAssigned"},
		"a hostname request the Service cannot meet": {yaml: requestingGateway("[{type: Hostname}]", "[{ip: 10.9.0.3}]"),
			typ: "Programmed", status: metav1.ConditionFalse, reason: "AddressNotAssigned"},
		"a labelled Service gives the address": {yaml: `
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw, namespace: ns}
spec:
  gatewayClassName: tlsplane
  listeners: [{name: a, protocol: HTTP, port: 8080}]
---
apiVersion: v1
kind: Service
metadata: {name: envoy, namespace: ns, labels: {gateway.networking.k8s.io/gateway-name: gw}}
spec: {clusterIPs: [10.96.0.7], ports: [{port: 8080}]}`,
			typ: "Programmed", status: metav1.ConditionTrue, reason: "Programmed"},
	} {
		t.Run(name, func(t *testing.T) {
			in := gatewayInputs(t, gatewayClass+tc.yaml)
			in.Secrets = append(in.Secrets, tc.secrets...)
			out := translator.Translate(in, nil, time.Now(), translator.Options{})
			st, ok := out.GatewayAPI.Gateways[types.NamespacedName{Namespace: "ns", Name: "gw"}]
			if !ok {
				t.Fatalf("no Gateway status")
			}
			if tc.listener == "" {
				wantCondition(t, "Gateway", st.Conditions, tc.typ, tc.status, tc.reason)
				return
			}
			for _, l := range st.Listeners {
				if l.Name == tc.listener {
					wantCondition(t, "listener "+string(l.Name), l.Conditions, tc.typ, tc.status, tc.reason)
					return
				}
			}
			t.Fatalf("no listener %s in %v", tc.listener, st.Listeners)
		})
	}
}

// requestingGateway is the Gateway ns/gw requesting addresses of the
// LoadBalancer Service labelled with its name, whose ingress is ingress.
func requestingGateway(addresses, ingress string) string {
	return fmt.Sprintf(`
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw, namespace: ns}
spec:
  gatewayClassName: tlsplane
  addresses: %s
  listeners: [{name: a, protocol: HTTP, port: 8080}]
---
apiVersion: v1
kind: Service
metadata: {name: envoy, namespace: ns, labels: {gateway.networking.k8s.io/gateway-name: gw}}
spec: {type: LoadBalancer, ports: [{port: 8080}]}
status: {loadBalancer: {ingress: %s}}`, addresses, ingress)
}

func TestRouteParentConditions(t *testing.T) {
	gateway := gatewayClass + `
apiVersion: v1
kind: Namespace
metadata: {name: team, labels: {expose: "yes"}}
---
apiVersion: v1
kind: Namespace
metadata: {name: hidden}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw, namespace: ns}
spec:
  gatewayClassName: tlsplane
  addresses: [{value: 192.0.2.1}]
  listeners:
  - {name: web, protocol: HTTP, port: 8080, allowedRoutes: {namespaces: {from: Selector, selector: {matchLabels: {expose: "yes"}}}}}
---
apiVersion: v1
kind: Service
metadata: {name: app, namespace: team}
spec: {ports: [{port: 80}, {name: dns, port: 53, protocol: UDP}]}
---
`
	for name, tc := range map[string]struct {
		route, ns string
		typ       string
		status    metav1.ConditionStatus
		reason    string
	}{
		"admitted by the namespace selector": {ns: "team", route: `
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: r, namespace: team}
spec: {parentRefs: [{name: gw, namespace: ns}], rules: [{backendRefs: [{name: app, port: 80}]}]}`,
			typ: "Accepted", status: metav1.ConditionTrue, reason: "Accepted"},
		"refused by the namespace selector": {ns: "hidden", route: `
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: r, namespace: hidden}
spec: {parentRefs: [{name: gw, namespace: ns}]}`,
			typ: "Accepted", status: metav1.ConditionFalse, reason: "NotAllowedByListeners"},
		"a sectionName no listener has": {ns: "team", route: `
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: r, namespace: team}
spec: {parentRefs: [{name: gw, namespace: ns, sectionName: nope}]}`,
			typ: "Accepted", status: metav1.ConditionFalse, reason: "NoMatchingParent"},
		"a port no listener has": {ns: "team", route: `
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: r, namespace: team}
spec: {parentRefs: [{name: gw, namespace: ns, port: 9999}]}`,
			typ: "Accepted", status: metav1.ConditionFalse, reason: "NoMatchingParent"},
		"a backend kind that is not a Service": {ns: "team", route: `
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: r, namespace: team}
spec: {parentRefs: [{name: gw, namespace: ns}], rules: [{backendRefs: [{group: example.com, kind: Bucket, name: b}]}]}`,
			typ: "ResolvedRefs", status: metav1.ConditionFalse, reason: "InvalidKind"},
		"a UDP Service port": {ns: "team", route: `
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: r, namespace: team}
spec: {parentRefs: [{name: gw, namespace: ns}], rules: [{backendRefs: [{name: app, port: 53}]}]}`,
			typ: "ResolvedRefs", status: metav1.ConditionFalse, reason: "UnsupportedProtocol"},
		"a filter tlsplane does not serve": {ns: "team", route: `
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: r, namespace: team}
spec:
  parentRefs: [{name: gw, namespace: ns}]
  rules: [{filters: [{type: ExtensionRef, extensionRef: {group: example.com, kind: Script, name: lua}}], backendRefs: [{name: app, port: 80}]}]`,
			typ: "Accepted", status: metav1.ConditionFalse, reason: "UnsupportedValue"},
		"a mirror to a Service that does not exist": {ns: "team", route: mirrorRoute(`{name: nowhere, port: 80}`),
			typ: "ResolvedRefs", status: metav1.ConditionFalse, reason: "BackendNotFound"},
		"a mirror to another namespace without a ReferenceGrant": {ns: "team", route: mirrorRoute(`{name: app, namespace: ns, port: 80}`),
			typ: "ResolvedRefs", status: metav1.ConditionFalse, reason: "RefNotPermitted"},
		"a mirror to a kind that is not a Service": {ns: "team", route: mirrorRoute(`{group: example.com, kind: Bucket, name: b}`),
			typ: "ResolvedRefs", status: metav1.ConditionFalse, reason: "InvalidKind"},
		"a mirror that resolves": {ns: "team", route: mirrorRoute(`{name: app, port: 80}`),
			typ: "ResolvedRefs", status: metav1.ConditionTrue, reason: "ResolvedRefs"},
		"a rule with an unresolved mirror still serves": {ns: "team", route: mirrorRoute(`{name: nowhere, port: 80}`),
			typ: "Accepted", status: metav1.ConditionTrue, reason: "Accepted"},
	} {
		t.Run(name, func(t *testing.T) {
			out := translator.Translate(gatewayInputs(t, gateway+tc.route), nil, time.Now(), translator.Options{})
			st, ok := out.GatewayAPI.HTTPRoutes[types.NamespacedName{Namespace: tc.ns, Name: "r"}]
			if !ok || len(st.Parents) != 1 {
				t.Fatalf("route status = %+v", st)
			}
			wantCondition(t, "route", st.Parents[0].Conditions, tc.typ, tc.status, tc.reason)
		})
	}
}

// mirrorRoute is team/r mirroring to backendRef and serving from app:80.
func mirrorRoute(backendRef string) string {
	return `
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: r, namespace: team}
spec:
  parentRefs: [{name: gw, namespace: ns}]
  rules: [{filters: [{type: RequestMirror, requestMirror: {backendRef: ` + backendRef + `}}], backendRefs: [{name: app, port: 80}]}]`
}

// The spec says a GatewayClass's supportedFeatures MUST be sorted by name
// (a list map: names are unique too).
func TestSupportedFeaturesAreSortedAndUnique(t *testing.T) {
	f := translator.SupportedFeatures
	if !slices.IsSorted(f) || len(slices.Compact(slices.Clone(f))) != len(f) {
		t.Fatalf("SupportedFeatures must be sorted and unique: %v", f)
	}
}

// A GatewayClass claims the experimental features only on the
// experimental channel: the standard channel's CRDs prune their fields,
// so the claim would be false there. Both lists stay sorted and unique.
func TestSupportedFeaturesPerChannel(t *testing.T) {
	class := &gwv1.GatewayClass{ObjectMeta: metav1.ObjectMeta{Name: "tlsplane", Generation: 1},
		Spec: gwv1.GatewayClassSpec{ControllerName: translator.DefaultControllerName}}
	names := func(channel translator.Channel) []gwv1.FeatureName {
		out := translator.Translate(translator.Inputs{GatewayClasses: []*gwv1.GatewayClass{class}}, nil, time.Unix(1e9, 0),
			translator.Options{ControllerName: translator.DefaultControllerName, GatewayAPIChannel: channel})
		var got []gwv1.FeatureName
		for _, f := range out.GatewayAPI.GatewayClasses["tlsplane"].SupportedFeatures {
			got = append(got, f.Name)
		}
		return got
	}
	standard, experimental := names(""), names(translator.ChannelExperimental)
	if !slices.Equal(standard, translator.SupportedFeatures) {
		t.Fatalf("standard channel claims %v, want SupportedFeatures %v", standard, translator.SupportedFeatures)
	}
	if !slices.IsSorted(experimental) || len(slices.Compact(slices.Clone(experimental))) != len(experimental) {
		t.Fatalf("experimental channel's features must be sorted and unique: %v", experimental)
	}
	for _, f := range translator.ExperimentalFeatures {
		if slices.Contains(standard, f) {
			t.Errorf("standard channel claims %s, whose field its CRDs prune", f)
		}
		if !slices.Contains(experimental, f) {
			t.Errorf("experimental channel does not claim %s", f)
		}
	}
	if len(experimental) != len(standard)+len(translator.ExperimentalFeatures) {
		t.Errorf("experimental channel claims %d features, want %d standard + %d experimental", len(experimental), len(standard), len(translator.ExperimentalFeatures))
	}
	if _, err := translator.ParseChannel("beta"); err == nil || !strings.Contains(err.Error(), `"beta"`) {
		t.Errorf("ParseChannel(beta) = %v, want an error naming the value", err)
	}
}

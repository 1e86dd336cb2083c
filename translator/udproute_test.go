package translator_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	matcherv3 "github.com/cncf/xds/go/xds/type/matcher/v3"
	bootstrapv3 "github.com/envoyproxy/go-control-plane/envoy/config/bootstrap/v3"
	clusterv3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	listenerv3 "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	udpproxyv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/udp/udp_proxy/v3"
	consistenthashingv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/matching/input_matchers/consistent_hashing/v3"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/tlsplane/tlsplane/manifests"
	"github.com/tlsplane/tlsplane/translator"
)

// udpWorld is a Gateway with UDP listeners and the Services UDPRoutes
// send to; each case adds its routes.
const udpWorld = `apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: tlsplane}
spec: {controllerName: tlsplane.io/controller}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: edge, namespace: shop}
spec:
  gatewayClassName: tlsplane
  addresses: [{value: 192.0.2.40}]
  listeners:
  - {name: dns, protocol: UDP, port: 53}
  - {name: dns-tcp, protocol: TCP, port: 53}
  - {name: tls, protocol: TLS, port: 443, tls: {mode: Passthrough}}
  - {name: other-ns, protocol: UDP, port: 5000, allowedRoutes: {namespaces: {from: All}}}
---
apiVersion: v1
kind: Service
metadata: {name: dns, namespace: shop}
spec:
  ports:
  - {name: dns, port: 53, protocol: UDP}
  - {name: dns-tcp, port: 53, protocol: TCP}
  - {name: web, port: 8080}
---
apiVersion: v1
kind: Service
metadata: {name: dns-tcp-first, namespace: shop}
spec:
  ports:
  - {name: dns-tcp, port: 53, protocol: TCP}
  - {name: dns, port: 53, protocol: UDP}
---
apiVersion: v1
kind: Service
metadata: {name: dns, namespace: infra}
spec:
  ports: [{name: dns, port: 53, protocol: UDP}]
`

func translateUDP(t *testing.T, docs string) translator.Output {
	t.Helper()
	path := filepath.Join(t.TempDir(), "in.yaml")
	if err := os.WriteFile(path, []byte(docs), 0o600); err != nil {
		t.Fatal(err)
	}
	in, err := manifests.Unadmitted.Read([]string{path}, func(msg string) { t.Fatal("warning:", msg) })
	if err != nil {
		t.Fatal(err)
	}
	return translator.Translate(in, nil, time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC),
		translator.Options{ControllerName: "tlsplane.io/controller", ListenerAddress: "0.0.0.0"})
}

func udpRoute(name, namespace, parentRef, backendRefs string) string {
	return `
---
apiVersion: gateway.networking.k8s.io/v1
kind: UDPRoute
metadata: {name: ` + name + `, namespace: ` + namespace + `, creationTimestamp: "2026-01-01T00:00:00Z"}
spec:
  parentRefs: [` + parentRef + `]
  rules:
  - backendRefs: [` + backendRefs + `]
`
}

// The UDPRoute rules of the spec and the conformance suite: which parent
// accepts the route, which backendRefs resolve, and the reasons of those
// that do not.
func TestUDPRouteStatus(t *testing.T) {
	grant := `
---
apiVersion: gateway.networking.k8s.io/v1
kind: ReferenceGrant
metadata: {name: udp, namespace: infra}
spec:
  from: [{group: gateway.networking.k8s.io, kind: UDPRoute, namespace: shop}]
  to: [{group: "", kind: Service}]
`
	tcpGrant := strings.ReplaceAll(grant, "kind: UDPRoute", "kind: TCPRoute")
	for _, tc := range []struct {
		name, docs                         string
		accepted, resolved                 metav1.ConditionStatus
		acceptedReason, resolvedReason, in string // in: the message names it
	}{
		{"by section", udpRoute("r", "shop", "{name: edge, sectionName: dns}", "{name: dns, port: 53}"),
			metav1.ConditionTrue, metav1.ConditionTrue, "Accepted", "ResolvedRefs", ""},
		{"by port", udpRoute("r", "shop", "{name: edge, port: 53}", "{name: dns, port: 53}"),
			metav1.ConditionTrue, metav1.ConditionTrue, "Accepted", "ResolvedRefs", ""},
		{"on a TCP listener", udpRoute("r", "shop", "{name: edge, sectionName: dns-tcp}", "{name: dns, port: 53}"),
			metav1.ConditionFalse, metav1.ConditionTrue, "NotAllowedByListeners", "ResolvedRefs", `"dns-tcp"`},
		{"on a TLS listener", udpRoute("r", "shop", "{name: edge, sectionName: tls}", "{name: dns, port: 53}"),
			metav1.ConditionFalse, metav1.ConditionTrue, "NotAllowedByListeners", "ResolvedRefs", `"tls"`},
		{"from another namespace, not allowed", udpRoute("r", "infra", "{name: edge, namespace: shop, sectionName: dns}", "{name: dns, port: 53}"),
			metav1.ConditionFalse, metav1.ConditionTrue, "NotAllowedByListeners", "ResolvedRefs", "namespace infra"},
		{"from another namespace, allowed", udpRoute("r", "infra", "{name: edge, namespace: shop, sectionName: other-ns}", "{name: dns, port: 53}"),
			metav1.ConditionTrue, metav1.ConditionTrue, "Accepted", "ResolvedRefs", ""},
		{"no such Service", udpRoute("r", "shop", "{name: edge, sectionName: dns}", "{name: nothing, port: 53}"),
			metav1.ConditionTrue, metav1.ConditionFalse, "Accepted", "BackendNotFound", "shop/nothing does not exist"},
		{"no such port", udpRoute("r", "shop", "{name: edge, sectionName: dns}", "{name: dns, port: 54}"),
			metav1.ConditionTrue, metav1.ConditionFalse, "Accepted", "BackendNotFound", "no port 54"},
		{"UDP after TCP of the number", udpRoute("r", "shop", "{name: edge, sectionName: dns}", "{name: dns-tcp-first, port: 53}"),
			metav1.ConditionTrue, metav1.ConditionTrue, "Accepted", "ResolvedRefs", ""},
		{"a TCP port", udpRoute("r", "shop", "{name: edge, sectionName: dns}", "{name: dns, port: 8080}"),
			metav1.ConditionTrue, metav1.ConditionFalse, "Accepted", "UnsupportedProtocol", "port 8080 is TCP; a UDPRoute needs UDP"},
		{"another namespace without a grant", udpRoute("r", "shop", "{name: edge, sectionName: dns}", "{name: dns, namespace: infra, port: 53}"),
			metav1.ConditionTrue, metav1.ConditionFalse, "Accepted", "RefNotPermitted", "no ReferenceGrant in infra permits UDPRoutes of shop"},
		{"another namespace, a grant for TCPRoutes", udpRoute("r", "shop", "{name: edge, sectionName: dns}", "{name: dns, namespace: infra, port: 53}") + tcpGrant,
			metav1.ConditionTrue, metav1.ConditionFalse, "Accepted", "RefNotPermitted", "infra/dns"},
		{"another namespace with a grant", udpRoute("r", "shop", "{name: edge, sectionName: dns}", "{name: dns, namespace: infra, port: 53}") + grant,
			metav1.ConditionTrue, metav1.ConditionTrue, "Accepted", "ResolvedRefs", ""},
		{"not a Service", udpRoute("r", "shop", "{name: edge, sectionName: dns}", "{group: example.com, kind: Thing, name: dns, port: 53}"),
			metav1.ConditionTrue, metav1.ConditionFalse, "Accepted", "InvalidKind", `kind "Thing"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := translateUDP(t, udpWorld+tc.docs)
			ns := "shop"
			if strings.Contains(tc.docs, "namespace: infra, creationTimestamp") {
				ns = "infra"
			}
			st, ok := out.GatewayAPI.UDPRoutes[types.NamespacedName{Namespace: ns, Name: "r"}]
			if !ok || len(st.Parents) != 1 {
				t.Fatalf("UDPRoute statuses %v, want one parent", out.GatewayAPI.UDPRoutes)
			}
			conds := st.Parents[0].Conditions
			wantCondition(t, "UDPRoute", conds, "Accepted", tc.accepted, tc.acceptedReason)
			wantCondition(t, "UDPRoute", conds, "ResolvedRefs", tc.resolved, tc.resolvedReason)
			if tc.in != "" && !slices.ContainsFunc(conds, func(c metav1.Condition) bool { return strings.Contains(c.Message, tc.in) }) {
				t.Errorf("no condition message names %s: %+v", tc.in, conds)
			}
		})
	}
}

// A UDP listener and a TCP listener of one number are two sockets, not a
// conflict; two UDP listeners of one number conflict.
func TestUDPListenerConflicts(t *testing.T) {
	out := translateUDP(t, udpWorld)
	gw := out.GatewayAPI.Gateways[types.NamespacedName{Namespace: "shop", Name: "edge"}]
	for _, l := range gw.Listeners[:2] {
		wantCondition(t, string(l.Name), l.Conditions, "Conflicted", metav1.ConditionFalse, "NoConflicts")
		wantCondition(t, string(l.Name), l.Conditions, "Programmed", metav1.ConditionTrue, "Programmed")
	}
	twice := strings.Replace(udpWorld, "  - {name: dns-tcp, protocol: TCP, port: 53}", "  - {name: dns-again, protocol: UDP, port: 53}", 1)
	gw = translateUDP(t, twice).GatewayAPI.Gateways[types.NamespacedName{Namespace: "shop", Name: "edge"}]
	for _, l := range gw.Listeners[:2] {
		wantCondition(t, string(l.Name), l.Conditions, "Conflicted", metav1.ConditionTrue, "HostnameConflict")
	}
}

// The UDP listener's proxy: one backend is the matcher's only action;
// weights split the source port's hash, and a backend of weight 0 gets
// nothing; the oldest route of a listener is the one served.
func TestUDPListenerWeights(t *testing.T) {
	newer := strings.Replace(udpRoute("newer", "shop", "{name: edge, sectionName: dns}", "{name: dns, namespace: infra, port: 53}"),
		"2026-01-01T00:00:00Z", "2026-01-02T00:00:00Z", 1)
	out := translateUDP(t, udpWorld+udpRoute("r", "shop", "{name: edge, sectionName: dns}",
		"{name: dns, port: 53, weight: 7}, {name: nothing, port: 53, weight: 0}, {name: dns, port: 53, weight: 3}")+newer)
	fleet := out.Fleets["shop/edge"]
	var udp *listenerv3.Listener
	for _, l := range fleet.Listeners {
		if l.Name == "shop/edge/53/udp" {
			udp = l
		}
	}
	if udp == nil {
		t.Fatalf("no listener shop/edge/53/udp in %s", names(fleet.Listeners, func(l any) string { return l.(*listenerv3.Listener).GetName() }))
	}
	if udp.GetAddress().GetSocketAddress().GetProtocol() != corev3.SocketAddress_UDP || udp.GetAddress().GetSocketAddress().GetPortValue() != 53 {
		t.Fatalf("address %v, want UDP port 53", udp.GetAddress())
	}
	if len(udp.ListenerFilters) != 1 || udp.ListenerFilters[0].Name != "envoy.filters.udp_listener.udp_proxy" || len(udp.FilterChains) != 0 {
		t.Fatalf("listener filters %v and %d chains, want the UDP proxy only", udp.ListenerFilters, len(udp.FilterChains))
	}
	var proxy udpproxyv3.UdpProxyConfig
	if err := udp.ListenerFilters[0].GetTypedConfig().UnmarshalTo(&proxy); err != nil {
		t.Fatal(err)
	}
	m := proxy.GetMatcher()
	route := func(on *matcherv3.Matcher_OnMatch) string {
		var r udpproxyv3.Route
		if err := on.GetAction().GetTypedConfig().UnmarshalTo(&r); err != nil {
			t.Fatal(err)
		}
		return r.Cluster
	}
	if got := route(m.GetOnNoMatch()); got != "shop/dns/53/udp" {
		t.Errorf("on no match: %s, want the first backend shop/dns/53/udp", got)
	}
	list := m.GetMatcherList().GetMatchers()
	if len(list) != 1 {
		t.Fatalf("%d matchers, want 1 (weight 0 takes none)", len(list))
	}
	var hash consistenthashingv3.ConsistentHashing
	if err := list[0].GetPredicate().GetSinglePredicate().GetCustomMatch().GetTypedConfig().UnmarshalTo(&hash); err != nil {
		t.Fatal(err)
	}
	if hash.Threshold != 7 || hash.Modulo != 10 || route(list[0].GetOnMatch()) != "shop/dns/53/udp" {
		t.Errorf("matcher: hash %% %d >= %d -> %s, want %% 10 >= 7 -> shop/dns/53/udp", hash.Modulo, hash.Threshold, route(list[0].GetOnMatch()))
	}
	if input := list[0].GetPredicate().GetSinglePredicate().GetInput().GetName(); input != "envoy.matching.inputs.source_port" {
		t.Errorf("input %s, want the source port", input)
	}
	gw := out.GatewayAPI.Gateways[types.NamespacedName{Namespace: "shop", Name: "edge"}]
	if gw.Listeners[0].AttachedRoutes != 2 {
		t.Errorf("dns attachedRoutes %d, want 2 (the newer route too)", gw.Listeners[0].AttachedRoutes)
	}
	var clusters []string
	for _, c := range out.Clusters {
		clusters = append(clusters, c.Name)
	}
	if !slices.Contains(clusters, "shop/dns/53/udp") || !slices.Contains(clusters, "infra/dns/53/udp") || slices.Contains(clusters, "shop/dns/53/tcp") {
		t.Errorf("clusters %v, want the UDP ports' clusters", clusters)
	}
}

// TestEnvoyAcceptsUDPListeners puts the golden UDP Gateway's fleet (its
// UDP and TCP listeners, and the clusters, over ADS as served) to Envoy
// 1.40's `--mode validate`.
func TestEnvoyAcceptsUDPListeners(t *testing.T) {
	envoy := translator.EnvoyBinary(t)
	in, err := manifests.Unadmitted.Read([]string{filepath.Join(goldenDir, "gateway-udp-routes.in.yaml")}, func(string) {})
	if err != nil {
		t.Fatal(err)
	}
	out := translator.Translate(in, nil, time.Now(), translator.Options{ListenerAddress: "127.0.0.1"})
	fleet := out.Fleets["shop/edge"]
	if fleet == nil || len(fleet.Listeners) != 3 {
		t.Fatalf("want the 3 listeners of shop/edge: %+v", fleet)
	}
	clusters := append([]*clusterv3.Cluster{xdsCluster()}, out.Clusters...)
	envoyValidates(t, envoy, "shop/edge", &bootstrapv3.Bootstrap_StaticResources{Listeners: fleet.Listeners, Clusters: clusters})
}

// A UDPRoute does not make its Gateway an ancestor of a policy on the
// Service: no BackendTLSPolicy applies to UDP, and the TCP port of the
// same number is not reached.
func TestUDPRouteIsNoPolicyReach(t *testing.T) {
	policy := `
---
apiVersion: gateway.networking.k8s.io/v1
kind: BackendTLSPolicy
metadata: {name: dns-tls, namespace: shop}
spec:
  targetRefs: [{group: "", kind: Service, name: dns}]
  validation: {hostname: dns.shop.example, wellKnownCACertificates: System}
`
	out := translateUDP(t, udpWorld+udpRoute("r", "shop", "{name: edge, sectionName: dns}", "{name: dns, port: 53}")+policy)
	st := out.Statuses[types.NamespacedName{Namespace: "shop", Name: "dns-tls"}]
	for _, a := range st.Ancestors {
		if a.AncestorRef.Kind != nil && *a.AncestorRef.Kind == "Gateway" {
			t.Errorf("ancestor Gateway %s: a UDPRoute reached the policy's Service", a.AncestorRef.Name)
		}
	}
	if len(st.Ancestors) == 0 {
		t.Fatalf("policy dns-tls has no ancestor: %+v", st)
	}
}

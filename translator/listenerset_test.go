package translator_test

import (
	"fmt"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/tlsplane/tlsplane/translator"
	"github.com/tlsplane/tlsplane/translator/translatortest"
)

// listenerSetGateway admits ListenerSets of namespace ns (Same) and of
// namespaces labelled team=yes; it has one HTTP listener on 8080.
const listenerSetGateway = gatewayClass + `
apiVersion: v1
kind: Namespace
metadata: {name: team, labels: {team: "yes"}}
---
apiVersion: v1
kind: Namespace
metadata: {name: other}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw, namespace: ns}
spec:
  gatewayClassName: tlsplane
  addresses: [{value: 192.0.2.1}]
  allowedListeners: {namespaces: {from: Selector, selector: {matchLabels: {team: "yes"}}}}
  listeners:
  - {name: web, protocol: HTTP, port: 8080, hostname: gw.example, allowedRoutes: {namespaces: {from: All}}}
---
apiVersion: v1
kind: Service
metadata: {name: app, namespace: team}
spec: {ports: [{port: 80}]}
---
`

// setWant is one expected condition of a ListenerSet (listener ""), of
// one of its listeners, or of a route's parent of the given kind.
type setWant struct {
	set      types.NamespacedName
	listener gwv1.SectionName
	typ      string
	status   metav1.ConditionStatus
	reason   string
}

var teamSet = types.NamespacedName{Namespace: "team", Name: "extra"}

func TestListenerSetConditions(t *testing.T) {
	for name, tc := range map[string]struct {
		yaml    string
		secrets []*corev1.Secret
		want    []setWant
		// attached is the Gateway's status.attachedListenerSets.
		attached int32
	}{
		"a namespace the selector admits": {yaml: `
apiVersion: gateway.networking.k8s.io/v1
kind: ListenerSet
metadata: {name: extra, namespace: team}
spec:
  parentRef: {name: gw, namespace: ns}
  listeners: [{name: a, protocol: HTTP, port: 8080, hostname: a.example}]`,
			attached: 1, want: []setWant{
				{teamSet, "", "Accepted", metav1.ConditionTrue, "Accepted"},
				{teamSet, "", "Programmed", metav1.ConditionTrue, "Programmed"},
				{teamSet, "a", "Accepted", metav1.ConditionTrue, "Accepted"},
				{teamSet, "a", "Programmed", metav1.ConditionTrue, "Programmed"},
			}},
		"a namespace the selector refuses": {yaml: `
apiVersion: gateway.networking.k8s.io/v1
kind: ListenerSet
metadata: {name: extra, namespace: other}
spec:
  parentRef: {name: gw, namespace: ns}
  listeners: [{name: a, protocol: HTTP, port: 8080, hostname: a.example}]`,
			attached: 0, want: []setWant{
				{types.NamespacedName{Namespace: "other", Name: "extra"}, "", "Accepted", metav1.ConditionFalse, "NotAllowed"},
				{types.NamespacedName{Namespace: "other", Name: "extra"}, "", "Programmed", metav1.ConditionFalse, "NotAllowed"},
			}},
		"a hostname the Gateway's listener has": {yaml: `
apiVersion: gateway.networking.k8s.io/v1
kind: ListenerSet
metadata: {name: extra, namespace: team}
spec:
  parentRef: {name: gw, namespace: ns}
  listeners:
  - {name: web, protocol: HTTP, port: 8080, hostname: gw.example}
  - {name: b, protocol: HTTP, port: 8080, hostname: b.example}`,
			attached: 1, want: []setWant{
				{teamSet, "", "Accepted", metav1.ConditionTrue, "ListenersNotValid"},
				{teamSet, "", "Programmed", metav1.ConditionTrue, "Programmed"},
				{teamSet, "web", "Conflicted", metav1.ConditionTrue, "HostnameConflict"},
				{teamSet, "web", "Accepted", metav1.ConditionFalse, "HostnameConflict"},
				{teamSet, "web", "Programmed", metav1.ConditionFalse, "HostnameConflict"},
				{teamSet, "b", "Conflicted", metav1.ConditionFalse, "NoConflicts"},
			}},
		"another protocol on the Gateway's port, and nothing else": {yaml: `
apiVersion: gateway.networking.k8s.io/v1
kind: ListenerSet
metadata: {name: extra, namespace: team}
spec:
  parentRef: {name: gw, namespace: ns}
  listeners: [{name: raw, protocol: TCP, port: 8080}]`,
			attached: 0, want: []setWant{
				{teamSet, "", "Accepted", metav1.ConditionFalse, "ListenersNotValid"},
				{teamSet, "", "Programmed", metav1.ConditionFalse, "ListenersNotValid"},
				{teamSet, "raw", "Accepted", metav1.ConditionFalse, "ProtocolConflict"},
			}},
		"the older of two sets wins a hostname": {yaml: `
apiVersion: gateway.networking.k8s.io/v1
kind: ListenerSet
metadata: {name: young, namespace: team, creationTimestamp: "2026-01-02T00:00:00Z"}
spec:
  parentRef: {name: gw, namespace: ns}
  listeners: [{name: a, protocol: HTTP, port: 8080, hostname: a.example}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: ListenerSet
metadata: {name: zold, namespace: team, creationTimestamp: "2026-01-01T00:00:00Z"}
spec:
  parentRef: {name: gw, namespace: ns}
  listeners: [{name: a, protocol: HTTP, port: 8080, hostname: a.example}]`,
			attached: 1, want: []setWant{
				{types.NamespacedName{Namespace: "team", Name: "zold"}, "a", "Accepted", metav1.ConditionTrue, "Accepted"},
				{types.NamespacedName{Namespace: "team", Name: "young"}, "a", "Conflicted", metav1.ConditionTrue, "HostnameConflict"},
				{types.NamespacedName{Namespace: "team", Name: "young"}, "", "Accepted", metav1.ConditionFalse, "ListenersNotValid"},
			}},
		"a certificate in another namespace without a grant to ListenerSets": {yaml: certificateFromAnotherNamespace("Gateway"),
			secrets:  []*corev1.Secret{translatortest.TLSSecret(t, "certs", "c", "s.example")},
			attached: 0, want: []setWant{
				{teamSet, "tls", "ResolvedRefs", metav1.ConditionFalse, "RefNotPermitted"},
				{teamSet, "", "Accepted", metav1.ConditionFalse, "ListenersNotValid"},
			}},
		"a certificate in another namespace granted to ListenerSets": {yaml: certificateFromAnotherNamespace("ListenerSet"),
			secrets:  []*corev1.Secret{translatortest.TLSSecret(t, "certs", "c", "s.example")},
			attached: 1, want: []setWant{
				{teamSet, "tls", "ResolvedRefs", metav1.ConditionTrue, "ResolvedRefs"},
				{teamSet, "", "Programmed", metav1.ConditionTrue, "Programmed"},
			}},
	} {
		t.Run(name, func(t *testing.T) {
			in := gatewayInputs(t, listenerSetGateway+tc.yaml)
			in.Secrets = append(in.Secrets, tc.secrets...)
			out := translator.Translate(in, nil, time.Now(), translator.Options{})
			gw := out.GatewayAPI.Gateways[types.NamespacedName{Namespace: "ns", Name: "gw"}]
			if got := gw.AttachedListenerSets; got == nil || *got != tc.attached {
				t.Errorf("Gateway attachedListenerSets = %v, want %d", ptrString(got), tc.attached)
			}
			if len(gw.Listeners) != 1 {
				t.Errorf("Gateway status.listeners = %v, want its own listener only", gw.Listeners)
			}
			for _, w := range tc.want {
				st, ok := out.GatewayAPI.ListenerSets[w.set]
				if !ok {
					t.Fatalf("no status for ListenerSet %s", w.set)
				}
				if w.listener == "" {
					wantCondition(t, "ListenerSet "+w.set.String(), st.Conditions, w.typ, w.status, w.reason)
					continue
				}
				i := slices.IndexFunc(st.Listeners, func(l gwv1.ListenerEntryStatus) bool { return l.Name == w.listener })
				if i < 0 {
					t.Fatalf("ListenerSet %s: no listener %s in %v", w.set, w.listener, st.Listeners)
				}
				wantCondition(t, "ListenerSet "+w.set.String()+" listener "+string(w.listener), st.Listeners[i].Conditions, w.typ, w.status, w.reason)
			}
		})
	}
}

// certificateFromAnotherNamespace is a ListenerSet whose HTTPS listener
// names Secret certs/c, and a ReferenceGrant in certs to grantedKind of
// the set's namespace.
func certificateFromAnotherNamespace(grantedKind string) string {
	return `
apiVersion: gateway.networking.k8s.io/v1
kind: ReferenceGrant
metadata: {name: grant, namespace: certs}
spec:
  from: [{group: gateway.networking.k8s.io, kind: ` + grantedKind + `, namespace: team}]
  to: [{group: "", kind: Secret}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: ListenerSet
metadata: {name: extra, namespace: team}
spec:
  parentRef: {name: gw, namespace: ns}
  listeners: [{name: tls, protocol: HTTPS, port: 8443, hostname: s.example, tls: {certificateRefs: [{name: c, namespace: certs}]}}]`
}

// A ListenerSet's parent that is not a Gateway of ours gets no status from
// us: another controller's, or none's.
func TestListenerSetOfAnotherGatewayHasNoStatus(t *testing.T) {
	in := gatewayInputs(t, listenerSetGateway+`
apiVersion: gateway.networking.k8s.io/v1
kind: ListenerSet
metadata: {name: extra, namespace: team}
spec:
  parentRef: {name: elsewhere, namespace: ns}
  listeners: [{name: a, protocol: HTTP, port: 8080}]`)
	out := translator.Translate(in, nil, time.Now(), translator.Options{})
	if st, ok := out.GatewayAPI.ListenerSets[teamSet]; ok {
		t.Fatalf("ListenerSet of an unknown Gateway has status %+v", st)
	}
}

// Routes reach a set's listeners only through a parentRef to the set; a
// Gateway parentRef's sectionName never finds a set's listener; the
// set's listeners are served on the Gateway's own Envoy listener.
func TestRoutesThroughListenerSets(t *testing.T) {
	in := gatewayInputs(t, listenerSetGateway+`
apiVersion: gateway.networking.k8s.io/v1
kind: ListenerSet
metadata: {name: extra, namespace: team}
spec:
  parentRef: {name: gw, namespace: ns}
  listeners: [{name: a, protocol: HTTP, port: 8080, hostname: a.example}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: through-set, namespace: team}
spec: {parentRefs: [{kind: ListenerSet, name: extra, sectionName: a}], rules: [{backendRefs: [{name: app, port: 80}]}]}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: through-gateway, namespace: team}
spec: {parentRefs: [{name: gw, namespace: ns}], rules: [{backendRefs: [{name: app, port: 80}]}]}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: set-section-on-gateway, namespace: team}
spec: {parentRefs: [{name: gw, namespace: ns, sectionName: a}], rules: [{backendRefs: [{name: app, port: 80}]}]}`)
	out := translator.Translate(in, nil, time.Now(), translator.Options{})
	routes := out.GatewayAPI.HTTPRoutes
	wantCondition(t, "through-set", routes[types.NamespacedName{Namespace: "team", Name: "through-set"}].Parents[0].Conditions, "Accepted", metav1.ConditionTrue, "Accepted")
	wantCondition(t, "through-gateway", routes[types.NamespacedName{Namespace: "team", Name: "through-gateway"}].Parents[0].Conditions, "Accepted", metav1.ConditionTrue, "Accepted")
	wantCondition(t, "set-section-on-gateway", routes[types.NamespacedName{Namespace: "team", Name: "set-section-on-gateway"}].Parents[0].Conditions, "Accepted", metav1.ConditionFalse, "NoMatchingParent")

	st := out.GatewayAPI.ListenerSets[teamSet]
	if len(st.Listeners) != 1 || st.Listeners[0].AttachedRoutes != 1 {
		t.Errorf("ListenerSet listeners = %+v, want a with 1 attached route", st.Listeners)
	}
	if gw := out.GatewayAPI.Gateways[types.NamespacedName{Namespace: "ns", Name: "gw"}]; gw.Listeners[0].AttachedRoutes != 1 {
		t.Errorf("Gateway listener web attachedRoutes = %d, want 1 (through-gateway)", gw.Listeners[0].AttachedRoutes)
	}
	fleet := out.Fleets["ns/gw"]
	if fleet == nil || len(fleet.Listeners) != 1 || len(fleet.Routes) != 1 {
		t.Fatalf("fleet = %+v, want one Envoy listener and one route table for port 8080", fleet)
	}
	var hosts []string
	for _, vh := range fleet.Routes[0].VirtualHosts {
		hosts = append(hosts, vh.Domains...)
	}
	if !slices.Contains(hosts, "a.example") || !slices.Contains(hosts, "gw.example") {
		t.Errorf("virtual host domains = %v, want the set's a.example beside the Gateway's gw.example", hosts)
	}
}

func ptrString(p *int32) string {
	if p == nil {
		return "unset"
	}
	return fmt.Sprint(*p)
}

// A ListenerSet's UDP listener shares no socket with the Gateway's TCP
// listener of the same number: it is not conflicted, a UDPRoute through
// the set attaches, and the Gateway's fleet gets the UDP listener.
func TestUDPListenerThroughListenerSet(t *testing.T) {
	in := gatewayInputs(t, listenerSetGateway+`
apiVersion: v1
kind: Service
metadata: {name: dns, namespace: team}
spec: {ports: [{name: dns, port: 53, protocol: UDP}]}
---
apiVersion: gateway.networking.k8s.io/v1
kind: ListenerSet
metadata: {name: extra, namespace: team}
spec:
  parentRef: {name: gw, namespace: ns}
  listeners: [{name: dns, protocol: UDP, port: 8080}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: UDPRoute
metadata: {name: dns, namespace: team}
spec: {parentRefs: [{kind: ListenerSet, name: extra, sectionName: dns}], rules: [{backendRefs: [{name: dns, port: 53}]}]}`)
	out := translator.Translate(in, nil, time.Now(), translator.Options{})
	st := out.GatewayAPI.ListenerSets[teamSet]
	if len(st.Listeners) != 1 {
		t.Fatalf("ListenerSet listeners = %+v, want dns", st.Listeners)
	}
	wantCondition(t, "set listener dns", st.Listeners[0].Conditions, "Conflicted", metav1.ConditionFalse, "NoConflicts")
	wantCondition(t, "set listener dns", st.Listeners[0].Conditions, "Programmed", metav1.ConditionTrue, "Programmed")
	if st.Listeners[0].AttachedRoutes != 1 {
		t.Errorf("set listener dns attachedRoutes = %d, want 1", st.Listeners[0].AttachedRoutes)
	}
	route := out.GatewayAPI.UDPRoutes[types.NamespacedName{Namespace: "team", Name: "dns"}]
	if len(route.Parents) != 1 {
		t.Fatalf("UDPRoute parents = %+v", route.Parents)
	}
	wantCondition(t, "UDPRoute dns", route.Parents[0].Conditions, "Accepted", metav1.ConditionTrue, "Accepted")
	var names []string
	for _, l := range out.Fleets["ns/gw"].Listeners {
		names = append(names, l.Name)
	}
	if !slices.Contains(names, "ns/gw/8080/udp") || !slices.Contains(names, "ns/gw/8080") {
		t.Errorf("fleet listeners = %v, want ns/gw/8080 (the Gateway's HTTP) and ns/gw/8080/udp (the set's UDP)", names)
	}
}

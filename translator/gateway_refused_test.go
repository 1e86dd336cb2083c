package translator_test

import (
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/tlsplane/tlsplane/translator"
)

// A route whose header name Envoy would reject (a newline: the CRD's
// pattern refuses it, a manifest file need not) makes its port's listener
// one the emitter refuses. Statuses are written after emission, so that
// listener is not Programmed, with a message naming what Envoy rejects,
// while the other port's listener is served.
func TestListenerEnvoyWouldRejectIsNotProgrammed(t *testing.T) {
	docs := refusedGateway("- {name: good, protocol: HTTP, port: 8080}\n  - {name: bad, protocol: HTTP, port: 8081}",
		"{name: gw, sectionName: bad}", `type: RequestHeaderModifier
      requestHeaderModifier: {set: [{name: "x-bad\nname", value: v}]}`)
	for _, name := range []string{"Translate", "Update"} {
		t.Run(name, func(t *testing.T) {
			in := gatewayInputs(t, docs)
			var out translator.Output
			if name == "Translate" {
				out = translator.Translate(in, nil, time.Now(), translator.Options{})
			} else {
				// The route arrives in an Update, after a translation
				// without it.
				tr := translator.New()
				route := in.HTTPRoutes[0]
				in.HTTPRoutes = nil
				tr.Translate(in, nil, time.Now(), translator.Options{})
				var ok bool
				out, ok = tr.Update([]translator.Change{{Kind: translator.KindHTTPRoute, Key: types.NamespacedName{Namespace: "ns", Name: "bad-header"}, Object: route}}, nil, time.Now(), translator.Options{})
				if !ok {
					t.Fatal("Update refused the change")
				}
			}
			st, ok := out.GatewayAPI.Gateways[types.NamespacedName{Namespace: "ns", Name: "gw"}]
			if !ok {
				t.Fatal("no status for Gateway ns/gw")
			}
			listeners := map[gwv1.SectionName][]metav1.Condition{}
			for _, l := range st.Listeners {
				listeners[l.Name] = l.Conditions
			}
			wantCondition(t, "listener good", listeners["good"], "Programmed", metav1.ConditionTrue, "Programmed")
			wantCondition(t, "listener bad", listeners["bad"], "Programmed", metav1.ConditionFalse, "Invalid")
			if c := conditionOf(listeners["bad"], "Programmed"); c == nil || !strings.Contains(c.Message, "Envoy would reject port 8081") || !strings.Contains(c.Message, "Key") {
				t.Errorf("listener bad: Programmed message %q does not say what Envoy would reject", messageOf(c))
			}
			wantCondition(t, "listener bad", listeners["bad"], "Accepted", metav1.ConditionTrue, "Accepted")
			wantCondition(t, "Gateway", st.Conditions, "Programmed", metav1.ConditionTrue, "Programmed")
			fleet := out.Fleets["ns/gw"]
			if fleet == nil || len(fleet.Listeners) != 1 || fleet.Listeners[0].Name != "ns/gw/8080" {
				t.Errorf("fleet ns/gw serves %v, want only ns/gw/8080", fleet)
			}
		})
	}
}

// With every listener refused, the Gateway itself is not Programmed.
func TestGatewayWhoseListenersEnvoyWouldAllRejectIsNotProgrammed(t *testing.T) {
	in := gatewayInputs(t, refusedGateway("- {name: bad, protocol: HTTP, port: 8081}", "{name: gw}", `type: ResponseHeaderModifier
      responseHeaderModifier: {add: [{name: "x-bad\rname", value: v}]}`))
	out := translator.Translate(in, nil, time.Now(), translator.Options{})
	st := out.GatewayAPI.Gateways[types.NamespacedName{Namespace: "ns", Name: "gw"}]
	wantCondition(t, "Gateway", st.Conditions, "Programmed", metav1.ConditionFalse, "Invalid")
	wantCondition(t, "Gateway", st.Conditions, "Accepted", metav1.ConditionTrue, "Accepted")
	if len(out.Warnings) == 0 || !strings.Contains(strings.Join(out.Warnings, "\n"), "Gateway ns/gw port 8081: not served") {
		t.Errorf("warnings %q do not name the refused port", out.Warnings)
	}
}

// refusedGateway is Gateway ns/gw with listeners, and HTTPRoute
// ns/bad-header attached through parentRef with one rule of filter.
func refusedGateway(listeners, parentRef, filter string) string {
	return gatewayClass + `
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw, namespace: ns}
spec:
  gatewayClassName: tlsplane
  addresses: [{type: IPAddress, value: 192.0.2.1}]
  listeners:
  ` + listeners + `
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: bad-header, namespace: ns}
spec:
  parentRefs: [` + parentRef + `]
  rules:
  - filters:
    - ` + filter + "\n"
}

func conditionOf(conds []metav1.Condition, typ string) *metav1.Condition {
	for i := range conds {
		if conds[i].Type == typ {
			return &conds[i]
		}
	}
	return nil
}

func messageOf(c *metav1.Condition) string {
	if c == nil {
		return "(no condition)"
	}
	return c.Message
}

// A UDP listener and a TCP listener of one port number are two Envoy
// listeners (two sockets): what Envoy would refuse in one says nothing of
// the other. A route Envoy would reject on the HTTP listener of port 53
// leaves the UDP listener of port 53 Programmed and served.
func TestRefusedListenerLeavesTheOtherProtocolOfItsPortProgrammed(t *testing.T) {
	in := gatewayInputs(t, refusedGateway("- {name: dns-tcp, protocol: HTTP, port: 53}\n  - {name: dns-udp, protocol: UDP, port: 53}",
		"{name: gw, sectionName: dns-tcp}", `type: RequestHeaderModifier
      requestHeaderModifier: {set: [{name: "x-bad\nname", value: v}]}`))
	out := translator.Translate(in, nil, time.Now(), translator.Options{})
	st := out.GatewayAPI.Gateways[types.NamespacedName{Namespace: "ns", Name: "gw"}]
	listeners := map[gwv1.SectionName][]metav1.Condition{}
	for _, l := range st.Listeners {
		listeners[l.Name] = l.Conditions
	}
	wantCondition(t, "listener dns-tcp", listeners["dns-tcp"], "Programmed", metav1.ConditionFalse, "Invalid")
	wantCondition(t, "listener dns-udp", listeners["dns-udp"], "Programmed", metav1.ConditionTrue, "Programmed")
	wantCondition(t, "Gateway", st.Conditions, "Programmed", metav1.ConditionTrue, "Programmed")
	fleet := out.Fleets["ns/gw"]
	if fleet == nil || len(fleet.Listeners) != 1 || fleet.Listeners[0].Name != "ns/gw/53/udp" {
		t.Errorf("fleet ns/gw serves %v, want only ns/gw/53/udp", fleet)
	}
}

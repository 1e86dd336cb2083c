package gateway

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/tlsplane/tlsplane/translator/condition"
	"github.com/tlsplane/tlsplane/translator/plan"
)

// SupportedFeatures are the Gateway API features a GatewayClass of ours
// reports: those proven through a real Envoy. Sorted, as the API requires.
var SupportedFeatures = []gwv1.FeatureName{
	"BackendTLSPolicy",
	"BackendTLSPolicySANValidation",
	"GRPCRoute",
	"GRPCRouteNamedRouteRule",
	"Gateway",
	"GatewayBackendClientCertificate",
	"GatewayHTTPListenerIsolation",
	"GatewayPort8080",
	"HTTPRoute",
	"HTTPRoute303RedirectStatusCode",
	"HTTPRoute307RedirectStatusCode",
	"HTTPRoute308RedirectStatusCode",
	"HTTPRouteBackendProtocolH2C",
	"HTTPRouteBackendProtocolWebSocket",
	"HTTPRouteBackendRequestHeaderModification",
	"HTTPRouteBackendTimeout",
	"HTTPRouteHostRewrite",
	"HTTPRouteMethodMatching",
	"HTTPRouteNamedRouteRule",
	"HTTPRouteParentRefPort",
	"HTTPRoutePathRedirect",
	"HTTPRoutePathRewrite",
	"HTTPRoutePortRedirect",
	"HTTPRouteQueryParamMatching",
	"HTTPRouteRequestTimeout",
	"HTTPRouteResponseHeaderModification",
	"HTTPRouteSchemeRedirect",
	"ReferenceGrant",
	"TCPRoute",
	"TLSRoute",
	"TLSRouteModeMixed",
	"TLSRouteModeTerminate",
	"UDPRoute",
}

// gatewayClassStatus accepts a class of ours unless it names parameters,
// which tlsplane does not take.
func gatewayClassStatus(c *gwv1.GatewayClass, now metav1.Time) (gwv1.GatewayClassStatus, bool) {
	cond := metav1.Condition{Type: string(gwv1.GatewayClassConditionStatusAccepted), Status: metav1.ConditionTrue,
		Reason: string(gwv1.GatewayClassReasonAccepted), Message: "GatewayClass is accepted"}
	if p := c.Spec.ParametersRef; p != nil {
		cond.Status, cond.Reason = metav1.ConditionFalse, string(gwv1.GatewayClassReasonInvalidParameters)
		cond.Message = fmt.Sprintf("parametersRef %s/%s %s: tlsplane takes no parameters", p.Group, p.Kind, p.Name)
	}
	st := gwv1.GatewayClassStatus{Conditions: condition.Stamp(c.Status.Conditions, []metav1.Condition{cond}, c.Generation, now)}
	for _, f := range SupportedFeatures {
		st.SupportedFeatures = append(st.SupportedFeatures, gwv1.SupportedFeature{Name: f})
	}
	return st, cond.Status == metav1.ConditionTrue
}

// gatewayStatus reports the Gateway's addresses, its acceptance (some
// listener served), whether it is programmed (served, emitted and
// addressed), and each listener's conditions. refused holds, per port, what
// Envoy would reject in the listener the emitter built for it: Status is
// written after emission, so a listener Envoy would refuse is not
// Programmed.
func (r *Result) Status(gs *Gateway, refused map[uint32]string, now metav1.Time) gwv1.GatewayStatus {
	gw := gs.gw
	addresses, addrProblem := gatewayAddresses(gs, r.memo.g)
	served, programmedListeners, total := 0, 0, len(gs.listeners)
	for _, l := range gs.listeners {
		if l.served() {
			served++
			if refused[uint32(l.spec.Port)] == "" {
				programmedListeners++
			}
		}
	}
	accepted := metav1.Condition{Type: string(gwv1.GatewayConditionAccepted), Status: metav1.ConditionTrue,
		Reason: string(gwv1.GatewayReasonAccepted), Message: "Gateway is accepted"}
	switch {
	case addrProblem != "":
		accepted.Status, accepted.Reason, accepted.Message = metav1.ConditionFalse, string(gwv1.GatewayReasonUnsupportedAddress), addrProblem
	case served == 0:
		accepted.Status, accepted.Reason, accepted.Message = metav1.ConditionFalse, string(gwv1.GatewayReasonListenersNotValid), "no listener can be served"
	case served < total:
		accepted.Reason, accepted.Message = string(gwv1.GatewayReasonListenersNotValid), fmt.Sprintf("%d of %d listeners are served; see status.listeners", served, total)
	}
	programmed := metav1.Condition{Type: string(gwv1.GatewayConditionProgrammed), Status: metav1.ConditionTrue,
		Reason: string(gwv1.GatewayReasonProgrammed), Message: fmt.Sprintf("served to the Envoy fleet %q", plan.GatewayFleet(gs.nn.Namespace, gs.nn.Name))}
	switch {
	case accepted.Status == metav1.ConditionFalse:
		programmed.Status, programmed.Reason, programmed.Message = metav1.ConditionFalse, string(gwv1.GatewayReasonInvalid), accepted.Message
	case programmedListeners == 0:
		programmed.Status, programmed.Reason = metav1.ConditionFalse, string(gwv1.GatewayReasonInvalid)
		programmed.Message = "Envoy would reject every listener; see status.listeners"
	case len(addresses) == 0:
		programmed.Status, programmed.Reason = metav1.ConditionFalse, string(gwv1.GatewayReasonAddressNotAssigned)
		programmed.Message = fmt.Sprintf("no address: set spec.addresses, or label a Service of namespace %s %s=%s", gs.nn.Namespace, gwv1.GatewayNameLabelKey, gs.nn.Name)
	}
	st := gwv1.GatewayStatus{
		Addresses:  addresses,
		Conditions: condition.Stamp(gw.Status.Conditions, []metav1.Condition{accepted, programmed, gs.resolvedRefs()}, gw.Generation, now),
	}
	prev := map[gwv1.SectionName][]metav1.Condition{}
	for _, l := range gw.Status.Listeners {
		prev[l.Name] = l.Conditions
	}
	for _, l := range gs.listeners {
		supported := l.supported
		if supported == nil {
			supported = []gwv1.RouteGroupKind{}
		}
		st.Listeners = append(st.Listeners, gwv1.ListenerStatus{
			Name:           l.spec.Name,
			SupportedKinds: supported,
			AttachedRoutes: l.attached,
			Conditions:     condition.Stamp(prev[l.spec.Name], listenerConditions(l, refused[uint32(l.spec.Port)]), gw.Generation, now),
		})
	}
	return st
}

// listenerConditions are a listener's conditions; refused is what Envoy
// would reject in its port's listener ("" for nothing).
func listenerConditions(l *listenerState, refused string) []metav1.Condition {
	accepted := metav1.Condition{Type: string(gwv1.ListenerConditionAccepted), Status: metav1.ConditionTrue,
		Reason: string(gwv1.ListenerReasonAccepted), Message: "Listener is accepted"}
	if !l.accepted {
		accepted.Status, accepted.Reason, accepted.Message = metav1.ConditionFalse, l.acceptedReason, l.acceptedMsg
	}
	resolved := metav1.Condition{Type: string(gwv1.ListenerConditionResolvedRefs), Status: metav1.ConditionTrue,
		Reason: string(gwv1.ListenerReasonResolvedRefs), Message: "All references are resolved"}
	if !l.resolved {
		resolved.Status, resolved.Reason, resolved.Message = metav1.ConditionFalse, l.resolvedReason, l.resolvedMsg
	}
	conflicted := metav1.Condition{Type: string(gwv1.ListenerConditionConflicted), Status: metav1.ConditionFalse,
		Reason: string(gwv1.ListenerReasonNoConflicts), Message: "No conflicts"}
	if l.conflictReason != "" {
		conflicted.Status, conflicted.Reason, conflicted.Message = metav1.ConditionTrue, l.conflictReason, l.conflictMsg
	}
	programmed := metav1.Condition{Type: string(gwv1.ListenerConditionProgrammed), Status: metav1.ConditionTrue,
		Reason: string(gwv1.ListenerReasonProgrammed), Message: "Listener is served"}
	if !l.served() {
		programmed.Status, programmed.Reason, programmed.Message = metav1.ConditionFalse, string(gwv1.ListenerReasonInvalid), "Listener is not served; see its other conditions"
	} else if refused != "" {
		programmed.Status, programmed.Reason = metav1.ConditionFalse, string(gwv1.ListenerReasonInvalid)
		programmed.Message = fmt.Sprintf("listener %s is not served: Envoy would reject port %d's configuration: %s", l.spec.Name, l.spec.Port, refused)
	}
	return []metav1.Condition{accepted, programmed, resolved, conflicted}
}

// gatewayAddresses are spec.addresses (IP addresses and hostnames), else
// the addresses of the Services labelled with the Gateway's name: their
// load-balancer ingress, else their cluster IPs. tlsplane runs no Envoy,
// so it assigns none itself.
func gatewayAddresses(gs *Gateway, g *gatewayIndex) ([]gwv1.GatewayStatusAddress, string) {
	var out []gwv1.GatewayStatusAddress
	ip, hostname := gwv1.IPAddressType, gwv1.HostnameAddressType
	for i, a := range gs.gw.Spec.Addresses {
		t := gwv1.IPAddressType
		if a.Type != nil {
			t = *a.Type
		}
		if t != gwv1.IPAddressType && t != gwv1.HostnameAddressType {
			return nil, fmt.Sprintf("spec.addresses[%d]: type %q is not supported: tlsplane reports IPAddress and Hostname addresses", i, t)
		}
		if a.Value != "" {
			out = append(out, gwv1.GatewayStatusAddress{Type: ptrTo(t), Value: a.Value})
		}
	}
	if len(out) > 0 {
		return out, ""
	}
	for _, svc := range g.fronting[gs.nn] {
		for _, in := range svc.Status.LoadBalancer.Ingress {
			if in.IP != "" {
				out = append(out, gwv1.GatewayStatusAddress{Type: &ip, Value: in.IP})
			} else if in.Hostname != "" {
				out = append(out, gwv1.GatewayStatusAddress{Type: &hostname, Value: in.Hostname})
			}
		}
	}
	if len(out) > 0 {
		return out, ""
	}
	for _, svc := range g.fronting[gs.nn] {
		if svc.Spec.Type == corev1.ServiceTypeLoadBalancer {
			// Its address is the load balancer's, not yet assigned: a
			// cluster IP reached without a kube-proxy leads nowhere, or
			// worse, out of the cluster.
			continue
		}
		for _, cip := range svc.Spec.ClusterIPs {
			if cip != "" && cip != corev1.ClusterIPNone {
				out = append(out, gwv1.GatewayStatusAddress{Type: &ip, Value: cip})
			}
		}
	}
	return out, ""
}

// resolvedRefs is the Gateway's ResolvedRefs: its backend client
// certificate, then a summary of its listeners' ResolvedRefs. It does not
// change Accepted or Programmed: a Gateway with a bad backend certificate
// is served, and the TLS backends its routes reach fail closed.
func (gs *Gateway) resolvedRefs() metav1.Condition {
	c := metav1.Condition{Type: string(gwv1.GatewayConditionResolvedRefs), Status: metav1.ConditionTrue,
		Reason: string(gwv1.GatewayReasonResolvedRefs), Message: "every reference is resolved"}
	if b := gs.backend; b != nil && b.cert == nil {
		c.Status, c.Reason, c.Message = metav1.ConditionFalse, string(b.reason), b.message+"; the TLS backends its routes reach fail closed, but for those whose policy names a client certificate of its own"
		return c
	}
	var unresolved []string
	for _, l := range gs.listeners {
		if !l.resolved {
			unresolved = append(unresolved, string(l.spec.Name))
		}
	}
	if len(unresolved) > 0 {
		c.Status, c.Reason = metav1.ConditionFalse, string(gwv1.GatewayReasonListenersNotResolved)
		c.Message = fmt.Sprintf("listeners %s: references not resolved; see status.listeners", strings.Join(unresolved, ", "))
	}
	return c
}

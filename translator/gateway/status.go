package gateway

import (
	"fmt"
	"strings"

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
	"GatewayAddressEmpty",
	"GatewayBackendClientCertificate",
	"GatewayFrontendClientCertificateValidation",
	"GatewayFrontendClientCertificateValidationInsecureFallback",
	"GatewayHTTPListenerIsolation",
	"GatewayHTTPSListenerDetectMisdirectedRequests",
	"GatewayInfrastructure",
	"GatewayPort8080",
	"GatewayStaticAddresses",
	"HTTPRoute",
	"HTTPRoute303RedirectStatusCode",
	"HTTPRoute307RedirectStatusCode",
	"HTTPRoute308RedirectStatusCode",
	"HTTPRouteBackendProtocolH2C",
	"HTTPRouteBackendProtocolWebSocket",
	"HTTPRouteBackendRequestHeaderModification",
	"HTTPRouteBackendTimeout",
	"HTTPRouteCORS",
	"HTTPRouteDestinationPortMatching",
	"HTTPRouteHostRewrite",
	"HTTPRouteMethodMatching",
	"HTTPRouteNamedRouteRule",
	"HTTPRouteParentRefPort",
	"HTTPRoutePathRedirect",
	"HTTPRoutePathRewrite",
	"HTTPRoutePortRedirect",
	"HTTPRouteQueryParamMatching",
	"HTTPRouteRequestMirror",
	"HTTPRouteRequestMultipleMirrors",
	"HTTPRouteRequestPercentageMirror",
	"HTTPRouteRequestTimeout",
	"HTTPRouteResponseHeaderModification",
	"HTTPRouteSchemeRedirect",
	"ListenerSet",
	"ReferenceGrant",
	"TCPRoute",
	"TLSRoute",
	"TLSRouteModeMixed",
	"TLSRouteModeTerminate",
	"UDPRoute",
}

// gatewayClassStatus accepts a class of ours unless it names parameters,
// which tlsplane does not take; it lists the features of the channel the
// cluster's CRDs come from.
func gatewayClassStatus(c *gwv1.GatewayClass, channel Channel, now metav1.Time) (gwv1.GatewayClassStatus, bool) {
	cond := metav1.Condition{Type: string(gwv1.GatewayClassConditionStatusAccepted), Status: metav1.ConditionTrue,
		Reason: string(gwv1.GatewayClassReasonAccepted), Message: "GatewayClass is accepted"}
	if p := c.Spec.ParametersRef; p != nil {
		cond.Status, cond.Reason = metav1.ConditionFalse, string(gwv1.GatewayClassReasonInvalidParameters)
		cond.Message = fmt.Sprintf("parametersRef %s/%s %s: tlsplane takes no parameters", p.Group, p.Kind, p.Name)
	}
	st := gwv1.GatewayClassStatus{Conditions: condition.Stamp(c.Status.Conditions, []metav1.Condition{cond}, c.Generation, now)}
	for _, f := range channel.Features() {
		st.SupportedFeatures = append(st.SupportedFeatures, gwv1.SupportedFeature{Name: f})
	}
	return st, cond.Status == metav1.ConditionTrue
}

// Status reports the Gateway's addresses, its acceptance (some listener
// served), whether it is programmed (served, emitted and addressed), and
// each listener's conditions. refused holds, per socket (port, as TCP or
// UDP), what Envoy would reject in the listener the emitter built for it:
// Status is written after emission, so a listener Envoy would refuse is
// not Programmed.
func (r *Result) Status(gs *Gateway, refused map[Socket]string, now metav1.Time) gwv1.GatewayStatus {
	gw := gs.gw
	addr := gatewayAddresses(gs, r.memo.g)
	programmedListeners := 0
	for _, l := range gs.listeners {
		if l.served() && refused[l.socket()] == "" {
			programmedListeners++
		}
	}
	accepted := gs.acceptedCondition()
	programmed := metav1.Condition{Type: string(gwv1.GatewayConditionProgrammed), Status: metav1.ConditionTrue,
		Reason: string(gwv1.GatewayReasonProgrammed), Message: fmt.Sprintf("served to the Envoy fleet %q", plan.GatewayFleet(gs.nn.Namespace, gs.nn.Name))}
	switch {
	case accepted.Status == metav1.ConditionFalse:
		programmed.Status, programmed.Reason, programmed.Message = metav1.ConditionFalse, string(gwv1.GatewayReasonInvalid), accepted.Message
	case programmedListeners == 0:
		programmed.Status, programmed.Reason = metav1.ConditionFalse, string(gwv1.GatewayReasonInvalid)
		programmed.Message = "Envoy would reject every listener; see status.listeners"
	case addr.reason != "":
		programmed.Status, programmed.Reason, programmed.Message = metav1.ConditionFalse, string(addr.reason), addr.message
	}
	st := gwv1.GatewayStatus{
		Addresses:  addr.addresses,
		Conditions: condition.Stamp(gw.Status.Conditions, r.conditions(gs, accepted, programmed), gw.Generation, now),
	}
	prev := map[gwv1.SectionName][]metav1.Condition{}
	for _, l := range gw.Status.Listeners {
		prev[l.Name] = l.Conditions
	}
	for _, l := range gs.listeners {
		st.Listeners = append(st.Listeners, listenerStatus(l, prev[l.spec.Name], refused, gw.Generation, now))
	}
	if n := gs.attachedSets(); n > 0 || gw.Spec.AllowedListeners != nil {
		st.AttachedListenerSets = ptrTo(n)
	}
	return st
}

// listenerStatus is one listener's entry in its Gateway's or ListenerSet's
// status.listeners; prev are its conditions as they were.
func listenerStatus(l *listenerState, prev []metav1.Condition, refused map[Socket]string, generation int64, now metav1.Time) gwv1.ListenerStatus {
	supported := l.supported
	if supported == nil {
		supported = []gwv1.RouteGroupKind{}
	}
	return gwv1.ListenerStatus{
		Name:           l.spec.Name,
		SupportedKinds: supported,
		AttachedRoutes: l.attached,
		Conditions:     condition.Stamp(prev, listenerConditions(l, refused[l.socket()]), generation, now),
	}
}

// acceptedCondition is the Gateway's Accepted: it names no parameters,
// its addresses are of a type tlsplane reports, and some listener of its
// own is served.
func (gs *Gateway) acceptedCondition() metav1.Condition {
	addrProblem := unsupportedAddress(gs.gw)
	served, total := 0, len(gs.listeners)
	for _, l := range gs.listeners {
		if l.served() {
			served++
		}
	}
	accepted := metav1.Condition{Type: string(gwv1.GatewayConditionAccepted), Status: metav1.ConditionTrue,
		Reason: string(gwv1.GatewayReasonAccepted), Message: "Gateway is accepted"}
	switch {
	case gs.gw.Spec.Infrastructure != nil && gs.gw.Spec.Infrastructure.ParametersRef != nil:
		p := gs.gw.Spec.Infrastructure.ParametersRef
		accepted.Status, accepted.Reason = metav1.ConditionFalse, string(gwv1.GatewayReasonInvalidParameters)
		accepted.Message = fmt.Sprintf("spec.infrastructure.parametersRef %s/%s %s: tlsplane takes no parameters", p.Group, p.Kind, p.Name)
	case addrProblem != "":
		accepted.Status, accepted.Reason, accepted.Message = metav1.ConditionFalse, string(gwv1.GatewayReasonUnsupportedAddress), addrProblem
	case served == 0:
		accepted.Status, accepted.Reason, accepted.Message = metav1.ConditionFalse, string(gwv1.GatewayReasonListenersNotValid), "no listener can be served"
	case served < total:
		accepted.Reason, accepted.Message = string(gwv1.GatewayReasonListenersNotValid), fmt.Sprintf("%d of %d listeners are served; see status.listeners", served, total)
	}
	return accepted
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
	switch {
	case !l.resolved:
		resolved.Status, resolved.Reason, resolved.Message = metav1.ConditionFalse, l.resolvedReason, l.resolvedMsg
	case l.caReason != "":
		resolved.Status, resolved.Reason, resolved.Message = metav1.ConditionFalse, l.caReason, l.caMsg
	}
	conflicted := metav1.Condition{Type: string(gwv1.ListenerConditionConflicted), Status: metav1.ConditionFalse,
		Reason: string(gwv1.ListenerReasonNoConflicts), Message: "No conflicts"}
	programmed := metav1.Condition{Type: string(gwv1.ListenerConditionProgrammed), Status: metav1.ConditionTrue,
		Reason: string(gwv1.ListenerReasonProgrammed), Message: "Listener is served"}
	if l.conflictReason != "" {
		// A conflicted listener is not accepted, and not programmed, for
		// its conflict, as the conformance suite reads them.
		conflicted.Status, conflicted.Reason, conflicted.Message = metav1.ConditionTrue, l.conflictReason, l.conflictMsg
		if l.accepted {
			accepted.Status, accepted.Reason, accepted.Message = metav1.ConditionFalse, l.conflictReason, l.conflictMsg
			programmed.Status, programmed.Reason, programmed.Message = metav1.ConditionFalse, l.conflictReason, l.conflictMsg
			return []metav1.Condition{accepted, programmed, resolved, conflicted}
		}
	}
	if !l.served() {
		programmed.Status, programmed.Reason, programmed.Message = metav1.ConditionFalse, string(gwv1.ListenerReasonInvalid), "Listener is not served; see its other conditions"
	} else if refused != "" {
		programmed.Status, programmed.Reason = metav1.ConditionFalse, string(gwv1.ListenerReasonInvalid)
		programmed.Message = fmt.Sprintf("listener %s is not served: Envoy would reject port %d's configuration: %s", l.spec.Name, l.spec.Port, refused)
	}
	return []metav1.Condition{accepted, programmed, resolved, conflicted}
}

// unsupportedAddress names the first spec.addresses entry of a type
// tlsplane does not report; "" when there is none.
func unsupportedAddress(gw *gwv1.Gateway) string {
	for i, a := range gw.Spec.Addresses {
		if a.Type != nil && *a.Type != gwv1.IPAddressType && *a.Type != gwv1.HostnameAddressType {
			return fmt.Sprintf("spec.addresses[%d]: type %q is not supported: tlsplane reports IPAddress and Hostname addresses", i, *a.Type)
		}
	}
	return ""
}

// conditions are the Gateway's conditions: Accepted, Programmed,
// ResolvedRefs, InsecureFrontendValidationMode while a client
// certificate validation lets clients through without a valid
// certificate (the condition is absent otherwise, as the spec asks), and
// with the provisioner on, those of its provisioning.
func (r *Result) conditions(gs *Gateway, accepted, programmed metav1.Condition) []metav1.Condition {
	out := []metav1.Condition{accepted, programmed, gs.resolvedRefs()}
	if fields := gs.frontend.InsecureFields(gs.gw); len(fields) > 0 {
		out = append(out, metav1.Condition{Type: string(gwv1.GatewayConditionInsecureFrontendValidationMode), Status: metav1.ConditionTrue,
			Reason:  string(gwv1.GatewayReasonConfigurationChanged),
			Message: fmt.Sprintf("%s: AllowInsecureFallback: clients without a certificate, or with one that fails validation, are let through", strings.Join(fields, ", "))})
	}
	if p := r.cfg.Provisioning; p != nil {
		out = append(out, p.Conditions(gs.gw)...)
	}
	return out
}

// resolvedRefs is the Gateway's ResolvedRefs: its backend client
// certificate, then a summary of its listeners' ResolvedRefs. It does not
// change Accepted or Programmed: a Gateway with a bad backend certificate
// is served, and the TLS backends its routes reach fail closed.
func (gs *Gateway) resolvedRefs() metav1.Condition {
	c := metav1.Condition{Type: string(gwv1.GatewayConditionResolvedRefs), Status: metav1.ConditionTrue,
		Reason: string(gwv1.GatewayReasonResolvedRefs), Message: "every reference is resolved"}
	if b := gs.backend; b != nil && b.Cert == nil {
		c.Status, c.Reason, c.Message = metav1.ConditionFalse, string(b.Reason), b.Message+"; the TLS backends its routes reach fail closed, but for those whose policy names a client certificate of its own"
		return c
	}
	var unresolved []string
	for _, l := range gs.listeners {
		if !l.resolved || l.caReason != "" {
			unresolved = append(unresolved, string(l.spec.Name))
		}
	}
	if len(unresolved) > 0 {
		c.Status, c.Reason = metav1.ConditionFalse, string(gwv1.GatewayReasonListenersNotResolved)
		c.Message = fmt.Sprintf("listeners %s: references not resolved; see status.listeners", strings.Join(unresolved, ", "))
	}
	return c
}

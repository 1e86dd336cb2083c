package gateway

import (
	"fmt"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/tlsplane/tlsplane/translator/gatewaytls"
	"github.com/tlsplane/tlsplane/translator/input"
	"github.com/tlsplane/tlsplane/translator/route"
)

// listenerState is one Gateway listener as judged: whether it is served,
// the conditions it reports and the routes attached to it.
type listenerState struct {
	spec *gwv1.Listener
	// owner is the Gateway or ListenerSet that declares the listener; set
	// is the ListenerSet, nil for the Gateway's own listeners.
	owner    listenerOwner
	set      *listenerSet
	hostname string // "" for any
	https    bool
	// stream: a TLS or TCP listener, whose routes' backends get the
	// connection as it is (passthrough, TCP) or after TLS (terminate).
	stream, passthrough bool
	// datagram: a UDP listener, whose route's backends get its sessions.
	datagram  bool
	supported []gwv1.RouteGroupKind
	// accepted is false for a protocol or mode tlsplane does not serve;
	// resolved is false for a certificate that cannot be used.
	accepted, resolved          bool
	acceptedReason, acceptedMsg string
	resolvedReason, resolvedMsg string
	conflictReason, conflictMsg string
	certSecrets                 []string
	// frontend is the client certificate validation the listener's chain
	// applies (spec.tls.frontend), nil for none; caReason and caMsg say
	// why one of its caCertificateRefs cannot be used.
	frontend        *gatewaytls.Validation
	caReason, caMsg string
	attached        int32
	// byKind counts the attached routes of each kind: a listener with both
	// has conflicts to settle (conflicts.go), which a patch does not.
	byKind map[input.Kind]int
	// byHost are the routes served through the listener, by the hostname
	// they share with it.
	byHost map[string][]*route.Route
}

// served: the listener gets Envoy configuration.
func (l *listenerState) served() bool {
	return l.accepted && l.resolved && l.conflictReason == "" && len(l.supported) > 0
}

// listenerAttachment is a route counted on one listener, for the hostnames they
// share: what detaching the route undoes.
type listenerAttachment struct {
	listener  *listenerState
	hostnames []string
}

// listenerOwner is the object a listener is declared in: what its
// certificate references are made from, and the namespace its
// allowedRoutes Same means.
type listenerOwner struct {
	kind string // Gateway or ListenerSet
	nn   types.NamespacedName
}

// judgeListeners validates each listener of a Gateway, then the conflicts
// between them.
func judgeListeners(gw *gwv1.Gateway, ix *input.Index, g *gatewayIndex, secrets gatewaytls.Certificates, frontend *gatewaytls.Frontend) []*listenerState {
	owner := listenerOwner{kind: "Gateway", nn: input.NameOf(gw.Namespace, gw.Name)}
	out := make([]*listenerState, 0, len(gw.Spec.Listeners))
	for i := range gw.Spec.Listeners {
		out = append(out, judgeListener(owner, &gw.Spec.Listeners[i], ix, g, secrets, frontend))
	}
	markConflicts(out)
	return out
}

func judgeListener(owner listenerOwner, l *gwv1.Listener, ix *input.Index, g *gatewayIndex, secrets gatewaytls.Certificates, frontend *gatewaytls.Frontend) *listenerState {
	s := &listenerState{spec: l, owner: owner, accepted: true, resolved: true}
	if l.Hostname != nil {
		s.hostname = string(*l.Hostname)
	}
	switch l.Protocol {
	case gwv1.HTTPProtocolType:
	case gwv1.HTTPSProtocolType:
		s.https = true
	case gwv1.TLSProtocolType:
		s.stream = true
		s.passthrough = l.TLS != nil && l.TLS.Mode != nil && *l.TLS.Mode == gwv1.TLSModePassthrough
	case gwv1.TCPProtocolType:
		s.stream = true
	case gwv1.UDPProtocolType:
		s.datagram = true
	default:
		s.accepted = false
		s.acceptedReason = string(gwv1.ListenerReasonUnsupportedProtocol)
		s.acceptedMsg = fmt.Sprintf("listener %s: protocol %q is not supported; tlsplane serves HTTP, HTTPS, TLS, TCP and UDP", l.Name, l.Protocol)
	}
	s.supported, s.resolvedReason, s.resolvedMsg = routeKinds(l)
	if s.resolvedReason != "" {
		s.resolved = false
	}
	terminates := s.https || l.Protocol == gwv1.TLSProtocolType && !s.passthrough
	if terminates && s.accepted {
		judgeCertificates(owner, l, s, ix, g, secrets)
	}
	if s.https && s.accepted {
		judgeClientValidation(l, s, frontend)
	}
	return s
}

// routeKinds is what allowedRoutes.kinds permits: every route kind the
// protocol serves (HTTPRoute and GRPCRoute on HTTP and HTTPS) unless kinds
// names some; a kind the listener does not serve is InvalidRouteKinds.
func routeKinds(l *gwv1.Listener) ([]gwv1.RouteGroupKind, string, string) {
	var served []input.Kind
	switch l.Protocol {
	case gwv1.HTTPProtocolType, gwv1.HTTPSProtocolType:
		served = []input.Kind{input.KindHTTPRoute, input.KindGRPCRoute}
	case gwv1.TLSProtocolType:
		served = []input.Kind{input.KindTLSRoute}
	case gwv1.TCPProtocolType:
		served = []input.Kind{input.KindTCPRoute}
	case gwv1.UDPProtocolType:
		served = []input.Kind{input.KindUDPRoute}
	}
	kindOf := func(k input.Kind) gwv1.RouteGroupKind {
		return gwv1.RouteGroupKind{Group: ptrTo(gwv1.Group(gwv1.GroupName)), Kind: gwv1.Kind(k)}
	}
	if l.AllowedRoutes == nil || len(l.AllowedRoutes.Kinds) == 0 {
		var out []gwv1.RouteGroupKind
		for _, k := range served {
			out = append(out, kindOf(k))
		}
		return out, "", ""
	}
	var ok []gwv1.RouteGroupKind
	var bad []string
	for _, k := range l.AllowedRoutes.Kinds {
		group := gwv1.GroupName
		if k.Group != nil {
			group = string(*k.Group)
		}
		if group == gwv1.GroupName && slices.Contains(served, input.Kind(k.Kind)) {
			ok = append(ok, kindOf(input.Kind(k.Kind)))
			continue
		}
		bad = append(bad, fmt.Sprintf("%s/%s", group, k.Kind))
	}
	if len(bad) > 0 {
		return ok, string(gwv1.ListenerReasonInvalidRouteKinds), fmt.Sprintf("listener %s: allowedRoutes.kinds %s: a %s listener serves %s", l.Name, strings.Join(bad, ", "), l.Protocol, kindNames(served))
	}
	return ok, "", ""
}

// supports: the listener admits routes of kind k.
func (l *listenerState) supports(k input.Kind) bool {
	for _, s := range l.supported {
		if s.Kind == gwv1.Kind(k) {
			return true
		}
	}
	return false
}

func kindNames(kinds []input.Kind) string {
	if len(kinds) == 0 {
		return "no route kind tlsplane supports"
	}
	names := make([]string, 0, len(kinds))
	for _, k := range kinds {
		names = append(names, gwv1.GroupName+"/"+string(k))
	}
	return strings.Join(names, " and ")
}

// judgeCertificates resolves the certificateRefs of a listener that
// terminates TLS (package gatewaytls); a ref that cannot be used makes
// its ResolvedRefs False, unless another reason did first.
func judgeCertificates(owner listenerOwner, l *gwv1.Listener, s *listenerState, ix *input.Index, g *gatewayIndex, certs gatewaytls.Certificates) {
	var reason gwv1.ListenerConditionReason
	var msg string
	switch {
	case l.TLS == nil || len(l.TLS.CertificateRefs) == 0:
		reason, msg = gwv1.ListenerReasonInvalidCertificateRef, "tls.certificateRefs: a listener that terminates TLS needs a certificate"
	case s.https && l.TLS.Mode != nil && *l.TLS.Mode != gwv1.TLSModeTerminate:
		s.accepted = false
		s.acceptedReason = string(gwv1.ListenerReasonUnsupportedValue)
		s.acceptedMsg = fmt.Sprintf("listener %s: tls.mode %q: an HTTPS listener terminates TLS", l.Name, *l.TLS.Mode)
		return
	default:
		s.certSecrets, reason, msg = certs.Resolve(owner.kind, owner.nn, l.TLS.CertificateRefs, ix, g.grants)
	}
	if reason != "" && s.resolved {
		s.resolved = false
		s.resolvedReason, s.resolvedMsg = string(reason), fmt.Sprintf("listener %s: %s", l.Name, msg)
	}
	if !s.resolved {
		s.certSecrets = nil
	}
}

// markConflicts: HTTP and HTTPS on one port is a protocol conflict for
// every listener of the port; two listeners of one protocol, port and
// hostname conflict with each other. UDP ports are apart from TCP ports
// of the same number: a UDP listener conflicts only with another UDP one.
func markConflicts(ls []*listenerState) {
	protocols := map[Socket]map[gwv1.ProtocolType]bool{}
	socketOf := (*listenerState).socket
	for _, l := range ls {
		if !l.accepted {
			continue
		}
		if protocols[socketOf(l)] == nil {
			protocols[socketOf(l)] = map[gwv1.ProtocolType]bool{}
		}
		protocols[socketOf(l)][protocolClass(l.spec.Protocol)] = true
	}
	hostnames := map[string]int{}
	for _, l := range ls {
		if l.accepted {
			hostnames[fmt.Sprintf("%d/%s/%s", l.spec.Port, protocolClass(l.spec.Protocol), l.hostname)]++
		}
	}
	for _, l := range ls {
		if !l.accepted {
			continue
		}
		switch {
		case len(protocols[socketOf(l)]) > 1:
			l.conflictReason = string(gwv1.ListenerReasonProtocolConflict)
			l.conflictMsg = fmt.Sprintf("listener %s: port %d is used by listeners of another protocol", l.spec.Name, l.spec.Port)
		case hostnames[fmt.Sprintf("%d/%s/%s", l.spec.Port, protocolClass(l.spec.Protocol), l.hostname)] > 1:
			l.conflictReason = string(gwv1.ListenerReasonHostnameConflict)
			l.conflictMsg = fmt.Sprintf("listener %s: another %s listener on port %d has hostname %q", l.spec.Name, l.spec.Protocol, l.spec.Port, l.hostname)
		}
	}
}

// protocolClass is what listeners sharing a port must have in common:
// HTTPS and TLS listeners are told apart by SNI, so they may share one.
func protocolClass(p gwv1.ProtocolType) gwv1.ProtocolType {
	if p == gwv1.TLSProtocolType {
		return gwv1.HTTPSProtocolType
	}
	return p
}

// allows reports whether the listener's allowedRoutes admits a route of
// the namespace; Same is the namespace of the listener's owner.
func (l *listenerState) allows(routeNamespace string, g *gatewayIndex) bool {
	if len(l.supported) == 0 {
		return false
	}
	from := gwv1.NamespacesFromSame
	var selector *metav1.LabelSelector
	if ar := l.spec.AllowedRoutes; ar != nil && ar.Namespaces != nil {
		if ar.Namespaces.From != nil {
			from = *ar.Namespaces.From
		}
		selector = ar.Namespaces.Selector
	}
	return g.admits(from, selector, l.owner.nn.Namespace, routeNamespace)
}

// admits applies a from/selector pair (allowedRoutes, allowedListeners) to
// an object of namespace ns, for an owner of namespace ownerNamespace.
func (g *gatewayIndex) admits(from gwv1.FromNamespaces, selector *metav1.LabelSelector, ownerNamespace, ns string) bool {
	switch from {
	case gwv1.NamespacesFromAll:
		return true
	case gwv1.NamespacesFromSame:
		return ownerNamespace == ns
	case gwv1.NamespacesFromSelector:
		if selector == nil {
			return false
		}
		sel, err := metav1.LabelSelectorAsSelector(selector)
		if err != nil {
			return false
		}
		n, ok := g.namespaces[ns]
		if !ok {
			return false
		}
		return sel.Matches(labels.Set(n.Labels))
	}
	return false
}

func ptrTo[T any](v T) *T { return &v }

// Socket is what a listener binds: a port number, as UDP or as TCP.
// Listeners conflict only within one socket, and each socket is one Envoy
// listener: what Envoy would refuse is refused per socket.
type Socket struct {
	Port gwv1.PortNumber
	UDP  bool
}

func (l *listenerState) socket() Socket { return Socket{Port: l.spec.Port, UDP: l.datagram} }

package gateway

import (
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/types"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/tlsplane/tlsplane/translator/input"
	"github.com/tlsplane/tlsplane/translator/route"
)

// parentResult is how a route fared on one of its parentRefs to a Gateway
// of ours.
type parentResult struct {
	route.Parent     // its verdict, for the route's status
	gateway          *Gateway
	attachedListener bool // served through at least one listener
	attachments      []listenerAttachment
}

// attachRoute resolves each parentRef of rs that names a Gateway of ours,
// or a ListenerSet whose parent is one: the listeners it selects, those
// whose allowedRoutes admit it, and the hostnames they share. A parentRef
// to anything else is another controller's and gets no entry.
func attachRoute(rs *route.Route, gateways map[types.NamespacedName]*Gateway, g *gatewayIndex) []parentResult {
	var out []parentResult
	seen := map[string]bool{}
	for _, ref := range rs.ParentRefs {
		group, kind := gwv1.GroupName, "Gateway"
		if ref.Group != nil {
			group = string(*ref.Group)
		}
		if ref.Kind != nil {
			kind = string(*ref.Kind)
		}
		if group != gwv1.GroupName || (kind != "Gateway" && kind != "ListenerSet") {
			continue
		}
		ns := rs.Name.Namespace
		if ref.Namespace != nil {
			ns = string(*ref.Namespace)
		}
		nn := types.NamespacedName{Namespace: ns, Name: string(ref.Name)}
		var gs *Gateway
		var set *listenerSet
		if kind == "Gateway" {
			gs = gateways[nn]
		} else if parent, ok := g.setParents[nn]; ok {
			if gs = gateways[parent]; gs != nil {
				set = gs.set(nn)
			}
		}
		if gs == nil {
			continue
		}
		if key := route.ParentKey(ref, rs.Name.Namespace); seen[key] {
			continue
		} else {
			seen[key] = true
		}
		out = append(out, attachToParent(rs, ref, gs, set, g))
	}
	return out
}

// attachToParent attaches the route to the listeners a parentRef selects:
// a Gateway's own listeners, or a ListenerSet's (a Gateway parentRef never
// reaches the listeners of its ListenerSets).
func attachToParent(rs *route.Route, ref gwv1.ParentReference, gs *Gateway, set *listenerSet, g *gatewayIndex) parentResult {
	res := parentResult{Parent: route.Parent{Ref: ref}, gateway: gs}
	parent, listeners := "Gateway "+gatewayKey(gs.nn), gs.listeners
	if set != nil {
		parent, listeners = "ListenerSet "+gatewayKey(set.nn), set.listeners
		if !set.attached() {
			res.Reason = string(gwv1.RouteReasonNotAllowedByListeners)
			res.Message = fmt.Sprintf("%s is not attached to Gateway %s: %s", parent, gatewayKey(gs.nn), set.notAttachedMsg)
			return res
		}
	}
	var selected, allowed, intersecting int
	for _, l := range listeners {
		if ref.SectionName != nil && *ref.SectionName != l.spec.Name {
			continue
		}
		if ref.Port != nil && *ref.Port != l.spec.Port {
			continue
		}
		selected++
		if !l.allows(rs.Name.Namespace, g) || !l.supports(rs.Kind) {
			continue
		}
		allowed++
		hostnames := intersectHostnames(l.hostname, hostnamesOf(rs.Hostnames))
		if len(hostnames) == 0 {
			continue
		}
		intersecting++
		// Counted whether or not the listener is served: attachment is
		// the route's choice and the listener's consent, as conformance
		// reads attachedRoutes.
		l.attached++
		if l.byKind == nil {
			l.byKind = map[input.Kind]int{}
		}
		l.byKind[rs.Kind]++
		if l.served() {
			if l.byHost == nil {
				l.byHost = map[string][]*route.Route{}
			}
			for _, h := range hostnames {
				l.byHost[h] = append(l.byHost[h], rs)
			}
			res.attachedListener = true
		}
		res.attachments = append(res.attachments, listenerAttachment{listener: l, hostnames: hostnames})
	}
	switch {
	case selected == 0:
		res.Reason = string(gwv1.RouteReasonNoMatchingParent)
		res.Message = fmt.Sprintf("%s has no listener%s", parent, parentSelector(ref))
	case allowed == 0:
		res.Reason = string(gwv1.RouteReasonNotAllowedByListeners)
		res.Message = fmt.Sprintf("no listener of %s%s admits %ss of namespace %s", parent, parentSelector(ref), rs.Kind, rs.Name.Namespace)
	case intersecting == 0:
		res.Reason = string(gwv1.RouteReasonNoMatchingListenerHostname)
		res.Message = fmt.Sprintf("no hostname of the route matches a listener of %s%s", parent, parentSelector(ref))
	case len(rs.Unsupported) > 0:
		res.Reason = string(gwv1.RouteReasonUnsupportedValue)
		res.Message = "these rules answer 500: " + strings.Join(rs.Unsupported, "; ")
	default:
		res.Accepted = true
		res.Reason, res.Message = string(gwv1.RouteReasonAccepted), "Route is accepted"
	}
	return res
}

// detachRoute undoes attachRoute: the route is no longer counted on, or
// served through, the listeners it attached to.
func detachRoute(rs *route.Route, parents []parentResult) {
	for _, p := range parents {
		for _, a := range p.attachments {
			l := a.listener
			l.attached--
			l.byKind[rs.Kind]--
			if !l.served() {
				continue
			}
			for _, h := range a.hostnames {
				if left := slices.DeleteFunc(l.byHost[h], func(r *route.Route) bool { return r == rs }); len(left) > 0 {
					l.byHost[h] = left
				} else {
					delete(l.byHost, h)
				}
			}
		}
	}
}

func parentSelector(ref gwv1.ParentReference) string {
	var s string
	if ref.SectionName != nil {
		s += fmt.Sprintf(" named %q", *ref.SectionName)
	}
	if ref.Port != nil {
		s += fmt.Sprintf(" on port %d", *ref.Port)
	}
	return s
}

func hostnamesOf(hostnames []gwv1.Hostname) []string {
	out := make([]string, 0, len(hostnames))
	for _, h := range hostnames {
		out = append(out, string(h))
	}
	return out
}

// Verdict is the parent's verdict, for the route's status.
func (p parentResult) Verdict() route.Parent {
	v := p.Parent
	for _, a := range p.attachments {
		v.Passthrough = v.Passthrough || a.listener.passthrough
	}
	return v
}

package route

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/tlsplane/tlsplane/translator/condition"
)

// Parent is how a route fared on one of its parentRefs of ours: whether
// the parent (a Gateway, or a ListenerSet) accepts it, and why.
type Parent struct {
	Ref      gwv1.ParentReference
	Accepted bool
	Reason   string
	Message  string
	// Passthrough: the route is attached to a TLS Passthrough listener of
	// this parent (a TLSRoute's XBackends speaking TLS are refused there).
	Passthrough bool
}

// ParentKey identifies a parentRef with its defaults filled in.
func ParentKey(r gwv1.ParentReference, routeNamespace string) string {
	group, kind, ns, section, port := gwv1.GroupName, "Gateway", routeNamespace, "", ""
	if r.Group != nil {
		group = string(*r.Group)
	}
	if r.Kind != nil {
		kind = string(*r.Kind)
	}
	if r.Namespace != nil {
		ns = string(*r.Namespace)
	}
	if r.SectionName != nil {
		section = string(*r.SectionName)
	}
	if r.Port != nil {
		port = fmt.Sprint(*r.Port)
	}
	return strings.Join([]string{group, kind, ns, string(r.Name), section, port}, "\x00")
}

// Verdict is what carries a parent's verdict: the gateway package's
// attachment of a route to a parent.
type Verdict interface{ Verdict() Parent }

// Status is rs's complete status: other controllers' parents as they
// were, then one entry per parentRef of ours, with the verdict of that
// parent (Accepted) and the route's own (ResolvedRefs). It reads the
// verdicts in place: a status costs no copy of them.
func Status[P Verdict](rs *Route, parents []P, controller gwv1.GatewayController, now metav1.Time) gwv1.RouteStatus {
	prev := map[string][]metav1.Condition{}
	var out gwv1.RouteStatus
	for _, p := range rs.PrevParents {
		if p.ControllerName == controller {
			prev[ParentKey(p.ParentRef, rs.Name.Namespace)] = p.Conditions
			continue
		}
		out.Parents = append(out.Parents, *p.DeepCopy())
	}
	resolved := metav1.Condition{Type: string(gwv1.RouteConditionResolvedRefs), Status: metav1.ConditionTrue,
		Reason: string(gwv1.RouteReasonResolvedRefs), Message: "All references are resolved"}
	if rs.ResolvedReason != "" {
		resolved.Status, resolved.Reason, resolved.Message = metav1.ConditionFalse, rs.ResolvedReason, rs.ResolvedMsg
	}
	for _, v := range parents {
		p := v.Verdict()
		accepted := metav1.Condition{Type: string(gwv1.RouteConditionAccepted), Status: metav1.ConditionFalse,
			Reason: p.Reason, Message: p.Message}
		if p.Accepted {
			accepted.Status = metav1.ConditionTrue
		}
		resolved := resolved
		if p.Passthrough && len(rs.passthroughRefused) > 0 {
			resolved = rs.refusedOnPassthrough(resolved)
		}
		conds := condition.Stamp(prev[ParentKey(p.Ref, rs.Name.Namespace)], []metav1.Condition{accepted, resolved}, rs.Meta.Generation, now)
		out.Parents = append(out.Parents, gwv1.RouteParentStatus{ParentRef: p.Ref, ControllerName: controller, Conditions: conds})
	}
	if len(out.Parents) > maxRouteParents {
		out.Parents = out.Parents[:maxRouteParents]
	}
	if out.Parents == nil {
		out.Parents = []gwv1.RouteParentStatus{}
	}
	return out
}

// refusedOnPassthrough is ResolvedRefs under a parent whose Passthrough
// listener refuses the route's XBackends speaking TLS.
func (rs *Route) refusedOnPassthrough(c metav1.Condition) metav1.Condition {
	msgs := make([]string, 0, len(rs.passthroughRefused))
	for _, cluster := range slices.Sorted(maps.Keys(rs.passthroughRefused)) {
		msgs = append(msgs, rs.passthroughRefused[cluster])
	}
	msg := strings.Join(msgs, "; ")
	if c.Status == metav1.ConditionFalse {
		c.Message += "; " + msg
		return c
	}
	c.Status, c.Reason, c.Message = metav1.ConditionFalse, string(gwv1.RouteReasonUnsupportedProtocol), msg
	return c
}

// maxRouteParents is the API's limit on status.parents.
const maxRouteParents = 32

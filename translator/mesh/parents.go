package mesh

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/tlsplane/tlsplane/translator/input"
	"github.com/tlsplane/tlsplane/translator/route"
)

// IsServiceParent reports whether ref names a core Service: group ""
// written out (an unset group means the Gateway API's), kind Service.
func IsServiceParent(ref gwv1.ParentReference) bool {
	return ref.Group != nil && *ref.Group == "" && ref.Kind != nil && *ref.Kind == "Service"
}

// parent is one Service parentRef of a route, judged.
type parent struct {
	route.Parent
	// service is the parent Service; ports are the TCP ports the route
	// applies to when accepted: the parentRef's port (or sectionName),
	// or every TCP port of the Service.
	service types.NamespacedName
	ports   []int32
}

// Verdict is the parent's verdict for the route's status.
func (p parent) Verdict() route.Parent { return p.Parent }

// judgeParent judges a Service parentRef of a route of kind in
// namespace routeNS; ok is false when the Service's namespace is not in
// the mesh: another mesh, or none, may own that parent.
func judgeParent(ref gwv1.ParentReference, kind input.Kind, routeNS string, ix *input.Index, members Members, sel *Selector) (p parent, ok bool) {
	ns := routeNS
	if ref.Namespace != nil {
		ns = string(*ref.Namespace)
	}
	if !members[ns] {
		return parent{}, false
	}
	p = parent{Parent: route.Parent{Ref: ref}, service: input.NameOf(ns, string(ref.Name))}
	refuse := func(reason gwv1.RouteConditionReason, format string, args ...any) (parent, bool) {
		p.Reason, p.Message = string(reason), fmt.Sprintf(format, args...)
		return p, true
	}
	svc, found := ix.Services[p.service]
	if !found {
		return refuse(gwv1.RouteReasonNoMatchingParent, "Service %s does not exist", p.service)
	}
	if reason := notCapturable(svc); reason != "" {
		return refuse(gwv1.RouteReasonUnsupportedValue, "Service %s: %s", p.service, reason)
	}
	if ns != routeNS && !members[routeNS] {
		return refuse(gwv1.RouteReasonNoMatchingParent, "namespace %s is not in the mesh (its labels do not match %s): a consumer route applies only to callers in its own namespace", routeNS, sel)
	}
	p.ports = matchingPorts(svc, ref)
	if len(p.ports) == 0 {
		return refuse(gwv1.RouteReasonNoMatchingParent, "Service %s has no TCP port%s", p.service, portSelector(ref))
	}
	p.Accepted, p.Reason = true, string(gwv1.RouteReasonAccepted)
	if ns == routeNS {
		p.Message = fmt.Sprintf("producer %s: applies to every caller in the mesh", kind)
	} else {
		p.Message = fmt.Sprintf("consumer %s: applies to callers in namespace %s", kind, routeNS)
	}
	return p, true
}

// notCapturable says why sidecars cannot capture traffic to svc by its
// cluster IP; "" when they can. Headless Services have no frontend
// (GEP-1426 says they SHOULD NOT be parents).
func notCapturable(svc *corev1.Service) string {
	switch {
	case svc.Spec.Type == corev1.ServiceTypeExternalName:
		return "an ExternalName Service has no cluster IP for sidecars to capture"
	case svc.Spec.ClusterIP == "" || svc.Spec.ClusterIP == corev1.ClusterIPNone:
		return "a headless Service (clusterIP None or unset) has no cluster IP for sidecars to capture"
	}
	return ""
}

// matchingPorts are the TCP ports of svc the parentRef selects: its
// port, its sectionName (a port's name, GEP-1294), or every TCP port.
func matchingPorts(svc *corev1.Service, ref gwv1.ParentReference) []int32 {
	var out []int32
	for _, sp := range svc.Spec.Ports {
		if input.ProtocolOrTCP(sp.Protocol) != corev1.ProtocolTCP {
			continue
		}
		if ref.Port != nil && sp.Port != int32(*ref.Port) {
			continue
		}
		if ref.SectionName != nil && sp.Name != string(*ref.SectionName) {
			continue
		}
		out = append(out, sp.Port)
	}
	return out
}

// portSelector is the port or sectionName a parentRef selects, for a
// message.
func portSelector(ref gwv1.ParentReference) string {
	s := ""
	if ref.Port != nil {
		s += fmt.Sprintf(" %d", *ref.Port)
	}
	if ref.SectionName != nil {
		s += fmt.Sprintf(" named %q", *ref.SectionName)
	}
	return s
}

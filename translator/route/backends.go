package route

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
	gwxv1a1 "sigs.k8s.io/gateway-api/apisx/v1alpha1"

	"github.com/tlsplane/tlsplane/translator/input"
	"github.com/tlsplane/tlsplane/translator/plan"
	"github.com/tlsplane/tlsplane/translator/referencegrant"
)

// sendTo makes a rule's route send to its backends, or answer 500 when a
// filter is not supported or no backend is valid; a redirect needs none.
func sendTo(p *plan.Route, backends []plan.WeightedBackend, unsupported bool) {
	switch {
	case unsupported:
		p.Direct500 = true
	case p.Redirect != nil:
	case !anyValid(backends):
		p.Direct500 = true
	default:
		p.Backends = backends
	}
}

func anyValid(backends []plan.WeightedBackend) bool {
	for _, b := range backends {
		if b.Cluster != "" {
			return true
		}
	}
	return false
}

// backendRef is what a rule's backendRef says, of either route kind.
type backendRef struct {
	gwv1.BackendRef
	filters []gwv1.HTTPRouteFilter // GRPCRoute filters as their HTTPRoute twins
}

func httpBackendRefs(refs []gwv1.HTTPBackendRef) []backendRef {
	out := make([]backendRef, 0, len(refs))
	for _, r := range refs {
		out = append(out, backendRef{BackendRef: r.BackendRef, filters: r.Filters})
	}
	return out
}

// ruleBackends resolves a rule's backendRefs. An unresolved ref keeps its
// weight, with no cluster: its share of requests is answered 500. Refs of
// weight 0 are left out; none left means the rule answers 500.
func (rs *Route) ruleBackends(i int, refs []backendRef, ix *input.Index, grants referencegrant.Grants) ([]plan.WeightedBackend, []string) {
	var out []plan.WeightedBackend
	var problems []string
	for k, ref := range refs {
		weight := int32(1)
		if ref.Weight != nil {
			weight = *ref.Weight
		}
		cluster, reason, msg := rs.resolveBackend(ref.BackendObjectReference, ix, grants)
		if reason != "" {
			if rs.ResolvedReason == "" {
				rs.ResolvedReason = reason
			}
			problems = append(problems, fmt.Sprintf("rules[%d].backendRefs[%d]: %s", i, k, msg))
			cluster = ""
		}
		b := plan.WeightedBackend{Cluster: cluster, Weight: uint32(weight)}
		for f, filter := range ref.filters {
			switch {
			case filter.Type == gwv1.HTTPRouteFilterRequestHeaderModifier && filter.RequestHeaderModifier != nil:
				b.RequestHeaders = headerEditsOf(filter.RequestHeaderModifier)
			case filter.Type == gwv1.HTTPRouteFilterResponseHeaderModifier && filter.ResponseHeaderModifier != nil:
				b.ResponseHeaders = headerEditsOf(filter.ResponseHeaderModifier)
			default:
				// Never skipped: this backend's share is answered 500.
				rs.Unsupported = append(rs.Unsupported, fmt.Sprintf("rules[%d].backendRefs[%d].filters[%d]: type %q is not supported on a backend", i, k, f, filter.Type))
				b.Cluster = ""
			}
		}
		if weight > 0 {
			out = append(out, b)
		}
	}
	return out, problems
}

// resolveBackend finds the cluster of a backendRef, or says why there is
// none with the spec's reason.
func (rs *Route) resolveBackend(ref gwv1.BackendObjectReference, ix *input.Index, grants referencegrant.Grants) (string, string, string) {
	group, kind := input.GroupKind(ref.Group, ref.Kind, "Service")
	ns := rs.Name.Namespace
	if ref.Namespace != nil {
		ns = string(*ref.Namespace)
	}
	if isXBackend(group, kind) {
		return rs.resolveXBackend(ref, ns, ix)
	}
	if group != "" || kind != "Service" {
		return "", string(gwv1.RouteReasonInvalidKind), fmt.Sprintf("group %q kind %q: only core Services and XBackends (%s) are backends", group, kind, gwxv1a1.GroupName)
	}
	nn := types.NamespacedName{Namespace: ns, Name: string(ref.Name)}
	if !rs.mesh && !grants.Permits(referencegrant.Reference{FromGroup: gwv1.GroupName, FromKind: string(rs.Kind), FromNamespace: rs.Name.Namespace,
		ToKind: "Service", ToNamespace: ns, ToName: string(ref.Name)}) {
		return "", string(gwv1.RouteReasonRefNotPermitted), fmt.Sprintf("Service %s: no ReferenceGrant in %s permits %ss of %s", nn, ns, rs.Kind, rs.Name.Namespace)
	}
	svc, ok := ix.Services[nn]
	if !ok {
		return "", string(gwv1.RouteReasonBackendNotFound), fmt.Sprintf("Service %s does not exist", nn)
	}
	if ref.Port == nil {
		return "", string(gwv1.RouteReasonUnsupportedValue), fmt.Sprintf("Service %s: port is required", nn)
	}
	// A number may be a TCP and a UDP port (DNS): the route's transport
	// picks one; only when there is none is the port's protocol wrong.
	want, other := transport(rs.Kind), corev1.Protocol("")
	for _, p := range svc.Spec.Ports {
		if p.Port != int32(*ref.Port) {
			continue
		}
		if input.ProtocolOrTCP(p.Protocol) != want {
			other = input.ProtocolOrTCP(p.Protocol)
			continue
		}
		switch rs.Kind {
		case input.KindGRPCRoute:
			rs.Backends = append(rs.Backends, input.ServicePort{Service: nn, Port: p.Port})
			return plan.GRPCClusterName(nn.Namespace, nn.Name, p.Port), "", ""
		case input.KindUDPRoute:
			// Not a reach: backends are what BackendTLSPolicies and client
			// certificates apply to, by port number, and neither applies to
			// UDP (a TCP port of the same number is not reached).
			return plan.UDPClusterName(nn.Namespace, nn.Name, p.Port), "", ""
		}
		rs.Backends = append(rs.Backends, input.ServicePort{Service: nn, Port: p.Port})
		return plan.ClusterName(nn.Namespace, nn.Name, p.Port), "", ""
	}
	if other != "" {
		return "", string(gwv1.RouteReasonUnsupportedProtocol), fmt.Sprintf("Service %s port %d is %s; a %s needs %s", nn, *ref.Port, other, rs.Kind, want)
	}
	return "", string(gwv1.RouteReasonBackendNotFound), fmt.Sprintf("Service %s has no port %d", nn, *ref.Port)
}

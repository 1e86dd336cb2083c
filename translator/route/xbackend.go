package route

import (
	"fmt"

	"k8s.io/apimachinery/pkg/types"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
	gwxv1a1 "sigs.k8s.io/gateway-api/apisx/v1alpha1"

	"github.com/tlsplane/tlsplane/translator/input"
	"github.com/tlsplane/tlsplane/translator/plan"
)

// ReasonInvalidBackend is a route's ResolvedRefs reason when an XBackend
// it names is not accepted: ours, the spec has none.
const ReasonInvalidBackend = "InvalidBackend"

// isXBackend says whether a backendRef names an XBackend (GEP-4894).
func isXBackend(group, kind string) bool {
	return group == gwxv1a1.GroupName && kind == string(input.KindXBackend)
}

// resolveXBackend finds the cluster of a backendRef to an XBackend (D1,
// D4, D6), or says why there is none. An XBackend of the route's
// namespace that exists is in the route's reach (XBackends) whatever
// else is wrong, so its status shows the Gateway.
func (rs *Route) resolveXBackend(ref gwv1.BackendObjectReference, ns string, ix *input.Index) (string, string, string) {
	nn := types.NamespacedName{Namespace: ns, Name: string(ref.Name)}
	if rs.Kind == input.KindUDPRoute {
		return "", string(gwv1.RouteReasonInvalidKind), fmt.Sprintf("XBackend %s: a UDPRoute cannot send to an XBackend (XBackends carry TCP)", nn)
	}
	if ns != rs.Name.Namespace {
		// GEP-4894: "Backends MUST live in the same namespace as any
		// route that references them"; no ReferenceGrant changes that.
		return "", string(gwv1.RouteReasonRefNotPermitted), fmt.Sprintf("XBackend %s: an XBackend must be in the %s's namespace %s (GEP-4894); a ReferenceGrant does not permit it", nn, rs.Kind, rs.Name.Namespace)
	}
	x, ok := ix.XBackends[nn]
	if !ok {
		return "", string(gwv1.RouteReasonBackendNotFound), fmt.Sprintf("XBackend %s does not exist", nn)
	}
	rs.XBackends = append(rs.XBackends, nn)
	spec := x.Object.Spec
	if ref.Port != nil && int32(*ref.Port) != int32(spec.Port.Port) {
		return "", string(gwv1.RouteReasonBackendNotFound), fmt.Sprintf("XBackend %s: backendRef port %d is not its spec.port.port %d", nn, *ref.Port, spec.Port.Port)
	}
	if x.Refused != "" {
		return "", ReasonInvalidBackend, fmt.Sprintf("XBackend %s is not accepted (%s): %s", nn, x.Refused, x.Why)
	}
	var protocol gwxv1a1.BackendProtocol
	if spec.Protocol != nil {
		protocol = *spec.Protocol
	}
	if problem := protocolMismatch(rs.Kind, protocol); problem != "" {
		return "", string(gwv1.RouteReasonUnsupportedProtocol), fmt.Sprintf("XBackend %s: spec.protocol %s: %s", nn, protocolName(protocol), problem)
	}
	port := int32(spec.Port.Port)
	if rs.Kind == input.KindTLSRoute && spec.TLS != nil && spec.TLS.Mode != "" && spec.TLS.Mode != gwxv1a1.BackendTLSModeNone {
		if rs.passthroughRefused == nil {
			rs.passthroughRefused = map[string]string{}
		}
		rs.passthroughRefused[plan.XBackendClusterName(nn.Namespace, nn.Name, port)] = fmt.Sprintf(
			"XBackend %s: spec.tls.mode %q: a Passthrough listener passes the client's TLS on and cannot wrap it in the XBackend's; attach to a Terminate listener", nn, spec.TLS.Mode)
	}
	cluster := plan.XBackendClusterName(nn.Namespace, nn.Name, port)
	switch rs.Kind {
	case input.KindGRPCRoute:
		return plan.XBackendGRPCClusterName(nn.Namespace, nn.Name, port), "", ""
	case input.KindTLSRoute, input.KindTCPRoute:
		if rs.xbackendStreams == nil {
			rs.xbackendStreams = map[string]bool{}
		}
		rs.xbackendStreams[cluster] = true
	}
	return cluster, "", ""
}

// protocolMismatch says why a route of kind cannot carry an XBackend's
// protocol (D4); "" when it can.
func protocolMismatch(kind input.Kind, p gwxv1a1.BackendProtocol) string {
	switch kind {
	case input.KindHTTPRoute:
		if p == gwxv1a1.BackendProtocolTCP {
			return "an HTTPRoute sends HTTP requests"
		}
	case input.KindGRPCRoute:
		switch p {
		case gwxv1a1.BackendProtocolHTTP11, gwxv1a1.BackendProtocolMCP, gwxv1a1.BackendProtocolTCP:
			return "a GRPCRoute needs HTTP/2"
		}
	case input.KindTLSRoute, input.KindTCPRoute:
		if p != "" && p != gwxv1a1.BackendProtocolTCP {
			return fmt.Sprintf("a %s carries TCP streams", kind)
		}
	}
	return ""
}

func protocolName(p gwxv1a1.BackendProtocol) string {
	if p == "" {
		return "(unset)"
	}
	return fmt.Sprintf("%q", p)
}

package upstream

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/tlsplane/tlsplane/translator/backendtls"
	"github.com/tlsplane/tlsplane/translator/input"
	"github.com/tlsplane/tlsplane/translator/plan"
)

// Port is one Service port that gets a cluster, with the policy
// governing it.
type Port struct {
	corev1.ServicePort
	Governor *backendtls.Verdict // nil: no policy
	// Warning is set when other ports of the same number were folded in.
	Warning string
	// Variant is which of the port's clusters this is: its own, or one
	// beside it for routes that need another protocol, listed right after
	// the port's own when such routes name the port.
	Variant Variant
}

// Variant is one of a Service port's clusters.
type Variant int

const (
	// Own is the port's cluster: ClusterName.
	Own Variant = iota
	// GRPC speaks HTTP/2 for GRPCRoutes: GRPCClusterName.
	GRPC
	// Raw has no TLS of its own, for TLSRoutes in Passthrough and
	// TCPRoutes: RawClusterName.
	Raw
	// UDP is a UDP port's only cluster, for UDPRoutes: UDPClusterName.
	UDP
)

// Ports lists the TCP ports of svc that get a cluster, in spec
// order. Clusters are named by port number, so TCP ports sharing a number
// (the API server refuses that; a manifest file need not) make one
// cluster: the first port's, governed by the first policy among them, so
// a targeted port is never served by a plaintext twin.
//
// A port some GRPCRoute names (grpc) gets an entry for its HTTP/2
// cluster, one some TLSRoute or TCPRoute names (stream) one for its raw
// cluster. A UDP port some UDPRoute names (datagram) gets its UDP cluster,
// after the TCP ports; no policy governs it (GEP-1897 refuses UDP).
func Ports(svc *corev1.Service, nn types.NamespacedName, governors []*backendtls.Verdict, grpc, stream, datagram input.RouteBackends) []Port {
	out := tcpPorts(svc, nn, governors, grpc, stream)
	if len(datagram) == 0 {
		return out
	}
	return append(out, udpPorts(svc, nn, datagram)...)
}

// tcpPorts are the TCP ports' clusters of Ports.
func tcpPorts(svc *corev1.Service, nn types.NamespacedName, governors []*backendtls.Verdict, grpc, stream input.RouteBackends) []Port {
	out := make([]Port, 0, len(svc.Spec.Ports))
	byNumber := make(map[int32]int, len(svc.Spec.Ports))
	for i, port := range svc.Spec.Ports {
		if input.ProtocolOrTCP(port.Protocol) != corev1.ProtocolTCP {
			continue
		}
		j, seen := byNumber[port.Port]
		if !seen {
			byNumber[port.Port] = len(out)
			out = append(out, Port{ServicePort: port, Governor: governors[i]})
			continue
		}
		first := &out[j]
		if first.Governor == nil {
			first.Governor = governors[i]
		}
		first.Warning = fmt.Sprintf("Service %s: ports %q and %q share number %d; one cluster serves both", nn, first.Name, port.Name, port.Port)
	}
	if len(grpc) == 0 && len(stream) == 0 {
		return out
	}
	withVariants := make([]Port, 0, len(out)+1)
	for _, p := range out {
		withVariants = append(withVariants, p)
		sp := input.ServicePort{Service: nn, Port: p.Port}
		for _, v := range []struct {
			variant Variant
			routes  input.RouteBackends
		}{{GRPC, grpc}, {Raw, stream}} {
			if v.routes[sp] > 0 {
				variant := p
				variant.Variant, variant.Warning = v.variant, ""
				withVariants = append(withVariants, variant)
			}
		}
	}
	return withVariants
}

// TLS is which TLS a port's cluster gets; the engine has the emitted one.
type TLS int

const (
	// Plaintext: no policy governs the port.
	Plaintext TLS = iota
	// H2C: no policy, and appProtocol kubernetes.io/h2c: HTTP/2 in clear.
	H2C
	// FailClosed: the governing policy is not accepted; every handshake
	// fails, so requests get a 5xx instead of plaintext.
	FailClosed
	// Governed: the governing policy's TLS.
	Governed
	// GovernedGRPC: the governing policy's TLS offering ALPN h2 only, and
	// HTTP/2: a GRPCRoute's cluster.
	GovernedGRPC
)

// appProtocolH2C is the Service port appProtocol of HTTP/2 over cleartext
// with prior knowledge (KEP-3726).
const appProtocolH2C = "kubernetes.io/h2c"

// Cluster is the cluster a port gets and which TLS, or why it gets none
// (unserved, for the warning and the status of its policy).
func (p Port) Cluster(svc *corev1.Service, nn types.NamespacedName) (c plan.Cluster, tls TLS, unserved string) {
	c = plan.Cluster{Name: plan.ClusterName(nn.Namespace, nn.Name, p.Port)}
	switch p.Variant {
	case GRPC:
		c.Name, c.EDSName = plan.GRPCClusterName(nn.Namespace, nn.Name, p.Port), c.Name
	case Raw:
		c.Name, c.EDSName = plan.RawClusterName(nn.Namespace, nn.Name, p.Port), c.Name
	case UDP:
		c.Name = plan.UDPClusterName(nn.Namespace, nn.Name, p.Port) // its own endpoints: the UDP port's
	}
	if svc.Spec.Type == corev1.ServiceTypeExternalName {
		if svc.Spec.ExternalName == "" {
			// The API server refuses it; a manifest file need not. An EDS
			// cluster in its place would have no load assignment and make
			// the whole snapshot inconsistent.
			return c, tls, fmt.Sprintf("Service %s port %d: no cluster: type ExternalName without spec.externalName", nn, p.Port)
		}
		c.ExternalName, c.Port, c.EDSName = svc.Spec.ExternalName, uint32(p.Port), ""
	}
	switch {
	case p.Variant == Raw || p.Variant == UDP:
		tls = Plaintext // the client's own TLS, or TCP, goes through as it is
	case p.Variant == GRPC && p.Governor == nil:
		tls = H2C // gRPC in clear is HTTP/2 with prior knowledge
	case p.Variant == GRPC && p.Governor.Accepted():
		tls = GovernedGRPC
	case p.Governor == nil && p.AppProtocol != nil && *p.AppProtocol == appProtocolH2C:
		// Without a policy the port is cleartext; its appProtocol says
		// HTTP/2. Under a policy, the policy's ALPN decides.
		tls = H2C
	case p.Governor == nil:
		tls = Plaintext
	case p.Governor.Accepted():
		tls = Governed
	default:
		tls = FailClosed
	}
	return c, tls, ""
}

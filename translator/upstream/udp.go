package upstream

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/tlsplane/tlsplane/translator/input"
)

// udpPorts are the UDP ports of svc that some UDPRoute names, in spec
// order, one per number (clusters are named by number).
func udpPorts(svc *corev1.Service, nn types.NamespacedName, datagram input.RouteBackends) []Port {
	var out []Port
	seen := map[int32]bool{}
	for _, port := range svc.Spec.Ports {
		if port.Protocol != corev1.ProtocolUDP || seen[port.Port] || datagram[input.ServicePort{Service: nn, Port: port.Port}] == 0 {
			continue
		}
		seen[port.Port] = true
		out = append(out, Port{ServicePort: port, Variant: UDP})
	}
	return out
}

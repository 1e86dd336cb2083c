package gateway

import (
	"slices"

	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/tlsplane/tlsplane/translator/plan"
	"github.com/tlsplane/tlsplane/translator/route"
)

// A UDP listener proxies each client session to its route's backends
// (route/streams.go judges them). UDP listeners of one port share one
// Envoy UDP listener, apart from any TCP listener of the same number.

// udpPorts plans a Gateway's served UDP listeners, one Envoy listener per
// port, named <gateway>/<port>/udp.
func (gs *Gateway) udpPorts(address string) []Port {
	byPort := map[gwv1.PortNumber]*listenerState{}
	for _, l := range gs.allListeners() {
		// Two UDP listeners of a port conflict (markConflicts, or a
		// ListenerSet's settle): at most one is served.
		if l.datagram && l.served() {
			byPort[l.spec.Port] = l
		}
	}
	ports := make([]gwv1.PortNumber, 0, len(byPort))
	for port := range byPort {
		ports = append(ports, port)
	}
	slices.Sort(ports)
	out := make([]Port, 0, len(ports))
	for _, port := range ports {
		l := byPort[port]
		p := &plan.Listener{Name: plan.UDPListenerName(gs.nn.Namespace, gs.nn.Name, int32(port)), Address: address, Port: uint32(port),
			UDP: &plan.UDPProxy{Name: string(l.spec.Name), Backends: udpBackends(l)}}
		out = append(out, Port{Plan: p})
	}
	return out
}

// udpBackends are the backends of the listener's oldest route (then first
// by namespace/name): a UDP listener has one destination, and the newer
// routes stay attached but unserved, as with TCP.
func udpBackends(l *listenerState) []plan.WeightedBackend {
	var oldest *route.Route
	for _, routes := range l.byHost {
		for _, rs := range routes {
			if oldest == nil || route.OlderFirst(rs, oldest) {
				oldest = rs
			}
		}
	}
	if oldest == nil {
		return nil
	}
	return oldest.Stream
}

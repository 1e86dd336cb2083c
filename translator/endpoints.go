package translator

import (
	"sort"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
)

// readyEndpoints collects, from a Service's EndpointSlices, the ready
// addresses of one Service port, matched by port name as kube-proxy does.
// A nil ready condition means ready (the EndpointSlice API's rule). FQDN
// slices are skipped: EDS endpoints must be IP addresses.
func readyEndpoints(port corev1.ServicePort, slices []*discoveryv1.EndpointSlice) []zoneEndpoints {
	byZone := map[string]map[hostPort]bool{}
	for _, es := range slices {
		if es.AddressType != discoveryv1.AddressTypeIPv4 && es.AddressType != discoveryv1.AddressTypeIPv6 {
			continue
		}
		number, ok := slicePort(es, port)
		if !ok {
			continue
		}
		for _, ep := range es.Endpoints {
			if ep.Conditions.Ready != nil && !*ep.Conditions.Ready {
				continue
			}
			zone := ""
			if ep.Zone != nil {
				zone = *ep.Zone
			}
			if byZone[zone] == nil {
				byZone[zone] = map[hostPort]bool{}
			}
			for _, addr := range ep.Addresses {
				byZone[zone][hostPort{host: addr, port: number}] = true
			}
		}
	}
	zones := make([]zoneEndpoints, 0, len(byZone))
	for zone, set := range byZone {
		z := zoneEndpoints{zone: zone}
		for hp := range set {
			z.addrs = append(z.addrs, hp)
		}
		sort.Slice(z.addrs, func(i, j int) bool {
			if z.addrs[i].host != z.addrs[j].host {
				return z.addrs[i].host < z.addrs[j].host
			}
			return z.addrs[i].port < z.addrs[j].port
		})
		zones = append(zones, z)
	}
	sort.Slice(zones, func(i, j int) bool { return zones[i].zone < zones[j].zone })
	return zones
}

// slicePort finds the slice's port number for a Service port: same name,
// same protocol (TCP when unset).
func slicePort(es *discoveryv1.EndpointSlice, port corev1.ServicePort) (uint32, bool) {
	want := protocolOrTCP(port.Protocol)
	for _, p := range es.Ports {
		name := ""
		if p.Name != nil {
			name = *p.Name
		}
		var proto corev1.Protocol
		if p.Protocol != nil {
			proto = *p.Protocol
		}
		if name == port.Name && protocolOrTCP(proto) == want && p.Port != nil && *p.Port > 0 {
			return uint32(*p.Port), true
		}
	}
	return 0, false
}

func protocolOrTCP(p corev1.Protocol) corev1.Protocol {
	if p == "" {
		return corev1.ProtocolTCP
	}
	return p
}

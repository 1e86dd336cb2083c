package upstream

import (
	"sort"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"

	"github.com/tlsplane/tlsplane/translator/input"
	"github.com/tlsplane/tlsplane/translator/plan"
)

// ReadyEndpoints collects, from a Service's EndpointSlices, the ready
// addresses of one Service port, matched by port name as kube-proxy does.
// A nil ready condition means ready (the EndpointSlice API's rule). FQDN
// slices are skipped: EDS endpoints must be IP addresses.
func ReadyEndpoints(port corev1.ServicePort, slices []*discoveryv1.EndpointSlice) []plan.Zone {
	byZone := map[string]map[plan.HostPort]bool{}
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
				byZone[zone] = map[plan.HostPort]bool{}
			}
			for _, addr := range ep.Addresses {
				byZone[zone][plan.HostPort{Host: addr, Port: number}] = true
			}
		}
	}
	zones := make([]plan.Zone, 0, len(byZone))
	for zone, set := range byZone {
		z := plan.Zone{Name: zone}
		for hp := range set {
			z.Addrs = append(z.Addrs, hp)
		}
		sort.Slice(z.Addrs, func(i, j int) bool {
			if z.Addrs[i].Host != z.Addrs[j].Host {
				return z.Addrs[i].Host < z.Addrs[j].Host
			}
			return z.Addrs[i].Port < z.Addrs[j].Port
		})
		zones = append(zones, z)
	}
	sort.Slice(zones, func(i, j int) bool { return zones[i].Name < zones[j].Name })
	return zones
}

// slicePort finds the slice's port number for a Service port: same name,
// same protocol (TCP when unset).
func slicePort(es *discoveryv1.EndpointSlice, port corev1.ServicePort) (uint32, bool) {
	want := input.ProtocolOrTCP(port.Protocol)
	for _, p := range es.Ports {
		name := ""
		if p.Name != nil {
			name = *p.Name
		}
		var proto corev1.Protocol
		if p.Protocol != nil {
			proto = *p.Protocol
		}
		if name == port.Name && input.ProtocolOrTCP(proto) == want && p.Port != nil && *p.Port > 0 {
			return uint32(*p.Port), true
		}
	}
	return 0, false
}

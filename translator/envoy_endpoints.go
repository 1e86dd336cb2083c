package translator

import (
	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	endpointv3 "github.com/envoyproxy/go-control-plane/envoy/config/endpoint/v3"
)

// zoneEndpoints are the ready addresses of one zone ("" when unknown),
// sorted and without duplicates.
type zoneEndpoints struct {
	zone  string
	addrs []hostPort
}

type hostPort struct {
	host string
	port uint32
}

// loadAssignment builds a cluster's endpoints, one locality per zone so
// zone-aware routing can use them.
func loadAssignment(cluster string, zones []zoneEndpoints) (*endpointv3.ClusterLoadAssignment, error) {
	cla := &endpointv3.ClusterLoadAssignment{ClusterName: cluster}
	for _, z := range zones {
		l := &endpointv3.LocalityLbEndpoints{}
		if z.zone != "" {
			l.Locality = &corev3.Locality{Zone: z.zone}
		}
		for _, a := range z.addrs {
			l.LbEndpoints = append(l.LbEndpoints, lbEndpoint(a.host, a.port))
		}
		cla.Endpoints = append(cla.Endpoints, l)
	}
	if err := cla.ValidateAll(); err != nil {
		return nil, err
	}
	return cla, nil
}

func lbEndpoint(host string, port uint32) *endpointv3.LbEndpoint {
	return &endpointv3.LbEndpoint{
		HostIdentifier: &endpointv3.LbEndpoint_Endpoint{Endpoint: &endpointv3.Endpoint{
			Address: &corev3.Address{Address: &corev3.Address_SocketAddress{SocketAddress: &corev3.SocketAddress{
				Address:       host,
				PortSpecifier: &corev3.SocketAddress_PortValue{PortValue: port},
			}}},
		}},
	}
}

package input

import (
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/types"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// Index finds inputs by namespace/name in constant time, so that a
// translation stays linear in the number of objects. The engine patches
// it in place between translations; judging only reads it.
type Index struct {
	Services   map[types.NamespacedName]*corev1.Service
	ConfigMaps map[types.NamespacedName]*corev1.ConfigMap
	Secrets    map[types.NamespacedName]*corev1.Secret
	// SlicesByService groups EndpointSlices by the Service named in their
	// kubernetes.io/service-name label.
	SlicesByService map[types.NamespacedName][]*discoveryv1.EndpointSlice
	// GRPCBackends are the Service ports GRPCRoutes name as backends;
	// StreamBackends those TLSRoutes and TCPRoutes name; DatagramBackends
	// those UDPRoutes name.
	GRPCBackends     RouteBackends
	StreamBackends   RouteBackends
	DatagramBackends RouteBackends
}

// NewIndex indexes the namespaced objects of in.
func NewIndex(in Inputs) *Index {
	ix := &Index{
		Services:         make(map[types.NamespacedName]*corev1.Service, len(in.Services)),
		ConfigMaps:       make(map[types.NamespacedName]*corev1.ConfigMap, len(in.ConfigMaps)),
		Secrets:          make(map[types.NamespacedName]*corev1.Secret, len(in.Secrets)),
		SlicesByService:  make(map[types.NamespacedName][]*discoveryv1.EndpointSlice),
		GRPCBackends:     RouteBackends{},
		StreamBackends:   RouteBackends{},
		DatagramBackends: RouteBackends{},
	}
	for _, r := range ByKey(in.TLSRoutes, func(r *gwv1.TLSRoute) types.NamespacedName { return NameOf(r.Namespace, r.Name) }) {
		ix.StreamBackends.Add(TLSRouteBackends(r), 1)
	}
	for _, r := range ByKey(in.TCPRoutes, func(r *gwv1.TCPRoute) types.NamespacedName { return NameOf(r.Namespace, r.Name) }) {
		ix.StreamBackends.Add(TCPRouteBackends(r), 1)
	}
	for _, r := range ByKey(in.UDPRoutes, func(r *gwv1.UDPRoute) types.NamespacedName { return NameOf(r.Namespace, r.Name) }) {
		ix.DatagramBackends.Add(UDPRouteBackends(r), 1)
	}
	// The last object of a key wins, as everywhere.
	for _, r := range ByKey(in.GRPCRoutes, func(r *gwv1.GRPCRoute) types.NamespacedName { return NameOf(r.Namespace, r.Name) }) {
		ix.GRPCBackends.Add(GRPCRouteBackends(r), 1)
	}
	for _, s := range in.Services {
		ix.Services[NameOf(s.Namespace, s.Name)] = s
	}
	for _, c := range in.ConfigMaps {
		ix.ConfigMaps[NameOf(c.Namespace, c.Name)] = c
	}
	for _, s := range in.Secrets {
		ix.Secrets[NameOf(s.Namespace, s.Name)] = s
	}
	for _, es := range in.EndpointSlices {
		svc, ok := es.Labels[discoveryv1.LabelServiceName]
		if !ok {
			continue
		}
		key := NameOf(es.Namespace, svc)
		ix.SlicesByService[key] = append(ix.SlicesByService[key], es)
	}
	return ix
}

// NameOf is the key of a namespaced object; an empty namespace is `default`,
// as kubectl would create it.
func NameOf(namespace, name string) types.NamespacedName {
	if namespace == "" {
		namespace = "default"
	}
	return types.NamespacedName{Namespace: namespace, Name: name}
}

// ServicePort is one port (by number) of a Service: what a route reaches
// and a cluster serves.
type ServicePort struct {
	Service types.NamespacedName
	Port    int32
}

// ProtocolOrTCP is a Service or EndpointSlice port's protocol with the
// API's default.
func ProtocolOrTCP(p corev1.Protocol) corev1.Protocol {
	if p == "" {
		return corev1.ProtocolTCP
	}
	return p
}

package input

import (
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
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
	// The Service ports routes name as backends, by family (each route
	// kind's RouteKind.Backends): GRPCBackends reached over HTTP/2,
	// StreamBackends over raw TCP streams, DatagramBackends over UDP.
	GRPCBackends     RouteBackends
	StreamBackends   RouteBackends
	DatagramBackends RouteBackends
	// XBackends are the external backends, with the engine's verdicts.
	XBackends XBackends
	// FetchedCRLs are the fetched revocation lists, by URL.
	FetchedCRLs map[string]*FetchedCRL
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
		XBackends:        indexXBackends(in),
		FetchedCRLs:      make(map[string]*FetchedCRL, len(in.FetchedCRLs)),
	}
	for _, c := range in.FetchedCRLs {
		ix.FetchedCRLs[c.Name] = c
	}
	// The last object of a key wins, as everywhere.
	for _, rk := range RouteKinds {
		counts := rk.Backends(ix)
		if counts == nil {
			continue
		}
		for _, r := range ByKey(rk.Objects(&in), NameOfObject) {
			counts.Add(rk.BackendPorts(r), 1)
		}
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

// NameOfObject is o's namespace/name key (NameOf).
func NameOfObject(o metav1.Object) types.NamespacedName { return NameOf(o.GetNamespace(), o.GetName()) }

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

// VariantPorts are the ports of svc that GRPCRoutes name, then -1, then
// those TLSRoutes or TCPRoutes name, then -1, then those UDPRoutes name, in
// spec order: what decides its clusters beside the ports' own. nil for
// none (the common case costs no allocation).
func (ix *Index) VariantPorts(svc *corev1.Service, nn types.NamespacedName) []int32 {
	if len(ix.GRPCBackends) == 0 && len(ix.StreamBackends) == 0 && len(ix.DatagramBackends) == 0 {
		return nil
	}
	var out []int32
	for i, routes := range []RouteBackends{ix.GRPCBackends, ix.StreamBackends, ix.DatagramBackends} {
		if i > 0 {
			out = append(out, -1)
		}
		for _, p := range svc.Spec.Ports {
			if routes[ServicePort{Service: nn, Port: p.Port}] > 0 {
				out = append(out, p.Port)
			}
		}
	}
	return out
}

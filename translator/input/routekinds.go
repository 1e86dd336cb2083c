package input

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// The route kinds, as Changes name them.
const (
	KindHTTPRoute Kind = "HTTPRoute"
	KindGRPCRoute Kind = "GRPCRoute"
	KindTLSRoute  Kind = "TLSRoute"
	KindTCPRoute  Kind = "TCPRoute"
	KindUDPRoute  Kind = "UDPRoute"
)

// RouteKind describes one route kind: what sources, informers, CRD
// discovery, the status store and the status writer need of it, so that
// adding a kind is a row of RouteKinds (with its fields of Inputs and
// RouteStatusMaps) plus its judging. Methods taking an object
// expect one of the kind (New's type); another yields nothing.
type RouteKind interface {
	ObjectKind
	// Resource is the kind's resource (Gateway API group, v1): what the
	// informers watch and the status writer updates.
	Resource() schema.GroupVersionResource
	// CRD is the CustomResourceDefinition that serves the kind, as logs
	// name it: udproutes.gateway.networking.k8s.io.
	CRD() string
	// ParentRefs are the route's spec.parentRefs.
	ParentRefs(o metav1.Object) []gwv1.ParentReference
	// BackendPorts are the Service ports the route's backendRefs name,
	// once each.
	BackendPorts(o metav1.Object) []ServicePort
	// RouteStatus is where the route keeps its status (a pointer into o).
	RouteStatus(o metav1.Object) *gwv1.RouteStatus
	// Backends is the family of ix the kind's backend ports are counted
	// in (see Index), nil when they need no cluster of their own.
	Backends(ix *Index) RouteBackends
	// Statuses are the kind's computed statuses among s.
	Statuses(s *RouteStatusMaps) RouteStatuses
	// Streams reports whether the kind forwards connections or datagrams
	// (TLS, TCP, UDP) rather than requests: it has no route table to
	// patch, and a change to one runs the Gateway rules whole.
	Streams() bool
}

// RouteStatusMaps are the computed statuses of the routes of every kind,
// a map each, typed as their objects keep them.
type RouteStatusMaps struct {
	HTTPRoutes map[types.NamespacedName]gwv1.HTTPRouteStatus
	GRPCRoutes map[types.NamespacedName]gwv1.GRPCRouteStatus
	TLSRoutes  map[types.NamespacedName]gwv1.TLSRouteStatus
	TCPRoutes  map[types.NamespacedName]gwv1.TCPRouteStatus
	UDPRoutes  map[types.NamespacedName]gwv1.UDPRouteStatus
}

// NewRouteStatusMaps has an empty map for every kind.
func NewRouteStatusMaps() RouteStatusMaps {
	return RouteStatusMaps{HTTPRoutes: map[types.NamespacedName]gwv1.HTTPRouteStatus{},
		GRPCRoutes: map[types.NamespacedName]gwv1.GRPCRouteStatus{}, TLSRoutes: map[types.NamespacedName]gwv1.TLSRouteStatus{},
		TCPRoutes: map[types.NamespacedName]gwv1.TCPRouteStatus{}, UDPRoutes: map[types.NamespacedName]gwv1.UDPRouteStatus{}}
}

// RouteKinds is every route kind the translator reads, one description
// each.
var RouteKinds = []RouteKind{httpRoutes, grpcRoutes, tlsRoutes, tcpRoutes, udpRoutes}

// RouteKindOf is the description of kind; false when it is no route kind.
func RouteKindOf(kind Kind) (RouteKind, bool) {
	for _, rk := range RouteKinds {
		if rk.Kind() == kind {
			return rk, true
		}
	}
	return nil, false
}

var (
	httpRoutes = routeKind[gwv1.HTTPRoute]{
		objectKind: objectKind[gwv1.HTTPRoute]{KindHTTPRoute, func(in *Inputs) *[]*gwv1.HTTPRoute { return &in.HTTPRoutes }},
		resource:   "httproutes",
		spec:       func(r *gwv1.HTTPRoute) *gwv1.CommonRouteSpec { return &r.Spec.CommonRouteSpec },
		status:     func(r *gwv1.HTTPRoute) *gwv1.RouteStatus { return &r.Status.RouteStatus },
		ports: func(r *gwv1.HTTPRoute) []ServicePort {
			var refs []gwv1.BackendRef
			for _, rule := range r.Spec.Rules {
				for _, ref := range rule.BackendRefs {
					refs = append(refs, ref.BackendRef)
				}
			}
			return servicePortsOf(r.Namespace, refs)
		},
		// An HTTP backend is served by the port's own cluster.
		backends: func(*Index) RouteBackends { return nil },
		statuses: func(s *RouteStatusMaps) RouteStatuses { return statusMap[gwv1.HTTPRouteStatus]{&s.HTTPRoutes} },
	}
	grpcRoutes = routeKind[gwv1.GRPCRoute]{
		objectKind: objectKind[gwv1.GRPCRoute]{KindGRPCRoute, func(in *Inputs) *[]*gwv1.GRPCRoute { return &in.GRPCRoutes }},
		resource:   "grpcroutes",
		spec:       func(r *gwv1.GRPCRoute) *gwv1.CommonRouteSpec { return &r.Spec.CommonRouteSpec },
		status:     func(r *gwv1.GRPCRoute) *gwv1.RouteStatus { return &r.Status.RouteStatus },
		ports:      GRPCRouteBackends,
		backends:   func(ix *Index) RouteBackends { return ix.GRPCBackends },
		statuses:   func(s *RouteStatusMaps) RouteStatuses { return statusMap[gwv1.GRPCRouteStatus]{&s.GRPCRoutes} },
	}
	tlsRoutes = routeKind[gwv1.TLSRoute]{
		objectKind: objectKind[gwv1.TLSRoute]{KindTLSRoute, func(in *Inputs) *[]*gwv1.TLSRoute { return &in.TLSRoutes }},
		resource:   "tlsroutes",
		spec:       func(r *gwv1.TLSRoute) *gwv1.CommonRouteSpec { return &r.Spec.CommonRouteSpec },
		status:     func(r *gwv1.TLSRoute) *gwv1.RouteStatus { return &r.Status.RouteStatus },
		ports:      TLSRouteBackends,
		backends:   func(ix *Index) RouteBackends { return ix.StreamBackends },
		statuses:   func(s *RouteStatusMaps) RouteStatuses { return statusMap[gwv1.TLSRouteStatus]{&s.TLSRoutes} },
		streams:    true,
	}
	tcpRoutes = routeKind[gwv1.TCPRoute]{
		objectKind: objectKind[gwv1.TCPRoute]{KindTCPRoute, func(in *Inputs) *[]*gwv1.TCPRoute { return &in.TCPRoutes }},
		resource:   "tcproutes",
		spec:       func(r *gwv1.TCPRoute) *gwv1.CommonRouteSpec { return &r.Spec.CommonRouteSpec },
		status:     func(r *gwv1.TCPRoute) *gwv1.RouteStatus { return &r.Status.RouteStatus },
		ports:      TCPRouteBackends,
		backends:   func(ix *Index) RouteBackends { return ix.StreamBackends },
		statuses:   func(s *RouteStatusMaps) RouteStatuses { return statusMap[gwv1.TCPRouteStatus]{&s.TCPRoutes} },
		streams:    true,
	}
	udpRoutes = routeKind[gwv1.UDPRoute]{
		objectKind: objectKind[gwv1.UDPRoute]{KindUDPRoute, func(in *Inputs) *[]*gwv1.UDPRoute { return &in.UDPRoutes }},
		resource:   "udproutes",
		spec:       func(r *gwv1.UDPRoute) *gwv1.CommonRouteSpec { return &r.Spec.CommonRouteSpec },
		status:     func(r *gwv1.UDPRoute) *gwv1.RouteStatus { return &r.Status.RouteStatus },
		ports:      UDPRouteBackends,
		backends:   func(ix *Index) RouteBackends { return ix.DatagramBackends },
		statuses:   func(s *RouteStatusMaps) RouteStatuses { return statusMap[gwv1.UDPRouteStatus]{&s.UDPRoutes} },
		streams:    true,
	}
)

// GRPCRouteBackends are the Service ports a GRPCRoute's backendRefs name.
func GRPCRouteBackends(r *gwv1.GRPCRoute) []ServicePort {
	var refs []gwv1.BackendRef
	for _, rule := range r.Spec.Rules {
		for _, ref := range rule.BackendRefs {
			refs = append(refs, ref.BackendRef)
		}
	}
	return servicePortsOf(r.Namespace, refs)
}

// TLSRouteBackends are the Service ports a TLSRoute's backendRefs name.
func TLSRouteBackends(r *gwv1.TLSRoute) []ServicePort {
	return servicePortsOf(r.Namespace, RulesBackendRefs(r.Spec.Rules, func(rule gwv1.TLSRouteRule) []gwv1.BackendRef { return rule.BackendRefs }))
}

// TCPRouteBackends are the Service ports a TCPRoute's backendRefs name.
func TCPRouteBackends(r *gwv1.TCPRoute) []ServicePort {
	return servicePortsOf(r.Namespace, RulesBackendRefs(r.Spec.Rules, func(rule gwv1.TCPRouteRule) []gwv1.BackendRef { return rule.BackendRefs }))
}

// UDPRouteBackends are the Service ports a UDPRoute's backendRefs name.
func UDPRouteBackends(r *gwv1.UDPRoute) []ServicePort {
	return servicePortsOf(r.Namespace, RulesBackendRefs(r.Spec.Rules, func(rule gwv1.UDPRouteRule) []gwv1.BackendRef { return rule.BackendRefs }))
}

// routeKind is the RouteKind of the routes of type *X.
type routeKind[X any] struct {
	objectKind[X]
	resource string
	spec     func(*X) *gwv1.CommonRouteSpec
	status   func(*X) *gwv1.RouteStatus
	ports    func(*X) []ServicePort
	backends func(*Index) RouteBackends
	statuses func(*RouteStatusMaps) RouteStatuses
	streams  bool
}

func (k routeKind[X]) Resource() schema.GroupVersionResource {
	return gwv1.SchemeGroupVersion.WithResource(k.resource)
}

func (k routeKind[X]) CRD() string { return k.resource + "." + gwv1.GroupName }

func (k routeKind[X]) ParentRefs(o metav1.Object) []gwv1.ParentReference {
	if r, ok := any(o).(*X); ok {
		return k.spec(r).ParentRefs
	}
	return nil
}

func (k routeKind[X]) BackendPorts(o metav1.Object) []ServicePort {
	if r, ok := any(o).(*X); ok {
		return k.ports(r)
	}
	return nil
}

func (k routeKind[X]) RouteStatus(o metav1.Object) *gwv1.RouteStatus {
	if r, ok := any(o).(*X); ok {
		return k.status(r)
	}
	return nil
}

func (k routeKind[X]) Backends(ix *Index) RouteBackends { return k.backends(ix) }

func (k routeKind[X]) Statuses(s *RouteStatusMaps) RouteStatuses { return k.statuses(s) }

func (k routeKind[X]) Streams() bool { return k.streams }

package statuswriter

import (
	"k8s.io/apimachinery/pkg/types"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// Cache is the informers' copy of the objects whose status is written: the
// compare before writing reads it instead of the API server, so an
// unchanged status costs no request. *informers.Source is one.
type Cache interface {
	Policy(types.NamespacedName) (*gwv1.BackendTLSPolicy, bool)
	GatewayClass(name string) (*gwv1.GatewayClass, bool)
	Gateway(types.NamespacedName) (*gwv1.Gateway, bool)
	HTTPRoute(types.NamespacedName) (*gwv1.HTTPRoute, bool)
	GRPCRoute(types.NamespacedName) (*gwv1.GRPCRoute, bool)
	TLSRoute(types.NamespacedName) (*gwv1.TLSRoute, bool)
	TCPRoute(types.NamespacedName) (*gwv1.TCPRoute, bool)
	ListenerSet(types.NamespacedName) (*gwv1.ListenerSet, bool)
	UDPRoute(types.NamespacedName) (*gwv1.UDPRoute, bool)
}

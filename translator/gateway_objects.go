package translator

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/tlsplane/tlsplane/translator/input"
	"github.com/tlsplane/tlsplane/translator/mesh"
)

// gatewayObjects are the Gateway API inputs by key; the last object of a
// key wins, as the Gateway rules' own index keeps it.
type gatewayObjects struct {
	classes    map[types.NamespacedName]*gwv1.GatewayClass
	gateways   map[types.NamespacedName]*gwv1.Gateway
	routes     map[types.NamespacedName]*gwv1.HTTPRoute
	grpcRoutes map[types.NamespacedName]*gwv1.GRPCRoute
	sets       map[types.NamespacedName]*gwv1.ListenerSet
	// streams are the stream routes (TLS, TCP, UDP) by kind, then key.
	streams    map[Kind]map[types.NamespacedName]metav1.Object
	grants     map[types.NamespacedName]*gwv1.ReferenceGrant
	namespaces map[types.NamespacedName]*corev1.Namespace
}

func newGatewayObjects(in Inputs) gatewayObjects {
	g := gatewayObjects{
		classes:    input.ByKey(in.GatewayClasses, func(o *gwv1.GatewayClass) types.NamespacedName { return types.NamespacedName{Name: o.Name} }),
		gateways:   input.ByKey(in.Gateways, func(o *gwv1.Gateway) types.NamespacedName { return input.NameOf(o.Namespace, o.Name) }),
		routes:     input.ByKey(in.HTTPRoutes, func(o *gwv1.HTTPRoute) types.NamespacedName { return input.NameOf(o.Namespace, o.Name) }),
		grpcRoutes: input.ByKey(in.GRPCRoutes, func(o *gwv1.GRPCRoute) types.NamespacedName { return input.NameOf(o.Namespace, o.Name) }),
		sets:       input.ByKey(in.ListenerSets, func(o *gwv1.ListenerSet) types.NamespacedName { return input.NameOf(o.Namespace, o.Name) }),
		streams:    map[Kind]map[types.NamespacedName]metav1.Object{},
		grants:     input.ByKey(in.ReferenceGrants, func(o *gwv1.ReferenceGrant) types.NamespacedName { return input.NameOf(o.Namespace, o.Name) }),
		namespaces: input.ByKey(in.Namespaces, func(o *corev1.Namespace) types.NamespacedName { return types.NamespacedName{Name: o.Name} }),
	}
	for _, rk := range input.RouteKinds {
		if rk.Streams() {
			g.streams[rk.Kind()] = input.ByKey(rk.Objects(&in), input.NameOfObject)
		}
	}
	return g
}

// inputs are the Gateway API objects as the Gateway rules read them.
func (g gatewayObjects) inputs() Inputs {
	in := Inputs{
		GatewayClasses:  input.ValuesOf(g.classes),
		Gateways:        input.ValuesOf(g.gateways),
		HTTPRoutes:      input.ValuesOf(g.routes),
		GRPCRoutes:      input.ValuesOf(g.grpcRoutes),
		ListenerSets:    input.ValuesOf(g.sets),
		ReferenceGrants: input.ValuesOf(g.grants),
		Namespaces:      input.ValuesOf(g.namespaces),
	}
	for _, rk := range input.RouteKinds {
		for _, o := range input.ValuesOf(g.streams[rk.Kind()]) {
			rk.Add(&in, o)
		}
	}
	return in
}

// namesCA reports whether a Gateway's spec.tls.frontend names the
// ConfigMap or Secret as a client CA: a look at every Gateway, which are
// few next to the ConfigMaps that change.
func (g gatewayObjects) namesCA(kind Kind, nn types.NamespacedName) bool {
	for _, gw := range g.gateways {
		for _, ref := range input.FrontendCARefs(gw) {
			if ref.Kind == kind && ref.Name == nn {
				return true
			}
		}
	}
	return false
}

// any reports whether the Gateway rules have anything to translate.
func (g gatewayObjects) any() bool { return len(g.classes) > 0 }

// anyInMesh reports whether a namespace is in the mesh (sel's), which
// Update leaves to a whole translation.
func (g gatewayObjects) anyInMesh(sel *mesh.Selector) bool {
	for _, ns := range g.namespaces {
		if sel.Joined(ns) {
			return true
		}
	}
	return false
}

package translator

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// gatewayObjects are the Gateway API inputs by key; the last object of a
// key wins, as the Gateway rules' own index keeps it.
type gatewayObjects struct {
	classes    map[types.NamespacedName]*gwv1.GatewayClass
	gateways   map[types.NamespacedName]*gwv1.Gateway
	routes     map[types.NamespacedName]*gwv1.HTTPRoute
	grants     map[types.NamespacedName]*gwv1.ReferenceGrant
	namespaces map[types.NamespacedName]*corev1.Namespace
}

func newGatewayObjects(in Inputs) gatewayObjects {
	return gatewayObjects{
		classes:    byKey(in.GatewayClasses, func(o *gwv1.GatewayClass) types.NamespacedName { return types.NamespacedName{Name: o.Name} }),
		gateways:   byKey(in.Gateways, func(o *gwv1.Gateway) types.NamespacedName { return nameOf(o.Namespace, o.Name) }),
		routes:     byKey(in.HTTPRoutes, func(o *gwv1.HTTPRoute) types.NamespacedName { return nameOf(o.Namespace, o.Name) }),
		grants:     byKey(in.ReferenceGrants, func(o *gwv1.ReferenceGrant) types.NamespacedName { return nameOf(o.Namespace, o.Name) }),
		namespaces: byKey(in.Namespaces, func(o *corev1.Namespace) types.NamespacedName { return types.NamespacedName{Name: o.Name} }),
	}
}

func byKey[T any](in []T, key func(T) types.NamespacedName) map[types.NamespacedName]T {
	m := make(map[types.NamespacedName]T, len(in))
	for _, o := range in {
		m[key(o)] = o
	}
	return m
}

// inputs are the Gateway API objects as the Gateway rules read them.
func (g gatewayObjects) inputs() Inputs {
	return Inputs{
		GatewayClasses:  valuesOf(g.classes),
		Gateways:        valuesOf(g.gateways),
		HTTPRoutes:      valuesOf(g.routes),
		ReferenceGrants: valuesOf(g.grants),
		Namespaces:      valuesOf(g.namespaces),
	}
}

func valuesOf[T any](m map[types.NamespacedName]T) []T {
	out := make([]T, 0, len(m))
	for _, nn := range sortedKeys(m) {
		out = append(out, m[nn])
	}
	return out
}

// any reports whether the Gateway rules have anything to translate.
func (g gatewayObjects) any() bool { return len(g.classes) > 0 }

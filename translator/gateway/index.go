package gateway

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/tlsplane/tlsplane/translator/input"
	"github.com/tlsplane/tlsplane/translator/referencegrant"
)

// gatewayIndex finds the Gateway API inputs by name, and what refers to
// what, so that route and listener rules cost a lookup each.
type gatewayIndex struct {
	classes    map[string]*gwv1.GatewayClass
	gateways   []*gwv1.Gateway // sorted by namespace/name, unique
	routes     []*gwv1.HTTPRoute
	grpcRoutes []*gwv1.GRPCRoute
	// streams are the stream routes (TLS, TCP, UDP: input.RouteKinds
	// that stream), by kind in that order, then by namespace/name.
	streams    []metav1.Object
	namespaces map[string]*corev1.Namespace
	// grants are asked by certificates, CA and backend refs alike.
	grants referencegrant.Grants
	// fronting are the Services labelled with a Gateway's name, by Gateway.
	fronting map[types.NamespacedName][]*corev1.Service
	// setsOf are the ListenerSets by the Gateway their parentRef names, in
	// precedence order; setParents is that Gateway by ListenerSet.
	setsOf     map[types.NamespacedName][]*gwv1.ListenerSet
	setParents map[types.NamespacedName]types.NamespacedName
}

func newGatewayIndex(in input.Inputs, ix *input.Index) *gatewayIndex {
	g := &gatewayIndex{
		classes:    make(map[string]*gwv1.GatewayClass, len(in.GatewayClasses)),
		namespaces: make(map[string]*corev1.Namespace, len(in.Namespaces)),
		grants:     referencegrant.New(in.ReferenceGrants),
		fronting:   map[types.NamespacedName][]*corev1.Service{},
	}
	for _, c := range in.GatewayClasses {
		g.classes[c.Name] = c
	}
	for _, ns := range in.Namespaces {
		g.namespaces[ns.Name] = ns
	}
	g.gateways = input.UniqueSorted(in.Gateways, func(o *gwv1.Gateway) types.NamespacedName { return input.NameOf(o.Namespace, o.Name) })
	g.routes = input.UniqueSorted(in.HTTPRoutes, func(o *gwv1.HTTPRoute) types.NamespacedName { return input.NameOf(o.Namespace, o.Name) })
	g.grpcRoutes = input.UniqueSorted(in.GRPCRoutes, func(o *gwv1.GRPCRoute) types.NamespacedName { return input.NameOf(o.Namespace, o.Name) })
	for _, rk := range input.RouteKinds {
		if rk.Streams() {
			g.streams = append(g.streams, input.UniqueSorted(rk.Objects(&in), input.NameOfObject)...)
		}
	}
	g.indexListenerSets(in.ListenerSets)
	if len(g.gateways) > 0 {
		for _, nn := range input.SortedKeys(ix.Services) {
			svc := ix.Services[nn]
			if name := svc.Labels[gwv1.GatewayNameLabelKey]; name != "" {
				key := input.NameOf(nn.Namespace, name)
				g.fronting[key] = append(g.fronting[key], svc)
			}
		}
	}
	return g
}

// gatewayKey is a Gateway's namespace/name as written in a message.
func gatewayKey(nn types.NamespacedName) string {
	return strings.Join([]string{nn.Namespace, nn.Name}, "/")
}

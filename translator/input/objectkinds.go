package input

import (
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
	gwxv1a1 "sigs.k8s.io/gateway-api/apisx/v1alpha1"
)

// ObjectKind describes one kind of Inputs: its name and its list there,
// whatever the kind's type, so that code walking every kind (sources,
// merging, identity) is written once.
type ObjectKind interface {
	Kind() Kind
	// New is an empty object of the kind, to decode into.
	New() metav1.Object
	// Objects are in's objects of the kind, in order.
	Objects(in *Inputs) []metav1.Object
	// Len is how many objects of the kind in has.
	Len(in *Inputs) int
	// At is in's i-th object of the kind, for the walks that need no
	// list of them.
	At(in *Inputs, i int) metav1.Object
	// Add appends o to in's list of the kind; false when o is not of it.
	Add(in *Inputs, o metav1.Object) bool
}

// ObjectKinds is every kind of Inputs, in the order of its fields: the
// order sources report changes in.
var ObjectKinds = []ObjectKind{
	objectKind[gwv1.BackendTLSPolicy]{KindBackendTLSPolicy, func(in *Inputs) *[]*gwv1.BackendTLSPolicy { return &in.Policies }},
	objectKind[corev1.Service]{KindService, func(in *Inputs) *[]*corev1.Service { return &in.Services }},
	objectKind[discoveryv1.EndpointSlice]{KindEndpointSlice, func(in *Inputs) *[]*discoveryv1.EndpointSlice { return &in.EndpointSlices }},
	objectKind[corev1.ConfigMap]{KindConfigMap, func(in *Inputs) *[]*corev1.ConfigMap { return &in.ConfigMaps }},
	objectKind[corev1.Secret]{KindSecret, func(in *Inputs) *[]*corev1.Secret { return &in.Secrets }},
	objectKind[gwv1.GatewayClass]{KindGatewayClass, func(in *Inputs) *[]*gwv1.GatewayClass { return &in.GatewayClasses }},
	objectKind[gwv1.Gateway]{KindGateway, func(in *Inputs) *[]*gwv1.Gateway { return &in.Gateways }},
	httpRoutes, grpcRoutes, tlsRoutes, tcpRoutes,
	objectKind[gwv1.ListenerSet]{KindListenerSet, func(in *Inputs) *[]*gwv1.ListenerSet { return &in.ListenerSets }},
	udpRoutes,
	objectKind[gwv1.ReferenceGrant]{KindReferenceGrant, func(in *Inputs) *[]*gwv1.ReferenceGrant { return &in.ReferenceGrants }},
	objectKind[corev1.Namespace]{KindNamespace, func(in *Inputs) *[]*corev1.Namespace { return &in.Namespaces }},
	objectKind[gwxv1a1.XBackend]{KindXBackend, func(in *Inputs) *[]*gwxv1a1.XBackend { return &in.XBackends }},
	objectKind[gwxv1a1.XBackendTrafficPolicy]{KindXBackendTrafficPolicy, func(in *Inputs) *[]*gwxv1a1.XBackendTrafficPolicy { return &in.XBackendTrafficPolicies }},
	objectKind[gwxv1a1.XMesh]{KindXMesh, func(in *Inputs) *[]*gwxv1a1.XMesh { return &in.XMeshes }},
	objectKind[FetchedCRL]{KindFetchedCRL, func(in *Inputs) *[]*FetchedCRL { return &in.FetchedCRLs }},
}

// objectKind is the ObjectKind of the objects of type *X, kept in the list
// of Inputs that list gives.
type objectKind[X any] struct {
	kind Kind
	list func(*Inputs) *[]*X
}

func (k objectKind[X]) Kind() Kind { return k.kind }

func (k objectKind[X]) New() metav1.Object { return any(new(X)).(metav1.Object) }

func (k objectKind[X]) Objects(in *Inputs) []metav1.Object {
	l := *k.list(in)
	out := make([]metav1.Object, len(l))
	for i, o := range l {
		out[i] = any(o).(metav1.Object)
	}
	return out
}

func (k objectKind[X]) Len(in *Inputs) int { return len(*k.list(in)) }

func (k objectKind[X]) At(in *Inputs, i int) metav1.Object {
	return any((*k.list(in))[i]).(metav1.Object)
}

func (k objectKind[X]) Add(in *Inputs, o metav1.Object) bool {
	x, ok := any(o).(*X)
	if ok {
		*k.list(in) = append(*k.list(in), x)
	}
	return ok
}

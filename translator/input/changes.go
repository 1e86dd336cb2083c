package input

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// Kind names one kind of input object.
type Kind string

// The kinds of Inputs, as Changes name them; the route kinds are with
// their descriptions (RouteKinds).
const (
	KindBackendTLSPolicy Kind = "BackendTLSPolicy"
	KindService          Kind = "Service"
	KindEndpointSlice    Kind = "EndpointSlice"
	KindConfigMap        Kind = "ConfigMap"
	KindSecret           Kind = "Secret"
	KindGatewayClass     Kind = "GatewayClass"
	KindGateway          Kind = "Gateway"
	KindListenerSet      Kind = "ListenerSet"
	KindReferenceGrant   Kind = "ReferenceGrant"
	KindNamespace        Kind = "Namespace"
	// The experimental X-kinds (gateway.networking.x-k8s.io).
	KindXBackend              Kind = "XBackend"
	KindXBackendTrafficPolicy Kind = "XBackendTrafficPolicy"
	KindXMesh                 Kind = "XMesh"
)

// Change is one input object a source added, updated or deleted.
type Change struct {
	Kind Kind
	// Key is the object's namespace and name as the object carries them
	// (Namespace is "" for GatewayClasses and Namespaces).
	Key types.NamespacedName
	// Object is the object as it is now, of Kind's type
	// (*gwv1.BackendTLSPolicy, *corev1.Service, …); nil when deleted. Like
	// every input, it is never mutated afterwards.
	Object metav1.Object
}

// Changes are what happened to a source's objects since it was last asked.
// Applying them, in order, to the objects of the previous view gives the
// objects of the current one. A change that changes nothing (the same
// object again, or deleting an object that is not there) is harmless.
type Changes struct {
	// Resync means the source cannot say what changed (its first view, or
	// it lost track): read its whole Inputs instead.
	Resync  bool
	Objects []Change
}

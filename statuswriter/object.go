package statuswriter

import "k8s.io/apimachinery/pkg/types"

// Kind is a kind whose status the writer writes, as metrics and logs name
// it: these, and every route kind (translator.RouteKinds) by its name.
type Kind string

const (
	KindBackendTLSPolicy Kind = "BackendTLSPolicy"
	KindGatewayClass     Kind = "GatewayClass"
	KindGateway          Kind = "Gateway"
	KindListenerSet      Kind = "ListenerSet"

	KindXBackend              Kind = "XBackend"
	KindXBackendTrafficPolicy Kind = "XBackendTrafficPolicy"
	KindXMesh                 Kind = "XMesh"
)

// Object is one queued status write: a kind and its namespace/name
// (a GatewayClass or XMesh has no namespace).
type Object struct {
	Kind Kind
	types.NamespacedName
}

func (o Object) String() string {
	if o.Namespace == "" {
		return string(o.Kind) + " " + o.Name
	}
	return string(o.Kind) + " " + o.Namespace + "/" + o.Name
}

package statuswriter

import (
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
	gwxv1a1 "sigs.k8s.io/gateway-api/apisx/v1alpha1"

	"github.com/tlsplane/tlsplane/translator"
)

// Cache is the informers' copy of the objects whose status is written: the
// compare before writing reads it instead of the API server, so an
// unchanged status costs no request. *informers.Source is one.
type Cache interface {
	Policy(types.NamespacedName) (*gwv1.BackendTLSPolicy, bool)
	GatewayClass(name string) (*gwv1.GatewayClass, bool)
	Gateway(types.NamespacedName) (*gwv1.Gateway, bool)
	ListenerSet(types.NamespacedName) (*gwv1.ListenerSet, bool)
	// Route is the route of kind (one of translator.RouteKinds)
	// namespace/name, of its kind's type.
	Route(kind translator.Kind, nn types.NamespacedName) (runtime.Object, bool)
	// The experimental kinds: nothing found when their CRD is not served.
	XBackend(types.NamespacedName) (*gwxv1a1.XBackend, bool)
	XBackendTrafficPolicy(types.NamespacedName) (*gwxv1a1.XBackendTrafficPolicy, bool)
	XMesh(name string) (*gwxv1a1.XMesh, bool)
}

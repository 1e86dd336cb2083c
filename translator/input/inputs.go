package input

import (
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
	gwxv1a1 "sigs.k8s.io/gateway-api/apisx/v1alpha1"
)

// Inputs is everything the translator reads: a plain, immutable set of
// objects. Sources build it; nobody mutates it afterwards. Order does not
// matter: the output is the same for any order of the same objects.
type Inputs struct {
	Policies       []*gwv1.BackendTLSPolicy
	Services       []*corev1.Service
	EndpointSlices []*discoveryv1.EndpointSlice
	ConfigMaps     []*corev1.ConfigMap
	Secrets        []*corev1.Secret

	// The Gateway API surface policies are attached through. ReferenceGrants
	// of v1beta1 (the CRD's storage version) are read into the v1 type: the
	// fields are the same. Namespaces are read for allowedRoutes and
	// allowedListeners selectors. ListenerSets add listeners to Gateways.
	GatewayClasses  []*gwv1.GatewayClass
	Gateways        []*gwv1.Gateway
	HTTPRoutes      []*gwv1.HTTPRoute
	GRPCRoutes      []*gwv1.GRPCRoute
	TLSRoutes       []*gwv1.TLSRoute
	TCPRoutes       []*gwv1.TCPRoute
	ListenerSets    []*gwv1.ListenerSet
	UDPRoutes       []*gwv1.UDPRoute
	ReferenceGrants []*gwv1.ReferenceGrant
	Namespaces      []*corev1.Namespace

	// External backends (GEP-4894, experimental channel): XBackends are
	// backendRefs of routes in their namespace; XBackendTrafficPolicies
	// shape the traffic to the Services and XBackends they target.
	XBackends               []*gwxv1a1.XBackend
	XBackendTrafficPolicies []*gwxv1a1.XBackendTrafficPolicy
	// XMeshes (GEP-3949, experimental, cluster-scoped) get a status when
	// their controllerName is ours; they configure nothing Envoy serves.
	XMeshes []*gwxv1a1.XMesh

	// FetchedCRLs are the revocation lists tlsplane fetched from the
	// distribution points of the CAs that policies with the option
	// tlsplane.io/crlDistributionPoints trust (Output.CRLDistributionPoints).
	// No manifest source supplies them: the pipeline adds the fetcher's.
	FetchedCRLs []*FetchedCRL
}

// Add appends obj to the list of its kind; false when it is of no input
// kind.
func (in *Inputs) Add(obj metav1.Object) bool {
	for _, k := range ObjectKinds {
		if k.Add(in, obj) {
			return true
		}
	}
	return false
}

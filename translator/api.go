package translator

import (
	clusterv3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	endpointv3 "github.com/envoyproxy/go-control-plane/envoy/config/endpoint/v3"
	tlsv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/transport_sockets/tls/v3"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/types"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
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
}

// Options are the control plane's settings that change translation.
type Options struct {
	// ControllerName is written into every status ancestor entry we own.
	ControllerName gwv1.GatewayController
	// SystemCABundlePath is the file, on the Envoy host, that
	// `wellKnownCACertificates: System` trusts.
	SystemCABundlePath string
	// AllowInsecureSkipVerify honours the tlsplane.io/insecureSkipVerify
	// option; without it such a policy is Invalid.
	AllowInsecureSkipVerify bool
}

// DefaultControllerName is the controllerName tlsplane writes by default.
const DefaultControllerName gwv1.GatewayController = "tlsplane.io/controller"

// DefaultSystemCABundlePath is Debian's and most distributions' system bundle.
const DefaultSystemCABundlePath = "/etc/ssl/certs/ca-certificates.crt"

// PreviousStatus is the status each policy carried before this translation,
// keyed by namespace/name; lastTransitionTime is kept when a condition's
// status did not change, and other controllers' entries are kept untouched.
type PreviousStatus map[types.NamespacedName]gwv1.PolicyStatus

// Output is one translation's result. Every slice is sorted by resource name
// and every resource has passed ValidateAll(). It is read-only: clusters
// governed by one policy share its packed TLS config.
type Output struct {
	Clusters  []*clusterv3.Cluster
	Endpoints []*endpointv3.ClusterLoadAssignment
	Secrets   []*tlsv3.Secret

	// Statuses holds the complete status (ours merged with other
	// controllers' entries) for every input policy.
	Statuses map[types.NamespacedName]gwv1.PolicyStatus

	// Origins maps a cluster or secret name to the policies whose
	// translation produced it, so a NACK can be reported on the policy.
	Origins map[string][]types.NamespacedName

	// Warnings name objects that produced no resource because Envoy would
	// reject it (objects the API server would not have admitted); sorted.
	Warnings []string
}

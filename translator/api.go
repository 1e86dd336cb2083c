package translator

import (
	"cmp"
	"math"
	"time"

	clusterv3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	endpointv3 "github.com/envoyproxy/go-control-plane/envoy/config/endpoint/v3"
	tlsv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/transport_sockets/tls/v3"
	"k8s.io/apimachinery/pkg/types"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
	gwxv1a1 "sigs.k8s.io/gateway-api/apisx/v1alpha1"

	"github.com/tlsplane/tlsplane/translator/fleet"
	"github.com/tlsplane/tlsplane/translator/infrastructure"
	"github.com/tlsplane/tlsplane/translator/input"
	"github.com/tlsplane/tlsplane/translator/mesh"
	"github.com/tlsplane/tlsplane/translator/plan"
	"github.com/tlsplane/tlsplane/translator/xbackend"
)

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
	// ListenerAddress is the IP a Gateway's Envoy listeners bind, on every
	// listener port; empty means DefaultListenerAddress.
	ListenerAddress string
	// CAExpiryWarning is how long before a trusted CA expires an accepted
	// policy's Accepted message warns; DefaultCAExpiryWarning when zero,
	// never when negative.
	CAExpiryWarning time.Duration
	// GatewayAPIChannel is the release channel of the cluster's Gateway
	// API CRDs; the experimental channel adds ExperimentalFeatures to our
	// GatewayClasses' supportedFeatures. Empty means ChannelStandard.
	GatewayAPIChannel Channel
	// Provisioning, set when tlsplane provisions Gateways (one value for
	// the process: options are compared by ==), adds each Gateway's
	// tlsplane.io/Provisioning and tlsplane.io/InfrastructureMetadata
	// conditions.
	Provisioning *infrastructure.Policy
	// CRLFetch honours tlsplane.io/crlDistributionPoints: the control
	// plane fetches the lists Output.CRLDistributionPoints names and adds
	// them to the Inputs (FetchedCRLs). Without it such a policy is Invalid.
	CRLFetch bool
	// BackendCertificates has Gateways' Envoys report a sample of the
	// certificates their backends present; the zero value reports none.
	BackendCertificates BackendCertificates
	// XBackendHostnames are the external hostnames an XBackend may name
	// (one value for the process, like Provisioning); nil allows any.
	XBackendHostnames *xbackend.Hostnames
	// MeshNamespaces picks the namespaces in the mesh by their labels
	// (one value for the process); nil is mesh.DefaultSelector,
	// tlsplane.io/mesh=enabled.
	MeshNamespaces *mesh.Selector
}

// BackendCertificates is how Gateways' Envoys report the certificates
// their backends present: a sample of upstream TLS requests and
// connections, logged to the access log service of tlsplane's xDS server.
type BackendCertificates struct {
	// SamplePercent of upstream requests (each attempt) and connections
	// are reported, from 0.0001 to 100; 0 (or less) reports none and emits
	// no access log.
	SamplePercent float64
	// XDSCluster is the bootstrap's cluster that reaches tlsplane's xDS
	// server; empty means DefaultXDSCluster.
	XDSCluster string
}

// DefaultXDSCluster is the xDS cluster's name in every bootstrap tlsplane
// ships (examples, the provisioner's).
const DefaultXDSCluster = "tlsplane"

// certificateLog is the listeners' certificate log; nil when off.
func (b BackendCertificates) certificateLog() *plan.CertificateLog {
	if !(b.SamplePercent > 0) {
		return nil
	}
	perMillion := uint32(plan.AllLogged)
	if b.SamplePercent < 100 {
		// At least one in a million: a positive rate is never off.
		perMillion = max(1, uint32(math.Round(b.SamplePercent*plan.AllLogged/100)))
	}
	return &plan.CertificateLog{PerMillion: perMillion, Cluster: cmp.Or(b.XDSCluster, DefaultXDSCluster)}
}

// DefaultListenerAddress binds Gateway listeners on every IPv4 address of
// the Envoy host (or Pod).
const DefaultListenerAddress = "0.0.0.0"

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
	// translation produced it, so a NACK can be reported on the policy
	// (one map: no secret bears a cluster's name, plan's naming contract).
	Origins map[string][]types.NamespacedName
	// XBackendOrigins maps a cluster or secret name to the XBackends whose
	// translation produced it: apart from Origins, so an XBackend is never
	// taken for a policy of the same name. A secret may be in both.
	XBackendOrigins map[string][]types.NamespacedName

	// CANotAfter maps each CA secret served (CA/<namespace>/configmap/…)
	// to the earliest notAfter of its certificates; the system bundle,
	// read on the Envoy hosts, is absent.
	CANotAfter map[string]time.Time

	// ClusterNamespaces maps each cluster's name to the namespace of the
	// Service it was built from: what a fleet restricted to namespaces is
	// filtered by, never a namespace read back out of a name.
	ClusterNamespaces map[string]string

	// Warnings name objects that produced no resource because Envoy would
	// reject it (objects the API server would not have admitted); sorted.
	Warnings []string

	// Fleets holds, per Gateway fleet (GatewayFleet of a Gateway of ours)
	// and per mesh fleet (MeshFleet of a namespace in the mesh,
	// docs/mesh.md), what only that fleet is served besides the clusters:
	// its listeners, route configurations and listener certificates.
	Fleets map[string]*FleetResources

	// CRLDistributionPoints are the URLs whose revocation lists policies
	// and XBackends with tlsplane.io/crlDistributionPoints want fetched,
	// each with the CA certificates (DER, unique, sorted) one of which must
	// have signed the list; nil when none does.
	CRLDistributionPoints map[string][][]byte

	// GatewayAPI is the status of each GatewayClass, Gateway and route
	// this controller owns (routes with a parent Gateway of ours, or a
	// parent Service in the mesh).
	GatewayAPI GatewayAPIStatuses

	// Generation numbers the Outputs of one Translator, from 1; zero for
	// Translate (the function).
	Generation uint64
	// Changed, when set, lists what differs from the Output of generation
	// Changed.Since; nil means compare everything.
	Changed *ResourceChanges
}

// FleetResources is one Gateway's or mesh namespace's Envoy
// configuration (fleet.Resources).
type FleetResources = fleet.Resources

// GatewayAPIStatuses are computed statuses, complete (other controllers'
// route parents kept) and read-only.
type GatewayAPIStatuses struct {
	// GatewayClasses whose controllerName is ours, by name.
	GatewayClasses map[string]gwv1.GatewayClassStatus
	// Gateways of those classes.
	Gateways map[types.NamespacedName]gwv1.GatewayStatus
	// ListenerSets whose parentRef names one of those Gateways.
	ListenerSets map[types.NamespacedName]gwv1.ListenerSetStatus
	// The routes of every kind with a parentRef to one of those Gateways,
	// or (HTTPRoutes, GRPCRoutes) to a Service of a namespace in the mesh
	// (a map per kind; RouteStatusesOf reads one kind through its
	// description).
	RouteStatusMaps
	// XBackends a route of those reaches (status.parents: one entry per
	// Gateway), and XBackendTrafficPolicies targeting a backend of theirs.
	XBackends               map[types.NamespacedName]gwxv1a1.BackendStatus
	XBackendTrafficPolicies map[types.NamespacedName]gwv1.PolicyStatus
	// XMeshes whose controllerName is ours, by name (cluster-scoped).
	XMeshes map[string]gwxv1a1.MeshStatus
}

// RouteStatusesOf are the statuses of the routes of kind among st; none
// for a kind that is no route kind.
func RouteStatusesOf(st GatewayAPIStatuses, kind Kind) RouteStatuses {
	rk, ok := input.RouteKindOf(kind)
	if !ok {
		var none RouteStatusMaps
		return input.RouteKinds[0].Statuses(&none)
	}
	return rk.Statuses(&st.RouteStatusMaps)
}

// ResourceChanges say which resources of an Output differ from those of
// the earlier Output of generation Since, from the same Translator: what a
// publisher must look at again. Every resource not named is the same
// pointer in both Outputs.
type ResourceChanges struct {
	Since uint64
	// Names of clusters, load assignments and secrets added, changed or
	// removed, each once, in no particular order.
	Clusters, Endpoints, Secrets []string
	// Fleets added, changed or removed; a fleet not named has the same
	// *FleetResources in both Outputs.
	Fleets []string
}

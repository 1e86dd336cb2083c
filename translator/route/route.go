package route

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/tlsplane/tlsplane/translator/input"
	"github.com/tlsplane/tlsplane/translator/plan"
)

// Key names a route: kinds (input.KindHTTPRoute, …) have names of their
// own.
type Key struct {
	Kind input.Kind
	Name types.NamespacedName
}

// Route is one route as judged: its rules as Envoy routes (without
// hostnames, which depend on the listener), and the route-wide verdicts.
// What attaching and status read of the object is copied out of it, so
// every kind goes through the same Gateway rules.
type Route struct {
	Kind        input.Kind // input.KindHTTPRoute, …
	Meta        *metav1.ObjectMeta
	Name        types.NamespacedName
	Hostnames   []gwv1.Hostname
	ParentRefs  []gwv1.ParentReference
	PrevParents []gwv1.RouteParentStatus // the object's status.parents
	// Plans are an HTTPRoute's or GRPCRoute's matches as Envoy routes,
	// each with its rank (CompareRanks orders them on a hostname).
	Plans []Ranked
	// Stream are a TLSRoute's, TCPRoute's or UDPRoute's backends.
	Stream []plan.WeightedBackend
	// ResolvedReason is "" when every backendRef resolved; ResolvedMsg
	// names each that did not.
	ResolvedReason, ResolvedMsg string
	// Unsupported names what tlsplane does not serve (a filter, a bad
	// regular expression); those rules answer 500.
	Unsupported []string
	// Backends are the Service ports the route sends TCP traffic to: the
	// reach of policies and client certificates.
	Backends []input.ServicePort
	// XBackends are the XBackends of its namespace it names (accepted or
	// not): a Gateway accepting the route is a parent in their status.
	XBackends []types.NamespacedName
	// passthroughRefused are a TLSRoute's clusters of XBackends speaking
	// TLS, with why: a Passthrough listener cannot send the client's TLS
	// inside the XBackend's (D4), a Terminate one can.
	passthroughRefused map[string]string
	// xbackendStreams are a stream route's clusters of XBackends: every
	// listener sends them to the raw cluster (StreamBackends).
	xbackendStreams map[string]bool
	// mesh: judged for a Service parent (GEP-1426), whose backendRefs in
	// other namespaces need no ReferenceGrant.
	mesh bool
}

// Ranked is a route plan with what orders it among others.
type Ranked struct {
	Plan plan.Route
	Rank Rank
}

func newRoute(kind input.Kind, meta *metav1.ObjectMeta, spec gwv1.CommonRouteSpec, hostnames []gwv1.Hostname, status gwv1.RouteStatus) *Route {
	return &Route{Kind: kind, Meta: meta, Name: input.NameOf(meta.Namespace, meta.Name),
		Hostnames: hostnames, ParentRefs: spec.ParentRefs, PrevParents: status.Parents}
}

// Key is the route's kind and name.
func (rs *Route) Key() Key { return Key{rs.Kind, rs.Name} }

// transport is the Service port protocol a route kind's backends must
// have.
func transport(k input.Kind) corev1.Protocol {
	if k == input.KindUDPRoute {
		return corev1.ProtocolUDP
	}
	return corev1.ProtocolTCP
}

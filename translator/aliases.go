package translator

import (
	"k8s.io/apimachinery/pkg/types"

	"github.com/tlsplane/tlsplane/translator/backendtls"
	"github.com/tlsplane/tlsplane/translator/condition"
	"github.com/tlsplane/tlsplane/translator/gateway"
	"github.com/tlsplane/tlsplane/translator/input"
	"github.com/tlsplane/tlsplane/translator/plan"
)

// The public API keeps the names callers had before the translator was
// split into packages; the types are defined where they belong.

// Inputs is everything the translator reads (input.Inputs).
type Inputs = input.Inputs

// RouteStatusMaps are the computed statuses of every route kind, a map
// each (input.RouteStatusMaps; GatewayAPIStatuses holds them).
type RouteStatusMaps = input.RouteStatusMaps

// Kind, Change and Changes are what sources report (package input).
type (
	Kind    = input.Kind
	Change  = input.Change
	Changes = input.Changes
)

// The kinds of Inputs, as Changes name them.
const (
	KindBackendTLSPolicy = input.KindBackendTLSPolicy
	KindService          = input.KindService
	KindEndpointSlice    = input.KindEndpointSlice
	KindConfigMap        = input.KindConfigMap
	KindSecret           = input.KindSecret
	KindGatewayClass     = input.KindGatewayClass
	KindGateway          = input.KindGateway
	KindHTTPRoute        = input.KindHTTPRoute
	KindGRPCRoute        = input.KindGRPCRoute
	KindTLSRoute         = input.KindTLSRoute
	KindTCPRoute         = input.KindTCPRoute
	KindListenerSet      = input.KindListenerSet
	KindUDPRoute         = input.KindUDPRoute
	KindReferenceGrant   = input.KindReferenceGrant
	KindNamespace        = input.KindNamespace

	KindXBackend              = input.KindXBackend
	KindXBackendTrafficPolicy = input.KindXBackendTrafficPolicy
	KindXMesh                 = input.KindXMesh

	KindFetchedCRL = input.KindFetchedCRL
)

// MaxConditionMessage is the API server's limit on a condition message.
const MaxConditionMessage = condition.MaxConditionMessage

// CapMessage cuts s to at most n bytes on a rune boundary, marking the cut.
func CapMessage(s string, n int) string { return condition.CapMessage(s, n) }

// SupportedFeatures are the Gateway API features a GatewayClass of ours
// reports.
var SupportedFeatures = gateway.SupportedFeatures

// Channel is a Gateway API release channel; see gateway.Channel.
type Channel = gateway.Channel

const (
	ChannelStandard     = gateway.ChannelStandard
	ChannelExperimental = gateway.ChannelExperimental
)

// ExperimentalFeatures are claimed, beyond SupportedFeatures, on the
// experimental channel.
var ExperimentalFeatures = gateway.ExperimentalFeatures

// ParseChannel reads a channel name; empty is the standard channel.
func ParseChannel(s string) (Channel, error) { return gateway.ParseChannel(s) }

// DefaultCAExpiryWarning is how long before a trusted CA certificate
// expires the policy's Accepted message starts to warn.
const DefaultCAExpiryWarning = backendtls.DefaultCAExpiryWarning

// SystemCASecretName is the SDS secret that trusts the Envoy host's system
// bundle (`wellKnownCACertificates: System`).
const SystemCASecretName = plan.SystemCASecretName

// ClusterName is the name users route to: `<namespace>/<service>/<port>`.
func ClusterName(service types.NamespacedName, port int32) string {
	return plan.ClusterName(service.Namespace, service.Name, port)
}

// GatewayFleet is the fleet (the Envoy node's cluster) that serves a
// Gateway: `<namespace>/<gateway>`.
func GatewayFleet(gw types.NamespacedName) string {
	return plan.GatewayFleet(gw.Namespace, gw.Name)
}

// RouteKind describes one route kind (input.RouteKind); RouteKinds lists
// every one, and RouteStatusesOf finds a kind's computed statuses.
type RouteKind = input.RouteKind

// RouteKinds is every route kind the translator reads.
var RouteKinds = input.RouteKinds

// RouteKindOf is the description of kind; false when it is no route kind.
func RouteKindOf(kind Kind) (RouteKind, bool) { return input.RouteKindOf(kind) }

// RouteStatuses are one route kind's computed statuses (input.RouteStatuses).
type RouteStatuses = input.RouteStatuses

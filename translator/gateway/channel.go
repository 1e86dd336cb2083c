package gateway

import (
	"fmt"
	"slices"

	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// Channel is a Gateway API release channel. The experimental channel's
// CRDs keep fields the standard channel's prune (an HTTPRoute rule's
// retry, for one), so a feature built on such a field works, and is
// claimed, only where the experimental CRDs are installed.
type Channel string

const (
	ChannelStandard     Channel = "standard"
	ChannelExperimental Channel = "experimental"
)

// ExperimentalFeatures are the features, beyond SupportedFeatures, that
// tlsplane claims on the experimental channel: each rests on a field the
// standard channel's CRDs prune (an HTTPRoute rule's retry). Sorted. The
// conformance suite has tests for HTTPRouteRetry only; the other two are
// proven by e2e/envoy's TestHTTPRouteRetry.
var ExperimentalFeatures = []gwv1.FeatureName{
	"HTTPRouteRetry",
	"HTTPRouteRetryBackendTimeout",
	"HTTPRouteRetryConnectionError",
}

// ParseChannel reads the value of --gateway-api-channel; empty is standard.
func ParseChannel(s string) (Channel, error) {
	switch Channel(s) {
	case "", ChannelStandard:
		return ChannelStandard, nil
	case ChannelExperimental:
		return ChannelExperimental, nil
	}
	return "", fmt.Errorf("gateway API channel %q: want %q or %q", s, ChannelStandard, ChannelExperimental)
}

// Features are the features a GatewayClass of ours lists on this channel,
// sorted as the API requires.
func (c Channel) Features() []gwv1.FeatureName {
	if c != ChannelExperimental {
		return SupportedFeatures
	}
	all := slices.Concat(SupportedFeatures, ExperimentalFeatures)
	slices.Sort(all)
	return slices.Compact(all)
}

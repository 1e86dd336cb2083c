package envoy

import (
	"slices"

	clusterv3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	endpointv3 "github.com/envoyproxy/go-control-plane/envoy/config/endpoint/v3"
	tlsv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/transport_sockets/tls/v3"
	httpv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/upstreams/http/v3"
	"google.golang.org/protobuf/types/known/anypb"

	"github.com/tlsplane/tlsplane/translator/plan"
)

// httpProtocolOptionsName is the extension key of upstream HTTP options.
const httpProtocolOptionsName = "envoy.extensions.upstreams.http.v3.HttpProtocolOptions"

// ClusterTLS is the TLS part of a cluster, built once per policy and shared
// read-only by every cluster it governs. The zero value is plaintext.
type ClusterTLS struct {
	socket          *corev3.TransportSocket // nil: plaintext
	protocolOptions map[string]*anypb.Any   // nil: Envoy's default
	metadata        *corev3.Metadata        // nil: no crypto profile
}

// newClusterTLS wraps the packed transport socket config and upstream HTTP
// options (both may be nil).
func newClusterTLS(transport, httpOptions *anypb.Any) ClusterTLS {
	var t ClusterTLS
	if transport != nil {
		t.socket = &corev3.TransportSocket{
			Name:       tlsTransportSocketName,
			ConfigType: &corev3.TransportSocket_TypedConfig{TypedConfig: transport},
		}
	}
	if httpOptions != nil {
		t.protocolOptions = map[string]*anypb.Any{httpProtocolOptionsName: httpOptions}
	}
	return t
}

// Parts are the cluster pieces that depend on no input, built once and
// shared read-only by every cluster.
type Parts struct {
	// FailClosed is the TLS of ports whose policy is not accepted.
	FailClosed ClusterTLS
	// H2C is a plaintext port whose appProtocol is kubernetes.io/h2c.
	H2C ClusterTLS
	// What every EDS cluster says alike.
	discovery *clusterv3.Cluster_Type
	config    *clusterv3.Cluster_EdsClusterConfig
	// followTTL is the discovery of DNS clusters following the TTL.
	followTTL *clusterv3.Cluster_ClusterType
}

// NewParts builds the shared parts; it panics if Envoy's own rules reject
// them, which only a change to this package can cause.
func NewParts() *Parts {
	failClosed, err := PackUpstreamTLS(failClosedTLSContext(), nil)
	if err != nil {
		panic("envoy: the fail-closed TLS context is invalid: " + err.Error())
	}
	packed, err := anypb.New(httpOptionsForALPN([]string{"h2"}))
	if err != nil {
		panic(err) // a fixed, valid message always packs
	}
	return &Parts{
		FailClosed: failClosed,
		H2C:        newClusterTLS(nil, packed),
		discovery:  &clusterv3.Cluster_Type{Type: clusterv3.Cluster_EDS},
		config:     &clusterv3.Cluster_EdsClusterConfig{EdsConfig: adsConfigSource()},
		followTTL:  dnsClusterType(),
	}
}

// Cluster builds and validates a cluster. The packed TLS context was
// validated before it was packed (see PackUpstreamTLS).
func Cluster(spec plan.Cluster, tls ClusterTLS, parts *Parts) (*clusterv3.Cluster, error) {
	c := &clusterv3.Cluster{Name: spec.Name}
	if spec.ExternalName != "" {
		c.ClusterDiscoveryType = &clusterv3.Cluster_Type{Type: clusterv3.Cluster_LOGICAL_DNS}
		if spec.FollowDNSTTL {
			c.ClusterDiscoveryType = parts.followTTL
		}
		c.LoadAssignment = &endpointv3.ClusterLoadAssignment{
			ClusterName: spec.Name,
			Endpoints: []*endpointv3.LocalityLbEndpoints{{
				LbEndpoints: []*endpointv3.LbEndpoint{lbEndpoint(spec.ExternalName, spec.Port)},
			}},
		}
	} else {
		c.ClusterDiscoveryType = parts.discovery
		c.EdsClusterConfig = parts.config
		if spec.EDSName != "" {
			c.EdsClusterConfig = &clusterv3.Cluster_EdsClusterConfig{EdsConfig: parts.config.EdsConfig, ServiceName: spec.EDSName}
		}
	}
	c.TransportSocket = tls.socket
	if spec.RetryBudget != nil {
		c.CircuitBreakers = retryBudget(spec.RetryBudget)
	}
	c.TypedExtensionProtocolOptions = tls.protocolOptions
	c.Metadata = tls.metadata
	if err := c.ValidateAll(); err != nil {
		return nil, err
	}
	return c, nil
}

// UpstreamTLS is an accepted policy's cluster TLS: the UpstreamTlsContext
// validated (ValidateAll does not look inside an Any, so this is its only
// check) and packed, with the HTTP options its ALPN list needs; memo (may
// be nil) keeps those packed once. An error is what Envoy would reject.
func UpstreamTLS(t plan.UpstreamTLS, memo *HTTPOptionsMemo) (ClusterTLS, error) {
	tls, err := PackUpstreamTLS(upstreamTLSContext(t), memo)
	if err == nil && t.Params.Profile != "" {
		tls.metadata = profileMetadata(t.Params.Profile)
	}
	return tls, err
}

// PackUpstreamTLS is UpstreamTLS of a context already built.
func PackUpstreamTLS(ctx *tlsv3.UpstreamTlsContext, memo *HTTPOptionsMemo) (ClusterTLS, error) {
	if err := ctx.ValidateAll(); err != nil {
		return ClusterTLS{}, err
	}
	transport, err := anypb.New(ctx)
	if err != nil {
		return ClusterTLS{}, err
	}
	httpOptions, err := memo.packed(ctx.GetCommonTlsContext().GetAlpnProtocols())
	if err != nil {
		return ClusterTLS{}, err
	}
	return newClusterTLS(transport, httpOptions), nil
}

// HTTPOptionsMemo holds the packed HTTP options of each ALPN outcome: there
// are only a few, and every policy offering the same protocols shares one.
type HTTPOptionsMemo struct {
	byOffer map[alpnOffer]*anypb.Any
}

// alpnOffer is what an ALPN list means for the upstream protocol.
type alpnOffer struct{ h2, h1 bool }

func (m *HTTPOptionsMemo) packed(alpn []string) (*anypb.Any, error) {
	offer := alpnOffer{h2: slices.Contains(alpn, "h2"), h1: slices.Contains(alpn, "http/1.1")}
	if m != nil {
		if a, ok := m.byOffer[offer]; ok {
			return a, nil
		}
	}
	var packed *anypb.Any
	if opts := httpOptionsForALPN(alpn); opts != nil {
		if err := opts.ValidateAll(); err != nil {
			return nil, err
		}
		var err error
		if packed, err = anypb.New(opts); err != nil {
			return nil, err
		}
	}
	if m != nil {
		if m.byOffer == nil {
			m.byOffer = map[alpnOffer]*anypb.Any{}
		}
		m.byOffer[offer] = packed
	}
	return packed, nil
}

// httpOptionsForALPN makes the cluster speak what ALPN offers: offering h2
// while speaking HTTP/1.1 would break every request.
func httpOptionsForALPN(alpn []string) *httpv3.HttpProtocolOptions {
	h2, h1 := slices.Contains(alpn, "h2"), slices.Contains(alpn, "http/1.1")
	switch {
	case h2 && h1:
		return &httpv3.HttpProtocolOptions{UpstreamProtocolOptions: &httpv3.HttpProtocolOptions_AutoConfig{
			AutoConfig: &httpv3.HttpProtocolOptions_AutoHttpConfig{
				HttpProtocolOptions:  &corev3.Http1ProtocolOptions{},
				Http2ProtocolOptions: &corev3.Http2ProtocolOptions{},
			},
		}}
	case h2:
		return &httpv3.HttpProtocolOptions{UpstreamProtocolOptions: &httpv3.HttpProtocolOptions_ExplicitHttpConfig_{
			ExplicitHttpConfig: &httpv3.HttpProtocolOptions_ExplicitHttpConfig{
				ProtocolConfig: &httpv3.HttpProtocolOptions_ExplicitHttpConfig_Http2ProtocolOptions{
					Http2ProtocolOptions: &corev3.Http2ProtocolOptions{},
				},
			},
		}}
	}
	return nil
}

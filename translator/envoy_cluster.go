package translator

import (
	"slices"

	clusterv3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	endpointv3 "github.com/envoyproxy/go-control-plane/envoy/config/endpoint/v3"
	tlsv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/transport_sockets/tls/v3"
	httpv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/upstreams/http/v3"
	"google.golang.org/protobuf/types/known/anypb"
)

// httpProtocolOptionsName is the extension key of upstream HTTP options.
const httpProtocolOptionsName = "envoy.extensions.upstreams.http.v3.HttpProtocolOptions"

// clusterSpec is one Service port as Envoy should see it.
type clusterSpec struct {
	name string
	// externalName, with port, makes a DNS cluster (ExternalName Service);
	// otherwise the cluster's endpoints come over EDS.
	externalName string
	port         uint32
	// transport is the packed transport socket config (nil: plaintext),
	// and httpOptions the packed upstream HTTP options (nil: Envoy's
	// default). Both are packed once per policy and shared read-only.
	transport   *anypb.Any
	httpOptions *anypb.Any
}

// envoyCluster builds and validates a cluster. The packed TLS context was
// validated before it was packed (see packedTLS).
func envoyCluster(spec clusterSpec) (*clusterv3.Cluster, error) {
	c := &clusterv3.Cluster{Name: spec.name}
	if spec.externalName != "" {
		c.ClusterDiscoveryType = &clusterv3.Cluster_Type{Type: clusterv3.Cluster_LOGICAL_DNS}
		c.LoadAssignment = &endpointv3.ClusterLoadAssignment{
			ClusterName: spec.name,
			Endpoints: []*endpointv3.LocalityLbEndpoints{{
				LbEndpoints: []*endpointv3.LbEndpoint{lbEndpoint(spec.externalName, spec.port)},
			}},
		}
	} else {
		c.ClusterDiscoveryType = &clusterv3.Cluster_Type{Type: clusterv3.Cluster_EDS}
		c.EdsClusterConfig = &clusterv3.Cluster_EdsClusterConfig{EdsConfig: adsConfigSource()}
	}
	if spec.transport != nil {
		c.TransportSocket = &corev3.TransportSocket{
			Name:       tlsTransportSocketName,
			ConfigType: &corev3.TransportSocket_TypedConfig{TypedConfig: spec.transport},
		}
	}
	if spec.httpOptions != nil {
		c.TypedExtensionProtocolOptions = map[string]*anypb.Any{httpProtocolOptionsName: spec.httpOptions}
	}
	if err := c.ValidateAll(); err != nil {
		return nil, err
	}
	return c, nil
}

// packedTLS validates an UpstreamTlsContext (ValidateAll does not look
// inside an Any, so this is its only check) and packs it with the HTTP
// options its ALPN list needs.
func packedTLS(ctx *tlsv3.UpstreamTlsContext) (transport, httpOptions *anypb.Any, err error) {
	if err := ctx.ValidateAll(); err != nil {
		return nil, nil, err
	}
	if transport, err = anypb.New(ctx); err != nil {
		return nil, nil, err
	}
	if opts := httpOptionsForALPN(ctx.GetCommonTlsContext().GetAlpnProtocols()); opts != nil {
		if err := opts.ValidateAll(); err != nil {
			return nil, nil, err
		}
		if httpOptions, err = anypb.New(opts); err != nil {
			return nil, nil, err
		}
	}
	return transport, httpOptions, nil
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

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
	tls          clusterTLS
	eds          *edsParts
}

// clusterTLS is the TLS part of a cluster, built once per policy and shared
// read-only by every cluster it governs.
type clusterTLS struct {
	socket          *corev3.TransportSocket // nil: plaintext
	protocolOptions map[string]*anypb.Any   // nil: Envoy's default
}

// newClusterTLS wraps the packed transport socket config and upstream HTTP
// options (both may be nil).
func newClusterTLS(transport, httpOptions *anypb.Any) clusterTLS {
	var t clusterTLS
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

// appProtocolH2C is the Service port appProtocol of HTTP/2 over cleartext
// with prior knowledge (KEP-3726).
const appProtocolH2C = "kubernetes.io/h2c"

// h2cClusterTLS is no TLS and HTTP/2 upstream: what a plaintext port whose
// appProtocol is kubernetes.io/h2c speaks.
func h2cClusterTLS() clusterTLS {
	packed, err := anypb.New(httpOptionsForALPN([]string{"h2"}))
	if err != nil {
		panic(err) // a fixed, valid message always packs
	}
	return newClusterTLS(nil, packed)
}

// edsParts are what every EDS cluster says alike, shared read-only.
type edsParts struct {
	discovery *clusterv3.Cluster_Type
	config    *clusterv3.Cluster_EdsClusterConfig
}

func newEDSParts() *edsParts {
	return &edsParts{
		discovery: &clusterv3.Cluster_Type{Type: clusterv3.Cluster_EDS},
		config:    &clusterv3.Cluster_EdsClusterConfig{EdsConfig: adsConfigSource()},
	}
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
		c.ClusterDiscoveryType = spec.eds.discovery
		c.EdsClusterConfig = spec.eds.config
	}
	c.TransportSocket = spec.tls.socket
	c.TypedExtensionProtocolOptions = spec.tls.protocolOptions
	if err := c.ValidateAll(); err != nil {
		return nil, err
	}
	return c, nil
}

// packedTLS validates an UpstreamTlsContext (ValidateAll does not look
// inside an Any, so this is its only check) and packs it with the HTTP
// options its ALPN list needs; memo (may be nil) keeps those packed once.
func packedTLS(ctx *tlsv3.UpstreamTlsContext, memo *httpOptionsMemo) (transport, httpOptions *anypb.Any, err error) {
	if err := ctx.ValidateAll(); err != nil {
		return nil, nil, err
	}
	if transport, err = anypb.New(ctx); err != nil {
		return nil, nil, err
	}
	httpOptions, err = memo.packed(ctx.GetCommonTlsContext().GetAlpnProtocols())
	if err != nil {
		return nil, nil, err
	}
	return transport, httpOptions, nil
}

// httpOptionsMemo holds the packed HTTP options of each ALPN outcome: there
// are only a few, and every policy offering the same protocols shares one.
type httpOptionsMemo struct {
	byOffer map[alpnOffer]*anypb.Any
}

// alpnOffer is what an ALPN list means for the upstream protocol.
type alpnOffer struct{ h2, h1 bool }

func (m *httpOptionsMemo) packed(alpn []string) (*anypb.Any, error) {
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

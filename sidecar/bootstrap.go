package sidecar

import (
	"fmt"
	"net"
	"time"

	bootstrapv3 "github.com/envoyproxy/go-control-plane/envoy/config/bootstrap/v3"
	clusterv3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	endpointv3 "github.com/envoyproxy/go-control-plane/envoy/config/endpoint/v3"
	listenerv3 "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	originaldstv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/listener/original_dst/v3"
	tcpproxyv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/tcp_proxy/v3"
	tlsv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/transport_sockets/tls/v3"
	httpv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/upstreams/http/v3"
	matcherv3 "github.com/envoyproxy/go-control-plane/envoy/type/matcher/v3"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/structpb"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/tlsplane/tlsplane/translator/plan"
)

// Names of the bootstrap's static resources. None holds a '/', so none
// can be a name tlsplane gives a cluster or listener (`<ns>/<svc>/<port>`,
// `Mesh/<ns>/<svc>/<port>`).
const (
	XDSCluster         = "tlsplane"
	PassthroughCluster = "passthrough"
	CaptureListener    = "capture"
)

// Node metadata keys: for logs and /debug only, never trusted (a node
// names what it likes; the certificate is what is checked).
const (
	MetadataNamespace      = "tlsplane.io/namespace"
	MetadataServiceAccount = "tlsplane.io/serviceAccount"
	MetadataPod            = "tlsplane.io/pod"
)

// NodeID is a sidecar's node id, `<pod>.<namespace>`.
func NodeID(namespace, pod string) string { return pod + "." + namespace }

// Bootstrap is the sidecar's whole static configuration, validated.
func Bootstrap(o Options) (*bootstrapv3.Bootstrap, error) {
	o, host, port, err := o.checked()
	if err != nil {
		return nil, err
	}
	capture, err := captureListener(o.CapturePort)
	if err != nil {
		return nil, err
	}
	xds, err := xdsCluster(host, port, o.XDSTLS)
	if err != nil {
		return nil, err
	}
	ads := &corev3.ConfigSource{ResourceApiVersion: corev3.ApiVersion_V3, ConfigSourceSpecifier: &corev3.ConfigSource_Ads{Ads: &corev3.AggregatedConfigSource{}}}
	boot := &bootstrapv3.Bootstrap{
		Node: &corev3.Node{
			Id:      NodeID(o.Namespace, o.Pod),
			Cluster: plan.MeshFleet(o.Namespace),
			Metadata: &structpb.Struct{Fields: map[string]*structpb.Value{
				MetadataNamespace:      structpb.NewStringValue(o.Namespace),
				MetadataServiceAccount: structpb.NewStringValue(o.ServiceAccount),
				MetadataPod:            structpb.NewStringValue(o.Pod),
			}},
		},
		Admin: &bootstrapv3.Admin{Address: socket("127.0.0.1", o.AdminPort)},
		StaticResources: &bootstrapv3.Bootstrap_StaticResources{
			Listeners: []*listenerv3.Listener{capture},
			Clusters:  []*clusterv3.Cluster{xds, passthroughCluster()},
		},
		DynamicResources: &bootstrapv3.Bootstrap_DynamicResources{
			AdsConfig: &corev3.ApiConfigSource{
				ApiType:                   corev3.ApiConfigSource_ApiType(corev3.ApiConfigSource_ApiType_value[o.APIType]),
				TransportApiVersion:       corev3.ApiVersion_V3,
				SetNodeOnFirstMessageOnly: true,
				GrpcServices:              []*corev3.GrpcService{{TargetSpecifier: &corev3.GrpcService_EnvoyGrpc_{EnvoyGrpc: &corev3.GrpcService_EnvoyGrpc{ClusterName: XDSCluster}}}},
			},
			LdsConfig: ads,
			CdsConfig: proto.Clone(ads).(*corev3.ConfigSource),
		},
	}
	if err := streamStats(boot); err != nil {
		return nil, err
	}
	if err := boot.ValidateAll(); err != nil {
		return nil, fmt.Errorf("sidecar bootstrap: %w", err)
	}
	return boot, nil
}

// captureListener receives every redirected connection and hands it to
// the listener bound to its original destination (an xDS listener
// `<clusterIP>:<port>` with bind_to_port false); a connection no listener
// matches takes this listener's own chain, the passthrough. Being static,
// it forwards even before the first xDS response: it never blackholes.
func captureListener(port int) (*listenerv3.Listener, error) {
	origDst, err := anypb.New(&originaldstv3.OriginalDst{})
	if err != nil {
		return nil, err
	}
	proxy, err := anypb.New(&tcpproxyv3.TcpProxy{
		StatPrefix:       PassthroughCluster,
		ClusterSpecifier: &tcpproxyv3.TcpProxy_Cluster{Cluster: PassthroughCluster},
	})
	if err != nil {
		return nil, err
	}
	return &listenerv3.Listener{
		Name:             CaptureListener,
		Address:          socket("127.0.0.1", port),
		TrafficDirection: corev3.TrafficDirection_OUTBOUND,
		UseOriginalDst:   wrapperspb.Bool(true),
		ListenerFilters: []*listenerv3.ListenerFilter{{
			Name:       "envoy.filters.listener.original_dst",
			ConfigType: &listenerv3.ListenerFilter_TypedConfig{TypedConfig: origDst},
		}},
		FilterChains: []*listenerv3.FilterChain{{
			Name: PassthroughCluster,
			Filters: []*listenerv3.Filter{{
				Name:       "envoy.filters.network.tcp_proxy",
				ConfigType: &listenerv3.Filter_TypedConfig{TypedConfig: proxy},
			}},
		}},
	}, nil
}

// passthroughCluster connects to a connection's original destination, as
// the workload would have without the mesh.
func passthroughCluster() *clusterv3.Cluster {
	return &clusterv3.Cluster{
		Name:                 PassthroughCluster,
		ClusterDiscoveryType: &clusterv3.Cluster_Type{Type: clusterv3.Cluster_ORIGINAL_DST},
		LbPolicy:             clusterv3.Cluster_CLUSTER_PROVIDED,
		ConnectTimeout:       durationpb.New(5 * time.Second),
	}
}

// xdsCluster is tlsplane's ADS over HTTP/2: a static address for an IP,
// else a name resolved by DNS (a Service's name), with mutual TLS when x
// is set.
func xdsCluster(host string, port int, x *XDSTLS) (*clusterv3.Cluster, error) {
	h2, err := anypb.New(&httpv3.HttpProtocolOptions{
		UpstreamProtocolOptions: &httpv3.HttpProtocolOptions_ExplicitHttpConfig_{ExplicitHttpConfig: &httpv3.HttpProtocolOptions_ExplicitHttpConfig{
			ProtocolConfig: &httpv3.HttpProtocolOptions_ExplicitHttpConfig_Http2ProtocolOptions{Http2ProtocolOptions: &corev3.Http2ProtocolOptions{}},
		}},
	})
	if err != nil {
		return nil, err
	}
	discovery := clusterv3.Cluster_LOGICAL_DNS
	if net.ParseIP(host) != nil {
		discovery = clusterv3.Cluster_STATIC
	}
	c := &clusterv3.Cluster{
		Name:                          XDSCluster,
		ClusterDiscoveryType:          &clusterv3.Cluster_Type{Type: discovery},
		ConnectTimeout:                durationpb.New(5 * time.Second),
		TypedExtensionProtocolOptions: map[string]*anypb.Any{"envoy.extensions.upstreams.http.v3.HttpProtocolOptions": h2},
		LoadAssignment: &endpointv3.ClusterLoadAssignment{
			ClusterName: XDSCluster,
			Endpoints: []*endpointv3.LocalityLbEndpoints{{LbEndpoints: []*endpointv3.LbEndpoint{{
				HostIdentifier: &endpointv3.LbEndpoint_Endpoint{Endpoint: &endpointv3.Endpoint{Address: socket(host, port)}},
			}}}},
		},
	}
	if x != nil {
		ts, err := xdsTLS(x)
		if err != nil {
			return nil, err
		}
		c.TransportSocket = ts
	}
	return c, nil
}

// xdsTLS presents the workload certificate and requires tlsplane's to
// name x.ServerName (a DNS SAN, or an IP SAN for an address).
func xdsTLS(x *XDSTLS) (*corev3.TransportSocket, error) {
	san := &tlsv3.SubjectAltNameMatcher{SanType: tlsv3.SubjectAltNameMatcher_DNS, Matcher: exact(x.ServerName)}
	sni := x.ServerName
	if net.ParseIP(x.ServerName) != nil {
		san.SanType, sni = tlsv3.SubjectAltNameMatcher_IP_ADDRESS, "" // SNI carries names only
	}
	upstream, err := anypb.New(&tlsv3.UpstreamTlsContext{
		Sni: sni,
		CommonTlsContext: &tlsv3.CommonTlsContext{
			AlpnProtocols: []string{"h2"},
			TlsParams:     &tlsv3.TlsParameters{TlsMinimumProtocolVersion: tlsv3.TlsParameters_TLSv1_2},
			TlsCertificates: []*tlsv3.TlsCertificate{{
				CertificateChain: file(x.CertFile),
				PrivateKey:       file(x.KeyFile),
			}},
			ValidationContextType: &tlsv3.CommonTlsContext_ValidationContext{ValidationContext: &tlsv3.CertificateValidationContext{
				TrustedCa:                 file(x.CAFile),
				MatchTypedSubjectAltNames: []*tlsv3.SubjectAltNameMatcher{san},
			}},
		},
	})
	if err != nil {
		return nil, err
	}
	return &corev3.TransportSocket{Name: "envoy.transport_sockets.tls", ConfigType: &corev3.TransportSocket_TypedConfig{TypedConfig: upstream}}, nil
}

func socket(host string, port int) *corev3.Address {
	return &corev3.Address{Address: &corev3.Address_SocketAddress{SocketAddress: &corev3.SocketAddress{
		Address: host, PortSpecifier: &corev3.SocketAddress_PortValue{PortValue: uint32(port)},
	}}}
}

func file(path string) *corev3.DataSource {
	return &corev3.DataSource{Specifier: &corev3.DataSource_Filename{Filename: path}}
}

func exact(s string) *matcherv3.StringMatcher {
	return &matcherv3.StringMatcher{MatchPattern: &matcherv3.StringMatcher_Exact{Exact: s}}
}

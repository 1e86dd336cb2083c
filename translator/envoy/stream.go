package envoy

import (
	"slices"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	listenerv3 "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	tcpproxyv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/tcp_proxy/v3"
	tlsv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/transport_sockets/tls/v3"
	"google.golang.org/protobuf/types/known/anypb"

	"github.com/tlsplane/tlsplane/translator/plan"
)

// tcpProxyFilterName is Envoy's TCP proxy network filter.
const tcpProxyFilterName = "envoy.filters.network.tcp_proxy"

// streamChain is one TLS or TCP listener's filter chain: a TCP proxy to
// the backends, after terminating TLS when the chain has certificates. A
// connection whose share goes to an invalid backend is refused
// (invalidBackendCluster names no cluster). With log set, a terminating
// chain with a backend logs its upstream certificates.
func streamChain(listener string, c plan.StreamChain, log *plan.CertificateLog) (*listenerv3.FilterChain, error) {
	proxy := &tcpproxyv3.TcpProxy{StatPrefix: statPrefix(listener + "/" + c.Name)}
	name := func(b plan.WeightedBackend) string {
		if b.Cluster == "" {
			return invalidBackendCluster
		}
		return b.Cluster
	}
	switch len(c.Backends) {
	case 0:
		proxy.ClusterSpecifier = &tcpproxyv3.TcpProxy_Cluster{Cluster: invalidBackendCluster}
	case 1:
		proxy.ClusterSpecifier = &tcpproxyv3.TcpProxy_Cluster{Cluster: name(c.Backends[0])}
	default:
		weighted := &tcpproxyv3.TcpProxy_WeightedCluster{}
		for _, b := range c.Backends {
			weighted.Clusters = append(weighted.Clusters, &tcpproxyv3.TcpProxy_WeightedCluster_ClusterWeight{Name: name(b), Weight: b.Weight})
		}
		proxy.ClusterSpecifier = &tcpproxyv3.TcpProxy_WeightedClusters{WeightedClusters: weighted}
	}
	// Only a chain that terminates TLS reaches clusters with upstream TLS:
	// Passthrough and TCP chains send to raw clusters, which have none.
	if log != nil && len(c.CertSecrets) > 0 && slices.ContainsFunc(c.Backends, func(b plan.WeightedBackend) bool { return b.Cluster != "" }) {
		accessLog, err := tcpProxyLog(log)
		if err != nil {
			return nil, err
		}
		proxy.AccessLog = accessLog
		proxy.AccessLogOptions = &tcpproxyv3.TcpProxy_TcpAccessLogOptions{FlushAccessLogOnConnected: true}
	}
	packed, err := anypb.New(proxy)
	if err != nil {
		return nil, err
	}
	chain := &listenerv3.FilterChain{
		Name:    c.Name,
		Filters: []*listenerv3.Filter{{Name: tcpProxyFilterName, ConfigType: &listenerv3.Filter_TypedConfig{TypedConfig: packed}}},
	}
	if len(c.ServerNames) > 0 {
		chain.FilterChainMatch = &listenerv3.FilterChainMatch{ServerNames: c.ServerNames}
	}
	if len(c.CertSecrets) > 0 {
		tls, err := anypb.New(streamTLSContext(c.CertSecrets))
		if err != nil {
			return nil, err
		}
		chain.TransportSocket = &corev3.TransportSocket{Name: tlsTransportSocketName, ConfigType: &corev3.TransportSocket_TypedConfig{TypedConfig: tls}}
	}
	return chain, nil
}

// streamTLSContext terminates a TLS listener's connections: its
// certificates over SDS, no ALPN (the stream inside is not known to be
// HTTP).
func streamTLSContext(secrets []string) *tlsv3.DownstreamTlsContext {
	ctx := downstreamTLSContext(secrets, nil)
	ctx.CommonTlsContext.AlpnProtocols = nil
	return ctx
}

package snapshotstest

import (
	clusterv3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	tlsv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/transport_sockets/tls/v3"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/tlsplane/tlsplane/translator"
	"github.com/tlsplane/tlsplane/translator/tlsopts"
)

// Tuned returns out with the named cluster's TLS parameters set to params
// and, when profile is not empty, carrying the profile in its metadata
// (tlsopts.ClusterMetadataProfile), as a policy with TLS options or a
// profile would make it. The cluster is a new value; out's others are
// shared.
func Tuned(out translator.Output, cluster string, params *tlsv3.TlsParameters, profile string) translator.Output {
	clusters := make([]*clusterv3.Cluster, len(out.Clusters))
	copy(clusters, out.Clusters)
	for i, c := range clusters {
		if c.GetName() != cluster {
			continue
		}
		c = proto.Clone(c).(*clusterv3.Cluster)
		tls := &tlsv3.UpstreamTlsContext{}
		if err := c.GetTransportSocket().GetTypedConfig().UnmarshalTo(tls); err != nil {
			panic(err)
		}
		tls.CommonTlsContext.TlsParams = params
		c.TransportSocket.ConfigType = &corev3.TransportSocket_TypedConfig{TypedConfig: deterministicAny(tls)}
		if profile != "" {
			c.Metadata = &corev3.Metadata{FilterMetadata: map[string]*structpb.Struct{
				tlsopts.ClusterMetadataNamespace: {Fields: map[string]*structpb.Value{
					tlsopts.ClusterMetadataProfile: structpb.NewStringValue(profile),
				}},
			}}
		}
		clusters[i] = c
	}
	out.Clusters = clusters
	return out
}

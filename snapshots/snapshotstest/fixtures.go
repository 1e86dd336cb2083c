// Package snapshotstest builds small, hand-made translator outputs for the
// tests of packages snapshots and xds. It is not used by production code.
package snapshotstest

import (
	"fmt"
	"sort"
	"testing"

	clusterv3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	endpointv3 "github.com/envoyproxy/go-control-plane/envoy/config/endpoint/v3"
	tlsv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/transport_sockets/tls/v3"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"
	"google.golang.org/protobuf/types/known/durationpb"
	"k8s.io/apimachinery/pkg/types"

	"github.com/tlsplane/tlsplane/translator"
)

// Backend is one TLS backend: a Service port with a policy and a CA.
type Backend struct {
	Namespace, Service string
	Port               int
	SNI                string // changes the cluster's content
	CA                 string // changes the secret's content
	Address            string // changes the endpoints' content
}

// ClusterName is `<namespace>/<service>/<port>`, as the translator names it.
func (b Backend) ClusterName() string {
	return fmt.Sprintf("%s/%s/%d", b.Namespace, b.Service, b.Port)
}

// SecretName is the CA secret the cluster asks for over SDS.
func (b Backend) SecretName() string { return b.ClusterName() + "/ca" }

// Policy is the BackendTLSPolicy said to have produced the backend.
func (b Backend) Policy() types.NamespacedName {
	return types.NamespacedName{Namespace: b.Namespace, Name: b.Service + "-tls"}
}

// Output translates backends the way the translator would, sorted by name.
func Output(backends ...Backend) translator.Output {
	sorted := append([]Backend(nil), backends...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].ClusterName() < sorted[j].ClusterName() })
	out := translator.Output{Origins: map[string][]types.NamespacedName{}, ClusterNamespaces: map[string]string{}}
	for _, b := range sorted {
		out.Clusters = append(out.Clusters, Cluster(b))
		out.ClusterNamespaces[b.ClusterName()] = b.Namespace
		out.Endpoints = append(out.Endpoints, Endpoints(b))
		out.Secrets = append(out.Secrets, Secret(b))
		out.Origins[b.ClusterName()] = []types.NamespacedName{b.Policy()}
		out.Origins[b.SecretName()] = []types.NamespacedName{b.Policy()}
	}
	return out
}

// Cluster is an EDS-over-ADS cluster whose TLS validation context comes by
// SDS over ADS.
func Cluster(b Backend) *clusterv3.Cluster {
	tls := &tlsv3.UpstreamTlsContext{
		Sni: b.SNI,
		CommonTlsContext: &tlsv3.CommonTlsContext{
			ValidationContextType: &tlsv3.CommonTlsContext_CombinedValidationContext{
				CombinedValidationContext: &tlsv3.CommonTlsContext_CombinedCertificateValidationContext{
					DefaultValidationContext:         &tlsv3.CertificateValidationContext{},
					ValidationContextSdsSecretConfig: &tlsv3.SdsSecretConfig{Name: b.SecretName(), SdsConfig: ads()},
				},
			},
		},
	}
	return &clusterv3.Cluster{
		Name:                 b.ClusterName(),
		ConnectTimeout:       durationpb.New(5e9),
		ClusterDiscoveryType: &clusterv3.Cluster_Type{Type: clusterv3.Cluster_EDS},
		EdsClusterConfig:     &clusterv3.Cluster_EdsClusterConfig{EdsConfig: ads()},
		TransportSocket: &corev3.TransportSocket{
			Name:       "envoy.transport_sockets.tls",
			ConfigType: &corev3.TransportSocket_TypedConfig{TypedConfig: deterministicAny(tls)},
		},
	}
}

// Endpoints is the cluster's load assignment with one address.
func Endpoints(b Backend) *endpointv3.ClusterLoadAssignment {
	addr := b.Address
	if addr == "" {
		addr = "10.0.0.1"
	}
	return &endpointv3.ClusterLoadAssignment{
		ClusterName: b.ClusterName(),
		Endpoints: []*endpointv3.LocalityLbEndpoints{{LbEndpoints: []*endpointv3.LbEndpoint{{
			HostIdentifier: &endpointv3.LbEndpoint_Endpoint{Endpoint: &endpointv3.Endpoint{
				Address: &corev3.Address{Address: &corev3.Address_SocketAddress{SocketAddress: &corev3.SocketAddress{
					Address: addr, PortSpecifier: &corev3.SocketAddress_PortValue{PortValue: uint32(b.Port)},
				}}},
			}},
		}}}},
	}
}

// Secret is the CA bundle the cluster validates with.
func Secret(b Backend) *tlsv3.Secret {
	ca := b.CA
	if ca == "" {
		ca = "-----BEGIN CERTIFICATE-----\nfixture for " + b.ClusterName() + "\n-----END CERTIFICATE-----\n"
	}
	return &tlsv3.Secret{
		Name: b.SecretName(),
		Type: &tlsv3.Secret_ValidationContext{ValidationContext: &tlsv3.CertificateValidationContext{
			TrustedCa: &corev3.DataSource{Specifier: &corev3.DataSource_InlineString{InlineString: ca}},
		}},
	}
}

func ads() *corev3.ConfigSource {
	return &corev3.ConfigSource{
		ConfigSourceSpecifier: &corev3.ConfigSource_Ads{Ads: &corev3.AggregatedConfigSource{}},
		ResourceApiVersion:    corev3.ApiVersion_V3,
	}
}

func deterministicAny(m proto.Message) *anypb.Any {
	a := &anypb.Any{}
	if err := anypb.MarshalFrom(a, m, proto.MarshalOptions{Deterministic: true}); err != nil {
		panic(err)
	}
	return a
}

// TLSContext decodes a cluster's UpstreamTlsContext.
func TLSContext(t testing.TB, c *clusterv3.Cluster) *tlsv3.UpstreamTlsContext {
	t.Helper()
	tls := &tlsv3.UpstreamTlsContext{}
	if err := c.GetTransportSocket().GetTypedConfig().UnmarshalTo(tls); err != nil {
		t.Fatalf("cluster %s: %v", c.GetName(), err)
	}
	return tls
}

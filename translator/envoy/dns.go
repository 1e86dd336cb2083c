package envoy

import (
	"time"

	clusterv3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	dnscommonv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/clusters/common/dns/v3"
	dnsclusterv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/clusters/dns/v3"
	"google.golang.org/protobuf/types/known/anypb"
	"google.golang.org/protobuf/types/known/durationpb"
)

// How a DNS cluster following its answers' TTL re-resolves (an
// XBackend's, plan.Cluster.FollowDNSTTL). Envoy 1.40 deprecates the
// Cluster's own dns_refresh_rate and respect_dns_ttl for the
// envoy.clusters.dns extension, configured here.
const (
	// dnsClusterName is the cluster_type extension of DNS clusters.
	dnsClusterName = "envoy.clusters.dns"
	// dnsMinRefresh bounds a short (or zero) TTL from below: a name
	// answering TTL 0 is not resolved in a loop.
	dnsMinRefresh = 5 * time.Second
	// dnsRefresh is the rate before the first answer gives a TTL.
	dnsRefresh = 30 * time.Second
	// A failed resolution is retried from dnsFailureBase, backing off to
	// dnsFailureMax; the last address is kept meanwhile.
	dnsFailureBase = 1 * time.Second
	dnsFailureMax  = 30 * time.Second
	// dnsJitter spreads the refreshes of many Envoys.
	dnsJitter = 1 * time.Second
)

// dnsClusterType is the cluster_type of DNS clusters following the TTL:
// all addresses of an answer as one endpoint (logical DNS: one connection
// target from the latest answer, no pool churn on rotating answers), the
// refresh bounded as above, IPv4 first (many clusters have no IPv6 egress).
func dnsClusterType() *clusterv3.Cluster_ClusterType {
	cfg := &dnsclusterv3.DnsCluster{
		DnsRefreshRate:               durationpb.New(dnsRefresh),
		RespectDnsTtl:                true,
		DnsMinRefreshRate:            durationpb.New(dnsMinRefresh),
		DnsFailureRefreshRate:        &dnsclusterv3.DnsCluster_RefreshRate{BaseInterval: durationpb.New(dnsFailureBase), MaxInterval: durationpb.New(dnsFailureMax)},
		DnsJitter:                    durationpb.New(dnsJitter),
		DnsLookupFamily:              dnscommonv3.DnsLookupFamily_V4_PREFERRED,
		AllAddressesInSingleEndpoint: true,
	}
	if err := cfg.ValidateAll(); err != nil {
		panic("envoy: the DNS cluster config is invalid: " + err.Error())
	}
	packed, err := anypb.New(cfg)
	if err != nil {
		panic(err) // a fixed, valid message always packs
	}
	return &clusterv3.Cluster_ClusterType{ClusterType: &clusterv3.Cluster_CustomClusterType{Name: dnsClusterName, TypedConfig: packed}}
}

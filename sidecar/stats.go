package sidecar

import (
	"time"

	bootstrapv3 "github.com/envoyproxy/go-control-plane/envoy/config/bootstrap/v3"
	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	metricsconfv3 "github.com/envoyproxy/go-control-plane/envoy/config/metrics/v3"
	matcherv3 "github.com/envoyproxy/go-control-plane/envoy/type/matcher/v3"
	"google.golang.org/protobuf/types/known/anypb"
	"google.golang.org/protobuf/types/known/durationpb"
)

// StatsCounterRegex keeps only the per-cluster counters tlsplane reads
// from Envoy's metrics service (xds.ReadCounters), so a flush of 1,000
// clusters stays small: the Gateway Envoys' bootstraps (provisioner,
// examples/envoy.yaml) keep the same.
const StatsCounterRegex = `^cluster\..+\.(ssl\.(fail_verify_error|fail_verify_san|fail_verify_cert_hash|connection_error|handshake)|upstream_cx_connect_fail)$`

// passthroughStatsPrefix keeps the passthrough's own statistics too: what
// left the Pod around the mesh is what a user of a sidecar asks first.
const passthroughStatsPrefix = "cluster." + PassthroughCluster + "."

// streamStats makes the sidecar stream its counters to tlsplane's
// metrics service over the xDS cluster, every 5 s, as Gateway Envoys do:
// its TLS failures become the handshake conditions of the policies whose
// clusters it reaches, like a Gateway Envoy's.
func streamStats(boot *bootstrapv3.Bootstrap) error {
	sink, err := anypb.New(&metricsconfv3.MetricsServiceConfig{
		TransportApiVersion: corev3.ApiVersion_V3,
		// At most this many counters a message: far below tlsplane's
		// 4 MiB limit on a gRPC message at 10,000 clusters.
		BatchSize: 1000,
		GrpcService: &corev3.GrpcService{TargetSpecifier: &corev3.GrpcService_EnvoyGrpc_{
			EnvoyGrpc: &corev3.GrpcService_EnvoyGrpc{ClusterName: XDSCluster}}},
	})
	if err != nil {
		return err
	}
	boot.StatsFlushInterval = durationpb.New(5 * time.Second)
	boot.StatsSinks = []*metricsconfv3.StatsSink{{
		Name:       "envoy.stat_sinks.metrics_service",
		ConfigType: &metricsconfv3.StatsSink_TypedConfig{TypedConfig: sink},
	}}
	boot.StatsConfig = &metricsconfv3.StatsConfig{StatsMatcher: &metricsconfv3.StatsMatcher{
		StatsMatcher: &metricsconfv3.StatsMatcher_InclusionList{InclusionList: &matcherv3.ListStringMatcher{
			Patterns: []*matcherv3.StringMatcher{
				{MatchPattern: &matcherv3.StringMatcher_SafeRegex{SafeRegex: &matcherv3.RegexMatcher{Regex: StatsCounterRegex}}},
				{MatchPattern: &matcherv3.StringMatcher_Prefix{Prefix: passthroughStatsPrefix}},
			},
		}},
	}}
	return nil
}

package envoy

import (
	accesslogv3 "github.com/envoyproxy/go-control-plane/envoy/config/accesslog/v3"
	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	accesslogdatav3 "github.com/envoyproxy/go-control-plane/envoy/data/accesslog/v3"
	celv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/access_loggers/filters/cel/v3"
	grpclogv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/access_loggers/grpc/v3"
	tracingv3 "github.com/envoyproxy/go-control-plane/envoy/type/tracing/v3"
	typev3 "github.com/envoyproxy/go-control-plane/envoy/type/v3"
	"google.golang.org/protobuf/types/known/anypb"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/tlsplane/tlsplane/translator/plan"
)

// Envoy extension names of the certificate log.
const (
	httpGRPCLoggerName = "envoy.access_loggers.http_grpc"
	tcpGRPCLoggerName  = "envoy.access_loggers.tcp_grpc"
	celFilterName      = "envoy.access_loggers.extension_filters.cel"
)

// CertificateLogRuntimeKey lets an operator change the sample rate on a
// running Envoy (its runtime overrides percent_sampled).
const CertificateLogRuntimeKey = "tlsplane.backend_certificates.sample_per_million"

// upstreamTLSExpression keeps entries of TLS upstream connections only: a
// listener reaches plaintext clusters too, and which of its clusters use
// TLS changes with policies, without the listener being emitted again.
// Evaluated after the sample, so on a sampled entry only.
const upstreamTLSExpression = `upstream.tls_version != ""`

// certificateLogFlushInterval bounds how long a sampled entry waits in
// Envoy's buffer.
const certificateLogFlushInterval = 1e9 // 1s

// routerUpstreamLog is the router's upstream_log reporting one entry per
// sampled upstream attempt (so every host a retry reaches).
func routerUpstreamLog(l *plan.CertificateLog) ([]*accesslogv3.AccessLog, error) {
	cfg, err := anypb.New(&grpclogv3.HttpGrpcAccessLogConfig{CommonConfig: certificateLogCommon(l)})
	if err != nil {
		return nil, err
	}
	filter, err := certificateLogFilter(l, accesslogdatav3.AccessLogType_UpstreamEnd)
	if err != nil {
		return nil, err
	}
	return []*accesslogv3.AccessLog{{
		Name: httpGRPCLoggerName, Filter: filter,
		ConfigType: &accesslogv3.AccessLog_TypedConfig{TypedConfig: cfg},
	}}, nil
}

// tcpProxyLog is the TCP proxy's access log, flushed once when the
// upstream connection is made (its TLS handshake done), sampled.
func tcpProxyLog(l *plan.CertificateLog) ([]*accesslogv3.AccessLog, error) {
	cfg, err := anypb.New(&grpclogv3.TcpGrpcAccessLogConfig{CommonConfig: certificateLogCommon(l)})
	if err != nil {
		return nil, err
	}
	filter, err := certificateLogFilter(l, accesslogdatav3.AccessLogType_TcpUpstreamConnected)
	if err != nil {
		return nil, err
	}
	return []*accesslogv3.AccessLog{{
		Name: tcpGRPCLoggerName, Filter: filter,
		ConfigType: &accesslogv3.AccessLog_TypedConfig{TypedConfig: cfg},
	}}, nil
}

// certificateLogCommon sends entries to tlsplane through the xDS cluster,
// with the peer certificate and what was negotiated as custom tags.
func certificateLogCommon(l *plan.CertificateLog) *grpclogv3.CommonGrpcAccessLogConfig {
	tag := func(name, format string) *tracingv3.CustomTag {
		return &tracingv3.CustomTag{Tag: name, Type: &tracingv3.CustomTag_Value{Value: format}}
	}
	return &grpclogv3.CommonGrpcAccessLogConfig{
		LogName: plan.CertificateLogName,
		GrpcService: &corev3.GrpcService{TargetSpecifier: &corev3.GrpcService_EnvoyGrpc_{
			EnvoyGrpc: &corev3.GrpcService_EnvoyGrpc{ClusterName: l.Cluster},
		}},
		TransportApiVersion: corev3.ApiVersion_V3,
		BufferFlushInterval: durationpb.New(certificateLogFlushInterval),
		CustomTags: []*tracingv3.CustomTag{
			tag(plan.CertificateTag, "%UPSTREAM_PEER_CERT%"),
			tag(plan.TLSVersionTag, "%UPSTREAM_TLS_VERSION%"),
			tag(plan.TLSCipherTag, "%UPSTREAM_TLS_CIPHER%"),
		},
	}
}

// certificateLogFilter logs entries of one type, sampled, of TLS upstream
// connections; cheapest test first (an AND stops at the first false).
func certificateLogFilter(l *plan.CertificateLog, only accesslogdatav3.AccessLogType) (*accesslogv3.AccessLogFilter, error) {
	cel, err := anypb.New(&celv3.ExpressionFilter{Expression: upstreamTLSExpression})
	if err != nil {
		return nil, err
	}
	return &accesslogv3.AccessLogFilter{FilterSpecifier: &accesslogv3.AccessLogFilter_AndFilter{AndFilter: &accesslogv3.AndFilter{
		Filters: []*accesslogv3.AccessLogFilter{
			{FilterSpecifier: &accesslogv3.AccessLogFilter_LogTypeFilter{LogTypeFilter: &accesslogv3.LogTypeFilter{
				Types: []accesslogdatav3.AccessLogType{only},
			}}},
			{FilterSpecifier: &accesslogv3.AccessLogFilter_RuntimeFilter{RuntimeFilter: &accesslogv3.RuntimeFilter{
				RuntimeKey: CertificateLogRuntimeKey,
				PercentSampled: &typev3.FractionalPercent{
					Numerator: min(l.PerMillion, plan.AllLogged), Denominator: typev3.FractionalPercent_MILLION,
				},
				// The sample is of connections, not of request ids (a TCP
				// connection has none).
				UseIndependentRandomness: true,
			}}},
			{FilterSpecifier: &accesslogv3.AccessLogFilter_ExtensionFilter{ExtensionFilter: &accesslogv3.ExtensionFilter{
				Name: celFilterName, ConfigType: &accesslogv3.ExtensionFilter_TypedConfig{TypedConfig: cel},
			}}},
		},
	}}}, nil
}

package xds

import (
	"errors"
	"io"
	"log/slog"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	metricsv3 "github.com/envoyproxy/go-control-plane/envoy/service/metrics/v3"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/tlsplane/tlsplane/snapshots"
)

// metricsService is Envoy's metrics service (the stat sink
// envoy.stat_sinks.metrics_service): Envoy streams its counters every
// flush. A stream is authorized as an ADS stream is, by its node's fleet,
// and reports only about clusters that fleet is served.
type metricsService struct {
	metricsv3.UnimplementedMetricsServiceServer
	log           *slog.Logger
	metrics       *metrics
	fleetIdentity *FleetIdentity
	// serves says whether fleet is served cluster.
	serves   func(fleet, cluster string) bool
	onReport func(ClusterStats)
}

// StreamMetrics reads reports until Envoy closes the stream. Envoy sends
// the node in the first message only.
func (s *metricsService) StreamMetrics(stream grpc.ClientStreamingServer[metricsv3.StreamMetricsMessage, metricsv3.StreamMetricsResponse]) error {
	peer := identityOf(stream.Context())
	var node *corev3.Node
	for {
		msg, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			return stream.SendAndClose(&metricsv3.StreamMetricsResponse{})
		}
		if err != nil {
			return err
		}
		if n := msg.GetIdentifier().GetNode(); n != nil {
			// A node named again must be the same fleet: the peer was
			// authorized for that one only.
			if node != nil && snapshots.Fleet(n) != snapshots.Fleet(node) {
				return status.Errorf(codes.PermissionDenied, "metrics stream of fleet %q: a later message names fleet %q", snapshots.Fleet(node), snapshots.Fleet(n))
			}
			if node == nil {
				if err := s.fleetIdentity.admit("metrics stream", peer, n, s.metrics, s.log); err != nil {
					return err
				}
			}
			node = n
		}
		if node == nil {
			return status.Error(codes.InvalidArgument, "metrics stream: the first message has no identifier.node")
		}
		s.report(node, msg)
	}
}

// report keeps the clusters the node's fleet is served and hands them on.
func (s *metricsService) report(node *corev3.Node, msg *metricsv3.StreamMetricsMessage) {
	fleet := snapshots.Fleet(node)
	counters, flush := clusterCounters(msg.GetEnvoyMetrics())
	for cluster := range counters {
		if !s.serves(fleet, cluster) {
			s.metrics.statsDropped.Inc()
			delete(counters, cluster)
		}
	}
	s.metrics.statsReports.Inc()
	if s.onReport != nil {
		s.onReport(ClusterStats{NodeID: node.GetId(), Fleet: fleet, Flush: flush, Counters: counters})
	}
}

package xds

import (
	"errors"
	"io"
	"log/slog"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	accesslogv3 "github.com/envoyproxy/go-control-plane/envoy/service/accesslog/v3"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/tlsplane/tlsplane/snapshots"
	"github.com/tlsplane/tlsplane/translator/plan"
)

// accessLogService is Envoy's access log service (the gRPC access loggers
// envoy.access_loggers.http_grpc and tcp_grpc): the certificate logs the
// translator puts in Gateway listeners (plan.CertificateLog) stream their
// sampled entries here. A stream is authorized as an ADS stream is, by its
// node's fleet, and reports only about clusters that fleet is served.
type accessLogService struct {
	accesslogv3.UnimplementedAccessLogServiceServer
	log           *slog.Logger
	metrics       *metrics
	fleetIdentity *FleetIdentity
	// serves says whether fleet is served cluster.
	serves     func(fleet, cluster string) bool
	onSighting func(CertificateSighting)
}

// StreamAccessLogs reads entries until Envoy closes the stream. Envoy
// names the node and the log in the first message only.
func (s *accessLogService) StreamAccessLogs(stream grpc.ClientStreamingServer[accesslogv3.StreamAccessLogsMessage, accesslogv3.StreamAccessLogsResponse]) error {
	peer := identityOf(stream.Context())
	var (
		node    *corev3.Node
		logName string
	)
	for {
		msg, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			return stream.SendAndClose(&accesslogv3.StreamAccessLogsResponse{})
		}
		if err != nil {
			return err
		}
		if id := msg.GetIdentifier(); id != nil {
			n := id.GetNode()
			if n == nil {
				return status.Error(codes.InvalidArgument, "access log stream: identifier has no node")
			}
			// A node named again must be the same fleet: the peer was
			// authorized for that one only.
			if node != nil && snapshots.Fleet(n) != snapshots.Fleet(node) {
				return status.Errorf(codes.PermissionDenied, "access log stream of fleet %q: a later message names fleet %q", snapshots.Fleet(node), snapshots.Fleet(n))
			}
			if node == nil {
				if err := s.fleetIdentity.admit("access log stream", peer, n, s.metrics, s.log); err != nil {
					return err
				}
			}
			node, logName = n, id.GetLogName()
		}
		if node == nil {
			return status.Error(codes.InvalidArgument, "access log stream: the first message has no identifier.node")
		}
		s.report(node, logName, msg)
	}
}

// report parses a message's entries into sightings and hands on those of
// clusters the node's fleet is served. Entries of another log (an
// operator's own, sent to this service) are not ours to read.
func (s *accessLogService) report(node *corev3.Node, logName string, msg *accesslogv3.StreamAccessLogsMessage) {
	entries := entriesOf(msg)
	if logName != plan.CertificateLogName {
		s.metrics.sightingsDropped.WithLabelValues(DroppedOtherLog).Add(float64(len(entries)))
		return
	}
	fleet := snapshots.Fleet(node)
	for _, e := range entries {
		sighting, reason := parseSighting(e)
		if reason == "" && !s.serves(fleet, sighting.Cluster) {
			reason = DroppedNotServed
		}
		if reason != "" {
			s.metrics.sightingsDropped.WithLabelValues(reason).Inc()
			continue
		}
		sighting.NodeID, sighting.Fleet = node.GetId(), fleet
		s.metrics.sightings.Inc()
		if s.onSighting != nil {
			s.onSighting(sighting)
		}
	}
}

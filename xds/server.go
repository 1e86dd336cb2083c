package xds

import (
	"cmp"
	"context"
	"log/slog"
	"net"
	"sync"
	"time"

	accesslogv3 "github.com/envoyproxy/go-control-plane/envoy/service/accesslog/v3"
	discoveryv3 "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	metricsv3 "github.com/envoyproxy/go-control-plane/envoy/service/metrics/v3"
	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/keepalive"
	"k8s.io/apimachinery/pkg/types"

	"github.com/tlsplane/tlsplane/snapshots"
)

// gRPC limits, explicit so that hardening can reason about them.
const (
	// MaxRecvMsgSize bounds a request; Envoy's requests are small.
	MaxRecvMsgSize = 4 << 20
	// MaxSendMsgSize bounds a response: a whole type for a large fleet.
	MaxSendMsgSize = 64 << 20
	// MaxConcurrentStreams per connection; Envoy opens one ADS stream.
	MaxConcurrentStreams = 128
	// KeepaliveMinTime rejects (GOAWAY) clients pinging more often.
	KeepaliveMinTime = 10 * time.Second
	// KeepaliveTime and KeepaliveTimeout find dead Envoys behind
	// half-open TCP connections.
	KeepaliveTime    = 30 * time.Second
	KeepaliveTimeout = 10 * time.Second
	// MaxConnectionIdle closes (GOAWAY) a connection without a stream for
	// this long: an Envoy always holds its ADS stream, so an idle
	// connection is a client that authenticated and does nothing, holding
	// a slot of ConnectionLimits.
	MaxConnectionIdle = 2 * time.Minute
	// ReadBufferSize and WriteBufferSize are gRPC's per-connection
	// buffers, explicit because they are most of an idle connection's
	// memory; the write buffer is shared (released between writes).
	ReadBufferSize  = 32 << 10
	WriteBufferSize = 32 << 10
	// StreamWindow and ConnWindow fix the HTTP/2 receive windows: gRPC's
	// default grows them to 16 MiB per connection as a client sends fast,
	// which an authenticated client could make the server buffer.
	StreamWindow = 64 << 10
	ConnWindow   = 256 << 10
)

// Options configure a Server.
type Options struct {
	Logger     *slog.Logger
	Registerer prometheus.Registerer
	// OnNACK is called once per (node, type, version) rejected, on the
	// stream's goroutine: it must return quickly.
	OnNACK func(NACK)
	// OnACK is called for every response an Envoy accepted, on the
	// stream's goroutine: it must return quickly. It lets a NACK's
	// consequences be lifted once a newer version is accepted.
	OnACK func(ACK)
	// OnClusterStats is called with every metrics service report, on the
	// stream's goroutine: it must return quickly. Clusters the reporting
	// fleet is not served are left out.
	OnClusterStats func(ClusterStats)
	// OnCertificateSighting is called with every sampled upstream TLS
	// connection an Envoy's access log service reports, on the stream's
	// goroutine: it must return quickly. Entries about clusters the
	// reporting fleet is not served are left out.
	OnCertificateSighting func(CertificateSighting)
	// Security is the channel's TLS and fleet authorization; the zero
	// value serves plaintext to anyone who can connect.
	Security Security
	// Limits bound the port's connections; the zero value bounds none.
	Limits ConnectionLimits
	// HandshakeTimeout bounds the TLS handshake and HTTP/2 preface of
	// each connection; zero is DefaultHandshakeTimeout.
	HandshakeTimeout time.Duration
}

// Server serves a Publisher's snapshots over ADS, SotW and delta.
type Server struct {
	log     *slog.Logger
	grpc    *grpc.Server
	metrics *metrics
	cb      *callbacks
	adm     *admission
	refused *refusals
	cancel  context.CancelFunc
	once    sync.Once
}

// NewServer builds the gRPC server; Serve starts it.
func NewServer(pub *snapshots.Publisher, opts Options) *Server {
	logger := opts.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	m := newMetrics(opts.Registerer)
	cb := &callbacks{
		pub: pub, log: logger, metrics: m, streams: map[streamKey]*streamState{}, fleetIdentity: opts.Security.Fleet,
		onACK:  opts.OnACK,
		builds: newFleetBuilds(pub.SetFleetBuilds),
		nacks: &nackReporter{
			log: logger, metrics: m, onNACK: opts.OnNACK, seen: map[nackKey]bool{},
			origins: func(names []string) []types.NamespacedName { return pub.Origins(names) },
		},
	}
	// Cancelling ctx ends every stream handler, so Stop is not held up by
	// long-lived ADS streams.
	ctx, cancel := context.WithCancel(context.Background())
	xds := adsServer{
		// A SotW stream subscribes to served types only; when several
		// changed together, clusters are answered before their endpoints,
		// and so on: ADS warming order. A delta stream answers its types
		// in the order first asked for (delta.go).
		sotw: &streams[*discoveryv3.DiscoveryRequest]{ctx: ctx, pub: pub, cb: cb, log: logger,
			flavour: sotw{}, name: "SotW", order: snapshots.ServedTypes()},
		delta: &streams[*discoveryv3.DeltaDiscoveryRequest]{ctx: ctx, pub: pub, cb: cb, log: logger,
			flavour: delta{}, delta: true, name: "delta"},
	}
	adm := newAdmission(opts.Limits)
	refused := newRefusals(logger, opts.Registerer, adm)
	handshakeTimeout := cmp.Or(opts.HandshakeTimeout, DefaultHandshakeTimeout)
	creds := insecure.NewCredentials()
	if opts.Security.TLS != nil {
		creds = credentials.NewTLS(opts.Security.TLS)
	}
	grpcOpts := []grpc.ServerOption{
		grpc.Creds(admittingCredentials{TransportCredentials: creds, plaintext: opts.Security.TLS == nil,
			timedOut: func(c net.Conn) { refused.note(RefusedHandshakeTimeout, c) }}),
		grpc.ConnectionTimeout(handshakeTimeout),
		grpc.ForceServerCodecV2(newCodec()),
		grpc.MaxRecvMsgSize(MaxRecvMsgSize),
		grpc.MaxSendMsgSize(MaxSendMsgSize),
		grpc.MaxConcurrentStreams(MaxConcurrentStreams),
		grpc.KeepaliveEnforcementPolicy(keepalive.EnforcementPolicy{MinTime: KeepaliveMinTime, PermitWithoutStream: true}),
		grpc.KeepaliveParams(keepalive.ServerParameters{Time: KeepaliveTime, Timeout: KeepaliveTimeout, MaxConnectionIdle: MaxConnectionIdle}),
		grpc.ReadBufferSize(ReadBufferSize),
		grpc.WriteBufferSize(WriteBufferSize),
		grpc.SharedWriteBuffer(true),
		grpc.InitialWindowSize(StreamWindow),
		grpc.InitialConnWindowSize(ConnWindow),
	}
	g := grpc.NewServer(grpcOpts...)
	discoveryv3.RegisterAggregatedDiscoveryServiceServer(g, xds)
	// Same listener, TLS and fleet rule as ADS: Envoy reaches both through
	// its one tlsplane cluster.
	metricsv3.RegisterMetricsServiceServer(g, &metricsService{
		log: logger, metrics: m, fleetIdentity: opts.Security.Fleet,
		serves: pub.ServesCluster, onReport: opts.OnClusterStats,
	})
	accesslogv3.RegisterAccessLogServiceServer(g, &accessLogService{
		log: logger, metrics: m, fleetIdentity: opts.Security.Fleet,
		serves: pub.ServesCluster, onSighting: opts.OnCertificateSighting,
	})
	return &Server{log: logger, grpc: g, cancel: cancel, metrics: m, cb: cb, adm: adm, refused: refused}
}

// adsServer serves both ADS flavours from the publisher's feeds, with the
// same callbacks.
type adsServer struct {
	sotw  *streams[*discoveryv3.DiscoveryRequest]
	delta *streams[*discoveryv3.DeltaDiscoveryRequest]
}

func (s adsServer) StreamAggregatedResources(stream discoveryv3.AggregatedDiscoveryService_StreamAggregatedResourcesServer) error {
	return s.sotw.serve(stream, stream.Recv)
}

func (s adsServer) DeltaAggregatedResources(stream discoveryv3.AggregatedDiscoveryService_DeltaAggregatedResourcesServer) error {
	return s.delta.serve(stream, stream.Recv)
}

// Serve serves ADS (SotW and delta) on lis until Stop; it returns nil
// after Stop.
func (s *Server) Serve(lis net.Listener) error {
	s.log.Info("xDS server listening", "address", lis.Addr().String(), "maxConnections", s.adm.limits.Connections,
		"maxPerSource", s.adm.limits.PerSource, "maxHandshakes", s.adm.limits.Handshakes, "maxHandshakesPerSource", s.adm.limits.HandshakesPerSource)
	return s.grpc.Serve(&limitedListener{Listener: lis, adm: s.adm, refused: s.refused.note, userTimeout: KeepaliveTimeout})
}

// Stop ends every stream (Envoy reconnects, to another replica if any) and
// stops the server gracefully, or at once when ctx ends.
func (s *Server) Stop(ctx context.Context) {
	s.once.Do(func() {
		s.cancel()
		done := make(chan struct{})
		go func() {
			s.grpc.GracefulStop()
			close(done)
		}()
		select {
		case <-done:
		case <-ctx.Done():
			s.grpc.Stop()
			<-done
		}
	})
}

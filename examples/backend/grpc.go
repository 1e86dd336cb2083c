package main

import (
	"net/http"
	"strings"

	"google.golang.org/grpc"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
)

// grpcBackend answers gRPC on the echo's listener with the standard health
// service: a unary (Check) and a server-streaming (Watch) call that any
// gRPC client, grpcurl or Envoy's health checker can make, and no protos of
// our own. Each call reports in its header metadata what the backend saw.
type grpcBackend struct {
	name   string
	counts *counters
	server *grpc.Server
	health *health.Server
}

func newGRPCBackend(name string, counts *counters) *grpcBackend {
	b := &grpcBackend{name: name, counts: counts, health: health.NewServer()}
	// health.NewServer already reports "" (the whole server) as SERVING.
	b.health.SetServingStatus(name, healthpb.HealthCheckResponse_SERVING)
	b.server = grpc.NewServer(grpc.UnaryInterceptor(b.reportUnary), grpc.StreamInterceptor(b.reportStream))
	healthpb.RegisterHealthServer(b.server, b.health)
	return b
}

// ServeHTTP counts the call like an echoed request and hands it, with what
// was negotiated, to grpc-go over net/http's own HTTP/2 server.
func (b *grpcBackend) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	n := negotiatedBy(r)
	logRequest(b.name, b.counts.requests.Add(1), r, n)
	b.server.ServeHTTP(w, r.WithContext(withNegotiated(r.Context(), n)))
}

// stop ends the Watch streams, which would otherwise hold the server's
// graceful shutdown until its deadline.
func (b *grpcBackend) stop() {
	b.health.Shutdown()
	b.server.Stop()
}

// routeGRPC sends gRPC requests (any application/grpc+proto, +json, …) to
// grpcSide and everything else to echo, unchanged.
func routeGRPC(grpcSide, echo http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.Header.Get("Content-Type"), "application/grpc") {
			grpcSide.ServeHTTP(w, r)
			return
		}
		echo.ServeHTTP(w, r)
	})
}

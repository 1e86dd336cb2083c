package inject

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"
)

// Server timeouts: the API server waits for a webhook at most 30s
// (timeoutSeconds), so nothing here needs longer.
const (
	readTimeout   = 30 * time.Second
	shutdownGrace = 10 * time.Second
)

// Server serves Handler at Path over TLS, and /healthz for the kubelet's
// probes. Serve it once the namespace cache has synced: before, every
// namespace would be a live read.
type Server struct {
	Handler http.Handler
	cert    *servingCertificate
	lis     net.Listener
}

// Listen binds address with the serving certificate of certFile and
// keyFile, read now and again whenever they change.
func Listen(address, certFile, keyFile string) (*Server, error) {
	if certFile == "" || keyFile == "" {
		return nil, errors.New("a serving certificate and key are required: the API server calls admission webhooks over HTTPS only")
	}
	cert, err := loadServingCertificate(certFile, keyFile)
	if err != nil {
		return nil, err
	}
	lis, err := net.Listen("tcp", address)
	if err != nil {
		return nil, fmt.Errorf("webhook address %s: %w", address, err)
	}
	return &Server{cert: cert, lis: lis}, nil
}

// Addr is the bound address (a :0 resolved).
func (s *Server) Addr() net.Addr { return s.lis.Addr() }

// Serve answers until ctx ends, then stops gracefully.
func (s *Server) Serve(ctx context.Context) error {
	mux := http.NewServeMux()
	mux.Handle(Path, s.Handler)
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) { fmt.Fprintln(w, "ok") })
	srv := &http.Server{
		Handler:           mux,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       readTimeout,
		WriteTimeout:      readTimeout,
		MaxHeaderBytes:    64 << 10,
		TLSConfig:         &tls.Config{MinVersion: tls.VersionTLS12, GetCertificate: s.cert.get},
	}
	done := make(chan error, 1)
	go func() { done <- srv.ServeTLS(s.lis, "", "") }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
	defer cancel()
	_ = srv.Shutdown(sctx)
	if err := <-done; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

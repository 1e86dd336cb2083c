// Command backend is a small HTTPS echo server for trying and testing
// tlsplane: every request is answered with JSON saying what the client
// negotiated (SNI, TLS version, ALPN, HTTP protocol, client certificate) and
// sent (path, headers). On the same listener it serves gRPC (requests whose
// Content-Type is application/grpc…): the standard health service
// grpc.health.v1.Health, Check and Watch, whose header metadata (x-sni,
// x-tls-version, x-alpn, …) report the same facts. With --plain it speaks
// cleartext HTTP/1.1 and HTTP/2 with prior knowledge (h2c), so gRPC works
// there too. It exists so a test or a newcomer can see, from the backend's
// side, the TLS that Envoy spoke. It is not a production server.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"net"
	"os"
	"os/signal"
	"syscall"
	"time"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintf(os.Stderr, "backend: %v\n", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	var o options
	fs := flag.NewFlagSet("backend", flag.ContinueOnError)
	listen := fs.String("listen", "127.0.0.1:8443", "address to listen on")
	fs.StringVar(&o.certFile, "cert", "", "PEM certificate chain; re-read when the file changes")
	fs.StringVar(&o.keyFile, "key", "", "PEM private key; re-read when the file changes")
	fs.StringVar(&o.minTLS, "min-tls", "1.2", "minimum TLS version: 1.2 or 1.3")
	fs.StringVar(&o.maxTLS, "max-tls", "1.3", "maximum TLS version: 1.2 or 1.3")
	fs.StringVar(&o.curves, "curves", "", "comma-separated key-exchange groups to accept, e.g. P-384 (default: Go's)")
	fs.BoolVar(&o.plain, "plain", false, "serve plaintext HTTP/1.1 and h2c (HTTP/2 with prior knowledge) instead of HTTPS")
	fs.StringVar(&o.clientCA, "client-ca", "", "PEM CA bundle: require a client certificate it signed (mutual TLS); the echo names the certificate's subject")
	fs.StringVar(&o.name, "name", "backend", "name echoed in every response, and a gRPC health service reported SERVING")
	if err := fs.Parse(args); err != nil {
		return err
	}

	counts := &counters{}
	srv, err := newServer(o, counts)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		return err
	}
	if o.plain {
		log.Printf("backend %s: serving plaintext HTTP/1.1 and h2c on %s", o.name, ln.Addr())
	} else {
		log.Printf("backend %s: serving HTTPS on %s (TLS %s..%s)", o.name, ln.Addr(), o.minTLS, o.maxTLS)
	}

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	errc := make(chan error, 1)
	go func() { errc <- serve(srv, ln, o.plain) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return srv.Shutdown(shutdownCtx)
}

// Command backend is a small HTTPS echo server for trying and testing
// tlsplane: every request is answered with JSON saying what the client
// negotiated (SNI, TLS version, ALPN, HTTP protocol) and sent (path, headers).
// It exists so a test or a newcomer can see, from the backend's side, the TLS
// that Envoy spoke. It is not a production server.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
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
	fs := flag.NewFlagSet("backend", flag.ContinueOnError)
	listen := fs.String("listen", "127.0.0.1:8443", "address to listen on")
	certFile := fs.String("cert", "", "PEM certificate chain; re-read when the file changes")
	keyFile := fs.String("key", "", "PEM private key; re-read when the file changes")
	minTLS := fs.String("min-tls", "1.2", "minimum TLS version: 1.2 or 1.3")
	maxTLS := fs.String("max-tls", "1.3", "maximum TLS version: 1.2 or 1.3")
	curves := fs.String("curves", "", "comma-separated key-exchange groups to accept, e.g. P-384 (default: Go's)")
	plain := fs.Bool("plain", false, "serve plaintext HTTP/1.1 instead of HTTPS")
	clientCA := fs.String("client-ca", "", "PEM CA bundle: require a client certificate it signed (mutual TLS); the echo names the certificate's subject")
	name := fs.String("name", "backend", "name echoed in every response")
	if err := fs.Parse(args); err != nil {
		return err
	}

	counts := &counters{}
	srv := &http.Server{
		Handler:           echoHandler(*name, counts),
		ReadHeaderTimeout: 10 * time.Second,
		ErrorLog:          log.New(plaintextDetector{counts: counts, out: os.Stderr}, "", log.LstdFlags),
	}
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		return err
	}
	if *plain {
		log.Printf("backend %s: serving plaintext HTTP on %s", *name, ln.Addr())
	} else {
		if *certFile == "" || *keyFile == "" {
			return errors.New("--cert and --key are required unless --plain")
		}
		reloader, err := newCertReloader(*certFile, *keyFile)
		if err != nil {
			return err
		}
		cfg, err := serverTLSConfig(*minTLS, *maxTLS, *curves, reloader, counts)
		if err != nil {
			return err
		}
		if *clientCA != "" {
			if err := requireClientCertificates(cfg, *clientCA); err != nil {
				return err
			}
		}
		srv.TLSConfig = cfg
		log.Printf("backend %s: serving HTTPS on %s (TLS %s..%s)", *name, ln.Addr(), *minTLS, *maxTLS)
	}

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	errc := make(chan error, 1)
	go func() {
		if *plain {
			errc <- srv.Serve(ln)
		} else {
			errc <- srv.ServeTLS(ln, "", "")
		}
	}()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return srv.Shutdown(shutdownCtx)
}

package main

import (
	"errors"
	"log"
	"net"
	"net/http"
	"os"
	"time"
)

// options are the flags that shape the server (not where it listens).
type options struct {
	name              string
	certFile, keyFile string
	minTLS, maxTLS    string
	curves            string
	clientCA          string
	plain             bool
}

// newServer builds the backend: the JSON echo and gRPC on one handler,
// over HTTPS, or with plain over cleartext HTTP/1.1 and h2c.
func newServer(o options, counts *counters) (*http.Server, error) {
	grpcSide := newGRPCBackend(o.name, counts)
	srv := &http.Server{
		Handler:           routeGRPC(grpcSide, echoHandler(o.name, counts)),
		Protocols:         protocols(o.plain),
		ReadHeaderTimeout: 10 * time.Second,
		ErrorLog:          log.New(plaintextDetector{counts: counts, out: os.Stderr}, "", log.LstdFlags),
	}
	srv.RegisterOnShutdown(grpcSide.stop)
	if o.plain {
		return srv, nil
	}
	if o.certFile == "" || o.keyFile == "" {
		return nil, errors.New("--cert and --key are required unless --plain")
	}
	reloader, err := newCertReloader(o.certFile, o.keyFile)
	if err != nil {
		return nil, err
	}
	cfg, err := serverTLSConfig(o.minTLS, o.maxTLS, o.curves, reloader, counts)
	if err != nil {
		return nil, err
	}
	if o.clientCA != "" {
		if err := requireClientCertificates(cfg, o.clientCA); err != nil {
			return nil, err
		}
	}
	srv.TLSConfig = cfg
	return srv, nil
}

// protocols are HTTP/1.1 and HTTP/2 either way. gRPC needs HTTP/2, and over
// cleartext that is h2c with prior knowledge (what Envoy and grpc-go speak
// to a plaintext upstream), which net/http serves only when asked.
func protocols(plain bool) *http.Protocols {
	p := new(http.Protocols)
	p.SetHTTP1(true)
	if plain {
		p.SetUnencryptedHTTP2(true)
	} else {
		p.SetHTTP2(true)
	}
	return p
}

// serve blocks serving ln until srv is shut down or fails.
func serve(srv *http.Server, ln net.Listener, plain bool) error {
	if plain {
		return srv.Serve(ln)
	}
	return srv.ServeTLS(ln, "", "")
}

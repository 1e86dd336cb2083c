package main

import (
	"context"
	"crypto/tls"
	"log"
	"net/http"
)

// negotiated is what a client negotiated with the backend for one request.
// The JSON echo and the gRPC header metadata both report it, so the two
// can never disagree on a fact or on how it is written.
type negotiated struct {
	SNI        string
	TLSVersion string // tls.VersionName: "TLS 1.3"; "" over plaintext
	ALPN       string
	Proto      string // "HTTP/1.1", "HTTP/2.0"
	// ClientSubject is the client certificate's subject common name, ""
	// without one (only a --client-ca backend asks for one).
	ClientSubject string
}

func negotiatedBy(r *http.Request) negotiated {
	n := negotiated{Proto: r.Proto}
	if r.TLS != nil {
		n.SNI = r.TLS.ServerName
		n.TLSVersion = tls.VersionName(r.TLS.Version)
		n.ALPN = r.TLS.NegotiatedProtocol
		if len(r.TLS.PeerCertificates) > 0 {
			n.ClientSubject = r.TLS.PeerCertificates[0].Subject.CommonName
		}
	}
	return n
}

// logRequest is the one log line per counted request, echo or gRPC.
func logRequest(name string, count int64, r *http.Request, n negotiated) {
	log.Printf("backend %s: request %d %s %s sni=%q tls=%q alpn=%q client=%q", name, count, n.Proto, r.URL.Path, n.SNI, n.TLSVersion, n.ALPN, n.ClientSubject)
}

// negotiatedKey carries a request's negotiated facts into a gRPC call:
// grpc-go's ServeHTTP makes the request's context the stream's, and the
// call never sees the *http.Request itself.
type negotiatedKey struct{}

func withNegotiated(ctx context.Context, n negotiated) context.Context {
	return context.WithValue(ctx, negotiatedKey{}, n)
}

func negotiatedFrom(ctx context.Context) negotiated {
	n, _ := ctx.Value(negotiatedKey{}).(negotiated)
	return n
}

package main

import (
	"context"

	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
)

// The header metadata of every gRPC response: the facts the JSON echo
// reports, in the same text, so a test through Envoy can read them from a
// gRPC call. Each key is always present; a fact that does not apply (no TLS,
// no client certificate) is an empty value.
const (
	HeaderBackend           = "x-backend"            // --name
	HeaderSNI               = "x-sni"                // the TLS server name the client sent
	HeaderTLSVersion        = "x-tls-version"        // "TLS 1.2", "TLS 1.3"
	HeaderALPN              = "x-alpn"               // "h2"
	HeaderProtocol          = "x-protocol"           // "HTTP/2.0"
	HeaderClientCertificate = "x-client-certificate" // the client certificate's subject common name
)

func (b *grpcBackend) headerMetadata(ctx context.Context) metadata.MD {
	n := negotiatedFrom(ctx)
	return metadata.Pairs(
		HeaderBackend, b.name,
		HeaderSNI, n.SNI,
		HeaderTLSVersion, n.TLSVersion,
		HeaderALPN, n.ALPN,
		HeaderProtocol, n.Proto,
		HeaderClientCertificate, n.ClientSubject,
	)
}

// reportUnary sets the header metadata before the handler runs: headers go
// out with the call's first response.
func (b *grpcBackend) reportUnary(ctx context.Context, req any, _ *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
	if err := grpc.SetHeader(ctx, b.headerMetadata(ctx)); err != nil {
		return nil, err
	}
	return handler(ctx, req)
}

// reportStream sets the header metadata before the handler's first message
// sends the headers.
func (b *grpcBackend) reportStream(srv any, ss grpc.ServerStream, _ *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
	if err := ss.SetHeader(b.headerMetadata(ss.Context())); err != nil {
		return err
	}
	return handler(srv, ss)
}

package echoserver

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"sort"
	"strconv"
	"strings"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/encoding"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/keepalive"
	"google.golang.org/grpc/mem"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/status"

	"github.com/tlsplane/tlsplane/e2e/echowire"
)

// The original's gRPC service, proto.EchoTestService: Echo answers with
// the fields, ForwardEcho (the echo framework's own, which the suite never
// calls) is refused.
const (
	echoService = echowire.Service
	echoMethod  = echowire.Method
)

// grpcServer serves one gRPC endpoint: EchoTestService and the standard
// health service, SERVING once the endpoint listens.
func (s *Server) grpcServer(p Port) *grpc.Server {
	opts := []grpc.ServerOption{
		grpc.KeepaliveParams(keepalive.ServerParameters{MaxConnectionIdle: idleTimeout}),
		grpc.ForceServerCodecV2(wireOrProtoCodec{proto: encoding.GetCodecV2("proto")}),
	}
	if p.TLS {
		opts = append(opts, grpc.Creds(credentials.NewTLS(s.tlsServerConfig([]string{"h2"}))))
	}
	g := grpc.NewServer(opts...)
	hs := health.NewServer()
	healthpb.RegisterHealthServer(g, hs)
	h := &grpcHandler{s: s, port: p}
	g.RegisterService(&grpc.ServiceDesc{
		ServiceName: echoService,
		HandlerType: (*any)(nil),
		Methods: []grpc.MethodDesc{
			{MethodName: echoMethod, Handler: h.echo},
			{MethodName: "ForwardEcho", Handler: func(any, context.Context, func(any) error, grpc.UnaryServerInterceptor) (any, error) {
				return nil, status.Error(codes.Unimplemented, "ForwardEcho is not implemented by the e2e node agent's echo-advanced server")
			}},
		},
	}, h)
	return g
}

type grpcHandler struct {
	s    *Server
	port Port
}

// echo is EchoTestService/Echo: EchoRequest and EchoResponse are each
// one string, field 1 (message), read and written as wire bytes.
func (h *grpcHandler) echo(_ any, ctx context.Context, dec func(any) error, _ grpc.UnaryServerInterceptor) (any, error) {
	var req wireMessage
	if err := dec(&req); err != nil {
		return nil, err
	}
	message, err := echowire.String(req)
	if err != nil {
		return nil, status.Errorf(codes.InvalidArgument, "EchoRequest: %v", err)
	}
	md, _ := metadata.FromIncomingContext(ctx)
	h.s.log.infof("endpoint", "GRPC Request: message=%q port=%d", message, h.port.Port)
	resp := wireMessage(echowire.Message(h.body(ctx, md, message)))
	return &resp, nil
}

// body is the original's: the metadata (binary keys left out; the
// authority also as Host), then its fields, in its order. The original
// walks the metadata map in Go's random order; here it is sorted.
func (h *grpcHandler) body(ctx context.Context, md metadata.MD, message string) string {
	var body bytes.Buffer
	keys := make([]string, 0, len(md))
	for k := range md {
		if !strings.HasSuffix(k, "-bin") {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		if k == ":authority" {
			for _, v := range md[k] {
				writeField(&body, fieldHost, v)
			}
		}
		for _, v := range md[k] {
			writeKeyValue(&body, fieldRequestHeader, k, v)
		}
	}
	ip := "0.0.0.0"
	if p, ok := peer.FromContext(ctx); ok {
		ip, _, _ = net.SplitHostPort(p.Addr.String())
	}
	writeField(&body, fieldStatusCode, strconv.Itoa(http.StatusOK))
	writeField(&body, fieldServiceVersion, h.s.cfg.Version)
	writeField(&body, fieldServicePort, strconv.Itoa(h.port.Port))
	writeNonEmpty(&body, fieldCluster, h.s.cfg.Cluster)
	writeField(&body, fieldIP, ip)
	writeNonEmpty(&body, fieldIstioVersion, h.s.cfg.IstioVersion)
	writeField(&body, fieldProto, "GRPC")
	writeField(&body, fieldEcho, message)
	writeField(&body, fieldHostname, h.s.cfg.Hostname)
	return body.String()
}

// wireMessage is a message's wire bytes, which wireOrProtoCodec passes as
// they are: the echo service needs no generated code for two one-string
// messages, while the health service keeps its generated messages.
type wireMessage []byte

type wireOrProtoCodec struct{ proto encoding.CodecV2 }

func (c wireOrProtoCodec) Name() string { return "proto" }

func (c wireOrProtoCodec) Marshal(v any) (mem.BufferSlice, error) {
	if m, ok := v.(*wireMessage); ok {
		return mem.BufferSlice{mem.SliceBuffer(*m)}, nil
	}
	return c.proto.Marshal(v)
}

func (c wireOrProtoCodec) Unmarshal(data mem.BufferSlice, v any) error {
	if m, ok := v.(*wireMessage); ok {
		*m = data.Materialize()
		return nil
	}
	if c.proto == nil {
		return fmt.Errorf("no proto codec to decode %T", v)
	}
	return c.proto.Unmarshal(data, v)
}

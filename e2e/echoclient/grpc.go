package echoclient

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"

	"github.com/tlsplane/tlsplane/e2e/echowire"
)

// echoMethod is the echo-advanced server's gRPC echo (echowire).
const echoMethod = echowire.FullMethod

// grpcSender sends a run's gRPC Echo calls over one connection, or one
// per call under --new-connection-per-request.
type grpcSender struct {
	r      *request
	active *atomic.Int64
	conn   *grpc.ClientConn // nil: one per call
	opts   []grpc.DialOption
	target string
}

func newGRPCSender(r *request, active *atomic.Int64) (*grpcSender, error) {
	cfg, err := tlsConfig(r)
	if err != nil {
		return nil, err
	}
	creds := insecure.NewCredentials()
	// As the original: TLS only with a client certificate.
	if cfg.GetClientCertificate != nil {
		creds = credentials.NewTLS(cfg)
	}
	dialer := &net.Dialer{Timeout: connectionTimeout}
	s := &grpcSender{r: r, active: active,
		// Passthrough: the address is dialed as written, the system
		// resolver (the Pod's) looking its host up, as the original's.
		target: "passthrough:///" + r.url[len(r.scheme+"://"):],
		opts: []grpc.DialOption{
			grpc.WithTransportCredentials(creds),
			grpc.WithContextDialer(func(ctx context.Context, addr string) (net.Conn, error) {
				return dialer.DialContext(ctx, "tcp", addr)
			}),
		}}
	if r.hostHeader != "" {
		s.opts = append(s.opts, grpc.WithAuthority(r.hostHeader))
	}
	if !r.newConn {
		if s.conn, err = grpc.NewClient(s.target, s.opts...); err != nil {
			return nil, err
		}
	}
	return s, nil
}

func (s *grpcSender) close() {
	if s.conn != nil {
		s.conn.Close()
	}
}

// send makes call id and writes its lines: the call, latency, the
// response message's lines as body, then the response headers.
func (s *grpcSender) send(ctx context.Context, id int) (string, error) {
	conn := s.conn
	if conn == nil {
		c, err := grpc.NewClient(s.target, s.opts...)
		if err != nil {
			return "", err
		}
		defer c.Close()
		conn = c
	}
	ctx, cancel := context.WithTimeout(ctx, s.r.timeout)
	defer cancel()
	md := metadata.MD{}
	for name, values := range s.r.headers {
		md.Set(name, values...)
	}
	md.Set("X-Request-Id", strconv.Itoa(id))
	ctx = metadata.NewOutgoingContext(ctx, md)

	var out bytes.Buffer
	fmt.Fprintf(&out, "[%d] grpcecho.Echo(url:%q message:%q)\n", id, s.r.url, s.r.message)
	start := time.Now()
	var header metadata.MD
	var resp rawMessage
	req := rawMessage(echowire.Message(s.r.message))
	if err := conn.Invoke(ctx, echoMethod, &req, &resp, grpc.ForceCodec(rawCodec{}), grpc.Header(&header)); err != nil {
		return "", err
	}
	message, err := echowire.String(resp)
	if err != nil {
		return "", fmt.Errorf("%s: response: %w", echoMethod, err)
	}
	writeField(&out, id, "Latency", time.Since(start).String())
	writeField(&out, id, "ActiveRequests", strconv.FormatInt(s.active.Load(), 10))
	for line := range strings.SplitSeq(message, "\n") {
		if line != "" {
			writeBodyLine(&out, id, line)
		}
	}
	names := make([]string, 0, len(header))
	for name := range header {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		for _, v := range header[name] {
			writeField(&out, id, "ResponseHeader", name+":"+v)
		}
	}
	return out.String(), nil
}

// rawMessage is a message's wire bytes; rawCodec sends and keeps them as
// they are, so the client needs no generated code for two one-field
// messages.
type rawMessage []byte

type rawCodec struct{}

func (rawCodec) Name() string { return "proto" }

func (rawCodec) Marshal(v any) ([]byte, error) {
	m, ok := v.(*rawMessage)
	if !ok {
		return nil, fmt.Errorf("raw codec: cannot marshal %T", v)
	}
	return *m, nil
}

func (rawCodec) Unmarshal(data []byte, v any) error {
	m, ok := v.(*rawMessage)
	if !ok {
		return errors.New("raw codec: can only unmarshal into a raw message")
	}
	*m = append((*m)[:0], data...)
	return nil
}

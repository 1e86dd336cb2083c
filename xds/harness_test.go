package xds

import (
	"context"
	"net"
	"testing"
	"time"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	discoveryv3 "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/protobuf/encoding/protowire"

	"github.com/tlsplane/tlsplane/snapshots"
	st "github.com/tlsplane/tlsplane/snapshots/snapshotstest"
	"github.com/tlsplane/tlsplane/translator"
)

const (
	// patience bounds every wait for a response that must come.
	patience = 5 * time.Second
	// quiet is how long a response that must not come is waited for; a
	// resend loop answers a NACK within milliseconds.
	quiet = 400 * time.Millisecond
)

var (
	payments = st.Backend{Namespace: "shop", Service: "payments", Port: 8443, SNI: "payments.shop"}
	ledger   = st.Backend{Namespace: "bank", Service: "ledger", Port: 443, SNI: "ledger.bank"}
)

// harness is a Publisher served on 127.0.0.1:0 and a client connection.
type harness struct {
	pub     *snapshots.Publisher
	server  *Server
	metrics *metrics
	conn    *grpc.ClientConn
	addr    string
	nacks   chan NACK
}

func start(t *testing.T, opts snapshots.Options) *harness {
	t.Helper()
	return startWith(t, opts, Options{})
}

// startWith is start with the server's options; OnNACK is the harness's.
func startWith(t *testing.T, opts snapshots.Options, serverOpts Options) *harness {
	t.Helper()
	h := &harness{pub: snapshots.New(opts), nacks: make(chan NACK, 16)}
	serverOpts.OnNACK = func(n NACK) {
		select {
		case h.nacks <- n:
		default:
		}
	}
	srv := NewServer(h.pub, serverOpts)
	h.server, h.metrics = srv, srv.metrics
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(lis) }()
	conn, err := grpc.NewClient(lis.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	h.conn, h.addr = conn, lis.Addr().String()
	t.Cleanup(func() {
		conn.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		srv.Stop(ctx)
		select {
		case err := <-served:
			if err != nil {
				t.Errorf("Serve: %v", err)
			}
		case <-time.After(patience):
			t.Error("Serve did not return after Stop")
		}
	})
	return h
}

func (h *harness) publish(t *testing.T, out translator.Output, wantChanged bool) {
	t.Helper()
	changed, err := h.pub.Publish(out)
	if err != nil {
		t.Fatal(err)
	}
	if changed != wantChanged {
		t.Fatalf("Publish changed = %v, want %v", changed, wantChanged)
	}
}

func (h *harness) expectNACK(t *testing.T) NACK {
	t.Helper()
	select {
	case n := <-h.nacks:
		return n
	case <-time.After(patience):
		t.Fatal("OnNACK not called")
		return NACK{}
	}
}

func node(id, fleet string) *corev3.Node { return &corev3.Node{Id: id, Cluster: fleet} }

func counterValue(t *testing.T, m prometheus.Metric) float64 {
	t.Helper()
	var out dto.Metric
	if err := m.Write(&out); err != nil {
		t.Fatal(err)
	}
	if out.Counter != nil {
		return out.Counter.GetValue()
	}
	return out.Gauge.GetValue()
}

// sotwStream is a raw SotW ADS stream, for what the go-control-plane
// client hides (versions, resource names in requests).
type sotwStream struct {
	stream discoveryv3.AggregatedDiscoveryService_StreamAggregatedResourcesClient
	recv   chan *discoveryv3.DiscoveryResponse
}

func openSotw(t *testing.T, h *harness) *sotwStream {
	t.Helper()
	s, recv := openRaw[*discoveryv3.DiscoveryResponse](t, discoveryv3.NewAggregatedDiscoveryServiceClient(h.conn).StreamAggregatedResources)
	return &sotwStream{stream: s, recv: recv}
}

func (s *sotwStream) send(t *testing.T, req *discoveryv3.DiscoveryRequest) {
	t.Helper()
	if err := s.stream.Send(req); err != nil {
		t.Fatal(err)
	}
}

func (s *sotwStream) next(t *testing.T) *discoveryv3.DiscoveryResponse {
	t.Helper()
	return nextOf(t, s.recv, "SotW")
}

// deltaStream is a raw delta ADS stream.
type deltaStream struct {
	stream discoveryv3.AggregatedDiscoveryService_DeltaAggregatedResourcesClient
	recv   chan *discoveryv3.DeltaDiscoveryResponse
}

func openDelta(t *testing.T, h *harness) *deltaStream {
	t.Helper()
	s, recv := openRaw[*discoveryv3.DeltaDiscoveryResponse](t, discoveryv3.NewAggregatedDiscoveryServiceClient(h.conn).DeltaAggregatedResources)
	return &deltaStream{stream: s, recv: recv}
}

func (s *deltaStream) send(t *testing.T, req *discoveryv3.DeltaDiscoveryRequest) {
	t.Helper()
	if err := s.stream.Send(req); err != nil {
		t.Fatal(err)
	}
}

func (s *deltaStream) next(t *testing.T) *discoveryv3.DeltaDiscoveryResponse {
	t.Helper()
	return nextOf(t, s.recv, "delta")
}

// openRaw opens an ADS stream of either flavour with open, ended with the
// test, and hands its responses to a channel closed when the stream ends.
func openRaw[Resp any, S interface{ Recv() (Resp, error) }](t *testing.T, open func(context.Context, ...grpc.CallOption) (S, error)) (S, chan Resp) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	s, err := open(ctx)
	if err != nil {
		t.Fatal(err)
	}
	recv := make(chan Resp, 16)
	go func() {
		defer close(recv)
		for {
			resp, err := s.Recv()
			if err != nil {
				return
			}
			recv <- resp
		}
	}()
	return s, recv
}

// nextOf is the next response on recv, failing the test when the stream
// ended or none came in time.
func nextOf[Resp any](t *testing.T, recv chan Resp, flavour string) Resp {
	t.Helper()
	select {
	case resp, ok := <-recv:
		if !ok {
			t.Fatal("stream ended")
		}
		return resp
	case <-time.After(patience):
		t.Fatalf("no %s response", flavour)
	}
	var none Resp
	return none
}

func (s *deltaStream) none(t *testing.T) {
	t.Helper()
	select {
	case resp := <-s.recv:
		t.Fatalf("unexpected delta response %s: %v", resp.GetTypeUrl(), resp.GetResources())
	case <-time.After(quiet):
	}
}

// resourceName reads a SotW resource's name from its bytes without
// decoding it: Cluster.name, ClusterLoadAssignment.cluster_name and
// Secret.name are all field 1, which deterministic marshalling puts first.
func resourceName(value []byte) string {
	for len(value) > 0 {
		num, typ, n := protowire.ConsumeTag(value)
		if n < 0 {
			return ""
		}
		value = value[n:]
		if num == 1 && typ == protowire.BytesType {
			name, m := protowire.ConsumeBytes(value)
			if m < 0 {
				return ""
			}
			return string(name)
		}
		m := protowire.ConsumeFieldValue(num, typ, value)
		if m < 0 {
			return ""
		}
		value = value[m:]
	}
	return ""
}

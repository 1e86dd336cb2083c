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
	h := &harness{pub: snapshots.New(opts), nacks: make(chan NACK, 16)}
	srv := NewServer(h.pub, Options{OnNACK: func(n NACK) {
		select {
		case h.nacks <- n:
		default:
		}
	}})
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
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	s, err := discoveryv3.NewAggregatedDiscoveryServiceClient(h.conn).StreamAggregatedResources(ctx)
	if err != nil {
		t.Fatal(err)
	}
	out := &sotwStream{stream: s, recv: make(chan *discoveryv3.DiscoveryResponse, 16)}
	go func() {
		defer close(out.recv)
		for {
			resp, err := s.Recv()
			if err != nil {
				return
			}
			out.recv <- resp
		}
	}()
	return out
}

func (s *sotwStream) send(t *testing.T, req *discoveryv3.DiscoveryRequest) {
	t.Helper()
	if err := s.stream.Send(req); err != nil {
		t.Fatal(err)
	}
}

func (s *sotwStream) next(t *testing.T) *discoveryv3.DiscoveryResponse {
	t.Helper()
	select {
	case resp, ok := <-s.recv:
		if !ok {
			t.Fatal("stream ended")
		}
		return resp
	case <-time.After(patience):
		t.Fatal("no SotW response")
		return nil
	}
}

// deltaStream is a raw delta ADS stream.
type deltaStream struct {
	stream discoveryv3.AggregatedDiscoveryService_DeltaAggregatedResourcesClient
	recv   chan *discoveryv3.DeltaDiscoveryResponse
}

func openDelta(t *testing.T, h *harness) *deltaStream {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	s, err := discoveryv3.NewAggregatedDiscoveryServiceClient(h.conn).DeltaAggregatedResources(ctx)
	if err != nil {
		t.Fatal(err)
	}
	out := &deltaStream{stream: s, recv: make(chan *discoveryv3.DeltaDiscoveryResponse, 16)}
	go func() {
		defer close(out.recv)
		for {
			resp, err := s.Recv()
			if err != nil {
				return
			}
			out.recv <- resp
		}
	}()
	return out
}

func (s *deltaStream) send(t *testing.T, req *discoveryv3.DeltaDiscoveryRequest) {
	t.Helper()
	if err := s.stream.Send(req); err != nil {
		t.Fatal(err)
	}
}

func (s *deltaStream) next(t *testing.T) *discoveryv3.DeltaDiscoveryResponse {
	t.Helper()
	select {
	case resp, ok := <-s.recv:
		if !ok {
			t.Fatal("stream ended")
		}
		return resp
	case <-time.After(patience):
		t.Fatal("no delta response")
		return nil
	}
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

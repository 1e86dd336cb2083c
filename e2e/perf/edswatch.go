package perf

import (
	"context"
	"fmt"
	"time"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	endpointv3 "github.com/envoyproxy/go-control-plane/envoy/config/endpoint/v3"
	discoveryv3 "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
)

const endpointType = "type.googleapis.com/envoy.config.endpoint.v3.ClusterLoadAssignment"

// edsWatch is a delta ADS client over real gRPC subscribed, wildcard, to
// every load assignment, as a connected delta Envoy is: it timestamps each
// load assignment as it arrives and ACKs every response. A real Envoy
// cannot tell when each of 200 updates a second arrived without a read of
// its admin per update, which at 10,000 clusters costs more than the
// update.
type edsWatch struct {
	conn   *grpc.ClientConn
	stream grpc.BidiStreamingClient[discoveryv3.DeltaDiscoveryRequest, discoveryv3.DeltaDiscoveryResponse]
}

// arrival is one load assignment as received: its cluster, its endpoints'
// host:port, and when it arrived.
type arrival struct {
	cluster   string
	endpoints []string
	at        time.Time
}

func dialEDS(ctx context.Context, addr string, node *corev3.Node) (*edsWatch, error) {
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(256<<20)))
	if err != nil {
		return nil, err
	}
	stream, err := discoveryv3.NewAggregatedDiscoveryServiceClient(conn).DeltaAggregatedResources(ctx)
	if err != nil {
		conn.Close()
		return nil, err
	}
	if err := stream.Send(&discoveryv3.DeltaDiscoveryRequest{Node: node, TypeUrl: endpointType}); err != nil {
		conn.Close()
		return nil, err
	}
	return &edsWatch{conn: conn, stream: stream}, nil
}

// run receives until the stream ends, handing each load assignment to got
// (on this goroutine) and then ACKing its response.
func (w *edsWatch) run(got func(arrival)) error {
	for {
		resp, err := w.stream.Recv()
		if err != nil {
			return err
		}
		at := time.Now()
		for _, r := range resp.GetResources() {
			cla := &endpointv3.ClusterLoadAssignment{}
			if err := r.GetResource().UnmarshalTo(cla); err != nil {
				return fmt.Errorf("load assignment %s: %w", r.GetName(), err)
			}
			a := arrival{cluster: cla.GetClusterName(), at: at}
			for _, l := range cla.GetEndpoints() {
				for _, e := range l.GetLbEndpoints() {
					sa := e.GetEndpoint().GetAddress().GetSocketAddress()
					a.endpoints = append(a.endpoints, fmt.Sprintf("%s:%d", sa.GetAddress(), sa.GetPortValue()))
				}
			}
			got(a)
		}
		if err := w.stream.Send(&discoveryv3.DeltaDiscoveryRequest{TypeUrl: resp.GetTypeUrl(), ResponseNonce: resp.GetNonce()}); err != nil {
			return err
		}
	}
}

func (w *edsWatch) close() { w.conn.Close() }

// ms is a duration in milliseconds, for reports.
func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

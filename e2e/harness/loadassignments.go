package harness

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

// LoadAssignment is one load assignment as an ADS client received it: its
// cluster, its endpoints as host:port, and when it arrived.
type LoadAssignment struct {
	Cluster   string
	Endpoints []string
	At        time.Time
}

// WatchLoadAssignments is a delta ADS client over real gRPC subscribed,
// wildcard, to clusters and load assignments as a delta Envoy is, ACKing
// every response. It hands each load assignment to got, on its own
// goroutine, with its arrival time: what a real Envoy cannot tell per
// update without a read of its admin per update, which at 10,000 clusters
// costs more than the update. It runs until ctx ends; the returned channel
// gets the error that ended it.
func WatchLoadAssignments(ctx context.Context, addr string, node *corev3.Node, got func(LoadAssignment)) (<-chan error, error) {
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(256<<20)))
	if err != nil {
		return nil, err
	}
	stream, err := discoveryv3.NewAggregatedDiscoveryServiceClient(conn).DeltaAggregatedResources(ctx)
	if err != nil {
		conn.Close()
		return nil, fmt.Errorf("delta ADS stream to %s: %w", addr, err)
	}
	for i, typeURL := range []string{ClusterType, EndpointType} {
		req := &discoveryv3.DeltaDiscoveryRequest{TypeUrl: typeURL}
		if i == 0 {
			req.Node = node
		}
		if err := stream.Send(req); err != nil {
			conn.Close()
			return nil, err
		}
	}
	done := make(chan error, 1)
	go func() {
		defer conn.Close()
		done <- receiveLoadAssignments(stream, got)
	}()
	return done, nil
}

func receiveLoadAssignments(stream discoveryv3.AggregatedDiscoveryService_DeltaAggregatedResourcesClient, got func(LoadAssignment)) error {
	for {
		resp, err := stream.Recv()
		if err != nil {
			return err
		}
		at := time.Now()
		if resp.GetTypeUrl() == EndpointType {
			for _, r := range resp.GetResources() {
				cla := &endpointv3.ClusterLoadAssignment{}
				if err := r.GetResource().UnmarshalTo(cla); err != nil {
					return fmt.Errorf("load assignment %s: %w", r.GetName(), err)
				}
				la := LoadAssignment{Cluster: cla.GetClusterName(), At: at}
				for _, l := range cla.GetEndpoints() {
					for _, e := range l.GetLbEndpoints() {
						sa := e.GetEndpoint().GetAddress().GetSocketAddress()
						la.Endpoints = append(la.Endpoints, fmt.Sprintf("%s:%d", sa.GetAddress(), sa.GetPortValue()))
					}
				}
				got(la)
			}
		}
		if err := stream.Send(&discoveryv3.DeltaDiscoveryRequest{TypeUrl: resp.GetTypeUrl(), ResponseNonce: resp.GetNonce()}); err != nil {
			return err
		}
	}
}

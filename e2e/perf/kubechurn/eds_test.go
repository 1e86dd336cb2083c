package kubechurn

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	endpointv3 "github.com/envoyproxy/go-control-plane/envoy/config/endpoint/v3"
	discoveryv3 "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/protobuf/proto"
)

const (
	clusterType  = "type.googleapis.com/envoy.config.cluster.v3.Cluster"
	endpointType = "type.googleapis.com/envoy.config.endpoint.v3.ClusterLoadAssignment"
)

// watchLoadAssignments is a delta ADS client over real gRPC, subscribed
// (wildcard) to clusters and load assignments as Envoy is, ACKing every
// response. It decodes each load assignment it receives and tells
// arrivals which generation of which Service arrived, and when: the
// timestamps Envoy's admin API cannot give per update. It runs until ctx
// ends; an error ends it early and is sent on the returned channel.
func watchLoadAssignments(ctx context.Context, addr, nodeID, fleet string, a *arrivals) (<-chan error, error) {
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
	node := &corev3.Node{Id: nodeID, Cluster: fleet}
	for i, typeURL := range []string{clusterType, endpointType} {
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
		done <- receive(stream, a)
	}()
	return done, nil
}

func receive(stream discoveryv3.AggregatedDiscoveryService_DeltaAggregatedResourcesClient, a *arrivals) error {
	for {
		resp, err := stream.Recv()
		if err != nil {
			return err
		}
		at := time.Now()
		if resp.GetTypeUrl() == endpointType {
			for _, r := range resp.GetResources() {
				var cla endpointv3.ClusterLoadAssignment
				if err := proto.Unmarshal(r.GetResource().GetValue(), &cla); err != nil {
					return fmt.Errorf("load assignment %s: %w", r.GetName(), err)
				}
				if i, g, ok := churnedGeneration(&cla); ok {
					a.served(i, g, at)
				}
			}
		}
		if err := stream.Send(&discoveryv3.DeltaDiscoveryRequest{TypeUrl: resp.GetTypeUrl(), ResponseNonce: resp.GetNonce()}); err != nil {
			return err
		}
	}
}

// churnedGeneration reads which Service a load assignment is and the
// generation its churned endpoint's address carries.
func churnedGeneration(cla *endpointv3.ClusterLoadAssignment) (service, gen int, ok bool) {
	service, ok = serviceOfCluster(cla.GetClusterName())
	if !ok {
		return 0, 0, false
	}
	for _, locality := range cla.GetEndpoints() {
		for _, lb := range locality.GetLbEndpoints() {
			if g, ok := addressGen(lb.GetEndpoint().GetAddress().GetSocketAddress().GetAddress()); ok {
				return service, g, true
			}
		}
	}
	return 0, 0, false
}

// serviceOfCluster is clusterName's inverse: "churn-K/svc-I/443" → I.
func serviceOfCluster(name string) (int, bool) {
	parts := strings.Split(name, "/")
	if len(parts) != 3 || !strings.HasPrefix(parts[1], "svc-") {
		return 0, false
	}
	i, err := strconv.Atoi(strings.TrimPrefix(parts[1], "svc-"))
	return i, err == nil && clusterName(i) == name
}

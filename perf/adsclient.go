package perf

import (
	"context"
	"fmt"
	"time"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	discoveryv3 "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
)

// servedTypes are what a simulated Envoy subscribes to, wildcard.
var servedTypes = []string{resource.ClusterType, resource.EndpointType, resource.SecretType}

// summary is what a simulated Envoy reads of a response: enough to ACK it
// and to tell an update, without decoding every resource, so that 1,000
// clients fit beside the server on one machine.
type summary struct {
	version, typeURL, nonce string
	resources               int
}

// summaryCodec marshals requests as protobuf and reads responses (SotW
// and delta alike: both keep version, resources, type and nonce in fields
// 1, 2, 4 and 5) into a summary.
type summaryCodec struct{}

func (summaryCodec) Name() string { return "proto" }

func (summaryCodec) Marshal(v any) ([]byte, error) {
	m, ok := v.(proto.Message)
	if !ok {
		return nil, fmt.Errorf("summaryCodec: cannot marshal %T", v)
	}
	return proto.Marshal(m)
}

func (summaryCodec) Unmarshal(data []byte, v any) error {
	s, ok := v.(*summary)
	if !ok {
		return fmt.Errorf("summaryCodec: cannot unmarshal into %T", v)
	}
	*s = summary{}
	for len(data) > 0 {
		num, typ, n := protowire.ConsumeTag(data)
		if n < 0 {
			return protowire.ParseError(n)
		}
		data = data[n:]
		if typ != protowire.BytesType {
			n = protowire.ConsumeFieldValue(num, typ, data)
			if n < 0 {
				return protowire.ParseError(n)
			}
			data = data[n:]
			continue
		}
		b, n := protowire.ConsumeBytes(data)
		if n < 0 {
			return protowire.ParseError(n)
		}
		data = data[n:]
		switch num {
		case 1:
			s.version = string(b)
		case 2:
			s.resources++
		case 4:
			s.typeURL = string(b)
		case 5:
			s.nonce = string(b)
		}
	}
	return nil
}

const (
	sotwMethod  = "/envoy.service.discovery.v3.AggregatedDiscoveryService/StreamAggregatedResources"
	deltaMethod = "/envoy.service.discovery.v3.AggregatedDiscoveryService/DeltaAggregatedResources"
)

// adsClient is one simulated Envoy: one ADS stream subscribed to every
// type, ACKing every response.
type adsClient struct {
	delta  bool
	node   *corev3.Node
	stream grpc.ClientStream
}

func dialADS(ctx context.Context, conn *grpc.ClientConn, delta bool, node *corev3.Node, types []string) (*adsClient, error) {
	method := sotwMethod
	if delta {
		method = deltaMethod
	}
	desc := &grpc.StreamDesc{StreamName: method, ServerStreams: true, ClientStreams: true}
	stream, err := conn.NewStream(ctx, desc, method, grpc.ForceCodec(summaryCodec{}))
	if err != nil {
		return nil, err
	}
	c := &adsClient{delta: delta, node: node, stream: stream}
	for i, typeURL := range types {
		var n *corev3.Node
		if i == 0 {
			n = node
		}
		if err := c.send(n, typeURL, "", ""); err != nil {
			return nil, err
		}
	}
	return c, nil
}

func (c *adsClient) send(node *corev3.Node, typeURL, version, nonce string) error {
	if c.delta {
		return c.stream.SendMsg(&discoveryv3.DeltaDiscoveryRequest{Node: node, TypeUrl: typeURL, ResponseNonce: nonce})
	}
	return c.stream.SendMsg(&discoveryv3.DiscoveryRequest{Node: node, TypeUrl: typeURL, VersionInfo: version, ResponseNonce: nonce})
}

// recv reads one response and ACKs it.
func (c *adsClient) recv() (summary, error) {
	var s summary
	if err := c.stream.RecvMsg(&s); err != nil {
		return s, err
	}
	return s, c.send(nil, s.typeURL, s.version, s.nonce)
}

// vmRSS is this process's resident memory in bytes, from /proc.
func vmRSS() (int64, error) {
	return procStatusBytes("VmRSS:")
}

// since is a duration in milliseconds, for reports.
func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

package harness

import (
	"context"
	"strings"
	"testing"
	"time"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	discoveryv3 "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	"google.golang.org/genproto/googleapis/rpc/status"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
)

// The type URLs of what tlsplane serves over ADS.
const (
	ClusterType  = "type.googleapis.com/envoy.config.cluster.v3.Cluster"
	EndpointType = "type.googleapis.com/envoy.config.endpoint.v3.ClusterLoadAssignment"
	SecretType   = "type.googleapis.com/envoy.extensions.transport_sockets.tls.v3.Secret"
)

// ADSClient is a scripted Envoy: one SotW ADS stream, subscribed to
// clusters, on which the test decides, response by response, to ACK or
// NACK. Every wait is bounded by the timeout the test gives.
type ADSClient struct {
	node   *corev3.Node
	stream discoveryv3.AggregatedDiscoveryService_StreamAggregatedResourcesClient
	// acked is the last accepted version, sent back as Envoy does.
	acked string
}

// DialADS opens the stream to addr (plaintext, loopback) as node nodeID of
// fleet, and asks for clusters; it closes when the test ends.
func DialADS(t testing.TB, addr, nodeID, fleet string) *ADSClient {
	t.Helper()
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(func() { cancel(); conn.Close() })
	stream, err := discoveryv3.NewAggregatedDiscoveryServiceClient(conn).StreamAggregatedResources(ctx)
	if err != nil {
		t.Fatalf("ADS stream to %s: %v", addr, err)
	}
	c := &ADSClient{node: &corev3.Node{Id: nodeID, Cluster: fleet}, stream: stream}
	c.Send(t, &discoveryv3.DiscoveryRequest{Node: c.node, TypeUrl: ClusterType})
	return c
}

// Send sends req as it is.
func (c *ADSClient) Send(t testing.TB, req *discoveryv3.DiscoveryRequest) {
	t.Helper()
	if err := c.stream.Send(req); err != nil {
		t.Fatalf("ADS send: %v", err)
	}
}

// Recv waits (bounded) for the next response.
func (c *ADSClient) Recv(t testing.TB, timeout time.Duration) *discoveryv3.DiscoveryResponse {
	t.Helper()
	type result struct {
		resp *discoveryv3.DiscoveryResponse
		err  error
	}
	got := make(chan result, 1)
	go func() {
		r, err := c.stream.Recv()
		got <- result{r, err}
	}()
	select {
	case r := <-got:
		if r.err != nil {
			t.Fatalf("ADS recv: %v", r.err)
		}
		return r.resp
	case <-time.After(timeout):
		t.Fatalf("no ADS response within %s", timeout)
		return nil
	}
}

// RecvCluster waits for a CDS response holding cluster name, ACKing the
// ones that do not (they are not the test's business).
func (c *ADSClient) RecvCluster(t testing.TB, name string, timeout time.Duration) *discoveryv3.DiscoveryResponse {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		resp := c.Recv(t, time.Until(deadline))
		if HasCluster(resp, name) {
			return resp
		}
		c.ACK(t, resp)
		if time.Now().After(deadline) {
			t.Fatalf("no CDS response with %s within %s", name, timeout)
		}
	}
}

// ACK accepts resp, as Envoy does: its version and nonce.
func (c *ADSClient) ACK(t testing.TB, resp *discoveryv3.DiscoveryResponse) {
	t.Helper()
	c.acked = resp.GetVersionInfo()
	c.Send(t, &discoveryv3.DiscoveryRequest{TypeUrl: resp.GetTypeUrl(), VersionInfo: c.acked, ResponseNonce: resp.GetNonce()})
}

// NACK rejects resp the way Envoy does: the last accepted version, the
// rejected nonce, and the reason in error_detail.
func (c *ADSClient) NACK(t testing.TB, resp *discoveryv3.DiscoveryResponse, message string) {
	t.Helper()
	c.Send(t, &discoveryv3.DiscoveryRequest{TypeUrl: resp.GetTypeUrl(), VersionInfo: c.acked, ResponseNonce: resp.GetNonce(),
		ErrorDetail: &status.Status{Code: 3, Message: message}})
}

// HasCluster looks for name in a CDS response without decoding the
// clusters: Cluster.name is field 1, marshalled first.
func HasCluster(resp *discoveryv3.DiscoveryResponse, name string) bool {
	want := append([]byte{0x0a, byte(len(name))}, name...)
	for _, r := range resp.GetResources() {
		if len(name) < 128 && len(r.GetValue()) >= len(want) && string(r.GetValue()[:len(want)]) == string(want) {
			return true
		}
	}
	return false
}

// HasSNI looks for sni in a CDS response's bytes (the TLS context is
// packed inside the cluster, not worth decoding here).
func HasSNI(resp *discoveryv3.DiscoveryResponse, sni string) bool {
	for _, r := range resp.GetResources() {
		if strings.Contains(string(r.GetValue()), sni) {
			return true
		}
	}
	return false
}

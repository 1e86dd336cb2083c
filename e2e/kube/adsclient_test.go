package kube

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	discoveryv3 "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	"google.golang.org/genproto/googleapis/rpc/status"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
)

const clusterType = "type.googleapis.com/envoy.config.cluster.v3.Cluster"

// adsClient is a scripted Envoy: one SotW ADS stream on which the test
// decides, response by response, to ACK or NACK.
type adsClient struct {
	node   *corev3.Node
	stream discoveryv3.AggregatedDiscoveryService_StreamAggregatedResourcesClient
	// acked is the last accepted version, sent back as Envoy does.
	acked string
}

func dialADS(t *testing.T, addr, nodeID, fleet string) *adsClient {
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
	c := &adsClient{node: &corev3.Node{Id: nodeID, Cluster: fleet}, stream: stream}
	c.send(t, &discoveryv3.DiscoveryRequest{Node: c.node, TypeUrl: clusterType})
	return c
}

func (c *adsClient) send(t *testing.T, req *discoveryv3.DiscoveryRequest) {
	t.Helper()
	if err := c.stream.Send(req); err != nil {
		t.Fatalf("ADS send: %v", err)
	}
}

// recv waits (bounded) for the next response.
func (c *adsClient) recv(t *testing.T, timeout time.Duration) *discoveryv3.DiscoveryResponse {
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

// recvCluster waits for a CDS response holding cluster name, ACKing the
// ones that do not (they are not the test's business).
func (c *adsClient) recvCluster(t *testing.T, name string, timeout time.Duration) *discoveryv3.DiscoveryResponse {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		resp := c.recv(t, time.Until(deadline))
		if hasCluster(resp, name) {
			return resp
		}
		c.ack(t, resp)
		if time.Now().After(deadline) {
			t.Fatalf("no CDS response with %s within %s", name, timeout)
		}
	}
}

func (c *adsClient) ack(t *testing.T, resp *discoveryv3.DiscoveryResponse) {
	t.Helper()
	c.acked = resp.GetVersionInfo()
	c.send(t, &discoveryv3.DiscoveryRequest{TypeUrl: resp.GetTypeUrl(), VersionInfo: c.acked, ResponseNonce: resp.GetNonce()})
}

// nack rejects resp the way Envoy does: the last accepted version, the
// rejected nonce, and the reason in error_detail.
func (c *adsClient) nack(t *testing.T, resp *discoveryv3.DiscoveryResponse, message string) {
	t.Helper()
	c.send(t, &discoveryv3.DiscoveryRequest{TypeUrl: resp.GetTypeUrl(), VersionInfo: c.acked, ResponseNonce: resp.GetNonce(),
		ErrorDetail: &status.Status{Code: 3, Message: message}})
}

// hasCluster looks for name in a CDS response without decoding the
// clusters: Cluster.name is field 1, marshalled first.
func hasCluster(resp *discoveryv3.DiscoveryResponse, name string) bool {
	want := append([]byte{0x0a, byte(len(name))}, name...)
	for _, r := range resp.GetResources() {
		if len(name) < 128 && len(r.GetValue()) >= len(want) && string(r.GetValue()[:len(want)]) == string(want) {
			return true
		}
	}
	return false
}

func clusterName(ns, svc string, port int) string { return fmt.Sprintf("%s/%s/%d", ns, svc, port) }

// hasSNI looks for sni in a CDS response's bytes (the TLS context is
// packed inside the cluster, not worth decoding here).
func hasSNI(resp *discoveryv3.DiscoveryResponse, sni string) bool {
	for _, r := range resp.GetResources() {
		if strings.Contains(string(r.GetValue()), sni) {
			return true
		}
	}
	return false
}

package main

import (
	"strings"
	"testing"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	metricsv3 "github.com/envoyproxy/go-control-plane/envoy/service/metrics/v3"
	prommodel "github.com/prometheus/client_model/go"
	"google.golang.org/protobuf/proto"

	"github.com/tlsplane/tlsplane/handshakes"
	"github.com/tlsplane/tlsplane/pipeline"
)

// The tracker serve hands the pipeline sets XBackends' handshake
// condition too.
var _ pipeline.XBackendConditions = (*handshakes.Tracker)(nil)

// statsMessage is one flush of the metrics service sink: cumulative
// counters named as Envoy names them without tags as labels.
func statsMessage(node *corev3.Node, counters map[string]float64) *metricsv3.StreamMetricsMessage {
	m := &metricsv3.StreamMetricsMessage{}
	if node != nil {
		m.Identifier = &metricsv3.StreamMetricsMessage_Identifier{Node: node}
	}
	for name, v := range counters {
		m.EnvoyMetrics = append(m.EnvoyMetrics, &prommodel.MetricFamily{
			Name: proto.String(name), Type: prommodel.MetricType_COUNTER.Enum(),
			Metric: []*prommodel.Metric{{Counter: &prommodel.Counter{Value: proto.Float64(v)}}},
		})
	}
	return m
}

// TestServeReportsHandshakeFailuresOnThePolicy drives the metrics service
// of a real server on 127.0.0.1 as an Envoy's stat sink does, and reads the
// condition and the metric back from the admin server.
func TestServeReportsHandshakeFailuresOnThePolicy(t *testing.T) {
	p := startServe(t, copyQuickstart(t))
	p.waitAdmin(t, "/readyz", 200, "ready")
	p.waitAdmin(t, "/debug/status", 200, `"reason": "Accepted"`)

	conn, ctx := xdsConn(t, p.xds)
	stream, err := metricsv3.NewMetricsServiceClient(conn).StreamMetrics(ctx)
	if err != nil {
		t.Fatal(err)
	}
	send := func(m *metricsv3.StreamMetricsMessage) {
		t.Helper()
		if err := stream.Send(m); err != nil {
			t.Fatal(err)
		}
	}
	const cluster = "cluster.shop/payments/8443."
	// The first flush is the Envoy's baseline.
	send(statsMessage(&corev3.Node{Id: "envoy-1", Cluster: "quickstart"}, map[string]float64{cluster + "ssl.handshake": 2}))
	send(statsMessage(nil, map[string]float64{
		cluster + "ssl.handshake": 2, cluster + "ssl.fail_verify_san": 3, cluster + "ssl.connection_error": 3,
	}))
	p.waitAdmin(t, "/debug/status", 200, `"reason": "SubjectAltNameMismatch"`)
	body := p.waitAdmin(t, "/debug/status", 200, `Envoys of fleet \"quickstart\" report 3 TLS handshakes to cluster shop/payments/8443 failed in the last 5m0s because the certificate matched no subject alternative name`)
	t.Logf("status: %s", body)
	p.waitAdmin(t, "/metrics", 200, `tlsplane_upstream_tls_failures_total{policy="shop/payments",reason="SubjectAltNameMismatch"} 3`)
	// /debug/status shows the window the condition came from.
	p.waitAdmin(t, "/debug/status", 200, `"handshakes": [
    {
      "fleet": "quickstart",
      "cluster": "shop/payments/8443",
      "policies": [
        {
          "Namespace": "shop",
          "Name": "payments"
        }
      ],
      "failing": true,
      "reason": "SubjectAltNameMismatch",
      "increases": {
        "ssl.fail_verify_san": 3
      },`)

	// The backend fixed: handshakes succeed again, and nothing failed since.
	send(statsMessage(nil, map[string]float64{
		cluster + "ssl.handshake": 7, cluster + "ssl.fail_verify_san": 3, cluster + "ssl.connection_error": 3,
	}))
	p.waitAdmin(t, "/debug/status", 200, `"reason": "HandshakesSucceeding"`)
	if _, body := p.get("/debug/status"); containsAll(body, "SubjectAltNameMismatch") {
		t.Fatalf("the failure is still shown after handshakes succeeded: %s", body)
	}
	if _, body := p.get("/metrics"); containsAll(body, `reason="HandshakeFailed"`) {
		t.Fatalf("connection errors explained by the SAN failures were counted again as HandshakeFailed")
	}
}

func containsAll(s string, subs ...string) bool {
	for _, sub := range subs {
		if !strings.Contains(s, sub) {
			return false
		}
	}
	return true
}

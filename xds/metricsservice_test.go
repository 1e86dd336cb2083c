package xds

import (
	"context"
	"testing"
	"time"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	metricsv3 "github.com/envoyproxy/go-control-plane/envoy/service/metrics/v3"
	prommodel "github.com/prometheus/client_model/go"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/tlsplane/tlsplane/snapshots"
	st "github.com/tlsplane/tlsplane/snapshots/snapshotstest"
)

// counterFamily is one Envoy counter as the metrics service sink sends it
// without tags as labels.
func counterFamily(name string, v float64) *prommodel.MetricFamily {
	return &prommodel.MetricFamily{
		Name: proto.String(name), Type: prommodel.MetricType_COUNTER.Enum(),
		Metric: []*prommodel.Metric{{Counter: &prommodel.Counter{Value: proto.Float64(v)}}},
	}
}

// sendStats streams msgs on a metrics stream and returns its final status.
func sendStats(t *testing.T, conn *grpc.ClientConn, msgs ...*metricsv3.StreamMetricsMessage) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), patience)
	defer cancel()
	stream, err := metricsv3.NewMetricsServiceClient(conn).StreamMetrics(ctx)
	if err != nil {
		return err
	}
	for _, m := range msgs {
		if err := stream.Send(m); err != nil {
			break // the server's status comes with CloseAndRecv
		}
	}
	_, err = stream.CloseAndRecv()
	return err
}

func TestMetricsServiceReportsOnlyServedClustersOfAnAuthorizedFleet(t *testing.T) {
	reports := make(chan ClusterStats, 8)
	s := startSecureWith(t, DefaultFleetIdentity,
		snapshots.Options{FleetNamespaces: map[string][]string{"edge": {"shop"}}},
		Options{OnClusterStats: func(c ClusterStats) { reports <- c }})
	s.publish(t, st.Output(payments, ledger), true)
	edgeCert, edgeKey := s.ca.issue(t, leafSpec{uri: "spiffe://cluster.local/fleet/edge"})
	otherCert, otherKey := s.ca.issue(t, leafSpec{uri: "spiffe://cluster.local/fleet/internal"})

	first := &metricsv3.StreamMetricsMessage{
		Identifier: &metricsv3.StreamMetricsMessage_Identifier{Node: &corev3.Node{Id: "envoy-1", Cluster: "edge"}},
		EnvoyMetrics: []*prommodel.MetricFamily{
			counterFamily("cluster.shop/payments/8443.ssl.fail_verify_san", 3),
			counterFamily("cluster.shop/payments/8443.ssl.handshake", 1),
			// bank is not served to edge: edge may not speak for it.
			counterFamily("cluster.bank/ledger/443.ssl.fail_verify_error", 9),
			counterFamily("server.uptime", 5),
		},
	}
	// Envoy names the node in the first message only.
	second := &metricsv3.StreamMetricsMessage{EnvoyMetrics: []*prommodel.MetricFamily{
		counterFamily("cluster.shop/payments/8443.ssl.fail_verify_san", 4),
	}}
	if err := sendStats(t, s.dial(t, edgeCert, edgeKey, nil), first, second); err != nil {
		t.Fatalf("edge's stream: %v", err)
	}
	want := []map[string]map[string]uint64{
		{"shop/payments/8443": {"ssl.fail_verify_san": 3, "ssl.handshake": 1}},
		{"shop/payments/8443": {"ssl.fail_verify_san": 4}},
	}
	for i, w := range want {
		select {
		case got := <-reports:
			if got.Fleet != "edge" || got.NodeID != "envoy-1" || !sameCounters(got.Counters, w) {
				t.Fatalf("report %d = %+v, want fleet edge, node envoy-1, %v", i, got, w)
			}
		case <-time.After(patience):
			t.Fatalf("report %d never came", i)
		}
	}
	if n := counterValue(t, s.metrics.statsDropped); n != 1 {
		t.Fatalf("dropped clusters = %v, want 1 (bank/ledger/443)", n)
	}

	// A certificate of fleet internal may not report as edge.
	err := sendStats(t, s.dial(t, otherCert, otherKey, nil), first)
	if status.Code(err) != codes.PermissionDenied {
		t.Fatalf("internal's certificate reporting as edge: %v, want PermissionDenied", err)
	}
	// Nor may a stream switch fleets after it was authorized.
	switched := &metricsv3.StreamMetricsMessage{Identifier: &metricsv3.StreamMetricsMessage_Identifier{Node: &corev3.Node{Id: "envoy-1", Cluster: "internal"}}}
	if err := sendStats(t, s.dial(t, edgeCert, edgeKey, nil), first, switched); status.Code(err) != codes.PermissionDenied {
		t.Fatalf("a stream switching fleets: %v, want PermissionDenied", err)
	}
	select {
	case got := <-reports:
		if got.Fleet != "edge" {
			t.Fatalf("a refused stream reported %+v", got)
		}
	case <-time.After(quiet):
	}
	for {
		select {
		case got := <-reports:
			if got.Fleet != "edge" {
				t.Fatalf("a refused stream reported %+v", got)
			}
			continue
		default:
		}
		break
	}
}

func TestSplitClusterStat(t *testing.T) {
	label := func(n, v string) []*prommodel.LabelPair {
		return []*prommodel.LabelPair{{Name: proto.String(n), Value: proto.String(v)}}
	}
	tests := []struct {
		name             string
		labels           []*prommodel.LabelPair
		cluster, counter string
		ok               bool
	}{
		{"cluster.shop/pay.v2/443.ssl.handshake", nil, "shop/pay.v2/443", "ssl.handshake", true},
		{"cluster.a.upstream_cx_connect_fail", nil, "a", "upstream_cx_connect_fail", true},
		{"cluster.ssl.fail_verify_error", label("envoy.cluster_name", "shop/p/1"), "shop/p/1", "ssl.fail_verify_error", true},
		{"cluster.ssl.fail_verify_error", nil, "", "", false},
		{"cluster.a.upstream_rq_total", nil, "", "", false},
		{"listener.a.ssl.handshake", nil, "", "", false},
		{"cluster..ssl.handshake", nil, "", "", false},
	}
	for _, tc := range tests {
		c, k, ok := splitClusterStat(tc.name, tc.labels)
		if c != tc.cluster || k != tc.counter || ok != tc.ok {
			t.Errorf("splitClusterStat(%q) = %q, %q, %v; want %q, %q, %v", tc.name, c, k, ok, tc.cluster, tc.counter, tc.ok)
		}
	}
}

func sameCounters(a, b map[string]map[string]uint64) bool {
	if len(a) != len(b) {
		return false
	}
	for c, m := range a {
		if len(m) != len(b[c]) {
			return false
		}
		for k, v := range m {
			if b[c][k] != v {
				return false
			}
		}
	}
	return true
}

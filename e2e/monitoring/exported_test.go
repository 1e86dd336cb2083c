package monitoring

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	accesslogdatav3 "github.com/envoyproxy/go-control-plane/envoy/data/accesslog/v3"
	accesslogv3 "github.com/envoyproxy/go-control-plane/envoy/service/accesslog/v3"
	metricsv3 "github.com/envoyproxy/go-control-plane/envoy/service/metrics/v3"
	prommodel "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/tlsplane/tlsplane/e2e/harness"
	"github.com/tlsplane/tlsplane/translator/plan"
)

// declaredFamilies are the metric families tlsplane's source declares
// (Name: "tlsplane_…", or prometheus.NewDesc("tlsplane_…" for a
// collector's, outside tests, e2e/ and perf/).
func declaredFamilies(t *testing.T) []string {
	t.Helper()
	decl := regexp.MustCompile(`(?:Name:\s*|NewDesc\(\s*)"(tlsplane_\w+)"`)
	var names []string
	root := harness.RepoRoot()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			rel, _ := filepath.Rel(root, path)
			if rel != "." && (strings.HasPrefix(d.Name(), ".") || rel == "e2e" || rel == "perf" || rel == "bin" || d.Name() == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, m := range decl.FindAllSubmatch(data, -1) {
			names = append(names, string(m[1]))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(names)
	return slices.Compact(names)
}

// sampleNames maps each sample name of an exposition to its family: a
// histogram's _bucket, _sum and _count, a summary's _sum and _count.
func sampleNames(t *testing.T, body []byte) map[string]string {
	t.Helper()
	parser := expfmt.NewTextParser(model.LegacyValidation)
	families, err := parser.TextToMetricFamilies(bytes.NewReader(body))
	if err != nil {
		t.Fatalf("/metrics: %v", err)
	}
	out := map[string]string{}
	for name, f := range families {
		out[name] = name
		switch f.GetType() {
		case prommodel.MetricType_HISTOGRAM, prommodel.MetricType_GAUGE_HISTOGRAM:
			out[name+"_bucket"], out[name+"_sum"], out[name+"_count"] = name, name, name
		case prommodel.MetricType_SUMMARY:
			out[name+"_sum"], out[name+"_count"] = name, name
		}
	}
	return out
}

// family is the family a sample name belongs to, by its suffix.
func family(sample string) string {
	for _, suffix := range []string{"_bucket", "_sum", "_count"} {
		if base, ok := strings.CutSuffix(sample, suffix); ok {
			return base
		}
	}
	return sample
}

// driveXDS opens an ADS stream for fleet "monitoring", as an Envoy would,
// and NACKs the first CDS response: the stream, response and NACK series
// exist only once that happened. The stream stays open until the test ends.
func driveXDS(t *testing.T, addr string) {
	t.Helper()
	envoy := harness.DialADS(t, addr, "monitoring-1", "monitoring")
	envoy.NACK(t, envoy.Recv(t, 30*time.Second), "monitoring test: rejected on purpose")
}

// counter is one Envoy counter as the metrics service sink sends it.
func counter(name string, v float64) *prommodel.MetricFamily {
	return &prommodel.MetricFamily{Name: proto.String(name), Type: prommodel.MetricType_COUNTER.Enum(),
		Metric: []*prommodel.Metric{{Counter: &prommodel.Counter{Value: proto.Float64(v)}}}}
}

// driveHandshakes reports, as an Envoy of fleet "monitoring" would on the
// metrics service, a baseline flush and then three handshakes to
// shop/payments/8443 (governed by BackendTLSPolicy shop/payments) that
// failed SAN verification: the failure series exist only after that.
func driveHandshakes(t *testing.T, conn *grpc.ClientConn) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	stream, err := metricsv3.NewMetricsServiceClient(conn).StreamMetrics(ctx)
	if err != nil {
		t.Fatal(err)
	}
	const cluster = "cluster.shop/payments/8443."
	flushes := []*metricsv3.StreamMetricsMessage{
		{Identifier: &metricsv3.StreamMetricsMessage_Identifier{Node: &corev3.Node{Id: "monitoring-1", Cluster: "monitoring"}},
			EnvoyMetrics: []*prommodel.MetricFamily{counter(cluster+"ssl.handshake", 1), counter(cluster+"ssl.fail_verify_san", 0)}},
		{EnvoyMetrics: []*prommodel.MetricFamily{counter(cluster+"ssl.handshake", 1), counter(cluster+"ssl.fail_verify_san", 3)}},
	}
	for i, f := range flushes {
		if i > 0 {
			time.Sleep(time.Second) // tlsplane reads a flush once no batch came for 250 ms
		}
		for _, m := range f.EnvoyMetrics {
			m.Metric[0].TimestampMs = proto.Int64(time.Now().UnixMilli())
		}
		if err := stream.Send(f); err != nil {
			t.Fatalf("metrics service: %v", err)
		}
	}
	time.Sleep(time.Second)
	if _, err := stream.CloseAndRecv(); err != nil {
		t.Fatalf("metrics service: %v", err)
	}
}

// driveSighting reports, as an Envoy of fleet "monitoring" would on the
// access log service, that backend 127.0.0.1:8443 (the quickstart's
// endpoint) of shop/payments/8443, governed by BackendTLSPolicy
// shop/payments, presented the quickstart's backend certificate over TLS
// 1.3: the inventory's expiry series exist only after that.
func driveSighting(t *testing.T, conn *grpc.ClientConn) {
	t.Helper()
	leaf, err := os.ReadFile(filepath.Join(harness.RepoRoot(), "examples", "quickstart", "certs", "payments.crt"))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	stream, err := accesslogv3.NewAccessLogServiceClient(conn).StreamAccessLogs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	entry := &accesslogdatav3.HTTPAccessLogEntry{CommonProperties: &accesslogdatav3.AccessLogCommon{
		StartTime:       timestamppb.Now(),
		UpstreamCluster: "shop/payments/8443",
		UpstreamRemoteAddress: &corev3.Address{Address: &corev3.Address_SocketAddress{SocketAddress: &corev3.SocketAddress{
			Address: "127.0.0.1", PortSpecifier: &corev3.SocketAddress_PortValue{PortValue: 8443}}}},
		// Envoy's %UPSTREAM_PEER_CERT% is the URL-encoded PEM.
		CustomTags: map[string]string{plan.CertificateTag: url.PathEscape(string(leaf)), plan.TLSVersionTag: "TLSv1.3", plan.TLSCipherTag: "TLS_AES_128_GCM_SHA256"},
	}}
	msg := &accesslogv3.StreamAccessLogsMessage{
		Identifier: &accesslogv3.StreamAccessLogsMessage_Identifier{Node: &corev3.Node{Id: "monitoring-1", Cluster: "monitoring"}, LogName: plan.CertificateLogName},
		LogEntries: &accesslogv3.StreamAccessLogsMessage_HttpLogs{HttpLogs: &accesslogv3.StreamAccessLogsMessage_HTTPAccessLogEntries{
			LogEntry: []*accesslogdatav3.HTTPAccessLogEntry{entry}}},
	}
	if err := stream.Send(msg); err != nil {
		t.Fatalf("access log service: %v", err)
	}
	if _, err := stream.CloseAndRecv(); err != nil {
		t.Fatalf("access log service: %v", err)
	}
}

// TestMetricsExported checks that every metric the rules and the dashboard
// select is one tlsplane exports. A vector appears in /metrics only once
// it has a child, so the test runs the real binary on the quickstart (and
// a policy whose CA's revocation list tlsplane fetches) and makes each
// series exist: an ADS stream that NACKs, an Envoy's metrics service
// report of failed handshakes, and an Envoy's access log report of a
// backend's certificate. Then every family declared
// in tlsplane's source must show in /metrics, or be one of KubernetesOnly
// (checked in e2e/kube): the drive is complete, and a metric renamed in
// the source fails here rather than leaving a panel empty.
func TestMetricsExported(t *testing.T) {
	used := usedMetrics(t)
	declared := declaredFamilies(t)

	dir, crlArgs := quickstartWithCRL(t)
	tp := harness.StartTLSPlane(t, harness.TLSPlaneOptions{
		Bin: tlsplaneBin(t), LogDir: t.TempDir(), Name: "tlsplane",
		Args: append([]string{"--dir", dir, "--handshake-window", "1m"}, crlArgs...),
	})
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("tlsplane log:\n%s", tp.LogTail(40))
		}
	})
	conn, err := grpc.NewClient(tp.XDSAddress(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	driveXDS(t, tp.XDSAddress())
	driveHandshakes(t, conn)
	driveSighting(t, conn)

	// Everything declared, but what only Kubernetes mode registers.
	var want []string
	for _, f := range declared {
		if !slices.Contains(KubernetesOnly, f) && !slices.Contains(ProvisionerOnly, f) {
			want = append(want, f)
		}
	}
	var live map[string]string
	err = harness.Eventually(20*time.Second, 200*time.Millisecond, func() error {
		body, err := harness.HTTPGet(tp.AdminURL("/metrics"))
		if err != nil {
			return err
		}
		live = sampleNames(t, body)
		var missing []string
		for _, f := range want {
			if _, ok := live[f]; !ok {
				missing = append(missing, f)
			}
		}
		if len(missing) > 0 {
			return fmt.Errorf("families declared in tlsplane's source and not in /metrics: %q", missing)
		}
		return nil
	})
	if err != nil {
		t.Errorf("%v: drive them in this test, or list them in KubernetesOnly (or ProvisionerOnly) when only Kubernetes mode (or the Gateway provisioner) registers them", err)
	}

	for _, f := range slices.Concat(KubernetesOnly, ProvisionerOnly) {
		if !slices.Contains(declared, f) {
			t.Errorf("KubernetesOnly or ProvisionerOnly lists %s, which tlsplane's source does not declare", f)
		}
		if _, ok := live[f]; ok {
			t.Errorf("KubernetesOnly or ProvisionerOnly lists %s, which a tlsplane serving --dir exports: remove it from the list", f)
		}
	}
	for sample := range live {
		if strings.HasPrefix(sample, "tlsplane_") && !slices.Contains(declared, live[sample]) {
			t.Errorf("/metrics has %s, which no Name: \"tlsplane_…\" in tlsplane's source declares (the source scan misses it)", sample)
		}
	}

	var names []string
	for n := range used {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		_, exported := live[n]
		switch {
		case exported:
		case (slices.Contains(KubernetesOnly, family(n)) || slices.Contains(ProvisionerOnly, family(n))) && slices.Contains(declared, family(n)):
			t.Logf("%s: Kubernetes mode only (declared in the source; e2e/kube checks it live)", n)
		default:
			t.Errorf("%s (used by %s) is not exported by tlsplane", n, strings.Join(used[n], "; "))
		}
	}
	if t.Failed() {
		return
	}
	t.Logf("%d metric names used by the rules and the dashboard; %d sample names in /metrics of tlsplane serving the quickstart", len(used), len(live))
}

// tlsplaneBin is TLSPLANE_BIN (make e2e-monitoring sets it), else a build
// of this checkout.
func tlsplaneBin(t *testing.T) string {
	t.Helper()
	bin, _, err := harness.TLSPlaneOrBuild(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return bin
}

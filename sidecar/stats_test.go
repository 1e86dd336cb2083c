package sidecar

import (
	"regexp"
	"testing"

	metricsconfv3 "github.com/envoyproxy/go-control-plane/envoy/config/metrics/v3"

	"github.com/tlsplane/tlsplane/xds"
)

// TestBootstrapStreamsTheCountersTLSPlaneReads: the sidecar streams its
// counters to tlsplane's metrics service over the xDS cluster, keeping
// every counter the handshake conditions read (xds.ReadCounters) and the
// passthrough's, and nothing else of a cluster.
func TestBootstrapStreamsTheCountersTLSPlaneReads(t *testing.T) {
	boot, err := Bootstrap(Options{Namespace: "shop", Pod: "web-0", ServiceAccount: "web", XDSAddress: "10.0.0.1:18000"})
	if err != nil {
		t.Fatal(err)
	}
	if len(boot.StatsSinks) != 1 || boot.StatsSinks[0].Name != "envoy.stat_sinks.metrics_service" {
		t.Fatalf("stats sinks %v, want tlsplane's metrics service", boot.StatsSinks)
	}
	var sink metricsconfv3.MetricsServiceConfig
	if err := boot.StatsSinks[0].GetTypedConfig().UnmarshalTo(&sink); err != nil {
		t.Fatal(err)
	}
	if got := sink.GetGrpcService().GetEnvoyGrpc().GetClusterName(); got != XDSCluster {
		t.Errorf("metrics service through cluster %q, want %q", got, XDSCluster)
	}
	patterns := boot.GetStatsConfig().GetStatsMatcher().GetInclusionList().GetPatterns()
	keeps := func(name string) bool {
		for _, p := range patterns {
			if re := p.GetSafeRegex().GetRegex(); re != "" && regexp.MustCompile(re).MatchString(name) {
				return true
			}
			if pre := p.GetPrefix(); pre != "" && len(name) >= len(pre) && name[:len(pre)] == pre {
				return true
			}
		}
		return false
	}
	for _, c := range xds.ReadCounters {
		if name := "cluster.shop/pay/8443." + c; !keeps(name) {
			t.Errorf("the matcher drops %s, which tlsplane reads", name)
		}
	}
	for _, name := range []string{"cluster.passthrough.upstream_cx_total", "cluster.passthrough.upstream_cx_active"} {
		if !keeps(name) {
			t.Errorf("the matcher drops %s", name)
		}
	}
	for _, name := range []string{"cluster.shop/pay/8443.upstream_rq_total", "listener.127.0.0.1_15001.downstream_cx_total", "cluster.shop/pay/8443.ssl.ciphers.TLS_AES_128_GCM_SHA256"} {
		if keeps(name) {
			t.Errorf("the matcher keeps %s, which tlsplane does not read", name)
		}
	}
}

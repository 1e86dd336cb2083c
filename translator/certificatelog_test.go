package translator_test

import (
	"math/rand/v2"
	"path/filepath"
	"testing"
	"time"

	accesslogv3 "github.com/envoyproxy/go-control-plane/envoy/config/accesslog/v3"
	listenerv3 "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	grpclogv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/access_loggers/grpc/v3"
	routerv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/router/v3"
	hcmv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/http_connection_manager/v3"
	tcpproxyv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/tcp_proxy/v3"

	"github.com/tlsplane/tlsplane/manifests"
	"github.com/tlsplane/tlsplane/translator"
	"github.com/tlsplane/tlsplane/translator/plan"
)

// listenerLogs are a listener's certificate logs: each router's upstream
// log and each TCP proxy's access log, by filter chain, and the chains
// whose TCP proxy names a cluster.
func listenerLogs(t *testing.T, l *listenerv3.Listener) (logs map[string][]*accesslogv3.AccessLog, proxies int, routers int) {
	t.Helper()
	logs = map[string][]*accesslogv3.AccessLog{}
	for _, chain := range l.GetFilterChains() {
		for _, f := range chain.GetFilters() {
			switch msg, _ := f.GetTypedConfig().UnmarshalNew(); c := msg.(type) {
			case *hcmv3.HttpConnectionManager:
				for _, hf := range c.GetHttpFilters() {
					if hf.GetName() != "envoy.filters.http.router" {
						continue
					}
					r := &routerv3.Router{}
					if err := hf.GetTypedConfig().UnmarshalTo(r); err != nil {
						t.Fatal(err)
					}
					routers++
					logs[chain.GetName()] = append(logs[chain.GetName()], r.GetUpstreamLog()...)
				}
			case *tcpproxyv3.TcpProxy:
				// Only a chain terminating TLS reaches upstream TLS.
				if chain.GetTransportSocket() != nil && (c.GetCluster() != plan.InvalidBackendClusterName || c.GetWeightedClusters() != nil) {
					proxies++
				}
				logs[chain.GetName()] = append(logs[chain.GetName()], c.GetAccessLog()...)
				if len(c.GetAccessLog()) > 0 && !c.GetAccessLogOptions().GetFlushAccessLogOnConnected() {
					t.Errorf("listener %s chain %s: access log not flushed on upstream connect", l.GetName(), chain.GetName())
				}
			}
		}
	}
	return logs, proxies, routers
}

// Every router and every TCP proxy of every Gateway listener of the golden
// inputs logs certificates, to the named cluster at the sample rate, when
// the option asks; none does without it.
func TestCertificateLogOnEveryGatewayListener(t *testing.T) {
	paths, err := filepath.Glob(filepath.Join(goldenDir, "gateway-*.in.yaml"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no golden inputs: %v", err)
	}
	on := translator.Options{BackendCertificates: translator.BackendCertificates{SamplePercent: 2.5, XDSCluster: "xds-of-edge"}}
	var routers, proxies int
	for _, path := range paths {
		in, err := manifests.Unadmitted.Read([]string{path}, nil)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		off := translator.Translate(in, nil, goldenNow, translator.Options{})
		for name, f := range off.Fleets {
			for _, l := range f.Listeners {
				if logs, _, _ := listenerLogs(t, l); countLogs(logs) > 0 {
					t.Errorf("%s: fleet %s listener %s logs certificates without the option", filepath.Base(path), name, l.GetName())
				}
			}
		}
		out := translator.Translate(in, nil, goldenNow, on)
		for name, f := range out.Fleets {
			for _, l := range f.Listeners {
				logs, p, r := listenerLogs(t, l)
				routers, proxies = routers+r, proxies+p
				if countLogs(logs) != r+p {
					t.Errorf("%s: fleet %s listener %s: %d certificate logs for %d routers and %d TCP proxies with a backend",
						filepath.Base(path), name, l.GetName(), countLogs(logs), r, p)
				}
				for chain, ls := range logs {
					for _, log := range ls {
						checkCertificateLog(t, l.GetName()+" chain "+chain, log, 25_000, "xds-of-edge")
					}
				}
			}
		}
	}
	if routers == 0 || proxies == 0 {
		t.Fatalf("the golden inputs have %d routers and %d TCP proxies: the test would prove nothing", routers, proxies)
	}
}

func countLogs(logs map[string][]*accesslogv3.AccessLog) int {
	n := 0
	for _, ls := range logs {
		n += len(ls)
	}
	return n
}

// checkCertificateLog: a gRPC access log to cluster with the certificate
// tags, sampled at perMillion behind a filter of TLS upstreams.
func checkCertificateLog(t *testing.T, where string, log *accesslogv3.AccessLog, perMillion uint32, cluster string) {
	t.Helper()
	msg, err := log.GetTypedConfig().UnmarshalNew()
	if err != nil {
		t.Fatal(err)
	}
	var common *grpclogv3.CommonGrpcAccessLogConfig
	switch c := msg.(type) {
	case *grpclogv3.HttpGrpcAccessLogConfig:
		common = c.GetCommonConfig()
	case *grpclogv3.TcpGrpcAccessLogConfig:
		common = c.GetCommonConfig()
	default:
		t.Fatalf("%s: access log %T", where, msg)
	}
	if common.GetLogName() != plan.CertificateLogName || common.GetGrpcService().GetEnvoyGrpc().GetClusterName() != cluster {
		t.Errorf("%s: log %q to %q, want %q to %q", where, common.GetLogName(), common.GetGrpcService().GetEnvoyGrpc().GetClusterName(), plan.CertificateLogName, cluster)
	}
	tags := map[string]string{}
	for _, tag := range common.GetCustomTags() {
		tags[tag.GetTag()] = tag.GetValue()
	}
	want := map[string]string{plan.CertificateTag: "%UPSTREAM_PEER_CERT%", plan.TLSVersionTag: "%UPSTREAM_TLS_VERSION%", plan.TLSCipherTag: "%UPSTREAM_TLS_CIPHER%"}
	for k, v := range want {
		if tags[k] != v {
			t.Errorf("%s: tag %s = %q, want %q", where, k, tags[k], v)
		}
	}
	var sampled uint32
	var tlsOnly bool
	for _, f := range log.GetFilter().GetAndFilter().GetFilters() {
		if r := f.GetRuntimeFilter(); r != nil {
			sampled = r.GetPercentSampled().GetNumerator()
		}
		tlsOnly = tlsOnly || f.GetExtensionFilter() != nil
	}
	if sampled != perMillion || !tlsOnly {
		t.Errorf("%s: sampled %d per million (TLS only: %v), want %d", where, sampled, tlsOnly, perMillion)
	}
}

// The sample rate as a percent becomes per million: never 0 when asked
// for, never more than all.
func TestCertificateLogSampleRate(t *testing.T) {
	path := filepath.Join(goldenDir, "gateway-tls-tcp-routes.in.yaml")
	in, err := manifests.Unadmitted.Read([]string{path}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		percent    float64
		perMillion uint32
	}{{1, 10_000}, {100, 1_000_000}, {250, 1_000_000}, {0.00001, 1}, {0.5, 5_000}} {
		out := translator.Translate(in, nil, goldenNow, translator.Options{BackendCertificates: translator.BackendCertificates{SamplePercent: tc.percent}})
		for _, f := range out.Fleets {
			for _, l := range f.Listeners {
				logs, _, _ := listenerLogs(t, l)
				for _, ls := range logs {
					for _, log := range ls {
						checkCertificateLog(t, l.GetName(), log, tc.perMillion, translator.DefaultXDSCluster)
					}
				}
			}
		}
	}
}

// Update keeps the certificate log as Translate makes it.
func TestUpdateMatchesTranslateWithCertificateLog(t *testing.T) {
	pool := goldenPool(t, true)
	opts := translator.Options{AllowInsecureSkipVerify: true, BackendCertificates: translator.BackendCertificates{SamplePercent: 1}}
	for seed := range 15 {
		r := rand.New(rand.NewPCG(uint64(seed), 36))
		runUpdates(t, r, pool, opts, func(int) time.Time { return fuzzNow }, 25)
	}
}

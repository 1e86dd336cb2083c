package main

import (
	"strings"
	"testing"
)

func TestIdleTargetRows(t *testing.T) {
	dir := []propagation{{Clusters: 10000, API: "DELTA_GRPC", Edits: 60, WaitMs: 0.01, SourceReadMs: 1.5, TranslateMs: 0.9, PublishMs: 0.3,
		ByKind: map[string]kindResult{"ca": {Edits: 20, P50: 3, P99: 18}, "policy": {Edits: 20, P50: 4, P99: 70}, "endpoint": {Edits: 20, P50: 3, P99: 8}}}}
	for _, tc := range []struct {
		name          string
		raw           string
		props, routes []propagation
		row           string
		want          []string
	}{{
		name: "directory CA rotation met", props: dir,
		row: "directory mode, 10,000 Services, idle world: CA rotation", want: []string{"p50 3.0 ms, p99 18.0 ms (20 edits)", "| yes |"},
	}, {
		name: "directory policy edit missed at p99", props: dir,
		row: "directory mode, 10,000 Services, idle world: policy edit", want: []string{"p99 70.0 ms", "| **no** |"},
	}, {
		name: "Kubernetes mode measured",
		raw:  "BenchmarkIdleEdits/kube/services=10000-2 \t 1 \t 1 ns/op \t 12 p50-ca-ms \t 40 p99-ca-ms \t 20 edits-ca\n",
		row:  "Kubernetes mode, real kube-apiserver, 10,000 Services with policies, idle world: CA rotation", want: []string{"p50 12.0 ms, p99 40.0 ms (20 edits)", "| yes |"},
	}, {
		name:   "route edit missed",
		routes: []propagation{{Clusters: 10000, API: "DELTA_GRPC", Edits: 50, P50: 190, P99: 280, MainThreadP50: 160, MainThreadP99: 250}},
		row:    "one HTTPRoute edited among 10,000", want: []string{"p99 280 ms (p50 190 ms, 50 edits)", "main thread p50 160 ms", "| **no** |"},
	}, {
		name: "churn at the issue's size and bound",
		raw:  "BenchmarkEndpointChurn/kube/services=10000/rate=200-2 \t 1 \t 1 ns/op \t 12 tlsplane-cpu-% \t 120 p99-ms \t 12000 updates \t 12000 applied\n",
		row:  "endpoint churn, Kubernetes mode: 10,000", want: []string{"p99 120 ms", "| **no** |"},
	}, {
		name: "mixed fan-out met",
		raw:  "BenchmarkFanout/mixed/delta=5000/sotw=5000/clusters=10000-2 \t 1 \t 1 ns/op \t 400 delta-last-ms \t 600 sotw-last-ms \t 1500 server-rss-MiB\n",
		row:  "one replica, 5,000 delta", want: []string{"delta 400 ms, state of the world 600 ms, server RSS 1500 MiB", "| yes |"},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			wantRow(t, idleTargets(parseRaw(t, tc.raw), tc.props, tc.routes, notRun(tc.raw)), tc.row, tc.want)
		})
	}
}

// Every target of issue 23 has its row, whatever was measured, and the
// split shows tlsplane's share of a measured row.
func TestIdleTargetsHaveEveryRow(t *testing.T) {
	table := idleTargets(benchmarks{}, nil, nil, nil)
	if got := strings.Count(table, "not measured in this run"); got != 10 {
		t.Errorf("%d rows not measured, want all 10:\n%s", got, table)
	}
	dir := []propagation{{Clusters: 10000, API: "DELTA_GRPC", WaitMs: 0.5, SourceReadMs: 1, TranslateMs: 1, PublishMs: 0.5,
		ByKind: map[string]kindResult{"ca": {Edits: 20, P50: 5}}}}
	row := rowOf(t, idleTargets(benchmarks{}, dir, nil, nil), "directory mode, CA rotation")
	if !strings.Contains(row, "| 5.0 ms | 0.50 ms | 2.50 ms | 2.0 ms |") {
		t.Errorf("split row %q", row)
	}
	kube := parseRaw(t, "BenchmarkIdleEdits/kube/services=10000-2 \t 1 \t 1 ns/op \t 8 p50-ca-ms \t 30 p99-ca-ms \t 0.001 wait-ms \t 0.9 translate-ms \t 0.4 publish-ms \t 5.7 delivered-ca-ms \t 2.3 envoy-ca-ms\n")
	row = rowOf(t, idleTargets(kube, nil, nil, nil), "Kubernetes mode, CA rotation")
	if !strings.Contains(row, "| 8.0 ms | 0.00 ms | 1.30 ms | API server 5.7 ms, Envoy 2.3 ms |") {
		t.Errorf("split row %q", row)
	}
}

// A churn row shows the run of its own size when several sizes ran.
func TestChurnRowPrefersItsOwnSize(t *testing.T) {
	b := parseRaw(t, "BenchmarkEndpointChurn/kube/services=1000/rate=50-2 \t 1 \t 1 ns/op \t 5 tlsplane-cpu-% \t 90 p99-ms \t 3000 updates \t 3000 applied\n"+
		"BenchmarkEndpointChurn/kube/services=10000/rate=200-2 \t 1 \t 1 ns/op \t 9 tlsplane-cpu-% \t 61 p99-ms \t 12000 updates \t 12000 applied\n")
	row := rowOf(t, scaleTargets(b, nil, nil, nil), "endpoint churn against the real API server")
	if !strings.Contains(row, "services=1000/rate=50") || !strings.Contains(row, "3000 of 3000") {
		t.Errorf("issue 15's row %q, want its 1,000 Services at 50/s", row)
	}
	row = rowOf(t, idleTargets(b, nil, nil, nil), "endpoint churn, Kubernetes mode: 10,000")
	if !strings.Contains(row, "12000 of 12000") {
		t.Errorf("issue 23's row %q, want its 10,000 Services at 200/s", row)
	}
}

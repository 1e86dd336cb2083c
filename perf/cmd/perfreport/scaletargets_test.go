package main

import (
	"strings"
	"testing"
)

// parseRaw is parseBench on text instead of files.
func parseRaw(t *testing.T, raw string) benchmarks {
	t.Helper()
	b := benchmarks{}
	var copied strings.Builder
	if err := parseBenchInto(b, &copied, strings.NewReader(raw)); err != nil {
		t.Fatal(err)
	}
	return b
}

// rowOf is the table row whose first cell starts with prefix.
func rowOf(t *testing.T, table, prefix string) string {
	t.Helper()
	for _, line := range strings.Split(table, "\n") {
		if strings.HasPrefix(line, "| "+prefix) {
			return line
		}
	}
	t.Fatalf("no row starting %q in:\n%s", prefix, table)
	return ""
}

// wantRow checks that table's row starting with prefix holds each of want.
func wantRow(t *testing.T, table, prefix string, want []string) {
	t.Helper()
	row := rowOf(t, table, prefix)
	for _, w := range want {
		if !strings.Contains(row, w) {
			t.Errorf("row %q lacks %q", row, w)
		}
	}
}

func TestScaleTargetRows(t *testing.T) {
	for _, tc := range []struct {
		name          string
		raw           string
		props, routes []propagation
		row           string // the row's first words
		want          []string
	}{{
		name: "edit to snapshot met",
		raw:  "BenchmarkEditToSnapshot/n=10000-2 \t 5 \t 3100000 ns/op \t 1200000 translate-ns/op \t 1900000 publish-ns/op\n",
		row:  "one change among 10,000 Services", want: []string{"3.10 ms (translate 1.20 ms, publish 1.90 ms)", "| yes |"},
	}, {
		name: "edit to snapshot missed",
		raw:  "BenchmarkEditToSnapshot/n=100000-2 \t 5 \t 980000000 ns/op \t 500000000 translate-ns/op \t 480000000 publish-ns/op\n",
		row:  "one change among 100,000 Services", want: []string{"980.00 ms", "| **no** |"},
	}, {
		name: "edit to snapshot absent",
		raw:  "BenchmarkEditToSnapshot/n=10000-2 \t 5 \t 3100000 ns/op\n",
		row:  "one change among 100,000 Services", want: []string{"not measured in this run", "| — |"},
	}, {
		name: "route change missed",
		raw:  "BenchmarkChangeToSnapshot/route/n=10000-2 \t 20 \t 113000000 ns/op \t 100000000 translate-ns/op \t 13000000 publish-ns/op\n",
		row:  "one HTTPRoute changes among 10,000", want: []string{"113.00 ms (translate 100.00 ms, publish 13.00 ms)", "| **no** |"},
	}, {
		name: "endpoint change met",
		raw:  "BenchmarkChangeToSnapshot/endpoints/n=100000-2 \t 20 \t 200000 ns/op \t 150000 translate-ns/op \t 50000 publish-ns/op\n",
		row:  "one EndpointSlice changes among 100,000", want: []string{"0.20 ms", "| yes |"},
	}, {
		name:  "real Envoy at 10,000 met",
		props: []propagation{{Clusters: 1000, API: "DELTA_GRPC", Edits: 50, P99: 900}, {Clusters: 10000, API: "DELTA_GRPC", Edits: 50, P50: 150, P99: 280}},
		row:   "real delta Envoy, 10,000 clusters", want: []string{"p99 280 ms (p50 150 ms, 50 edits)", "| yes |"},
	}, {
		name:  "real Envoy at 10,000 missed",
		props: []propagation{{Clusters: 10000, API: "DELTA_GRPC", Edits: 50, P99: 1131}},
		row:   "real delta Envoy, 10,000 clusters", want: []string{"p99 1131 ms", "| **no** |"},
	}, {
		name:  "real Envoy stalled",
		props: []propagation{{Clusters: 10000, API: "DELTA_GRPC", Edits: 3, P99: 200, Stalled: "edit 4 of 50 not applied within 10s"}},
		row:   "real delta Envoy, 10,000 clusters", want: []string{"edit 4 of 50 not applied within 10s", "| **no** |"},
	}, {
		name:  "real Envoy only SotW at 10,000",
		props: []propagation{{Clusters: 10000, API: "GRPC", Edits: 50, P99: 100}},
		row:   "real delta Envoy, 10,000 clusters", want: []string{"not measured in this run"},
	}, {
		name:   "route edits met, apart from the policy edits",
		props:  []propagation{{Clusters: 10000, API: "DELTA_GRPC", Edits: 50, P99: 505}},
		routes: []propagation{{Clusters: 10000, API: "DELTA_GRPC", Edits: 50, P50: 160, P99: 240}},
		row:    "real delta Envoy of a Gateway", want: []string{"p99 240 ms (p50 160 ms, 50 edits)", "| yes |"},
	}, {
		name:  "route edits not measured",
		props: []propagation{{Clusters: 10000, API: "DELTA_GRPC", Edits: 50, P99: 200}},
		row:   "real delta Envoy of a Gateway", want: []string{"not measured in this run", "`TestRoutePropagation`"},
	}, {
		name: "SotW fan-out met",
		raw:  "BenchmarkFanout/sotw/streams=1000/clusters=10000-2 \t 3 \t 640000000 ns/op \t 420 server-rss-MiB\n",
		row:  "state-of-the-world fan-out", want: []string{"640 ms, server RSS 420 MiB", "| yes |"},
	}, {
		name: "SotW fan-out over memory",
		raw:  "BenchmarkFanout/sotw/streams=1000/clusters=10000-2 \t 3 \t 640000000 ns/op \t 900 server-rss-MiB\n",
		row:  "state-of-the-world fan-out", want: []string{"server RSS 900 MiB", "| **no** |"},
	}, {
		name: "SotW fan-out smaller than the target",
		raw:  "BenchmarkFanout/sotw/streams=1000/clusters=1000-2 \t 3 \t 2664000000 ns/op \t 300 server-rss-MiB\n",
		row:  "state-of-the-world fan-out", want: []string{"`BenchmarkFanout/sotw/streams=1000/clusters=1000`", "2664 ms", "run smaller than the target's"},
	}, {
		name: "file churn not run",
		raw:  "# not run: BenchmarkEndpointChurn/file/services=10000/rate=200: no such benchmark in e2e/perf\n",
		row:  "endpoint churn, file mode", want: []string{"not run: no such benchmark in e2e/perf", "| — |"},
	}, {
		name: "file churn absent",
		row:  "endpoint churn, file mode", want: []string{"not measured in this run", "`BenchmarkEndpointChurn/file/services=10000/rate=200`"},
	}, {
		name: "kube churn met",
		raw:  "BenchmarkEndpointChurn/kube/services=1000/rate=50-2 \t 1 \t 60000000000 ns/op \t 12.5 tlsplane-cpu-% \t 30.2 apiserver-cpu-% \t 8.1 etcd-cpu-% \t 120 p50-ms \t 250 p99-ms \t 290 max-ms \t 3000 updates \t 3000 applied\n",
		row:  "endpoint churn against the real API server", want: []string{"tlsplane CPU 12.5 %; 3000 of 3000 updates applied; p99 250 ms (p50 120 ms); kube-apiserver CPU 30.2 %, etcd 8.1 %", "| yes |"},
	}, {
		name: "kube churn misses on latency",
		raw:  "BenchmarkEndpointChurn/kube/services=1000/rate=50-2 \t 1 \t 60000000000 ns/op \t 12.5 tlsplane-cpu-% \t 30.2 apiserver-cpu-% \t 600 p50-ms \t 1100 p99-ms \t 3000 updates \t 3000 applied\n",
		row:  "endpoint churn against the real API server", want: []string{"p99 1100 ms", "| **no** |"},
	}, {
		name: "kube churn misses on CPU",
		raw:  "BenchmarkEndpointChurn/kube/services=1000/rate=50-2 \t 1 \t 60000000000 ns/op \t 40 tlsplane-cpu-% \t 120 p50-ms \t 250 p99-ms \t 3000 updates \t 3000 applied\n",
		row:  "endpoint churn against the real API server", want: []string{"tlsplane CPU 40.0 %", "| **no** |"},
	}, {
		name: "kube churn misses an update",
		raw:  "BenchmarkEndpointChurn/kube/services=1000/rate=50-2 \t 1 \t 60000000000 ns/op \t 10 tlsplane-cpu-% \t 120 p50-ms \t 250 p99-ms \t 3000 updates \t 2999 applied\n",
		row:  "endpoint churn against the real API server", want: []string{"2999 of 3000 updates applied", "| **no** |"},
	}, {
		name: "kube churn smaller than the target",
		raw:  "BenchmarkEndpointChurn/kube/services=20/rate=10-2 \t 1 \t 5000000000 ns/op \t 0.8 tlsplane-cpu-% \t 204 p50-ms \t 605 p99-ms \t 50 updates \t 50 applied\n",
		row:  "endpoint churn against the real API server", want: []string{"`BenchmarkEndpointChurn/kube/services=20/rate=10`", "run smaller than the target's 1,000 Services at 50/s"},
	}, {
		name: "100,000 Services measured",
		raw: "BenchmarkTranslate/n=100000-2 \t 10 \t 1124000000 ns/op \t 1300000000 cpu-ns/op\n" +
			"BenchmarkTranslateCold/n=100000-2 \t 10 \t 4100000000 ns/op\n" +
			"BenchmarkTranslateScale/n=100000-2 \t 3 \t 1120000000 ns/op \t 807.2 heap-MiB \t 1380 peak-rss-MiB \t 1380 rss-MiB\n",
		row: "100,000 Services", want: []string{"warm 1124 ms/op (1300 ms CPU); cold 4100 ms/op; live heap 807 MiB, RSS 1380 MiB (peak 1380 MiB)", "| yes |"},
	}, {
		name: "100,000 Services without memory",
		raw:  "BenchmarkTranslate/n=100000-2 \t 10 \t 1124000000 ns/op \t 1300000000 cpu-ns/op\n",
		row:  "100,000 Services", want: []string{"memory not measured", "| **no** |"},
	}, {
		name: "100,000 Services absent",
		raw:  "BenchmarkTranslate/n=10000-2 \t 10 \t 62000000 ns/op\n",
		row:  "100,000 Services", want: []string{"not measured in this run"},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			wantRow(t, scaleTargets(parseRaw(t, tc.raw), tc.props, tc.routes, notRun(tc.raw)), tc.row, tc.want)
		})
	}
}

// Every target of issue 15 has its row, whatever was measured.
func TestScaleTargetsHaveEveryRow(t *testing.T) {
	table := scaleTargets(benchmarks{}, nil, nil, nil)
	for _, prefix := range []string{
		"one change among 1,000 Services", "one change among 10,000 Services", "one change among 100,000 Services",
		"real delta Envoy, 10,000 clusters", "state-of-the-world fan-out", "endpoint churn, file mode",
		"endpoint churn against the real API server", "100,000 Services",
		"one EndpointSlice changes among 10,000", "one EndpointSlice changes among 100,000", "one HTTPRoute changes among 1,000",
		"one HTTPRoute changes among 10,000", "one HTTPRoute changes among 100,000",
		"real delta Envoy of a Gateway, one HTTPRoute edited among 10,000",
	} {
		if row := rowOf(t, table, prefix); !strings.Contains(row, "not measured in this run") {
			t.Errorf("row with nothing measured: %q", row)
		}
	}
	if rows := strings.Count(table, "\n") - 2; rows != 14 {
		t.Errorf("%d rows, want 14:\n%s", rows, table)
	}
}

func TestChurnNamePicksTheLargestRun(t *testing.T) {
	b := parseRaw(t, "BenchmarkEndpointChurn/kube/services=20/rate=10-2 \t 1 \t 1 ns/op\n"+
		"BenchmarkEndpointChurn/kube/services=1000/rate=50-2 \t 1 \t 1 ns/op\n"+
		"BenchmarkEndpointChurn/file/services=10000/rate=200-2 \t 1 \t 1 ns/op\n")
	if name, ok := churnName(b, "kube"); !ok || name != "BenchmarkEndpointChurn/kube/services=1000/rate=50" {
		t.Errorf("churnName(kube) = %q, %v", name, ok)
	}
	if _, ok := churnName(benchmarks{}, "kube"); ok {
		t.Error("churnName found a run in no output")
	}
}

func TestNotRun(t *testing.T) {
	got := notRun("# load average before: 1 2 3\n# not run: BenchmarkEndpointChurn/file/services=10000/rate=200: e2e/perf has no such benchmark \nok\n")
	if len(got) != 1 || got["BenchmarkEndpointChurn/file/services=10000/rate=200"] != "e2e/perf has no such benchmark" {
		t.Errorf("notRun = %q", got)
	}
}

package main

import (
	"fmt"
	"regexp"
	"strings"
)

// notRunLine is how hack/bench.sh records, in the raw output, a benchmark
// it could not run: "# not run: BenchmarkName: why".
var notRunLine = regexp.MustCompile(`(?m)^# not run: (Benchmark\S+): (.*)$`)

// notRun maps each benchmark the raw output says was not run to why.
func notRun(raw string) map[string]string {
	out := map[string]string{}
	for _, m := range notRunLine.FindAllStringSubmatch(raw, -1) {
		out[m[1]] = strings.TrimSpace(m[2])
	}
	return out
}

// targetTable is a markdown table of targets: what, target, measured, met.
type targetTable struct {
	strings.Builder
	// skipped are the benchmarks bench.sh recorded as not run, and why.
	skipped map[string]string
}

func newTargetTable(skipped map[string]string) *targetTable {
	t := &targetTable{skipped: skipped}
	t.WriteString("| what | target | measured | met |\n|---|---|---|---|\n")
	return t
}

func (t *targetTable) measured(what, target, value string, met bool) {
	verdict := "yes"
	if !met {
		verdict = "**no**"
	}
	fmt.Fprintf(&t.Builder, "| %s | %s | %s | %s |\n", what, target, value, verdict)
}

// smaller is a row whose run was smaller than the target's size: its value
// stands, but it cannot meet the target.
func (t *targetTable) smaller(what, target, value, size string) {
	fmt.Fprintf(&t.Builder, "| %s | %s | %s | — (run smaller than the target's %s) |\n", what, target, value, size)
}

// missing is a row with no measurement: never a made-up value. name is the
// benchmark that would have measured it.
func (t *targetTable) missing(what, target, name string) {
	value := "not measured in this run"
	if why, ok := t.skipped[name]; ok {
		value = "not run: " + why
	}
	fmt.Fprintf(&t.Builder, "| %s | %s | %s | — |\n", what, target, value)
}

// scaleTargets renders the targets at scale (issue 15's): a change among
// up to 100,000 Services, fan-out, memory and endpoint churn, one row per
// target.
func scaleTargets(b benchmarks, props, routes []propagation, skipped map[string]string) string {
	t := newTargetTable(skipped)

	for _, n := range []int{1000, 10000, 100000} {
		name := fmt.Sprintf("BenchmarkEditToSnapshot/n=%d", n)
		what := fmt.Sprintf("one change among %s Services → new snapshot set (`%s`: translate + publish)", thousands(n), name)
		v, ok := b.median(name, "ns/op")
		if !ok {
			t.missing(what, "≤ 5 ms", name)
			continue
		}
		tr, _ := b.median(name, "translate-ns/op")
		pu, _ := b.median(name, "publish-ns/op")
		t.measured(what, "≤ 5 ms", fmt.Sprintf("%.2f ms (translate %.2f ms, publish %.2f ms)", v/1e6, tr/1e6, pu/1e6), v <= 5e6)
	}

	for _, c := range []struct {
		name, what string
	}{
		{"BenchmarkChangeToSnapshot/endpoints/n=10000", "one EndpointSlice changes among 10,000 Services → new snapshot set"},
		{"BenchmarkChangeToSnapshot/endpoints/n=100000", "one EndpointSlice changes among 100,000 Services → new snapshot set"},
		{"BenchmarkChangeToSnapshot/route/n=1000", "one HTTPRoute changes among 1,000 behind one Gateway → new snapshot set"},
		{"BenchmarkChangeToSnapshot/route/n=10000", "one HTTPRoute changes among 10,000 behind one Gateway → new snapshot set"},
		{"BenchmarkChangeToSnapshot/route/n=100000", "one HTTPRoute changes among 100,000 behind one Gateway → new snapshot set (beyond the issue's size: one route configuration of 100,000 virtual hosts)"},
	} {
		what := fmt.Sprintf("%s (`%s`)", c.what, c.name)
		v, ok := b.median(c.name, "ns/op")
		if !ok {
			t.missing(what, "≤ 5 ms", c.name)
			continue
		}
		tr, _ := b.median(c.name, "translate-ns/op")
		pu, _ := b.median(c.name, "publish-ns/op")
		t.measured(what, "≤ 5 ms", fmt.Sprintf("%.2f ms (translate %.2f ms, publish %.2f ms)", v/1e6, tr/1e6, pu/1e6), v <= 5e6)
	}

	t.propagationRow("real delta Envoy, 10,000 clusters, 50 edits: edit → applied (`TestPropagation`, default debounce)",
		"TestPropagation", propagationOf(props, 10000, "DELTA_GRPC"))
	t.propagationRow("real delta Envoy of a Gateway, one HTTPRoute edited among 10,000 (10,000 clusters), 50 edits: edit → applied (`TestRoutePropagation`, default debounce)",
		"TestRoutePropagation", propagationOf(routes, 10000, "DELTA_GRPC"))

	name, _ := fanoutName(b, "sotw")
	what := "state-of-the-world fan-out, 1,000 streams × 10,000 clusters: one change reaches all (`" + name + "`)"
	const fanoutTarget = "≤ 1 s, server RSS ≤ 500 MiB"
	v, ok := b.median(name, "ns/op")
	rss, rssOK := b.median(name, "server-rss-MiB")
	switch {
	case !ok:
		t.missing("state-of-the-world fan-out, 1,000 streams × 10,000 clusters: one change reaches all (`BenchmarkFanout/sotw/streams=1000/clusters=10000`)", fanoutTarget, "BenchmarkFanout/sotw/streams=1000/clusters=10000")
	case !fanoutAtTargetSize(name):
		t.smaller(what, fanoutTarget, fmt.Sprintf("%.0f ms, %s", v/1e6, mib(rss, rssOK)), "1,000 streams × 10,000 clusters")
	default:
		t.measured(what, fanoutTarget, fmt.Sprintf("%.0f ms, %s", v/1e6, mib(rss, rssOK)), v <= 1e9 && rssOK && rss <= 500)
	}

	churnRow(t, b, "file", 10000, 200, "endpoint churn, file mode: 10,000 Services, EndpointSlices updated at 200/s for 60 s", 300)
	churnRow(t, b, "kube", 1000, 50, "endpoint churn against the real API server (Kubernetes mode): 1,000 Services, 50 EndpointSlice updates/s for 60 s", 300)

	const scaleWhat = "100,000 Services with policies: warm translate and resident memory (`BenchmarkTranslate/n=100000`, `BenchmarkTranslateScale/n=100000`)"
	const scaleTarget = "measured and reported, with what limits it"
	warm, warmOK := b.median("BenchmarkTranslate/n=100000", "ns/op")
	heap, heapOK := b.median("BenchmarkTranslateScale/n=100000", "heap-MiB")
	if !warmOK && !heapOK {
		t.missing(scaleWhat, scaleTarget, "BenchmarkTranslateScale/n=100000")
	} else {
		var parts []string
		if warmOK {
			cpu, _ := b.median("BenchmarkTranslate/n=100000", "cpu-ns/op")
			parts = append(parts, fmt.Sprintf("warm %.0f ms/op (%.0f ms CPU)", warm/1e6, cpu/1e6))
		} else {
			parts = append(parts, "warm translate not measured")
		}
		if cold, ok := b.median("BenchmarkTranslateCold/n=100000", "ns/op"); ok {
			parts = append(parts, fmt.Sprintf("cold %.0f ms/op", cold/1e6))
		}
		if heapOK {
			rss, _ := b.median("BenchmarkTranslateScale/n=100000", "rss-MiB")
			peak, _ := b.median("BenchmarkTranslateScale/n=100000", "peak-rss-MiB")
			parts = append(parts, fmt.Sprintf("live heap %.0f MiB, RSS %.0f MiB (peak %.0f MiB), inputs included", heap, rss, peak))
		} else {
			parts = append(parts, "memory not measured")
		}
		// The target is the measurement itself; both halves make it.
		t.measured(scaleWhat, scaleTarget, strings.Join(parts, "; "), warmOK && heapOK)
	}
	return t.String()
}

// churnRow is one endpoint-churn target: tlsplane's CPU ≤ 25 % of a core,
// every update applied, p99 update → applied ≤ p99Limit ms.
func churnRow(t *targetTable, b benchmarks, mode string, services, rate int, what string, p99Limit float64) {
	target := fmt.Sprintf("tlsplane CPU ≤ 25 %% of a core; every update applied; p99 ≤ %.0f ms", p99Limit)
	name, found := churnName(b, mode)
	want := fmt.Sprintf("BenchmarkEndpointChurn/%s/services=%d/rate=%d", mode, services, rate)
	if _, ok := b.median(want, "ns/op"); ok {
		name, found = want, true // the row's own size, when it ran beside a larger one
	}
	if !found {
		t.missing(what+" (`"+want+"`)", target, want)
		return
	}
	what += " (`" + name + "`)"
	cpu, cpuOK := b.median(name, "tlsplane-cpu-%")
	p99, p99OK := b.median(name, "p99-ms")
	updates, _ := b.median(name, "updates")
	applied, _ := b.median(name, "applied")
	value := fmt.Sprintf("tlsplane CPU %s; %.0f of %.0f updates applied; p99 %s", percent(cpu, cpuOK), applied, updates, millis(p99, p99OK))
	if p50, ok := b.median(name, "p50-ms"); ok {
		value += fmt.Sprintf(" (p50 %.0f ms)", p50)
	}
	if api, ok := b.median(name, "apiserver-cpu-%"); ok {
		value += fmt.Sprintf("; kube-apiserver CPU %.1f %%", api)
		if etcd, ok := b.median(name, "etcd-cpu-%"); ok {
			value += fmt.Sprintf(", etcd %.1f %%", etcd)
		}
	}
	var s, r int
	if _, err := fmt.Sscanf(strings.TrimPrefix(name, "BenchmarkEndpointChurn/"+mode+"/"), "services=%d/rate=%d", &s, &r); err != nil || s < services || r < rate {
		t.smaller(what, target, value, fmt.Sprintf("%s Services at %d/s", thousands(services), rate))
		return
	}
	t.measured(what, target, value, cpuOK && cpu <= 25 && p99OK && p99 <= p99Limit && updates > 0 && applied == updates)
}

// churnName is the churn benchmark of mode that ran, the largest if
// several did.
func churnName(b benchmarks, mode string) (string, bool) {
	best, bestSize := "", -1
	prefix := "BenchmarkEndpointChurn/" + mode + "/"
	for name := range b {
		if !strings.HasPrefix(name, prefix) {
			continue
		}
		var services, rate int
		fmt.Sscanf(strings.TrimPrefix(name, prefix), "services=%d/rate=%d", &services, &rate)
		if size := services * rate; size > bestSize || (size == bestSize && name < best) {
			best, bestSize = name, size
		}
	}
	return best, bestSize >= 0
}

// propagationOf is the propagation result at that many clusters and api.
func propagationOf(props []propagation, clusters int, api string) *propagation {
	for i := range props {
		if props[i].Clusters == clusters && props[i].API == api {
			return &props[i]
		}
	}
	return nil
}

func thousands(n int) string {
	s := fmt.Sprint(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

func mib(v float64, ok bool) string {
	if !ok {
		return "server RSS not measured"
	}
	return fmt.Sprintf("server RSS %.0f MiB", v)
}

func percent(v float64, ok bool) string {
	if !ok {
		return "not measured"
	}
	return fmt.Sprintf("%.1f %%", v)
}

func millis(v float64, ok bool) string {
	if !ok {
		return "not measured"
	}
	return fmt.Sprintf("%.0f ms", v)
}

// propagationRow is a real Envoy's edit → applied row: p99 ≤ 300 ms over
// 50 edits.
func (t *targetTable) propagationRow(what, test string, p *propagation) {
	switch {
	case p == nil:
		t.missing(what, "p99 ≤ 300 ms", test)
	case p.Stalled != "":
		t.measured(what, "p99 ≤ 300 ms", fmt.Sprintf("%s (p99 %.0f ms over the %d applied before)", p.Stalled, p.P99, p.Edits), false)
	case p.Edits < 50:
		t.smaller(what, "p99 ≤ 300 ms", fmt.Sprintf("p99 %.0f ms over %d edits", p.P99, p.Edits), "50 edits")
	default:
		t.measured(what, "p99 ≤ 300 ms", fmt.Sprintf("p99 %.0f ms (p50 %.0f ms, %d edits)", p.P99, p.P50, p.Edits), p.P99 <= 300)
	}
}

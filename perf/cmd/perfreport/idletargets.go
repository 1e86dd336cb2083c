package main

import (
	"fmt"
	"strings"
)

// Issue 23's targets: an edit reaches a real Envoy as fast as the machine
// allows, measured from the user's action to Envoy applying it.
const (
	kubeIdleTarget = "p50 ≤ 20 ms, p99 ≤ 50 ms"
	dirIdleTarget  = "p50 ≤ 30 ms, p99 ≤ 60 ms"
	// idleKinds are the edits of the idle-world rows, in the order shown.
	idleEditsName = "BenchmarkIdleEdits/kube/services=10000"
	mixedName     = "BenchmarkFanout/mixed/delta=5000/sotw=5000/clusters=10000"
)

var idleKinds = []struct{ key, what string }{
	{"ca", "CA rotation"},
	{"policy", "policy edit"},
	{"endpoint", "EndpointSlice change"},
}

// idleTargets renders the idle-world targets (issue 23's), one row per
// target, then how the idle-world latencies split between tlsplane and the
// rest.
func idleTargets(b benchmarks, props, routes []propagation, skipped map[string]string) string {
	t := newTargetTable(skipped)

	for _, k := range idleKinds {
		what := fmt.Sprintf("Kubernetes mode, real kube-apiserver, 10,000 Services with policies, idle world: %s → applied by a real delta Envoy (`%s`)", k.what, idleEditsName)
		p50, ok50 := b.median(idleEditsName, "p50-"+k.key+"-ms")
		p99, ok99 := b.median(idleEditsName, "p99-"+k.key+"-ms")
		if !ok50 || !ok99 {
			t.missing(what, kubeIdleTarget, idleEditsName)
			continue
		}
		edits, _ := b.median(idleEditsName, "edits-"+k.key)
		t.measured(what, kubeIdleTarget, fmt.Sprintf("p50 %.1f ms, p99 %.1f ms (%.0f edits)", p50, p99, edits), p50 <= 20 && p99 <= 50)
	}

	dir := propagationOf(props, 10000, "DELTA_GRPC")
	for _, k := range idleKinds {
		what := fmt.Sprintf("directory mode, 10,000 Services, idle world: %s (an atomic rename of one file) → applied by a real delta Envoy (`TestPropagation`)", k.what)
		r, ok := kindOf(dir, k.key)
		switch {
		case !ok:
			t.missing(what, dirIdleTarget, "TestPropagation")
		case dir.Stalled != "":
			t.measured(what, dirIdleTarget, dir.Stalled, false)
		default:
			t.measured(what, dirIdleTarget, fmt.Sprintf("p50 %.1f ms, p99 %.1f ms (%d edits)", r.P50, r.P99, r.Edits), r.P50 <= 30 && r.P99 <= 60)
		}
	}

	const routeWhat = "one HTTPRoute edited among 10,000 behind one Gateway, applied by a real delta Envoy (`TestRoutePropagation`)"
	switch r := propagationOf(routes, 10000, "DELTA_GRPC"); {
	case r == nil:
		t.missing(routeWhat, "p99 ≤ 100 ms", "TestRoutePropagation")
	case r.Stalled != "":
		t.measured(routeWhat, "p99 ≤ 100 ms", r.Stalled, false)
	default:
		value := fmt.Sprintf("p99 %.0f ms (p50 %.0f ms, %d edits)", r.P99, r.P50, r.Edits)
		if r.MainThreadP50 > 0 {
			value += fmt.Sprintf("; RDS applied on Envoy's main thread p50 %.0f ms, p99 %.0f ms", r.MainThreadP50, r.MainThreadP99)
		}
		t.measured(routeWhat, "p99 ≤ 100 ms", value, r.P99 <= 100)
	}

	churnRow(t, b, "kube", 10000, 200, "endpoint churn, Kubernetes mode: 10,000 Services, 200 EndpointSlice updates/s for 60 s", 100)

	const route100k = "BenchmarkChangeToSnapshot/route/n=100000"
	what := "one HTTPRoute changed among 100,000 behind one Gateway → snapshot (`" + route100k + "`)"
	if v, ok := b.median(route100k, "ns/op"); ok {
		tr, _ := b.median(route100k, "translate-ns/op")
		pu, _ := b.median(route100k, "publish-ns/op")
		t.measured(what, "≤ 5 ms", fmt.Sprintf("%.2f ms (translate %.2f ms, publish %.2f ms)", v/1e6, tr/1e6, pu/1e6), v <= 5e6)
	} else {
		t.missing(what, "≤ 5 ms", route100k)
	}

	what = "one replica, 5,000 delta and 5,000 state-of-the-world streams (ADS clients over real gRPC) × 10,000 clusters: one change reaches all (`" + mixedName + "`)"
	const mixedTarget = "≤ 1 s each, server RSS ≤ 2 GiB"
	delta, dOK := b.median(mixedName, "delta-last-ms")
	sotw, sOK := b.median(mixedName, "sotw-last-ms")
	rss, rssOK := b.median(mixedName, "server-rss-MiB")
	if !dOK || !sOK {
		t.missing(what, mixedTarget, mixedName)
	} else {
		t.measured(what, mixedTarget, fmt.Sprintf("delta %.0f ms, state of the world %.0f ms, %s", delta, sotw, mib(rss, rssOK)),
			delta <= 1000 && sotw <= 1000 && rssOK && rss <= 2048)
	}

	t.WriteString("\nWhere an idle-world edit's time goes: the p50, tlsplane's means per pass over the run's edits, and the rest (in Kubernetes mode the API server's part, from the call to its watch event reaching a watcher of the benchmark's own, and Envoy's, from tlsplane's publish to Envoy's stamp, each a mean; in directory mode what is left of the p50: the gRPC message and Envoy applying it):\n\n")
	t.WriteString("| row | p50 | tlsplane waiting (debounce) | tlsplane compute (read, translate, publish) | the rest |\n|---|---|---|---|---|\n")
	for _, k := range idleKinds {
		p50, ok := b.median(idleEditsName, "p50-"+k.key+"-ms")
		wait, _ := b.median(idleEditsName, "wait-ms")
		tr, _ := b.median(idleEditsName, "translate-ms")
		pu, _ := b.median(idleEditsName, "publish-ms")
		rest := fmt.Sprintf("%.1f ms", max(p50-wait-tr-pu, 0))
		api, apiOK := b.median(idleEditsName, "delivered-"+k.key+"-ms")
		envoy, envoyOK := b.median(idleEditsName, "envoy-"+k.key+"-ms")
		if apiOK && envoyOK {
			rest = fmt.Sprintf("API server %.1f ms, Envoy %.1f ms", api, envoy)
		}
		splitRow(&t.Builder, "Kubernetes mode, "+k.what, p50, ok, wait, tr+pu, rest)
	}
	for _, k := range idleKinds {
		r, ok := kindOf(dir, k.key)
		var wait, compute float64
		if ok {
			wait, compute = dir.WaitMs, dir.SourceReadMs+dir.TranslateMs+dir.PublishMs
		}
		splitRow(&t.Builder, "directory mode, "+k.what, r.P50, ok, wait, compute, fmt.Sprintf("%.1f ms", max(r.P50-wait-compute, 0)))
	}
	return t.String()
}

// kindOf is one kind's latencies in a propagation result.
func kindOf(p *propagation, kind string) (kindResult, bool) {
	if p == nil {
		return kindResult{}, false
	}
	r, ok := p.ByKind[kind]
	return r, ok && r.Edits > 0
}

// splitRow is one row of the latency split.
func splitRow(b *strings.Builder, what string, p50 float64, ok bool, wait, compute float64, rest string) {
	if !ok {
		fmt.Fprintf(b, "| %s | not measured | — | — | — |\n", what)
		return
	}
	fmt.Fprintf(b, "| %s | %.1f ms | %.2f ms | %.2f ms | %s |\n", what, p50, wait, compute, rest)
}

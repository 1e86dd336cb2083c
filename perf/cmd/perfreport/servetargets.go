package main

import "fmt"

// serveStartTarget is issue 37's for 100,000 Services from a directory.
const serveStartTarget = "ready ≤ 30 s, peak RSS ≤ 2 GiB, steady RSS ≤ 1.2 GiB, one edit → snapshot ≤ 1 ms"

// serveTargets renders issue 37's serve-from-a-directory rows: e2e/perf's
// BenchmarkServeStart at 100,000 Services (the target; hack/bench.sh runs
// it only when asked, since it takes minutes) and at 10,000 (for
// reference, always run).
func serveTargets(b benchmarks, skipped map[string]string) string {
	t := newTargetTable(skipped)
	for _, n := range []int{100000, 10000} {
		name := fmt.Sprintf("BenchmarkServeStart/dir/services=%d", n)
		what := fmt.Sprintf("%s Services from a directory (writeGeneratedManifest's world, a file per Service): `tlsplane serve --dir` started → ready, resident memory, one EndpointSlice edit renamed into place → snapshot set (`%s`)", thousands(n), name)
		target := serveStartTarget
		if n != 100000 {
			target = "— (reference)"
		}
		ready, ok := b.median(name, "ready-s")
		if !ok {
			t.missing(what, target, name)
			continue
		}
		tr, _ := b.median(name, "first-translate-s")
		pu, _ := b.median(name, "first-publish-s")
		peak, _ := b.median(name, "peak-rss-MiB")
		steady, _ := b.median(name, "steady-rss-MiB")
		heap, _ := b.median(name, "heap-inuse-MiB")
		p50, _ := b.median(name, "edit-snapshot-p50-ms")
		most, _ := b.median(name, "edit-snapshot-max-ms")
		mb, _ := b.median(name, "manifest-MB")
		value := fmt.Sprintf("ready %.1f s (first pass: translate %.1f s, publish %.1f s; the rest, %.1f s, is mostly the source's first read); peak RSS %.0f MiB; steady RSS %.0f MiB (Go heap in use %.0f MiB); edit → snapshot p50 %.2f ms, max %.2f ms; %.0f MB of manifests",
			ready, tr, pu, ready-tr-pu, peak, steady, heap, p50, most, mb)
		if n != 100000 {
			fmt.Fprintf(&t.Builder, "| %s | %s | %s | — |\n", what, target, value)
			continue
		}
		t.measured(what, target, value, ready <= 30 && peak <= 2048 && steady <= 1.2*1024 && p50 <= 1)
	}
	return t.String()
}

package main

import "testing"

func TestServeTargetRows(t *testing.T) {
	for _, tc := range []struct {
		name, raw string
		skipped   map[string]string
		row       string
		want      []string
	}{{
		name: "100,000 met",
		raw:  "BenchmarkServeStart/dir/services=100000-2 \t 1 \t 2500 ns/op \t 0.61 edit-snapshot-p50-ms \t 0.9 edit-snapshot-max-ms \t 3.1 first-publish-s \t 0 first-read-s \t 9.5 first-translate-s \t 800 heap-inuse-MiB \t 217.8 manifest-MB \t 1900 peak-rss-MiB \t 28.2 ready-s \t 1100 steady-rss-MiB\n",
		row:  "100,000 Services from a directory",
		want: []string{"ready 28.2 s (first pass: translate 9.5 s, publish 3.1 s; the rest, 15.6 s, is mostly the source's first read)", "peak RSS 1900 MiB", "steady RSS 1100 MiB", "p50 0.61 ms", "| yes |"},
	}, {
		name: "100,000 missed on memory alone",
		raw:  "BenchmarkServeStart/dir/services=100000-2 \t 1 \t 2500 ns/op \t 0.61 edit-snapshot-p50-ms \t 0.9 edit-snapshot-max-ms \t 3.1 first-publish-s \t 9.5 first-translate-s \t 2100 peak-rss-MiB \t 28.2 ready-s \t 1100 steady-rss-MiB\n",
		row:  "100,000 Services from a directory",
		want: []string{"peak RSS 2100 MiB", "| **no** |"},
	}, {
		name:    "100,000 not asked for",
		raw:     "BenchmarkServeStart/dir/services=10000-2 \t 1 \t 2500 ns/op \t 11.4 ready-s\n",
		skipped: map[string]string{"BenchmarkServeStart/dir/services=100000": "opt-in: SERVE_START=1 make bench"},
		row:     "100,000 Services from a directory",
		want:    []string{"not run: opt-in: SERVE_START=1 make bench", "| — |"},
	}, {
		name: "10,000 is a reference",
		raw:  "BenchmarkServeStart/dir/services=10000-2 \t 1 \t 2500 ns/op \t 11.4 ready-s \t 441 peak-rss-MiB\n",
		row:  "10,000 Services from a directory",
		want: []string{"| — (reference) |", "ready 11.4 s", "peak RSS 441 MiB", "| — |"},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			wantRow(t, serveTargets(parseRaw(t, tc.raw), tc.skipped), tc.row, tc.want)
		})
	}
}

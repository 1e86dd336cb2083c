#!/usr/bin/env bash
# hack/bench.sh — `make bench`: runs every performance measurement of issue 6
# and writes docs/performance.md, with docs/performance.png and what it was
# made from: docs/performance-raw.txt (benchstat's format),
# docs/performance-propagation.json and docs/performance-machine.txt.
#
# Variables (defaults are the issue's targets):
#   COUNT                 benchmark repetitions (-count), for benchstat
#   PERF_COUNT, PERF_BENCHTIME  the same for perf's EditToSnapshot and Publish
#   FANOUT_STREAMS        simulated Envoys of BenchmarkFanout
#   FANOUT_CLUSTERS       clusters of BenchmarkFanout, delta xDS
#   FANOUT_SOTW_CLUSTERS  clusters of BenchmarkFanout, state of the world
#                         (default 10,000, the issue's size: SotW is served
#                         from the same feeds and shared encodings as delta)
#   PROPAGATION_CLUSTERS  real-Envoy cluster counts, comma-separated
#   PROPAGATION_EDITS     edits per cluster count
#   ENVOY_BIN             Envoy 1.40 (make envoy installs one)
# Everything runs on loopback; every wait is bounded.
set -euo pipefail

cd "$(dirname "$0")/.."
root=$PWD
GO=${GO:-go}
COUNT=${COUNT:-3}
PERF_COUNT=${PERF_COUNT:-$COUNT}
PERF_BENCHTIME=${PERF_BENCHTIME:-5x}
FANOUT_STREAMS=${FANOUT_STREAMS:-1000}
FANOUT_CLUSTERS=${FANOUT_CLUSTERS:-10000}
FANOUT_SOTW_CLUSTERS=${FANOUT_SOTW_CLUSTERS:-10000}
PROPAGATION_CLUSTERS=${PROPAGATION_CLUSTERS:-100,1000,10000}
PROPAGATION_EDITS=${PROPAGATION_EDITS:-50}
ENVOY_BIN=${ENVOY_BIN:-$PWD/.venv/bin/envoy}

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
raw=$work/raw.txt
: >"$raw"

load() { cut -d' ' -f1-3 /proc/loadavg; }
note() { echo "== $*" >&2; }

{
	echo "cores (nproc): $(nproc)"
	echo "memory: $(awk '/MemTotal/ {printf "%.1f GiB", $2/1048576}' /proc/meminfo)"
	echo "cpu: $(awk -F': ' '/model name/ {print $2; exit}' /proc/cpuinfo)"
	echo "kernel: $(uname -sr)"
	echo "go: $($GO env GOVERSION)"
	echo "envoy: $("$ENVOY_BIN" --version 2>/dev/null | grep -o 'version: [^ ]*' | head -1 || echo unknown)"
	echo "date: $(date -u +%Y-%m-%dT%H:%MZ)"
	echo "load average at start: $(load)"
} >"$work/machine.txt"

# bench PKGDIR PATTERN BENCHTIME [ARGS...]: one go test -bench run, its
# output appended to the raw file with the load average before and after.
bench() {
	local dir=$1 pattern=$2 benchtime=$3
	shift 3
	note "go test -bench '$pattern' $dir (load $(load))"
	echo "# load average before: $(load)" >>"$raw"
	$GO test "$dir" -run '^$' -bench "$pattern" -benchmem -count "$COUNT" -benchtime "$benchtime" -timeout 60m "$@" | tee -a "$raw" >&2
	echo "# load average after: $(load)" >>"$raw"
}

bench ./translator 'BenchmarkTranslate$|BenchmarkTranslateCold$|BenchmarkRetranslate$' 10x
COUNT=$PERF_COUNT bench ./perf 'BenchmarkEditToSnapshot$|BenchmarkPublish$' "$PERF_BENCHTIME"
COUNT=1 bench ./perf 'BenchmarkFanout/delta' 3x -args -fanout.streams="$FANOUT_STREAMS" -fanout.clusters="$FANOUT_CLUSTERS"
COUNT=1 bench ./perf 'BenchmarkFanout/sotw' 3x -args -fanout.streams="$FANOUT_STREAMS" -fanout.clusters="$FANOUT_SOTW_CLUSTERS"
# Issue 16: the metrics service's cost per stats flush at 10,000 clusters:
# decoding one Envoy's report, and 100 Envoys' reports tracked and applied.
bench ./xds 'BenchmarkClusterCounters$' 10x
COUNT=1 bench ./handshakes 'BenchmarkStatsFlush$' 3x
echo "load average after the benchmarks: $(load)" >>"$work/machine.txt"
cp "$raw" docs/performance-raw.txt

note "real Envoy propagation: $PROPAGATION_CLUSTERS clusters (load $(load))"
$GO build -o "$work/tlsplane" ./cmd/tlsplane
(cd e2e && TLSPLANE_BIN="$work/tlsplane" ENVOY_BIN="$ENVOY_BIN" $GO test ./perf -run '^TestPropagation$' -count=1 -timeout 60m -v \
	-args -perf.propagation -perf.clusters="$PROPAGATION_CLUSTERS" -perf.edits="$PROPAGATION_EDITS" -perf.out="$root/docs/performance-propagation.json") >&2
(cd e2e && $GO run ./perf/plot -in ../docs/performance-propagation.json -out ../docs/performance.png)

cp "$work/machine.txt" docs/performance-machine.txt
# perfreport alone re-renders the document from these files.
$GO run ./perf/cmd/perfreport -out docs/performance.md -machine docs/performance-machine.txt \
	-propagation docs/performance-propagation.json -notes perf/analysis.md \
	-reproduce "make bench  # COUNT=$COUNT FANOUT_STREAMS=$FANOUT_STREAMS FANOUT_CLUSTERS=$FANOUT_CLUSTERS FANOUT_SOTW_CLUSTERS=$FANOUT_SOTW_CLUSTERS PROPAGATION_CLUSTERS=$PROPAGATION_CLUSTERS PROPAGATION_EDITS=$PROPAGATION_EDITS" \
	docs/performance-raw.txt
note "wrote docs/performance.md, docs/performance.png, docs/performance-{raw.txt,propagation.json,machine.txt}"

#!/usr/bin/env bash
# hack/bench.sh — `make bench`: runs every performance measurement of issues
# 6 and 15 and writes docs/performance.md, with docs/performance.png and what
# it was made from: docs/performance-raw.txt (benchstat's format),
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
#   PROPAGATION_EDITS     edits per cluster count (and of the route edits)
#   ROUTE_SERVICES        Services, each with an HTTPRoute, behind the one
#                         Gateway of the real-Envoy route edits
#   SCALE_BENCHTIME       iterations of BenchmarkTranslateScale (100,000
#                         Services: warm translate, heap and RSS)
#   CHURN_KUBE_SERVICES, CHURN_KUBE_RATE, CHURN_KUBE_DURATION
#                         endpoint churn in Kubernetes mode (e2e/perf/kubechurn):
#                         Services, EndpointSlice updates per second, how long
#   CHURN_FILE_ARGS       -args for the file-mode churn (e2e/perf), its
#                         defaults being the issue's when empty
#   CHURN_KUBE23_SERVICES, CHURN_KUBE23_RATE
#                         issue 23's endpoint churn in Kubernetes mode
#   IDLE_SERVICES, IDLE_EDITS
#                         issue 23's idle-world edits in Kubernetes mode
#                         (e2e/perf/kubechurn): Services, edits (a third
#                         each: CA rotation, policy edit, EndpointSlice)
#   MIXED_DELTA, MIXED_SOTW
#                         issue 23's one-replica fan-out: delta and SotW
#                         streams at once, 10,000 clusters
#   SERVE_START           set (SERVE_START=1): also issue 37's 100,000
#                         Services served from a directory (e2e/perf
#                         BenchmarkServeStart: about 4 minutes, 5 GiB free
#                         memory); its 10,000 row always runs
#   STORM                 set (STORM=1): also issue 37's reconnect storm
#                         (perf BenchmarkReconnectStorm: 1,000 streams at
#                         once, 10,000 clusters; 8-10 GiB for its clients)
#   ENVOY_BIN             Envoy 1.40 (make envoy installs one)
# Prerequisites are built as make builds them (make envoy kube-apiserver,
# and tlsplane as make build does); a missing one stops the run at once.
# An end-to-end benchmark that fails or does not exist is recorded in the
# raw output as "# not run: NAME: why" and the run goes on.
# Everything runs on loopback; every wait is bounded.
set -euo pipefail

cd "$(dirname "$0")/.."
root=$PWD
GO=${GO:-go}
COUNT=${COUNT:-3}
PERF_COUNT=${PERF_COUNT:-$COUNT}
PERF_BENCHTIME=${PERF_BENCHTIME:-20x}
FANOUT_STREAMS=${FANOUT_STREAMS:-1000}
FANOUT_CLUSTERS=${FANOUT_CLUSTERS:-10000}
FANOUT_SOTW_CLUSTERS=${FANOUT_SOTW_CLUSTERS:-10000}
PROPAGATION_CLUSTERS=${PROPAGATION_CLUSTERS:-100,1000,10000}
PROPAGATION_EDITS=${PROPAGATION_EDITS:-60}
ROUTE_SERVICES=${ROUTE_SERVICES:-10000}
SCALE_BENCHTIME=${SCALE_BENCHTIME:-3x}
CHURN_KUBE_SERVICES=${CHURN_KUBE_SERVICES:-1000}
CHURN_KUBE_RATE=${CHURN_KUBE_RATE:-50}
CHURN_KUBE_DURATION=${CHURN_KUBE_DURATION:-60s}
CHURN_FILE_ARGS=${CHURN_FILE_ARGS:-}
CHURN_KUBE23_SERVICES=${CHURN_KUBE23_SERVICES:-10000}
CHURN_KUBE23_RATE=${CHURN_KUBE23_RATE:-200}
IDLE_SERVICES=${IDLE_SERVICES:-10000}
IDLE_EDITS=${IDLE_EDITS:-150}
MIXED_DELTA=${MIXED_DELTA:-5000}
MIXED_SOTW=${MIXED_SOTW:-5000}
ENVOY_BIN=${ENVOY_BIN:-$PWD/.venv/bin/envoy}
export ENVOY_BIN

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
raw=$work/raw.txt
: >"$raw"

load() { cut -d' ' -f1-3 /proc/loadavg; }
note() { echo "== $*" >&2; }
fail() { echo "bench: $*" >&2; exit 1; }

# Prerequisites, the way make builds them, before anything is measured.
note "prerequisites: make envoy kube-apiserver, and tlsplane"
${MAKE:-make} --no-print-directory envoy kube-apiserver >&2 ||
	fail "make envoy kube-apiserver failed: the end-to-end benchmarks need Envoy 1.40 (or ENVOY_BIN) and the API server's binaries in e2e/.cache/bin"
"$ENVOY_BIN" --version >/dev/null 2>&1 || fail "ENVOY_BIN=$ENVOY_BIN does not run"
for b in etcd kube-apiserver; do
	[[ -x e2e/.cache/bin/$b ]] || fail "e2e/.cache/bin/$b missing after make kube-apiserver"
done
$GO build -buildvcs=auto -o "$work/tlsplane" ./cmd/tlsplane || fail "go build ./cmd/tlsplane failed"

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

# e2e_bench NAME PKGDIR PATTERN [ARGS...]: one end-to-end benchmark run in
# e2e/ (one iteration: each is minutes of real processes), appended to the
# raw file like bench's. NAME is the benchmark the issue's table reads: if
# the run fails or prints no result for it, the raw file says "# not run"
# and why, and the report shows that instead of a value.
e2e_bench() {
	local name=$1 dir=$2 pattern=$3 out rc=0
	shift 3
	out=$work/e2e-bench.txt
	note "cd e2e && go test -bench '$pattern' $dir (load $(load))"
	echo "# load average before: $(load)" >>"$raw"
	(cd e2e && TLSPLANE_BIN="$work/tlsplane" ENVOY_BIN="$ENVOY_BIN" $GO test "$dir" -run '^$' -bench "$pattern" \
		-benchtime 1x -count 1 -timeout 30m "$@") >"$out" 2>&1 || rc=$?
	tee -a "$raw" <"$out" >&2
	echo "# load average after: $(load)" >>"$raw"
	if [[ $rc -ne 0 ]]; then
		echo "# not run: $name: go test exited $rc (its output is above)" >>"$raw"
	elif ! grep -q "^${pattern}" "$out"; then
		echo "# not run: $name: $dir has no benchmark matching $pattern" >>"$raw"
	fi
}

bench ./translator 'BenchmarkTranslate$|BenchmarkTranslateCold$|BenchmarkRetranslate$' 10x
COUNT=$PERF_COUNT bench ./perf 'BenchmarkEditToSnapshot$|BenchmarkChangeToSnapshot$|BenchmarkPublish$' "$PERF_BENCHTIME"
COUNT=1 bench ./perf 'BenchmarkFanout/delta' 3x -args -fanout.streams="$FANOUT_STREAMS" -fanout.clusters="$FANOUT_CLUSTERS"
COUNT=1 bench ./perf 'BenchmarkFanout/sotw' 3x -args -fanout.streams="$FANOUT_STREAMS" -fanout.clusters="$FANOUT_SOTW_CLUSTERS"
# Issue 23: one replica, delta and SotW streams at once.
COUNT=1 bench ./perf 'BenchmarkFanout/mixed' 3x -args -fanout.mixed.delta="$MIXED_DELTA" -fanout.mixed.sotw="$MIXED_SOTW" -fanout.clusters=10000
# The mesh's costs (issue 39): a route edit among 1,000 Services in 50 mesh
# fleets, then fanned out to 1,000 simulated sidecars.
COUNT=1 bench ./perf 'BenchmarkMeshChange/route/n=1000$' 20x
COUNT=1 bench ./perf 'BenchmarkMeshFanout' 10x
# Issue 37: 1,000 streams dialling one server at once at 10,000 clusters.
# Its client process takes 8-10 GiB and most of both cores, so it is asked for.
if [[ -n ${STORM:-} ]]; then
	COUNT=1 bench ./perf 'BenchmarkReconnectStorm' 1x -args -fanout.clusters=10000 -storm.streams=1000
else
	echo "# not run: BenchmarkReconnectStorm/streams=1000: opt-in, 10 GiB: STORM=1 make bench" >>"$raw"
fi
# Issue 16: the metrics service's cost per stats flush at 10,000 clusters:
# decoding one Envoy's report, and 100 Envoys' reports tracked and applied.
bench ./xds 'BenchmarkClusterCounters$' 10x
COUNT=1 bench ./handshakes 'BenchmarkStatsFlush$' 3x
# Issue 15: 100,000 Services' memory, in a process of its own (resident
# memory counts whatever ran before in the same process).
COUNT=1 bench ./perf 'BenchmarkTranslateScale$' "$SCALE_BENCHTIME"
# Issue 15: endpoint churn, file mode (e2e/perf) and Kubernetes mode against
# a real kube-apiserver (e2e/perf/kubechurn), each with a real delta Envoy.
# shellcheck disable=SC2086 # CHURN_FILE_ARGS is a list of arguments
e2e_bench BenchmarkEndpointChurn/file/services=10000/rate=200 ./perf 'BenchmarkEndpointChurn/file' ${CHURN_FILE_ARGS:+-args $CHURN_FILE_ARGS}
e2e_bench "BenchmarkEndpointChurn/kube/services=$CHURN_KUBE_SERVICES/rate=$CHURN_KUBE_RATE" ./perf/kubechurn 'BenchmarkEndpointChurn/kube' \
	-args -churn.services="$CHURN_KUBE_SERVICES" -churn.rate="$CHURN_KUBE_RATE" -churn.duration="$CHURN_KUBE_DURATION"
# Issue 23: idle-world edits against a real kube-apiserver (one at a time,
# a quiet spell before each), and endpoint churn at 10,000 Services.
e2e_bench "BenchmarkIdleEdits/kube/services=$IDLE_SERVICES" ./perf/kubechurn 'BenchmarkIdleEdits/kube' \
	-args -churn.services="$IDLE_SERVICES" -idle.edits="$IDLE_EDITS"
e2e_bench "BenchmarkEndpointChurn/kube/services=$CHURN_KUBE23_SERVICES/rate=$CHURN_KUBE23_RATE" ./perf/kubechurn 'BenchmarkEndpointChurn/kube' \
	-args -churn.services="$CHURN_KUBE23_SERVICES" -churn.rate="$CHURN_KUBE23_RATE" -churn.duration="$CHURN_KUBE_DURATION"
# Issue 37: Kubernetes-mode cold start: 10,000 policies' first statuses
# against a real API server with priority and fairness on, and another
# client's latency meanwhile.
e2e_bench BenchmarkKubeColdStart/kube/services=10000 ./perf/kubechurn 'BenchmarkKubeColdStart' -args -coldstart.services=10000
# Issue 37: the real `tlsplane serve --dir` over writeGeneratedManifest's
# world, a file per Service: ready, resident memory, edit → snapshot. The
# 100,000-Service run takes minutes and GiBs, so it is asked for.
e2e_bench BenchmarkServeStart/dir/services=10000 ./perf 'BenchmarkServeStart' -args -servestart.services=10000
if [[ -n ${SERVE_START:-} ]]; then
	e2e_bench BenchmarkServeStart/dir/services=100000 ./perf 'BenchmarkServeStart' -args -servestart.services=100000
else
	echo "# not run: BenchmarkServeStart/dir/services=100000: opt-in, minutes: SERVE_START=1 make bench" >>"$raw"
fi
# Issue 37: an edit renamed into place while the directory's walk runs,
# rename → the delta response carrying it (source, pipeline, snapshots and
# xDS in process; walks back to back, and the product's one-minute resync).
note "cd e2e && go test ./perf -run TestEditsDuringResync (load $(load))"
(cd e2e && $GO test ./perf -run '^TestEditsDuringResync$' -count 1 -v -timeout 30m -args -perf.resyncedits \
	-perf.resyncedits.services 10000,100000 -perf.resyncedits.resync 1ms,1m -perf.resyncedits.edits 200) 2>&1 | tee -a "$raw" >&2 || \
	echo "# not run: TestEditsDuringResync failed (its output is above)" >>"$raw"
# Issue 38: serve --dir's first read of 10,000 Services' world, its Gateway
# API objects admitted against the experimental CRDs, and the same read
# unadmitted (the difference is admission's share); one object's admission
# per channel and kind.
COUNT=1 bench ./dirsource 'BenchmarkReadAdmittedWorld$' 1x
bench ./crds 'BenchmarkAdmit$' 2s
echo "load average after the benchmarks: $(load)" >>"$work/machine.txt"
cp "$raw" docs/performance-raw.txt

note "real Envoy propagation: $PROPAGATION_CLUSTERS clusters (load $(load))"
(cd e2e && TLSPLANE_BIN="$work/tlsplane" ENVOY_BIN="$ENVOY_BIN" $GO test ./perf -run '^TestPropagation$' -count=1 -timeout 60m -v \
	-args -perf.propagation -perf.clusters="$PROPAGATION_CLUSTERS" -perf.edits="$PROPAGATION_EDITS" -perf.out="$root/docs/performance-propagation.json") >&2
$GO run ./perf/cmd/perfplot -in docs/performance-propagation.json -out docs/performance.png
note "real Envoy of a Gateway: one HTTPRoute edited among $ROUTE_SERVICES (load $(load))"
rm -f docs/performance-routes.json
(cd e2e && TLSPLANE_BIN="$work/tlsplane" ENVOY_BIN="$ENVOY_BIN" $GO test ./perf -run '^TestRoutePropagation$' -count=1 -timeout 30m -v \
	-args -perf.routes -perf.routes.n="$ROUTE_SERVICES" -perf.edits="$PROPAGATION_EDITS" -perf.routes.out="$root/docs/performance-routes.json") >&2 ||
	echo "bench: TestRoutePropagation failed; its row says it was not measured" >&2

cp "$work/machine.txt" docs/performance-machine.txt
# perfreport alone re-renders the document from these files.
$GO run ./perf/cmd/perfreport -out docs/performance.md -machine docs/performance-machine.txt \
	-propagation docs/performance-propagation.json -routes docs/performance-routes.json -notes perf/analysis.md \
	-reproduce "make bench  # COUNT=$COUNT FANOUT_STREAMS=$FANOUT_STREAMS FANOUT_CLUSTERS=$FANOUT_CLUSTERS FANOUT_SOTW_CLUSTERS=$FANOUT_SOTW_CLUSTERS PROPAGATION_CLUSTERS=$PROPAGATION_CLUSTERS PROPAGATION_EDITS=$PROPAGATION_EDITS ROUTE_SERVICES=$ROUTE_SERVICES CHURN_KUBE_SERVICES=$CHURN_KUBE_SERVICES CHURN_KUBE_RATE=$CHURN_KUBE_RATE CHURN_KUBE_DURATION=$CHURN_KUBE_DURATION CHURN_KUBE23_SERVICES=$CHURN_KUBE23_SERVICES CHURN_KUBE23_RATE=$CHURN_KUBE23_RATE IDLE_SERVICES=$IDLE_SERVICES IDLE_EDITS=$IDLE_EDITS MIXED_DELTA=$MIXED_DELTA MIXED_SOTW=$MIXED_SOTW${SERVE_START:+ SERVE_START=$SERVE_START}${CHURN_FILE_ARGS:+ CHURN_FILE_ARGS='$CHURN_FILE_ARGS'}" \
	docs/performance-raw.txt
note "wrote docs/performance.md, docs/performance.png, docs/performance-{raw.txt,propagation.json,routes.json,machine.txt}"

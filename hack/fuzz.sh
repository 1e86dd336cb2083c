#!/usr/bin/env bash
# Runs every fuzz target for FUZZTIME each (go test -fuzz takes one target
# per package and invocation). New failing inputs are written to
# <package>/testdata/fuzz/<target>/; a failure stops the run.
#   FUZZTIME          per target, a duration or a count of executions Nx
#                     (default 2m; `make fuzz-short` uses 3000x: see the
#                     Makefile for why a count)
#   FUZZMINIMIZETIME  spent minimizing each new input (default 5s: the
#                     default 60s would take most of a short run)
#   FUZZPARALLEL      fuzzing workers (default: GOMAXPROCS)
set -euo pipefail
cd "$(dirname "$0")/.."

GO=${GO:-go}
FUZZTIME=${FUZZTIME:-2m}
FUZZMINIMIZETIME=${FUZZMINIMIZETIME:-5s}

# package target
targets=(
	"./translator FuzzTranslate"
	"./manifests FuzzReadManifests"
)

parallel=()
if [[ -n "${FUZZPARALLEL:-}" ]]; then
	parallel=(-parallel "$FUZZPARALLEL")
fi

for t in "${targets[@]}"; do
	read -r pkg name <<<"$t"
	echo "== $name ($pkg) for $FUZZTIME"
	"$GO" test -run '^$' -fuzz "^${name}\$" -fuzztime "$FUZZTIME" \
		-fuzzminimizetime "$FUZZMINIMIZETIME" "${parallel[@]}" "$pkg"
done

#!/usr/bin/env bash
# Runs every fuzz target for FUZZTIME each (go test -fuzz takes one target
# per package and invocation). New failing inputs are written to
# <package>/testdata/fuzz/<target>/; every target runs, then a summary,
# and the script fails if one did.
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
	"./manifests FuzzBlockYAMLToJSON"
	"./translator/plan FuzzNamesInjective"
	"./snapshots FuzzTenantFaultStaysWithItsObjects"
)

parallel=()
if [[ -n "${FUZZPARALLEL:-}" ]]; then
	parallel=(-parallel "$FUZZPARALLEL")
fi

# Every target runs even after a failure; the summary lists each, and the
# script fails if any did.
summary=() passed=0 failed=0
for t in "${targets[@]}"; do
	read -r pkg name <<<"$t"
	echo "== $name ($pkg) for $FUZZTIME"
	start=$(date +%s)
	# The instrumented build prints nothing for minutes the first time.
	if hack/progress.sh "building and fuzzing $name" "the first time about 2.5 minutes, mostly the instrumented build; 10 to 20 s after" \
		"$GO" test -run '^$' -fuzz "^${name}\$" -fuzztime "$FUZZTIME" \
		-fuzzminimizetime "$FUZZMINIMIZETIME" "${parallel[@]}" "$pkg"; then
		summary+=("PASS $name ($pkg, $(( $(date +%s) - start ))s)") passed=$((passed + 1))
	else
		summary+=("FAIL $name ($pkg, $(( $(date +%s) - start ))s; new failing inputs go to $pkg/testdata/fuzz/$name/)") failed=$((failed + 1))
	fi
done
echo
echo "=== fuzz for $FUZZTIME per target: per-target summary"
printf '%s\n' "${summary[@]}"
echo "$passed passed, $failed failed"
[[ $failed -eq 0 ]]

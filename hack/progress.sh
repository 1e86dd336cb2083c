#!/usr/bin/env bash
# Runs a command that can be silent for minutes, and says it is still
# working: a line every ${PROGRESS_EVERY:-25} seconds, from the first such
# interval on, so a fast run prints nothing more (and a slow one is never
# silent for more than 30 s).
#   hack/progress.sh "building bin/tlsplane" "about 2 minutes the first time" go build ...
# Exits with the command's status.
set -uo pipefail
what=$1 estimate=$2
shift 2
every=${PROGRESS_EVERY:-25}
start=$(date +%s)
"$@" &
pid=$!
(
	# sleep must not hold our stdout: killed with the ticker it lives on,
	# and a pipe reading this (make test | tee) would wait for it.
	while sleep "$every" >/dev/null 2>&1 </dev/null; do
		kill -0 "$pid" 2>/dev/null || exit 0
		echo "... still $what: $(( $(date +%s) - start ))s so far ($estimate)"
	done
) &
ticker=$!
wait "$pid"
status=$?
kill "$ticker" 2>/dev/null
wait "$ticker" 2>/dev/null
exit "$status"

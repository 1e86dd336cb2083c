#!/usr/bin/env bash
# Proves that `make test` leaves the checkout as it found it: every tracked
# file unchanged, no new file outside the git-ignored folders.
#   hack/tree-state.sh save FILE    records each changed or untracked path
#                                   (not ignored) with its content's sha256
#   hack/tree-state.sh check FILE   compares with now and lists what differs;
#                                   fails under CI=true, else only warns
# A file edited by hand while the tests run shows up too; the message says so.
# Outside a git checkout (a tarball) it does nothing.
set -euo pipefail
cd "$(dirname "$0")/.."

state() {
	git status --porcelain=v1 -z --untracked-files=all | while IFS= read -r -d '' entry; do
		xy=${entry:0:2} path=${entry:3}
		# A staged rename or copy is followed by its source path.
		[[ $xy == R* || $xy == C* ]] && IFS= read -r -d '' _
		sum=absent
		[[ -f $path ]] && sum=$(sha256sum <"$path" | cut -d' ' -f1)
		printf '%s\t%s %s\n' "$path" "$xy" "$sum"
	done | sort
}

git rev-parse --is-inside-work-tree >/dev/null 2>&1 || exit 0
case "${1:-}" in
save)
	mkdir -p "$(dirname "$2")"
	state >"$2"
	;;
check)
	[[ -f $2 ]] || { echo "tree-state: no saved state in $2" >&2; exit 1; }
	changed=$(diff "$2" <(state) | sed -n 's/^[<>] //p' | cut -f1 | sort -u || true)
	if [[ -z $changed ]]; then
		echo "tree: unchanged by the run (git status as before, no new untracked file)"
		exit 0
	fi
	echo "tree: these paths changed during the run (by the tests, or by an edit made meanwhile); the tests must write only to git-ignored folders:"
	while IFS= read -r path; do
		echo "  $(git status --short -- "$path" | cut -c1-2) $path"
	done <<<"$changed"
	if [[ ${CI:-} == true ]]; then
		echo "FAIL: CI=true and the run changed the tree"
		exit 1
	fi
	;;
*)
	echo "usage: hack/tree-state.sh save|check FILE" >&2
	exit 2
	;;
esac

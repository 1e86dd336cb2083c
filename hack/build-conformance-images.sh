#!/usr/bin/env bash
# Builds the binaries behind the container images of the Gateway API
# conformance suite's base manifests, for the e2e node agent to run as
# Pods, into the git-ignored e2e/.cache/bin/images: echo-basic from the
# suite's own module (the version e2e/go.mod pins) and CoreDNS from
# e2e/cmd/coredns. A stamp file makes a second run cost nothing.
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
out="$root/e2e/.cache/bin/images"
go="${GO:-go}"
mkdir -p "$out"

stamp="$( { cat "$root/e2e/go.mod" "$root/e2e/go.sum" "$root/e2e/cmd/coredns/go.mod" "$root/e2e/cmd/coredns/go.sum" \
  "$root/e2e/cmd/coredns/main.go" "$0"; "$go" version; } | sha256sum | cut -d' ' -f1)"
if [[ -x "$out/echo-basic" && -x "$out/coredns" && -f "$out/stamp" && "$(cat "$out/stamp")" == "$stamp" ]]; then
  echo "conformance images (echo-basic, coredns) are up to date in $out"
  exit 0
fi
rm -f "$out/stamp"
echo "building echo-basic (sigs.k8s.io/gateway-api/conformance) into $out (about a minute the first time)"
(cd "$root/e2e" && CGO_ENABLED=0 "$root/hack/progress.sh" "building echo-basic" "about a minute the first time" "$go" build -trimpath -ldflags "-s -w" -o "$out/echo-basic" sigs.k8s.io/gateway-api/conformance/echo-basic)
echo "building coredns (errors, log, forward, whoami) into $out (about a minute the first time)"
(cd "$root/e2e/cmd/coredns" && CGO_ENABLED=0 "$root/hack/progress.sh" "building coredns" "about a minute the first time" "$go" build -trimpath -ldflags "-s -w" -o "$out/coredns" .)
echo "$stamp" > "$out/stamp"

#!/usr/bin/env bash
# Builds Prometheus's promtool (github.com/prometheus/prometheus/cmd/promtool,
# the version e2e/cmd/promtool/go.mod pins) into the git-ignored
# e2e/.cache/bin, for `make e2e-monitoring` to unit-test the chart's
# alerting rules with `promtool test rules`. A module of its own, so its
# dependency versions never leak. A stamp file records what was built
# (module pins + Go version), so a second run costs nothing.
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
mod="$root/e2e/cmd/promtool"
bin="$root/e2e/.cache/bin"
go="${GO:-go}"
mkdir -p "$bin"

stamp="$( { cat "$mod/go.mod" "$mod/go.sum" "$0"; "$go" version; } | sha256sum | cut -d' ' -f1)"
module_version="$(awk '$1 == "require" && $2 == "github.com/prometheus/prometheus" {print $3; exit} $1 == "github.com/prometheus/prometheus" {print $2; exit}' "$mod/go.mod")"
# The module's v0.MMM.P is Prometheus M.MM.P (v0.314.0 is 3.14.0).
minor="$(echo "$module_version" | cut -d. -f2)"
patch="$(echo "$module_version" | cut -d. -f3)"
version="${minor:0:1}.$((10#${minor:1})).$patch"

if [[ -x "$bin/promtool" && -f "$bin/promtool.stamp" && "$(cat "$bin/promtool.stamp")" == "$stamp" ]]; then
  echo "promtool $version is up to date in $bin"
  exit 0
fi

rm -f "$bin/promtool.stamp"
cd "$mod"
ldflags="-s -w -X github.com/prometheus/common/version.Version=$version -X github.com/prometheus/common/version.Branch=module -X github.com/prometheus/common/version.Revision=$module_version"
echo "building promtool $version (github.com/prometheus/prometheus/cmd/promtool $module_version, module e2e/cmd/promtool) into $bin"
start=$(date +%s)
"$root/hack/progress.sh" "building promtool $version" "a few minutes on 2 cores the first time, downloads included (it links every service discovery Prometheus has)" \
  "$go" build -trimpath -ldflags "$ldflags" -o "$bin/promtool" github.com/prometheus/prometheus/cmd/promtool
echo "built promtool $version in $(( $(date +%s) - start ))s"
echo "$stamp" > "$bin/promtool.stamp"

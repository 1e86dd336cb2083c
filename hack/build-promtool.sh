#!/usr/bin/env bash
# Builds Prometheus's promtool (github.com/prometheus/prometheus/cmd/promtool,
# the version e2e/cmd/promtool/go.mod pins) into the git-ignored
# e2e/.cache/bin, for `make e2e-monitoring` to unit-test the chart's
# alerting rules with `promtool test rules`. A module of its own, so its
# dependency versions never leak; hack/pinned-build.sh does the build.
set -euo pipefail
source "$(dirname "$0")/pinned-build.sh"

mod="$pinned_root/e2e/cmd/promtool"
module_version="$(pinned_version "$mod" github.com/prometheus/prometheus)"
# The module's v0.MMM.P is Prometheus M.MM.P (v0.314.0 is 3.14.0).
minor="$(echo "$module_version" | cut -d. -f2)"
patch="$(echo "$module_version" | cut -d. -f3)"
version="${minor:0:1}.$((10#${minor:1})).$patch"
ldflags="-s -w -X github.com/prometheus/common/version.Version=$version -X github.com/prometheus/common/version.Branch=module -X github.com/prometheus/common/version.Revision=$module_version"
pinned_build promtool "$mod" github.com/prometheus/prometheus/cmd/promtool "$ldflags" "promtool $version" \
  "a few minutes on 2 cores the first time, downloads included (it links every service discovery Prometheus has)"

#!/usr/bin/env bash
# Builds Docker Compose v2 (github.com/docker/compose/v2/cmd, the version
# e2e/cmd/compose/go.mod pins) into the git-ignored e2e/.cache/bin, and
# installs it as the `docker compose` CLI plugin of the git-ignored Docker
# config e2e/.cache/docker-config, for `make e2e-compose` on machines whose
# docker client has no compose plugin. A module of its own, so Compose's
# dependency versions never leak; hack/pinned-build.sh does the build.
set -euo pipefail
source "$(dirname "$0")/pinned-build.sh"

mod="$pinned_root/e2e/cmd/compose"
version="$(pinned_version "$mod" github.com/docker/compose/v2)"
# Compose's own release flags: the version `docker compose version` reports.
pinned_build docker-compose "$mod" github.com/docker/compose/v2/cmd "-s -w -X github.com/docker/compose/v2/internal.Version=$version" \
  "docker compose $version" "a few minutes on 2 cores the first time, downloads included"
plugins="$pinned_root/e2e/.cache/docker-config/cli-plugins"
mkdir -p "$plugins"
ln -sf "$pinned_bin/docker-compose" "$plugins/docker-compose"

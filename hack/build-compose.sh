#!/usr/bin/env bash
# Builds Docker Compose v2 (github.com/docker/compose/v2/cmd, the version
# e2e/cmd/compose/go.mod pins) into the git-ignored e2e/.cache/bin, and
# installs it as the `docker compose` CLI plugin of the git-ignored Docker
# config e2e/.cache/docker-config, for `make e2e-compose` on machines whose
# docker client has no compose plugin. A module of its own, so Compose's
# dependency versions never leak. A stamp file records what was built
# (module pins + Go version), so a second run costs nothing.
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
mod="$root/e2e/cmd/compose"
bin="$root/e2e/.cache/bin"
plugins="$root/e2e/.cache/docker-config/cli-plugins"
go="${GO:-go}"
mkdir -p "$bin" "$plugins"

stamp="$( { cat "$mod/go.mod" "$mod/go.sum" "$0"; "$go" version; } | sha256sum | cut -d' ' -f1)"
version="$(awk '$1 == "require" && $2 == "github.com/docker/compose/v2" {print $3; exit} $1 == "github.com/docker/compose/v2" {print $2; exit}' "$mod/go.mod")"

if ! [[ -x "$bin/docker-compose" && -f "$bin/docker-compose.stamp" && "$(cat "$bin/docker-compose.stamp")" == "$stamp" ]]; then
  rm -f "$bin/docker-compose.stamp"
  cd "$mod"
  # Compose's own release flags: the version `docker compose version` reports.
  ldflags="-s -w -X github.com/docker/compose/v2/internal.Version=$version"
  echo "building docker compose $version (github.com/docker/compose/v2/cmd, module e2e/cmd/compose) into $bin"
  start=$(date +%s)
  "$root/hack/progress.sh" "building docker compose $version" "a few minutes on 2 cores the first time, downloads included" \
    "$go" build -trimpath -ldflags "$ldflags" -o "$bin/docker-compose" github.com/docker/compose/v2/cmd
  echo "built docker compose $version in $(( $(date +%s) - start ))s"
  echo "$stamp" > "$bin/docker-compose.stamp"
else
  echo "docker compose $version is up to date in $bin"
fi
ln -sf "$bin/docker-compose" "$plugins/docker-compose"

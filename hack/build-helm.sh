#!/usr/bin/env bash
# Builds the real helm CLI (helm.sh/helm/v3, the version e2e/cmd/helm/go.mod
# pins) into the git-ignored e2e/.cache/bin, for `make e2e-kube` to render
# and lint charts/tlsplane. A module of its own, so Helm's dependency versions
# never leak. A stamp file records what was built (module pins + Go
# version), so a second run costs nothing.
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
mod="$root/e2e/cmd/helm"
bin="$root/e2e/.cache/bin"
go="${GO:-go}"
mkdir -p "$bin"

stamp="$( { cat "$mod/go.mod" "$mod/go.sum" "$0"; "$go" version; } | sha256sum | cut -d' ' -f1)"
helm_version="$(awk '$1 == "require" && $2 == "helm.sh/helm/v3" {print $3; exit} $1 == "helm.sh/helm/v3" {print $2; exit}' "$mod/go.mod")"

if [[ -x "$bin/helm" && -f "$bin/helm.stamp" && "$(cat "$bin/helm.stamp")" == "$stamp" ]]; then
  echo "helm $helm_version is up to date in $bin"
  exit 0
fi

rm -f "$bin/helm.stamp"
cd "$mod"
# The flags of Helm's own release build: the version it reports, and the
# Kubernetes version its lint and template assume, from the client-go it
# links (v0.N.x is Kubernetes 1.N).
client_go="$(awk '$1 == "k8s.io/client-go" {print $2; exit}' go.mod)"
kube_minor="$(echo "$client_go" | cut -d. -f2)"
ldflags="-s -w -X helm.sh/helm/v3/internal/version.version=$helm_version -X helm.sh/helm/v3/internal/version.metadata="
for pkg in helm.sh/helm/v3/pkg/lint/rules helm.sh/helm/v3/pkg/chartutil; do
  ldflags="$ldflags -X $pkg.k8sVersionMajor=1 -X $pkg.k8sVersionMinor=$kube_minor"
done
echo "building helm $helm_version (helm.sh/helm/v3/cmd/helm, module e2e/cmd/helm) into $bin"
start=$(date +%s)
"$root/hack/progress.sh" "building helm $helm_version" "3 to 9 minutes on 2 cores the first time, downloads included; about 4 minutes of CPU" \
  "$go" build -trimpath -ldflags "$ldflags" -o "$bin/helm" helm.sh/helm/v3/cmd/helm
echo "built helm $helm_version in $(( $(date +%s) - start ))s"
echo "$stamp" > "$bin/helm.stamp"

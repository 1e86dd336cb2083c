#!/usr/bin/env bash
# Builds the real helm CLI (helm.sh/helm/v3, the version e2e/cmd/helm/go.mod
# pins) into the git-ignored e2e/.cache/bin, for `make e2e-kube` to render
# and lint charts/tlsplane. A module of its own, so Helm's dependency
# versions never leak; hack/pinned-build.sh does the build.
set -euo pipefail
source "$(dirname "$0")/pinned-build.sh"

mod="$pinned_root/e2e/cmd/helm"
helm_version="$(pinned_version "$mod" helm.sh/helm/v3)"
# The flags of Helm's own release build: the version it reports, and the
# Kubernetes version its lint and template assume, from the client-go it
# links (v0.N.x is Kubernetes 1.N).
kube_minor="$(pinned_version "$mod" k8s.io/client-go | cut -d. -f2)"
ldflags="-s -w -X helm.sh/helm/v3/internal/version.version=$helm_version -X helm.sh/helm/v3/internal/version.metadata="
for pkg in helm.sh/helm/v3/pkg/lint/rules helm.sh/helm/v3/pkg/chartutil; do
  ldflags="$ldflags -X $pkg.k8sVersionMajor=1 -X $pkg.k8sVersionMinor=$kube_minor"
done
pinned_build helm "$mod" helm.sh/helm/v3/cmd/helm "$ldflags" "helm $helm_version" \
  "3 to 9 minutes on 2 cores the first time, downloads included; about 4 minutes of CPU"

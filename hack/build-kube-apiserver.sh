#!/usr/bin/env bash
# Builds the real servers of the Kubernetes end-to-end tests into the
# git-ignored e2e/.cache/bin: kube-apiserver and kube-controller-manager
# from k8s.io/kubernetes and an embedded etcd, all from the pinned module
# e2e/cmd. A stamp file records
# what was built (module pins + Go version), so a second run costs nothing.
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
mod="$root/e2e/cmd"
bin="$root/e2e/.cache/bin"
go="${GO:-go}"
mkdir -p "$bin"

# The stamp covers everything that changes the binaries.
stamp="$( { cat "$mod/go.mod" "$mod/go.sum" "$mod/etcd/main.go" "$0"; "$go" version; } | sha256sum | cut -d' ' -f1)"
kube_version="$(awk '$1 == "k8s.io/kubernetes" {print $2; exit}' "$mod/go.mod")"
if [[ -z "$kube_version" ]]; then
  kube_version="$(grep -oE 'k8s.io/kubernetes v[0-9.]+' "$mod/go.mod" | head -1 | cut -d' ' -f2)"
fi

if [[ -x "$bin/kube-apiserver" && -x "$bin/kube-controller-manager" && -x "$bin/etcd" && -f "$bin/stamp" && "$(cat "$bin/stamp")" == "$stamp" ]]; then
  echo "kube-apiserver and kube-controller-manager $kube_version and etcd are up to date in $bin"
  exit 0
fi

rm -f "$bin/stamp"
cd "$mod"
# Same flags as Kubernetes' own release build: no debug info, version stamped
# so /version reports what was built. All three are needed: pod security
# admission parses gitMinor and panics on an empty one.
minor="$(echo "$kube_version" | cut -d. -f2)"
v=k8s.io/component-base/version
ldflags="-s -w -X $v.gitVersion=$kube_version -X $v.gitMajor=1 -X $v.gitMinor=$minor"
# Every step says how long it takes, and hack/progress.sh repeats it every
# 30 s while the step runs, so the long compiles are never silent.
progress="$root/hack/progress.sh"
echo "The first time, this downloads and compiles Kubernetes: about 5 minutes on 2 cores in all (4.5 measured from a fresh clone), longer on a busy machine; later runs reuse the result."
echo "building etcd (embedded, go.etcd.io/etcd/server/v3) into $bin; the first time it downloads the modules of e2e/cmd too (1 to 3 minutes)"
"$progress" "downloading modules and building etcd" "1 to 3 minutes the first time" "$go" build -trimpath -ldflags "-s -w" -o "$bin/etcd" ./etcd
echo "building kube-apiserver $kube_version into $bin (the first time, most of those minutes)"
start=$(date +%s)
"$progress" "building kube-apiserver" "the first time, most of the 4.5 minutes the three take on 2 cores" \
  "$go" build -trimpath -ldflags "$ldflags" -o "$bin/kube-apiserver" k8s.io/kubernetes/cmd/kube-apiserver
echo "built kube-apiserver in $(( $(date +%s) - start ))s"
# Most of its packages are kube-apiserver's, already compiled above.
echo "building kube-controller-manager $kube_version into $bin (shorter: most of its packages were just compiled)"
start=$(date +%s)
"$progress" "building kube-controller-manager" "shorter than kube-apiserver: most of its packages were just compiled" \
  "$go" build -trimpath -ldflags "$ldflags" -o "$bin/kube-controller-manager" k8s.io/kubernetes/cmd/kube-controller-manager
echo "built kube-controller-manager in $(( $(date +%s) - start ))s"
echo "$stamp" > "$bin/stamp"

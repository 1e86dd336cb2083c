# Sourced by the scripts that build a tool from a Go module of its own
# under e2e/cmd (hack/build-helm.sh, build-promtool.sh, build-compose.sh):
# the module's pin, and one build into the git-ignored e2e/.cache/bin
# that a stamp (module pins, the calling script, this file, Go's version)
# makes free the second time.

pinned_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
pinned_bin="$pinned_root/e2e/.cache/bin"
pinned_go="${GO:-go}"

# pinned_version MODDIR MODULE: the version MODDIR's go.mod requires.
pinned_version() {
  awk -v m="$2" '$1 == "require" && $2 == m {print $3; exit} $1 == m {print $2; exit}' "$1/go.mod"
}

# pinned_build NAME MODDIR PACKAGE LDFLAGS LABEL ETA builds PACKAGE of the
# module in MODDIR as e2e/.cache/bin/NAME, unless its stamp says it is up
# to date; LABEL names it in messages, ETA says how long the first build
# takes.
pinned_build() {
  local name="$1" mod="$2" pkg="$3" ldflags="$4" label="$5" eta="$6"
  mkdir -p "$pinned_bin"
  local stamp
  stamp="$( { cat "$mod/go.mod" "$mod/go.sum" "$0" "${BASH_SOURCE[0]}"; "$pinned_go" version; } | sha256sum | cut -d' ' -f1)"
  if [[ -x "$pinned_bin/$name" && -f "$pinned_bin/$name.stamp" && "$(cat "$pinned_bin/$name.stamp")" == "$stamp" ]]; then
    echo "$label is up to date in $pinned_bin"
    return 0
  fi
  rm -f "$pinned_bin/$name.stamp"
  echo "building $label ($pkg, module ${mod#"$pinned_root"/}) into $pinned_bin"
  local start
  start=$(date +%s)
  (cd "$mod" && "$pinned_root/hack/progress.sh" "building $label" "$eta" \
    "$pinned_go" build -trimpath -ldflags "$ldflags" -o "$pinned_bin/$name" "$pkg")
  echo "built $label in $(( $(date +%s) - start ))s"
  echo "$stamp" > "$pinned_bin/$name.stamp"
}

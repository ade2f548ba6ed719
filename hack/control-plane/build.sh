#!/usr/bin/env bash
# Builds kube-apiserver, kube-controller-manager, kubectl and etcd from their published Go modules.
# Binaries land in a cache keyed by version, outside the work tree, so every clone on this
# machine reuses them; a second run builds nothing, and a cache missing one binary builds only it.
set -euo pipefail

K8S_VERSION=${K8S_VERSION:-v1.35.4}
ETCD_VERSION=${ETCD_VERSION:-v3.6.16}
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
CACHE_ROOT=${BULWARK_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/bulwark}
BIN_DIR="$CACHE_ROOT/control-plane/k8s-$K8S_VERSION-etcd-$ETCD_VERSION"

log() { printf '[control-plane build] %s\n' "$*" >&2; }

if [[ "${1:-}" == "--print-bin-dir" ]]; then echo "$BIN_DIR"; exit 0; fi

bash "$HERE/../system-packages.sh"

KUBE_COMMANDS=(kube-apiserver kube-controller-manager kubectl)
# A binary counts as built when it reports the version this cache directory is named for. The
# output is read whole first: `grep -q` leaving a pipe early would kill kubectl with SIGPIPE, and
# pipefail would call that a miss.
built() {
  local bin="$BIN_DIR/$1" said
  [[ -x "$bin" ]] || return 1
  case "$1" in
    kubectl) said=$("$bin" version --client 2>/dev/null) && grep -qx "Client Version: $K8S_VERSION" <<<"$said" ;;
    etcd) said=$("$bin" --version 2>/dev/null) && grep -qx "etcd Version: ${ETCD_VERSION#v}" <<<"$said" ;;
    *) said=$("$bin" --version 2>/dev/null) && grep -qx "Kubernetes $K8S_VERSION" <<<"$said" ;;
  esac
}
exit_if_cached() {
  local cmd
  for cmd in "${KUBE_COMMANDS[@]}" etcd; do built "$cmd" || return 0; done
  log "cached: $BIN_DIR"
  echo "$BIN_DIR"
  exit 0
}
exit_if_cached
mkdir -p "$BIN_DIR"
# One build at a time per machine (`npm start` and `npm test` may race); the loser reuses the result.
exec 9>"$CACHE_ROOT/build.lock"
flock 9
exit_if_cached
export CGO_ENABLED=0 GOFLAGS=-mod=mod

# The wrapper modules are committed; their replace list is regenerated only when asked, from the
# chosen version's own go.mod, so a version bump never means typing 29 module names by hand.
if [[ "${REGENERATE:-0}" == 1 || ! -f "$HERE/kube/go.sum" ]]; then
  log "generating kube wrapper module for $K8S_VERSION"
  (
    cd "$HERE/kube"
    printf 'module bulwark.dev/hack/control-plane/kube\n\ngo 1.25.0\n' > go.mod
    gomod=$(go mod download -json "k8s.io/kubernetes@$K8S_VERSION" | sed -n 's/.*"GoMod": "\(.*\)",*/\1/p')
    staging_version="v0.${K8S_VERSION#v1.}"
    for m in $(sed -n 's|^[[:space:]]*\(k8s.io/[a-z0-9-]*\) => \./staging/.*|\1|p' "$gomod"); do
      go mod edit -replace="$m=$m@$staging_version"
    done
    grep '^godebug' "$gomod" >> go.mod || true
    go mod edit -require="k8s.io/kubernetes@$K8S_VERSION" \
      -tool=k8s.io/kubernetes/cmd/kube-apiserver -tool=k8s.io/kubernetes/cmd/kube-controller-manager \
      -tool=k8s.io/kubernetes/cmd/kubectl
    go mod tidy
  )
fi
if [[ "${REGENERATE:-0}" == 1 || ! -f "$HERE/etcd/go.sum" ]]; then
  log "generating etcd wrapper module for $ETCD_VERSION"
  (
    cd "$HERE/etcd"
    printf 'module bulwark.dev/hack/control-plane/etcd\n\ngo 1.25.0\n' > go.mod
    go mod edit -require="go.etcd.io/etcd/server/v3@$ETCD_VERSION" -tool=go.etcd.io/etcd/server/v3
    go mod tidy
  )
fi

minor=${K8S_VERSION#v1.}; minor=${minor%%.*}
ldflags="-s -w"
for kv in "gitVersion=$K8S_VERSION" gitMajor=1 "gitMinor=$minor" gitTreeState=clean "buildDate=$(date -u +%FT%TZ)"; do
  ldflags="$ldflags -X k8s.io/component-base/version.$kv -X k8s.io/client-go/pkg/version.$kv"
done

start=$(date +%s)
for cmd in "${KUBE_COMMANDS[@]}"; do
  if built "$cmd"; then log "cached: $cmd"; continue; fi
  log "building $cmd $K8S_VERSION (a cold build takes many minutes on 2 cores)"
  (cd "$HERE/kube" && go build -trimpath -tags selinux,notest -ldflags "$ldflags" -o "$BIN_DIR/$cmd.tmp" "k8s.io/kubernetes/cmd/$cmd")
  mv "$BIN_DIR/$cmd.tmp" "$BIN_DIR/$cmd"
done
if ! built etcd; then
  log "building etcd $ETCD_VERSION"
  (cd "$HERE/etcd" && go build -trimpath -ldflags "-s -w" -o "$BIN_DIR/etcd.tmp" go.etcd.io/etcd/server/v3)
  mv "$BIN_DIR/etcd.tmp" "$BIN_DIR/etcd"
fi
log "built in $(( $(date +%s) - start ))s: $BIN_DIR"
echo "$BIN_DIR"

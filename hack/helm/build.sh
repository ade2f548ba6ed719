#!/usr/bin/env bash
# Builds the `helm` binary from its published Go module into a cache keyed by version, outside the
# work tree, so every clone on this machine reuses it; a second run builds nothing. Prints its path.
# The packaging tests call this when helm is missing (hack/helm/helm.ts).
set -euo pipefail

HELM_VERSION=${HELM_VERSION:-v4.3.2}
HELM_MODULE=${HELM_MODULE:-helm.sh/helm/v4}
CACHE_ROOT=${BULWARK_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/bulwark}
BIN_DIR="$CACHE_ROOT/tools/helm-$HELM_VERSION"
HELM="$BIN_DIR/helm"

log() { printf '[helm build] %s\n' "$*" >&2; }

if [[ "${1:-}" == "--print-path" ]]; then echo "$HELM"; exit 0; fi

cached() { [[ -x "$HELM" ]] && "$HELM" version --template '{{.Version}}' 2>/dev/null | grep -qx "$HELM_VERSION"; }
if cached; then echo "$HELM"; exit 0; fi

if ! command -v go >/dev/null; then
  log "Go >= 1.25 is required to build helm (https://go.dev/doc/install)"
  exit 1
fi
mkdir -p "$BIN_DIR"
# One build at a time per machine (parallel test runs); the loser reuses the result.
exec 9>"$CACHE_ROOT/tools/helm.lock"
flock 9
if cached; then echo "$HELM"; exit 0; fi

log "building $HELM_MODULE/cmd/helm@$HELM_VERSION (a cold build takes a few minutes on 2 cores)"
start=$(date +%s)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# The version flag helm's own Makefile sets, so `helm version` reports the tag.
CGO_ENABLED=0 GOFLAGS=-mod=mod GOBIN="$tmp" go install -trimpath \
  -ldflags "-s -w -X $HELM_MODULE/internal/version.version=$HELM_VERSION" \
  "$HELM_MODULE/cmd/helm@$HELM_VERSION"
mv "$tmp/helm" "$HELM"
log "built in $(( $(date +%s) - start ))s: $HELM"
echo "$HELM"

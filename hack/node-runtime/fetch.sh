#!/usr/bin/env bash
# Fetches the Node.js the image runs (the Dockerfile's NODE_VERSION) into a cache outside the work
# tree, so the entrypoint test and the gateway benchmark run on the image's runtime rather than on
# whatever Node this machine has. Source: the npm registry's node-linux-<arch> package (the official
# release binary, repackaged; the registry is the one network this project relies on). Prints the
# binary's path; a second run fetches nothing.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
NODE_VERSION=$(sed -n 's/^ARG NODE_VERSION=//p' "$ROOT/Dockerfile")
if [[ -z "$NODE_VERSION" ]]; then
  echo "[node runtime] no 'ARG NODE_VERSION=' line in $ROOT/Dockerfile" >&2
  exit 1
fi
case "$(uname -m)" in
  x86_64) ARCH=x64 ;;
  aarch64) ARCH=arm64 ;;
  *) echo "[node runtime] no Node.js package for $(uname -m)" >&2; exit 1 ;;
esac
CACHE_ROOT=${BULWARK_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/bulwark}
DIR="$CACHE_ROOT/tools/node-v$NODE_VERSION-linux-$ARCH"
NODE="$DIR/bin/node"

log() { printf '[node runtime] %s\n' "$*" >&2; }
cached() { [[ -x "$NODE" ]] && [[ "$("$NODE" --version 2>/dev/null)" == "v$NODE_VERSION" ]]; }
if cached; then echo "$NODE"; exit 0; fi

mkdir -p "$CACHE_ROOT/tools"
# One fetch at a time per machine (parallel test runs); the loser reuses the result.
exec 9>"$CACHE_ROOT/tools/node-runtime.lock"
flock 9
if cached; then echo "$NODE"; exit 0; fi

log "fetching node-linux-$ARCH@$NODE_VERSION from the npm registry (about 50 MB, once per machine)"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
tarball=$(cd "$tmp" && npm pack --silent "node-linux-$ARCH@$NODE_VERSION")
tar -xzf "$tmp/$tarball" -C "$tmp"
if [[ "$("$tmp/package/bin/node" --version)" != "v$NODE_VERSION" ]]; then
  log "the package's binary is not v$NODE_VERSION"
  exit 1
fi
rm -rf "$DIR"
mkdir -p "$DIR/bin"
mv "$tmp/package/bin/node" "$NODE"
log "cached $NODE"
echo "$NODE"

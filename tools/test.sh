#!/bin/sh
# The test command: set up, build and run the tests; prints a final line
#   N passed, N failed, N skipped
# Usage: tools/test.sh [--full] [--sanitize] [--no-setup] [meson test args...]
#   (default)   every test but the fuller tier (meson suite 'full': the
#               10,000-frame/1,000-cycle soaks, valgrind over pipelines,
#               whole models and conformance on lavapipe): minutes
#   --full      everything (what CI runs)
#   --sanitize  build in build-asan with AddressSanitizer + UBSan and run there
set -eu
cd "$(dirname "$0")/.."
BUILD=build
SANITIZE=0
SETUP=1
FULL=0
while [ $# -gt 0 ]; do
  case "$1" in
    --sanitize) SANITIZE=1; BUILD=build-asan; shift ;;
    --no-setup) SETUP=0; shift ;;
    --full) FULL=1; shift ;;
    *) break ;;
  esac
done
if [ "$SETUP" = 1 ]; then
  sh tools/setup.sh
  # real media and models for the pipeline tests; without them those tests
  # fall back to synthetic input and say so
  sh tools/fetch-media.sh >/dev/null || echo "test.sh: media fetch failed; real-image tests will use synthetic input"
fi

if [ ! -f "$BUILD/build.ninja" ]; then
  if [ "$SANITIZE" = 1 ]; then
    meson setup "$BUILD" -Db_sanitize=address,undefined -Db_lundef=false -Dbuildtype=debugoptimized >/dev/null
  else
    meson setup "$BUILD" >/dev/null
  fi
fi
meson compile -C "$BUILD" >/dev/null 2>"$BUILD.compile.log" || { cat "$BUILD.compile.log"; echo "0 passed, 1 failed"; exit 1; }

if [ "$SANITIZE" = 1 ]; then
  export ASAN_OPTIONS="detect_leaks=1:abort_on_error=1:allocator_may_return_null=1:${ASAN_OPTIONS:-}"
  export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1:${UBSAN_OPTIONS:-}"
  export LSAN_OPTIONS="suppressions=$(pwd)/tests/lsan.supp:${LSAN_OPTIONS:-}"
fi
status=0
tier=""
[ "$FULL" = 1 ] || tier="--no-suite full"
# shellcheck disable=SC2086
meson test -C "$BUILD" --print-errorlogs --num-processes 2 $tier "$@" || status=$?
python3 - "$BUILD/meson-logs/testlog.json" <<'PY'
import json, sys
p = f = s = 0
for line in open(sys.argv[1]):
    r = json.loads(line)["result"]
    if r in ("OK", "EXPECTEDFAIL"): p += 1
    elif r == "SKIP": s += 1
    else: f += 1
print(f"{p} passed, {f} failed, {s} skipped")
PY
exit $status

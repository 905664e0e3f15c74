#!/bin/sh
# valgrind.sh [PLUGIN_DIR [TEST_MODELS_DIR]]
#
# valgrind memcheck over a 100-frame onnxinfer pipeline (two elements in a
# cascade, the second with inference-interval=3).  Fails on any memcheck
# error and on definitely-lost bytes not covered by valgrind.supp (which
# holds GLib/GStreamer one-time allocations only).
#
# Environment: ONNXINFER_VALGRIND_FRAMES (default 100), ONNXINFER_REAL_CASES
# (default $NN_SHARED_DIR/real-cases or ../shared/real-cases): BlazeFace when
# found, else a synthetic model.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
plugin_dir=${1:-$root/build-gst/elements}
models_dir=${2:-$root/build-gst/tests/gst}
frames=${ONNXINFER_VALGRIND_FRAMES:-100}
real=${ONNXINFER_REAL_CASES:-${NN_SHARED_DIR:-$root/../shared}/real-cases}

model=$real/blazeface_front_128/model.onnx
caps="video/x-raw,width=128,height=128"
if [ ! -f "$model" ]; then
  echo "valgrind.sh: $model not found, using a synthetic model"
  model=$models_dir/relu-f32-nchw-dyn.onnx
  caps="video/x-raw,width=64,height=48"
fi

export GST_PLUGIN_PATH_1_0="$plugin_dir"
# Update the registry outside valgrind (the scanner is a child process).
gst-inspect-1.0 onnxinfer >/dev/null

log=$(mktemp)
trap 'rm -f "$log"' EXIT INT TERM
status=0
G_SLICE=always-malloc G_DEBUG=gc-friendly \
valgrind --tool=memcheck --leak-check=full --show-leak-kinds=definite \
  --errors-for-leak-kinds=definite --error-exitcode=99 --num-callers=40 \
  --suppressions="$here/valgrind.supp" --gen-suppressions=all \
  --log-file="$log" \
  gst-launch-1.0 -q videotestsrc num-buffers="$frames" ! "$caps" ! \
    onnxinfer name=first backend=cpu threads=1 \
      input-mean="<127.5>" input-std="<127.5>" model-location="$model" ! \
    onnxinfer name=second backend=cpu threads=1 inference-interval=3 \
      model-location="$model" ! fakesink || status=$?

grep -E "ERROR SUMMARY|definitely lost|indirectly lost|possibly lost|still reachable|suppressed:" "$log" || true
if [ "$status" -ne 0 ]; then
  echo "valgrind.sh: FAIL (exit status $status); full log:"
  cat "$log"
  exit 1
fi
echo "valgrind.sh: PASS ($frames frames, $(basename "$(dirname "$model")"))"

#!/bin/sh
# valgrind.sh [PLUGIN_DIR [TEST_MODELS_DIR]]
#
# valgrind memcheck (--leak-check=full) over onnxinfer pipelines, one
# valgrind run per case:
#
#   cpu     30 frames through two onnxinfer in a cascade (the second with
#           inference-interval=3), backend=cpu, on the portable C kernels
#           (NN_CPU=portable: valgrind runs AVX2/FMA code 4x slower)
#   simd    the same cascade on the best SIMD path valgrind offers (AVX2:
#           it has no AVX-512), fewer frames
#   decode  the astronaut image (or videotestsrc) through onnxinfer !
#           tensordecoder scheme=blazeface ! roioverlay (boxes, keypoints and
#           labels drawn with cairo/pango), backend=cpu
#   vulkan  the cascade with backend=vulkan (lavapipe is slow under valgrind:
#           fewer frames); skipped, with the reason, without a Vulkan device.
#           Not in the default list: 200 s of lavapipe's LLVM under valgrind
#           on the 2-core CI machine for what the Vulkan tests already hold
#           (ASan runs of tests/vulkan, flat-RSS cycles, the validation
#           layer); ONNXINFER_VALGRIND_CASES="cpu simd decode vulkan" runs it
#
# Fails on any memcheck error and on definitely-lost bytes not covered by
# valgrind.supp (which holds documented one-time GLib/GStreamer/fontconfig/
# Mesa allocations only).
#
# Environment:
#   ONNXINFER_VALGRIND_CASES          cases to run (default "cpu simd decode")
#   ONNXINFER_VALGRIND_FRAMES         frames of the cpu case (default 30)
#   ONNXINFER_VALGRIND_SIMD_FRAMES    frames of the simd case (default 10)
#   ONNXINFER_VALGRIND_DECODE_FRAMES  frames of the decode case (default 10)
#   ONNXINFER_VALGRIND_VULKAN_FRAMES  frames of the vulkan case (default 5)
#   ONNXINFER_VALGRIND_VULKAN_MODEL   real (BlazeFace, default) or synthetic
#   ONNXINFER_REAL_CASES (default $NN_SHARED_DIR/real-cases or
#   ../shared/real-cases): BlazeFace when found, else a synthetic model.
#   ONNXINFER_MEDIA_DIR (default ./data): astronaut.png for the decode case.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
plugin_dir=${1:-$root/build-gst/plugin/gstreamer-1.0}
models_dir=${2:-$root/build-gst/tests/gst}
cases=${ONNXINFER_VALGRIND_CASES:-cpu simd decode}
frames=${ONNXINFER_VALGRIND_FRAMES:-30}
simd_frames=${ONNXINFER_VALGRIND_SIMD_FRAMES:-10}
decode_frames=${ONNXINFER_VALGRIND_DECODE_FRAMES:-10}
vulkan_frames=${ONNXINFER_VALGRIND_VULKAN_FRAMES:-5}
vulkan_model=${ONNXINFER_VALGRIND_VULKAN_MODEL:-real}
real=${ONNXINFER_REAL_CASES:-${NN_SHARED_DIR:-$root/../shared}/real-cases}
media=${ONNXINFER_MEDIA_DIR:-$root/data}

synthetic=$models_dir/relu-f32-nchw-dyn.onnx
synthetic_caps="video/x-raw,width=64,height=48"
model=$real/blazeface_front_128/model.onnx
caps="video/x-raw,width=128,height=128"
have_blazeface=1
if [ ! -f "$model" ]; then
  echo "valgrind.sh: $model not found, using a synthetic model"
  model=$synthetic
  caps=$synthetic_caps
  have_blazeface=0
fi

export GST_PLUGIN_PATH_1_0="$plugin_dir"
# Update the registry outside valgrind (the scanner is a child process).
gst-inspect-1.0 onnxinfer >/dev/null

log=$(mktemp)
trap 'rm -f "$log"' EXIT INT TERM
failed=0
ran=0

# run_case NAME gst-launch-arguments...
run_case() {
  name=$1
  shift
  echo "valgrind.sh: case $name: gst-launch-1.0 $*"
  status=0
  start=$(date +%s)
  G_SLICE=always-malloc G_DEBUG=gc-friendly \
  valgrind --tool=memcheck --leak-check=full --show-leak-kinds=definite \
    --errors-for-leak-kinds=definite --error-exitcode=99 --num-callers=40 \
    --suppressions="$here/valgrind.supp" --gen-suppressions=all \
    --log-file="$log" \
    gst-launch-1.0 -q "$@" || status=$?
  grep -E "ERROR SUMMARY|definitely lost|indirectly lost|possibly lost|still reachable|suppressed:" "$log" || true
  if [ "$status" -ne 0 ]; then
    echo "valgrind.sh: case $name: FAIL (exit status $status); full log:"
    cat "$log"
    failed=1
  else
    echo "valgrind.sh: case $name: PASS ($(( $(date +%s) - start )) s)"
  fi
  ran=$((ran + 1))
}

for c in $cases; do
  case $c in
    cpu|simd)
      n=$frames
      [ "$c" = simd ] && n=$simd_frames
      isa=portable
      [ "$c" = simd ] && isa=avx512   # the best the CPU (valgrind's) has
      export NN_CPU=$isa
      run_case "$c" videotestsrc num-buffers="$n" ! "$caps" ! \
        onnxinfer name=first backend=cpu threads=1 \
          input-mean="<127.5>" input-std="<127.5>" model-location="$model" ! \
        onnxinfer name=second backend=cpu threads=1 inference-interval=3 \
          model-location="$model" ! fakesink
      unset NN_CPU
      ;;
    decode)
      if [ "$have_blazeface" -ne 1 ]; then
        echo "valgrind.sh: case decode: SKIP (BlazeFace not found; the" \
          "decoder needs its outputs)"
        continue
      fi
      # real video in: the picture at its own size in a decoder's formats,
      # buffers without a GstVideoMeta (roioverlay once read unset plane
      # maps of those), letterboxed inside onnxinfer
      for fmt in I420 NV12; do
        if [ -f "$media/astronaut.png" ]; then
          set -- filesrc location="$media/astronaut.png" ! pngdec ! \
            imagefreeze num-buffers="$decode_frames" ! videoconvert ! \
            video/x-raw,format=$fmt
        else
          echo "valgrind.sh: $media/astronaut.png not found (tools/fetch-media.sh):" \
            "videotestsrc instead"
          set -- videotestsrc num-buffers="$decode_frames" ! \
            video/x-raw,format=$fmt,width=320,height=240
        fi
        run_case "decode-$fmt" "$@" ! \
          onnxinfer backend=cpu threads=1 input-mean=127.5 input-std=127.5 \
            scale-mode=letterbox model-location="$model" ! \
          tensordecoder scheme=blazeface post-messages=false ! roioverlay ! \
          fakesink
      done
      ;;
    vulkan)
      vmodel=$model
      vcaps=$caps
      if [ "$vulkan_model" = synthetic ]; then
        vmodel=$synthetic
        vcaps=$synthetic_caps
      fi
      # Is there a Vulkan device? (outside valgrind)
      if ! out=$(gst-launch-1.0 -q videotestsrc num-buffers=1 ! "$vcaps" ! \
          onnxinfer backend=vulkan threads=1 model-location="$vmodel" ! \
          fakesink 2>&1); then
        echo "valgrind.sh: case vulkan: SKIP (backend=vulkan does not start:" \
          "$(echo "$out" | grep -i vulkan | head -n 1))"
        continue
      fi
      run_case vulkan videotestsrc num-buffers="$vulkan_frames" ! "$vcaps" ! \
        onnxinfer name=first backend=vulkan threads=1 \
          input-mean="<127.5>" input-std="<127.5>" model-location="$vmodel" ! \
        onnxinfer name=second backend=vulkan threads=1 inference-interval=3 \
          model-location="$vmodel" ! fakesink
      ;;
    *)
      echo "valgrind.sh: unknown case '$c'"
      failed=1
      ;;
  esac
done

if [ "$failed" -ne 0 ]; then
  echo "valgrind.sh: FAIL"
  exit 1
fi
if [ "$ran" -eq 0 ]; then
  echo "valgrind.sh: SKIP (no case could run)"
  exit 77
fi
echo "valgrind.sh: PASS ($ran case(s): $cases; $(basename "$(dirname "$model")"))"

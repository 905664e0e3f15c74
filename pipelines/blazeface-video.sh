#!/bin/sh
# blazeface-video.sh [VIDEO] [FRAMES] - BlazeFace on a video (default OpenCV's
# Megamind.avi, MPEG-4 part 2: needs avdec_mpeg4 from gstreamer1.0-libav),
# inferring one frame in INTERVAL (default 3; the frames in between carry
# the last result), printing each inference.
set -eu
. "$(dirname "$0")/common.sh"

video=${1:-$data/Megamind.avi}
frames=${2:-90}
interval=${INTERVAL:-3}
need "$blazeface_model" "$video"
if ! gst-inspect-1.0 avdec_mpeg4 >/dev/null 2>&1; then
  echo "$(basename "$0"): avdec_mpeg4 missing: apt-get install gstreamer1.0-libav" >&2
  exit 1
fi

gst-launch-1.0 -m \
  filesrc location="$video" ! decodebin ! \
  identity eos-after="$frames" ! \
  onnxinfer model-location="$blazeface_model" inference-interval="$interval" \
    input-mean="<127.5>" input-std="<127.5>" post-messages=true ! \
  fakesink sync=false | summarize blazeface

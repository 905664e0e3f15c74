#!/bin/sh
# ppocr-cls-image.sh [IMAGE.png] - the PaddleOCR text-direction classifier
# (ch_ppocr_mobile_v2.0_cls) on the first text line of an image, upright and
# rotated by 180 degrees: crop, then onnxinfer scales to the model's 192x48,
# normalizes
# (x/255 - 0.5)/0.5 as PaddleOCR does, BGR channel order (PaddleOCR reads
# images with OpenCV).
#
# The default image is OpenCV's imageTextN.png (a page of text; its first
# line is the top 22 rows, left 386 columns).  For another image give the
# crop in CROP="top=.. bottom=.. left=.. right=..".
set -eu
. "$(dirname "$0")/common.sh"

image=${1:-$data/imageTextN.png}
crop=${CROP:-top=0 bottom=235 left=0 right=170}
need "$ppocr_cls_model" "$image"

for direction in identity 180; do
  echo "== text line rotated: $direction"
  # shellcheck disable=SC2086
  gst-launch-1.0 -m \
    filesrc location="$image" ! pngdec ! videocrop $crop ! \
    videoflip video-direction=$direction ! \
    onnxinfer model-location="$ppocr_cls_model" channel-order=bgr \
      input-width=192 input-height=48 \
      input-mean="<127.5>" input-std="<127.5>" post-messages=true ! \
    fakesink | summarize ppocr
done

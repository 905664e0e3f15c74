#!/bin/sh
# blazeface-image.sh [IMAGE.png] - MediaPipe BlazeFace (front, 128x128) on one
# image: decode, run onnxinfer (it scales the picture to the model's
# 128x128 RGB itself), print the output tensors and the best face score.
#
# The model wants RGB in [-1, 1]: input-mean=127.5, input-std=127.5.
set -eu
. "$(dirname "$0")/common.sh"

image=${1:-$data/astronaut.png}
need "$blazeface_model" "$image"

gst-launch-1.0 -m \
  filesrc location="$image" ! decodebin ! \
  onnxinfer model-location="$blazeface_model" \
    input-mean="<127.5>" input-std="<127.5>" post-messages=true ! \
  fakesink | summarize blazeface

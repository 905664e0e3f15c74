#!/bin/sh
# cascade.sh [VIDEO|IMAGE] [OUT] - a two-stage cascade in one plain line:
# BlazeFace front (128x128) finds the faces on the whole frame, then a
# second onnxinfer in region mode (inference-region=roi-list
# object-class=face) runs BlazeFace back (256x256) on every face crop,
# letterboxed into its input; its tensordecoder (model-id=refine) maps the
# refined box and keypoints back into the frame as child regions
# (parent_id = the face they were computed on).  Default input OpenCV's
# Megamind.avi, output data/demo/Megamind-cascade.webm (an image gives a
# PNG).  Prints, per frame, the faces and the refined faces with their
# parents.
set -eu
. "$(dirname "$0")/common.sh"

in=${1:-$data/Megamind.avi}
back_model=$data/models/blazeface/face_detection_back_256x256_barracuda.onnx
need "$blazeface_model" "$back_model" "$in"
case "$in" in
  *.png|*.jpg|*.jpeg) out=${2:-$data/demo/$(basename "${in%.*}")-cascade.png}; enc="pngenc" ;;
  *) out=${2:-$data/demo/$(basename "${in%.*}")-cascade.webm}
     enc="vp8enc deadline=1 cpu-used=4 target-bitrate=2000000 ! webmmux" ;;
esac
mkdir -p "$(dirname "$out")"

# shellcheck disable=SC2086
gst-launch-1.0 -m -e \
  filesrc location="$in" ! decodebin ! \
  onnxinfer name=faces model-location="$blazeface_model" scale-mode=letterbox \
    input-mean="<127.5>" input-std="<127.5>" ! \
  tensordecoder model-id=faces scheme=blazeface ! \
  onnxinfer name=refine model-location="$back_model" inference-region=roi-list \
    object-class=face roi-min-size=16 scale-mode=letterbox \
    input-mean="<127.5>" input-std="<127.5>" ! \
  tensordecoder model-id=refine scheme=blazeface ! \
  roioverlay ! videoconvert ! $enc ! filesink location="$out" |
  awk '
    /\(element\): tensordecoder,/ {
      line = $0
      model = line; sub(/.*model-id=\(string\)/, "", model); sub(/,.*/, "", model)
      # frames without regions carry no tensors of the second model (and
      # get no message from its decoder): match the two by timestamp
      ts = line; sub(/.*timestamp=\(guint64\)/, "", ts); sub(/,.*/, "", ts)
      if (!(ts in idx)) { idx[ts] = n; n++ }
      frame = idx[ts]
      count = line; sub(/.*count=\(uint\)/, "", count); sub(/,.*/, "", count)
      par = line; sub(/.*parent-ids=\(int\)< ?/, "", par); sub(/ ?>.*/, "", par)
      if (model == "faces") faces[frame] = count
      else { refined[frame] = count; parents[frame] = par }
    }
    END {
      for (f = 0; f < n; f++) {
        tf += faces[f]; tr += refined[f]
        if (f % 30 == 0)
          printf "frame %3d: %d face(s), %d refined (parents %s)\n", f, faces[f],
            refined[f], refined[f] ? parents[f] : "-"
      }
      printf "%d frames: %d faces, %d refined by the second model\n", n, tf, tr
    }'
echo "wrote $out" >&2

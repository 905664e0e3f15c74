# common.sh - sourced by the pipeline scripts: finds the build tree and the
# media, and turns onnxinfer's bus messages into readable tensor summaries.

root=$(cd "$(dirname "$0")/.." && pwd)

# The plugin from the build tree: $BUILD_DIR, else build/ or build-gst/.
if [ -z "${BUILD_DIR:-}" ]; then
  for d in "$root/build" "$root/build-gst"; do
    if [ -f "$d/plugin/gstreamer-1.0/libgstonnxinfer.so" ]; then BUILD_DIR=$d; break; fi
  done
fi
if [ -z "${BUILD_DIR:-}" ] || [ ! -f "$BUILD_DIR/plugin/gstreamer-1.0/libgstonnxinfer.so" ]; then
  echo "$(basename "$0"): build the plugin first: meson setup build && ninja -C build" >&2
  exit 1
fi
export GST_PLUGIN_PATH="$BUILD_DIR/plugin/gstreamer-1.0${GST_PLUGIN_PATH:+:$GST_PLUGIN_PATH}"

data=${DATA_DIR:-$root/data}
blazeface_model=$data/models/blazeface/face_detection_front_128x128_barracuda.onnx
ppocr_cls_model=$data/models/ppocr/ch_ppocr_mobile_v2.0_cls_infer.onnx

# need FILE...: fetch the media and models when one is missing.
need() {
  for f in "$@"; do
    if [ ! -f "$f" ]; then
      DATA_DIR=$data "$root/tools/fetch-media.sh" >&2
      break
    fi
  done
  for f in "$@"; do
    [ -f "$f" ] || { echo "$(basename "$0"): missing $f" >&2; exit 1; }
  done
}

# summarize: reads `gst-launch-1.0 -m` output, prints one block per
# inference (onnxinfer post-messages=true) and passes errors through.
# $1: optional awk snippet run per frame with the tensors in
#     name[i], dims[i], mn[i], mx[i], vals[i] (i = 0 .. n-1).
summarize() {
  awk -v extra="${1:-}" '
    /from element .* \(element\): onnxinfer,/ {
      line = $0
      gsub(/\\/, "", line)
      el = line; sub(/.*from element "/, "", el); sub(/".*/, "", el)
      frame = line; sub(/.*frame=\(guint64\)/, "", frame); sub(/,.*/, "", frame)
      inf = line; sub(/.*inference-id=\(guint64\)/, "", inf); sub(/,.*/, "", inf)
      lat = line; sub(/.*latency-us=\(guint64\)/, "", lat); sub(/,.*/, "", lat)
      printf "%s frame %s: inference %s, %.1f ms\n", el, frame, inf, lat / 1000.0
      n = 0
      rest = line
      while (match(rest, /output-[0-9]+=\(string\)"[^"]*"/)) {
        s = substr(rest, RSTART, RLENGTH)
        rest = substr(rest, RSTART + RLENGTH)
        sub(/^output-[0-9]+=\(string\)"/, "", s); sub(/"$/, "", s)
        printf "    %s\n", s
        split(s, f, " ")
        name[n] = f[1]; dims[n] = f[3]; vals[n] = ""
        for (k in f) {
          if (f[k] ~ /^min=/) mn[n] = substr(f[k], 5) + 0
          if (f[k] ~ /^max=/) mx[n] = substr(f[k], 5) + 0
        }
        if (s ~ /values=\[/) { v = s; sub(/.*values=\[/, "", v); sub(/\].*/, "", v); vals[n] = v }
        n++
      }
      if (extra == "blazeface") {
        best = mx[0] > mx[1] ? mx[0] : mx[1]
        printf "    => best face score sigmoid(%.3f) = %.3f (%s)\n", best,
          1 / (1 + exp(-best)), (1 / (1 + exp(-best)) > 0.5) ? "face" : "no face"
      } else if (extra == "ppocr") {
        split(vals[0], p, " ")
        printf "    => text orientation: %s (p0=%.3f, p180=%.3f)\n",
          (p[1] >= p[2]) ? "0 degrees" : "180 degrees", p[1], p[2]
      }
      next
    }
    /^ERROR|^WARNING|^Additional debug info|^[^G].*\.c\(/ { print }
  '
}

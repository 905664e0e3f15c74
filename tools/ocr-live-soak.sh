#!/bin/sh
# ocr-live-soak.sh [SECONDS] - the README's live OCR recipe, watched.
#
# Runs the live recipe (textoverlay on videotestsrc is-live=true, 5 fps,
# PP-OCRv4 det -> rec through onnxinfer, tensordecoder scheme=ctc posting
# its texts) into fakesink for SECONDS (default 600), with a text that
# changes every 10 seconds (so the detector and recogniser see new lines
# and widths during the run, not one frame repeated), and samples the
# process's RSS every 10 s.  Prints the samples, the texts read, and ends
# with PASS when the pipeline ran to the end with no error and the RSS did
# not grow over the second half of the run (in the first half it may step
# up once or twice: a line wider than any before grows the recogniser's
# input width and arena, which then stay).
#
# Needs the build tree's plugin and tools/fetch-media.sh's models; not a
# test (a 10-minute run): a soak a person or CI's longer tier runs.
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
secs=${1:-600}
build=${BUILD_DIR:-$here/build}
export GST_PLUGIN_PATH="$build/plugin/gstreamer-1.0"
M=${DATA_DIR:-$here/data}/models/ppocr
for f in ch_PP-OCRv4_det_infer.onnx ch_PP-OCRv4_rec_infer.onnx ppocr_keys_v1.txt; do
  [ -f "$M/$f" ] || sh "$here/tools/fetch-media.sh" >&2
done
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT INT TERM

frames=$((secs * 5))
# the text changes with the running time: subtitle-like lines from a small
# .srt (textoverlay takes the text from a subparse stream)
srt=$out/lines.srt
i=0
: > "$srt"
while [ $((i * 10)) -lt "$secs" ]; do
  s=$((i * 10)); e=$((s + 10))
  printf '%d\n%02d:%02d:%02d,000 --> %02d:%02d:%02d,000\nLive text %d, read back\n\n' \
    $((i + 1)) $((s / 3600)) $((s / 60 % 60)) $((s % 60)) $((e / 3600)) $((e / 60 % 60)) \
    $((e % 60)) "$i" >> "$srt"
  i=$((i + 1))
done

gst-launch-1.0 -m videotestsrc is-live=true pattern=white num-buffers=$frames ! \
  video/x-raw,width=640,height=240,framerate=5/1 ! \
  textoverlay name=t font-desc="Sans 28" color=0xff000000 draw-shadow=false \
    draw-outline=false shaded-background=false halignment=left valignment=top \
    xpad=24 ypad=60 ! \
  onnxinfer name=det model-location="$M/ch_PP-OCRv4_det_infer.onnx" channel-order=bgr \
    input-mean="123.675,116.28,103.53" input-std="58.395,57.12,57.375" ! \
  tensordecoder scheme=dbnet model-id=det ! \
  onnxinfer name=rec model-location="$M/ch_PP-OCRv4_rec_infer.onnx" inference-region=roi-list \
    object-class=text scale-mode=pad-right channel-order=bgr input-mean=0 input-std=255 \
    pad-value=0 max-batch=1 ! \
  tensordecoder scheme=ctc model-id=rec labels-file="$M/ppocr_keys_v1.txt" post-messages=true ! \
  fakesink sync=false \
  filesrc location="$srt" ! subparse ! t.text_sink > "$out/log" 2>&1 &
pid=$!
n=0
: > "$out/rss"
while kill -0 "$pid" 2>/dev/null; do
  rss=$(awk '/^VmRSS:/ {print $2}' "/proc/$pid/status" 2>/dev/null || true)
  [ -n "$rss" ] && echo "$((n * 10)) $rss" >> "$out/rss"
  n=$((n + 1))
  sleep 10
done
wait "$pid" && rc=0 || rc=$?
echo "ocr-live-soak: gst-launch-1.0 exited $rc after $secs s ($frames frames)"
awk '{printf "  t=%4d s  RSS %7.1f MiB\n", $1, $2 / 1024}' "$out/rss"
grep -o 'labels=(string)< [^>]*>' "$out/log" | sort | uniq -c | sort -rn | head -5 |
  sed 's/^/  read: /'
errors=$(grep -c '^ERROR' "$out/log" || true)
# Steady state: the second half of the run must not grow (the first half
# may: a wider line than any before grows the recogniser's input, and its
# arena, once).  The last sample is taken while the pipeline shuts down.
awk -v rc="$rc" -v errors="$errors" -v half=$((secs / 2)) '
  { t[NR] = $1; r[NR] = $2 }
  END {
    n = NR - 1
    for (i = 1; i <= n; i++) {
      if (t[i] >= 60 && first == "") first = r[i]
      if (t[i] >= half && base == "") base = r[i]
      if (base != "" && r[i] - base > grow) grow = r[i] - base
      if (r[i] > peak) peak = r[i]
    }
    if (base == "" || first == "") { print "ocr-live-soak: FAIL (too short a run)"; exit 1 }
    printf "ocr-live-soak: RSS at 60 s %.1f MiB, at %d s %.1f MiB, peak %.1f MiB; growth over the " \
      "second half %.1f MiB (limit 1), errors %d\n", first / 1024, half, base / 1024,
      peak / 1024, grow / 1024, errors
    if (rc != 0 || errors > 0 || grow > 1024) { print "ocr-live-soak: FAIL"; exit 1 }
    print "ocr-live-soak: PASS"
  }' "$out/rss"

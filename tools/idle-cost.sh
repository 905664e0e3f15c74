#!/usr/bin/env bash
# idle-cost.sh - what the onnxinfer element costs a live 30 fps pipeline
# beyond its inferences, i.e. between frames (the worker pool must sleep,
# not spin).
#
#   tools/idle-cost.sh [--build DIR] [--model FILE.onnx] [--threads N] [--seconds S]
#
# Runs three pipelines, S seconds each after a 3 s warm-up:
#   videotestsrc is-live ! 30 fps ! videoconvert ! videoscale ! X ! fakesink
# with X = onnxinfer threads=1, onnxinfer threads=N (post-messages=true: each
# inference's latency-us comes on the bus), and a capsfilter to the model's
# input size (the rest of the pipeline alone).  Per second of stream it
# prints each one's CPU time (/proc), the summed inference latency (wall
# time in nn_session_run) and the nn-worker threads' CPU time, then:
#   element outside inference = CPU(threads=1) - CPU(base) - latency:
#     pre-processing, bus messages, everything between inferences but the pool
#   worker pool overhead = CPU(threads=N) - CPU(threads=1): what the pool
#     adds in all (its spin after each job, wake-ups, split imbalance); its
#     idle cost between frames is part of it, so this bounds it from above
#   between frames, threads=N = CPU(threads=N) - CPU(base) - latency: the
#     cruder bound (it also holds the workers' share of each inference,
#     which runs beside the caller and so is not in the latency).
#   idle stream: the threads=N pipeline at 1 frame/s, i.e. idle 99.8% of
#     the time: its CPU per second is one inference plus what the element
#     and its pool cost between frames.  A run ends by parking the pool,
#     whose workers then sleep on a condition variable until the next frame.
# Needs bash, gst-launch-1.0 and Linux /proc.  Information, not a test: run it on
# an otherwise quiet machine.
set -eu
cd "$(dirname "$0")/.."
BUILD=build
MODEL=""
THREADS=2
SECS=10
WARM=3
while [ $# -gt 0 ]; do
  case "$1" in
    --build) BUILD=$2; shift 2 ;;
    --model) MODEL=$2; shift 2 ;;
    --threads) THREADS=$2; shift 2 ;;
    --seconds) SECS=$2; shift 2 ;;
    *) echo "usage: $0 [--build DIR] [--model FILE.onnx] [--threads N] [--seconds S]" >&2; exit 2 ;;
  esac
done
SHARED=${NN_SHARED_DIR:-$(cd .. && pwd)/shared}
[ -n "$MODEL" ] || MODEL=$SHARED/real-cases/blazeface_front_128/model.onnx
[ -f "$MODEL" ] || { echo "idle-cost: $MODEL not found" >&2; exit 2; }
[ -f "$BUILD/plugin/gstreamer-1.0/libgstonnxinfer.so" ] || { echo "idle-cost: build $BUILD with GStreamer first" >&2; exit 2; }
export GST_PLUGIN_PATH="$PWD/$BUILD/plugin/gstreamer-1.0"
TICK=$(getconf CLK_TCK)
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

# utime + stime of a process or thread, in clock ticks
ticks() { awk '{ sub(/^.*\) /, ""); print $12 + $13 }' "$1" 2>/dev/null || echo 0; }
proc_ticks() { ticks "/proc/$1/stat"; }
worker_ticks() {
  t=0
  for d in /proc/"$1"/task/*; do
    if [ "$(cat "$d/comm" 2>/dev/null)" = nn-worker ]; then
      t=$((t + $(ticks "$d/stat")))
    fi
  done
  echo "$t"
}
lat_sum() { sed -n 's/.*latency-us=(guint64)\([0-9]*\).*/\1/p' "$1" | awk '{ s += $1; n++ } END { printf "%d %d\n", n, s }'; }

# run NAME ELEMENT: prints "cpu_ticks worker_ticks frames latency_us seconds"
run() {
  log=$TMP/$1.log
  # shellcheck disable=SC2086
  gst-launch-1.0 -m videotestsrc is-live=true ! video/x-raw,framerate=$FPS/1 ! videoconvert ! \
    videoscale ! $2 ! fakesink >"$log" 2>&1 &
  pid=$!
  sleep "$WARM"
  c0=$(proc_ticks $pid); w0=$(worker_ticks $pid); set -- $(lat_sum "$log"); n0=$1; l0=$2
  t0=$(date +%s%N)
  sleep "$SECS"
  c1=$(proc_ticks $pid); w1=$(worker_ticks $pid); set -- $(lat_sum "$log"); n1=$1; l1=$2
  t1=$(date +%s%N)
  kill -INT $pid 2>/dev/null || true
  wait $pid 2>/dev/null || true
  echo "$((c1 - c0)) $((w1 - w0)) $((n1 - n0)) $((l1 - l0)) $(( (t1 - t0) / 1000000 ))"
}

INFER="onnxinfer model-location=$MODEL post-messages=true"
# the direct measure: a stream that is idle almost all the time (1 frame/s,
# 998 ms of every second between frames) costs what the pool costs idle,
# plus one inference per second
FPS=30
I1=$(FPS=1; run idle "onnxinfer model-location=$MODEL threads=$THREADS")
T1=$(run one "$INFER threads=1")
TN=$(run many "$INFER threads=$THREADS")
# the caps onnxinfer negotiated (the model's input size), for the baseline's scaler
CAPS=$(sed -n 's/.*onnxinfer0.sink: caps = \(video\/x-raw[^;]*\).*/\1/p' "$TMP/one.log" | head -1)
[ -n "$CAPS" ] || CAPS="video/x-raw,width=128,height=128"
B=$(run base "$(echo "$CAPS" | sed 's/([a-z0-9]*)//g; s/ //g')")
echo "$T1 $TN $B $I1" | awk -v tick="$TICK" -v thr="$THREADS" -v model="$(basename "$(dirname "$MODEL")")" '
function ms(t, msec) { return t / tick * 1000 / (msec / 1000.0) }
{
  c1 = ms($1, $5); f1 = $3 / ($5 / 1000.0); l1 = $4 / 1000.0 / ($5 / 1000.0)
  cn = ms($6, $10); wn = ms($7, $10); fn = $8 / ($10 / 1000.0); ln = $9 / 1000.0 / ($10 / 1000.0)
  cb = ms($11, $15)
  printf "model %s, %.0f s per pipeline after a warm-up, per second of stream:\n", model, $5 / 1000.0
  printf "  without onnxinfer                 %7.1f ms CPU\n", cb
  printf "  threads=1: %4.1f frames inferred  %7.1f ms CPU, inference latency %6.1f ms (%.2f ms/frame)\n", f1, c1, l1, (f1 > 0) ? l1 / f1 : 0
  printf "  threads=%d: %4.1f frames inferred  %7.1f ms CPU, inference latency %6.1f ms (%.2f ms/frame), nn-worker threads %.1f ms CPU\n", thr, fn, cn, ln, (fn > 0) ? ln / fn : 0, wn
  e = c1 - cb - l1
  printf "  element outside inference (threads=1: CPU - base - latency)  %6.1f ms = %.2f%% of a core\n", e, e / 10
  o = cn - c1
  printf "  worker pool overhead (threads=%d CPU - threads=1 CPU)          %6.1f ms = %.2f%% of a core\n", thr, o, o / 10
  printf "  between frames, threads=%d (CPU - base - latency, upper bound) %6.1f ms = %.2f%% of a core\n", thr, cn - cb - ln, (cn - cb - ln) / 10
  cs = ms($16, $20); ws = ms($17, $20)
  printf "  idle stream, threads=%d at 1 frame/s: %.1f ms CPU per s (nn-worker threads %.1f ms): %.2f%% of a core\n", thr, cs, ws, cs / 10
  printf "    (one inference a second included; /proc counts in %d ms ticks)\n", 1000 / tick
}'

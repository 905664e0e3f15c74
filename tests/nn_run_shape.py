#!/usr/bin/env python3
"""nn-run --shape NAME=DxDx...: the dims reach the generated input (the
output shape follows them), and hostile values end with one clear line on
stderr and exit status 2, never a crash or a run.  Also --ab VAR=VALUE, the
in-process A/B of two sessions: its two lines, a finite ratio, and the same
clear refusals.

    nn_run_shape.py NN_RUN SHARED_DIR

Uses the PP-OCR v4 detector (input x: [N, 3, H, W], dynamic N, H, W; output
[N, 1, H, W]) and recognizer (x: [N, 3, 48, W]; output [N, W/8, 6625]) of
SHARED_DIR/real-cases; exit 77 (skip) when they are not there.
"""
import os
import re
import subprocess
import sys


def run(nn_run, args):
    p = subprocess.run([nn_run] + args, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       text=True, errors="replace", timeout=300)
    return p.returncode, p.stdout, p.stderr


def main():
    nn_run, shared = sys.argv[1], sys.argv[2]
    det = os.path.join(shared, "real-cases", "ppocr_v4_det", "model.onnx")
    rec = os.path.join(shared, "real-cases", "ppocr_v4_rec", "model.onnx")
    if not (os.path.isfile(det) and os.path.isfile(rec)):
        print(f"SKIP: {det} / {rec} not found")
        return 77
    failures = []

    def expect_output(model, shape_args, want, extra=()):
        rc, out, err = run(nn_run, [model] + shape_args + list(extra))
        m = re.search(r"^output \S+: float32 \[([0-9x]+)\]", out, re.M)
        got = m.group(1) if m else None
        ok = rc == 0 and got == want
        print(f"{'ok  ' if ok else 'FAIL'} {' '.join(shape_args)} -> [{got}] (want [{want}], rc {rc})")
        if not ok:
            failures.append(f"{shape_args}: rc {rc}, output [{got}], stderr {err.strip()[:200]}")

    # the shape takes effect (dynamic batch, height and width), repeatable
    # options, the first input by name
    expect_output(det, ["--shape", "x=1x3x64x96"], "1x1x64x96")
    expect_output(det, ["--shape", "x=2x3x32x160"], "2x1x32x160")
    expect_output(rec, ["--shape", "x=1x3x48x160"], "1x20x6625")
    if os.environ.get("NN_RUN_SHAPE_VULKAN") == "1":
        expect_output(det, ["--shape", "x=1x3x64x96"], "1x1x64x96", ["--backend", "vulkan"])

    # --ab: session B (here without Winograd) on A's input, its dynamic
    # shape included; the two sessions' medians and the ratio of the pairs
    rc, out, err = run(nn_run, [det, "--shape", "x=1x3x64x96", "--bench", "6", "--ab",
                                "NN_NO_WINOGRAD=1"])
    m = re.search(r"^ab: A median_ms=([0-9.]+) .* B \(NN_NO_WINOGRAD=1\) median_ms=([0-9.]+)", out,
                  re.M)
    r = re.search(r"^ab: B/A median of pair ratios ([0-9.]+) \(quartiles ([0-9.]+) \.\. ([0-9.]+)\)",
                  out, re.M)
    ok = (rc == 0 and m is not None and r is not None and float(m.group(1)) > 0 and
          float(m.group(2)) > 0 and 0 < float(r.group(2)) <= float(r.group(1)) <= float(r.group(3)))
    print(f"{'ok  ' if ok else 'FAIL'} --ab NN_NO_WINOGRAD=1: rc {rc}: {r.group(0) if r else ''}")
    if not ok:
        failures.append(f"--ab: rc {rc}, stdout {out.strip()[-300:]!r}, stderr {err.strip()[:300]!r}")

    # hostile values: exit 2, one line "nn-run: ..." naming the problem
    hostile = [
        (det, ["--shape", "x=1x3x0x96"], r"dim 2 is 0"),
        (det, ["--shape", "x=1x3x-64x96"], r"dim 2 is negative"),
        (det, ["--shape", "x=1x3x99999999999999999999x96"], r"dim 2 is too large"),
        (det, ["--shape", "x=4294967296x4294967296x4294967296x2"], r"overflows"),
        (det, ["--shape", "x=1x3x65536x65536"], r"over the limit of \d+ per tensor"),
        (det, ["--shape", "x=1x3x64x96", "--limit-elems", "1000"], r"over the limit of 1000"),
        (det, ["--shape", "x=1x3x64x96x1x1x1x1x1"], r"more than 8 dims"),
        (det, ["--shape", "x=1x3x64x96x1", "--limit-rank", "4"], r"rank 5 is over the limit"),
        (det, ["--shape", "image=1x3x64x96"], r"no input 'image' \(its inputs: 'x'\)"),
        (det, ["--shape", "x=1x3x64"], r"has rank 4, the shape gives 3"),
        (det, ["--shape", "x=1x4x64x96"], r"dim 1 of input 'x' is fixed at 3"),
        (det, ["--shape", "x=1x3x64x96", "--shape", "x=1x3x32x32"], r"already has a --shape"),
        (det, ["--shape", "x="], r"no dims"),
        (det, ["--shape", "=1x3"], r"expected NAME=DIMS"),
        (det, ["--shape", "x"], r"expected NAME=DIMS"),
        (det, ["--shape", "x=1x3xx96"], r"not a positive integer"),
        (det, ["--shape", "x=1x3x64x"], r"unexpected 'x'"),
        (det, ["--shape", "x=1,3,64,96"], r"unexpected ','"),
        (det, ["--shape", "x=1x3x64x96abc"], r"unexpected 'a'"),
        (det, ["--shape", "x= 1x3x64x96"], r"not a positive integer"),
        (det, ["--ab", "NN_NO_WINOGRAD=1"], r"--ab compares timed runs: it needs --bench"),
        (det, ["--bench", "2", "--ab", "NN_NO_WINOGRAD"], r"--ab needs VAR=VALUE"),
        (det, ["--bench", "2", "--ab", "=1"], r"--ab needs VAR=VALUE"),
        (det, ["--bench", "2", "--ab", "N" * 300 + "=1"], r"a name under 256 bytes"),
    ]
    for model, args, pattern in hostile:
        rc, out, err = run(nn_run, [model] + args)
        lines = [l for l in err.splitlines() if l.strip()]
        ok = (rc == 2 and len(lines) == 1 and lines[0].startswith("nn-run: ") and
              re.search(pattern, lines[0]) is not None and "output " not in out)
        print(f"{'ok  ' if ok else 'FAIL'} {' '.join(args)}: rc {rc}: {lines[0] if lines else ''}")
        if not ok:
            failures.append(f"{args}: rc {rc}, stderr {err.strip()[:300]!r}")
    # --check brings its own inputs
    case = os.path.dirname(det)
    rc, out, err = run(nn_run, ["--check", case, "--shape", "x=1x3x64x96"])
    ok = rc == 2 and "--check" in err
    print(f"{'ok  ' if ok else 'FAIL'} --check with --shape: rc {rc}: {err.strip()}")
    if not ok:
        failures.append("--check with --shape was not refused")

    if failures:
        print(f"{len(failures)} failure(s):")
        for f in failures:
            print("  " + f)
        return 1
    print("PASS")
    return 0


if __name__ == "__main__":
    sys.exit(main())

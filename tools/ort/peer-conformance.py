#!/usr/bin/python3
"""Which ONNX node cases ONNX Runtime (the dev-only peer in tools/ort) passes
that the CPU backend does not: issue 14's acceptance, "every case ONNX
Runtime 1.30 passes also passes here", as a re-runnable check.

    tools/ort/peer-conformance.py [--shared DIR] [CASE_NAME ...]

Without names it takes every node case of DIR/onnx-tests/node that
tests/expected/cpu.txt does not list.  Each runs through ort-run.js with the
case's own inputs; its outputs are compared with the case's references
(rtol 1e-3, atol 1e-7, the ONNX backend tests' defaults; NaN equals NaN).
Prints one line per case (ORT-PASS, ORT-MISMATCH, ORT-ERROR and the error's
last line), a summary and the cases ONNX Runtime passes that the expected
list lacks; exits 1 when there is one.
Needs python3-onnx (/usr/bin/python3) and node; a report, not a test.
"""
import argparse
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))


def tensor(path):
    t = onnx.TensorProto()
    with open(path, "rb") as f:
        t.ParseFromString(f.read())
    return t


def check(case_dir, tmp):
    data = os.path.join(case_dir, "test_data_set_0")
    if not os.path.isdir(data):
        return "ORT-ERROR", "no test_data_set_0"
    args = ["node", os.path.join(HERE, "ort-run.js"), os.path.join(case_dir, "model.onnx")]
    for f in sorted(os.listdir(data)):
        if f.startswith("input_"):
            p = os.path.join(data, f)
            args += ["--input", f"{tensor(p).name}={p}"]
    out = os.path.join(tmp, os.path.basename(case_dir))
    args += ["--save-outputs", out]
    try:
        p = subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                           errors="replace", timeout=120)
    except subprocess.TimeoutExpired:
        return "ORT-ERROR", "timeout"
    if p.returncode != 0:
        lines = p.stdout.strip().splitlines()
        return "ORT-ERROR", (lines[-1] if lines else f"exit {p.returncode}")[:160]
    for f in sorted(os.listdir(data)):
        if not f.startswith("output_"):
            continue
        got_path = os.path.join(out, f)
        if not os.path.exists(got_path):
            return "ORT-MISMATCH", f"{f} missing"
        try:
            want = numpy_helper.to_array(tensor(os.path.join(data, f)))
            got = numpy_helper.to_array(tensor(got_path))
        except Exception as e:  # a type this python3-onnx cannot read
            return "ORT-ERROR", f"{f}: {e}"[:160]
        if want.shape != got.shape:
            return "ORT-MISMATCH", f"{f}: shape {got.shape}, want {want.shape}"
        if want.dtype.kind in "fc":
            ok = np.allclose(got, want, rtol=1e-3, atol=1e-7, equal_nan=True)
        else:
            ok = np.array_equal(got, want)
        if not ok:
            return "ORT-MISMATCH", f
    return "ORT-PASS", ""


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--shared", default=os.environ.get("NN_SHARED_DIR", os.path.join(REPO, "..", "shared")))
    ap.add_argument("cases", nargs="*")
    a = ap.parse_args()
    node_dir = os.path.join(a.shared, "onnx-tests", "node")
    if not os.path.isdir(node_dir):
        print(f"peer-conformance: {node_dir} not found")
        return 2
    if subprocess.run(["sh", os.path.join(HERE, "install.sh")]).returncode != 0:
        print("peer-conformance: cannot install onnxruntime-node (npm)")
        return 2
    with open(os.path.join(REPO, "tests", "expected", "cpu.txt")) as f:
        ours = {l.strip()[len("node/"):] for l in f if l.startswith("node/")}
    cases = a.cases or sorted(c for c in os.listdir(node_dir) if c not in ours)
    counts, missed = {}, []
    with tempfile.TemporaryDirectory(prefix="peer-conf-") as tmp:
        for c in cases:
            status, why = check(os.path.join(node_dir, c), tmp)
            counts[status] = counts.get(status, 0) + 1
            if status == "ORT-PASS" and c not in ours:
                missed.append(c)
            print(f"{status:12s} {c}" + (f": {why}" if why else ""))
    print("; ".join(f"{k} {v}" for k, v in sorted(counts.items())) + f" of {len(cases)} case(s)")
    print(f"{len(missed)} case(s) ONNX Runtime passes and tests/expected/cpu.txt does not list" +
          (": " + " ".join(missed) if missed else ""))
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())

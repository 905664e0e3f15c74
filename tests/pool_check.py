#!/usr/bin/env python3
"""3x3 stride-1 "same" pools (cpu/pool.c's whole-plane path) against numpy:
AveragePool with and without count_include_pad and MaxPool, on maps from 2x2
to 28x28 (and one past the path's size limit, which takes the row path), on
every CPU instruction set this machine has, serial and on two threads.  The
backend-ops harness compares the CPU backend with itself; this compares it
with values computed another way.

    pool_check.py NN_RUN WORKDIR
"""
import os
import subprocess
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def reference(x, op, include_pad):
    n, c, h, w = x.shape
    fill = -np.inf if op == "MaxPool" else 0.0
    xp = np.full((n, c, h + 2, w + 2), fill, np.float64)
    xp[:, :, 1:-1, 1:-1] = x
    ones = np.zeros((h + 2, w + 2))
    ones[1:-1, 1:-1] = 1
    y = np.full(x.shape, -np.inf if op == "MaxPool" else 0.0)
    cnt = np.zeros((h, w))
    for dh in range(3):
        for dw in range(3):
            win = xp[:, :, dh:dh + h, dw:dw + w]
            y = np.maximum(y, win) if op == "MaxPool" else y + win
            cnt += ones[dh:dh + h, dw:dw + w]
    if op == "AveragePool":
        y = y / (9.0 if include_pad else cnt)
    return y.astype(np.float32)


def make_case(d, shape, op, include_pad, seed):
    rng = np.random.default_rng(seed)
    x = rng.uniform(-2, 2, shape).astype(np.float32)
    attrs = dict(kernel_shape=[3, 3], strides=[1, 1], pads=[1, 1, 1, 1])
    if op == "AveragePool":
        attrs["count_include_pad"] = int(include_pad)
    node = helper.make_node(op, ["x"], ["y"], **attrs)
    g = helper.make_graph([node], "pool", [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(shape))],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, list(shape))])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 7
    os.makedirs(os.path.join(d, "test_data_set_0"), exist_ok=True)
    onnx.save(m, os.path.join(d, "model.onnx"))
    with open(os.path.join(d, "test_data_set_0", "input_0.pb"), "wb") as f:
        f.write(numpy_helper.from_array(x, "x").SerializeToString())
    with open(os.path.join(d, "test_data_set_0", "output_0.pb"), "wb") as f:
        f.write(numpy_helper.from_array(reference(x.astype(np.float64), op, include_pad), "y").SerializeToString())


def main():
    nn_run, work = sys.argv[1], sys.argv[2]
    shapes = [(1, 1, 2, 2), (1, 3, 2, 9), (1, 2, 9, 2), (1, 4, 7, 7), (2, 5, 14, 14), (1, 3, 28, 28),
              (1, 2, 17, 33), (1, 1, 91, 92)]
    cases = []
    for i, shape in enumerate(shapes):
        for op, inc in (("MaxPool", False), ("AveragePool", False), ("AveragePool", True)):
            d = os.path.join(work, f"{op}_{inc:d}_{'x'.join(map(str, shape))}")
            make_case(d, shape, op, inc, i)
            cases.append(d)
    failures, runs = [], 0
    for isa in ("portable", "avx2", "avx512"):
        for threads in ("1", "2"):
            env = dict(os.environ, NN_CPU=isa)
            for d in cases:
                p = subprocess.run([nn_run, "--check", d, "--threads", threads, "--rtol", "1e-5", "--atol", "1e-6"],
                                   stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env,
                                   timeout=120)
                runs += 1
                if p.returncode != 0:
                    failures.append(f"{os.path.basename(d)} NN_CPU={isa} threads={threads}: "
                                    f"{p.stdout.strip().splitlines()[-1:]}")
    for f in failures:
        print("FAIL " + f)
    print(f"{len(cases)} pool cases x 3 instruction sets x 1-2 threads: {runs - len(failures)} of {runs} match")
    print(f"{0 if failures else 1} passed, {1 if failures else 0} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

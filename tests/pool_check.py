#!/usr/bin/env python3
"""The pools of cpu/pool.c's special paths against numpy: 3x3 stride 1 with
one pixel of padding (AveragePool with and without count_include_pad,
MaxPool; maps from 2x2 to 28x28 and one past the path's size limit, which
takes the row path), and MaxPool and AveragePool stride 2 with padding 0
or 1 before, any after, ceil_mode on and off; 2x2 stride 2 unpadded; 5x5,
9x9 and 13x13 stride 1 padded (SPP); one window the size of the plane,
unpadded; MaxPool on uint8 and int8 (the 8-bit path: strides 1 and 2,
padded, ceil_mode, rows wider than its column chunk);
on every CPU instruction set this machine has,
serial and on two threads.  The backend-ops harness compares the CPU backend
with itself; this compares it with values computed another way.

    pool_check.py NN_RUN WORKDIR
"""
import os
import subprocess
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def out_size(n, s, pb, pe, ceil, k=3):
    span = n + pb + pe - k
    return (span + s - 1) // s + 1 if ceil else span // s + 1


def reference(x, op, include_pad, s, pads, ceil, k=(3, 3)):
    """Window by window: taps outside the input are left out (MaxPool,
    AveragePool without count_include_pad) or count as zeros."""
    n, c, h, w = x.shape
    oh = out_size(h, s, pads[0], pads[2], ceil, k[0])
    ow = out_size(w, s, pads[1], pads[3], ceil, k[1])
    y = np.zeros((n, c, oh, ow))
    for i in range(oh):
        for j in range(ow):
            r0, c0 = i * s - pads[0], j * s - pads[1]
            rs = [r for r in range(r0, r0 + k[0]) if 0 <= r < h]
            cs = [q for q in range(c0, c0 + k[1]) if 0 <= q < w]
            win = x[:, :, rs][:, :, :, cs]
            if op == "MaxPool":
                y[:, :, i, j] = win.max(axis=(2, 3))
            else:
                y[:, :, i, j] = win.sum(axis=(2, 3)) / (k[0] * k[1] if include_pad else len(rs) * len(cs))
    return y.astype(np.float32)


def make_case(d, shape, op, include_pad, seed, s=1, pads=(1, 1, 1, 1), ceil=False, k=(3, 3),
              dtype=np.float32):
    rng = np.random.default_rng(seed)
    if dtype == np.float32:
        x = rng.uniform(-2, 2, shape).astype(np.float32)
    else:
        info = np.iinfo(dtype)
        x = rng.integers(info.min, info.max, shape, endpoint=True).astype(dtype)
    elem = {np.float32: TensorProto.FLOAT, np.uint8: TensorProto.UINT8, np.int8: TensorProto.INT8}[dtype]
    attrs = dict(kernel_shape=list(k), strides=[s, s], pads=list(pads))
    if op == "AveragePool":
        attrs["count_include_pad"] = int(include_pad)
    if ceil:
        attrs["ceil_mode"] = 1
    y = reference(x.astype(np.float64), op, include_pad, s, pads, ceil, k).astype(dtype)
    node = helper.make_node(op, ["x"], ["y"], **attrs)
    g = helper.make_graph([node], "pool", [helper.make_tensor_value_info("x", elem, list(shape))],
                          [helper.make_tensor_value_info("y", elem, list(y.shape))])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 7
    os.makedirs(os.path.join(d, "test_data_set_0"), exist_ok=True)
    onnx.save(m, os.path.join(d, "model.onnx"))
    with open(os.path.join(d, "test_data_set_0", "input_0.pb"), "wb") as f:
        f.write(numpy_helper.from_array(x, "x").SerializeToString())
    with open(os.path.join(d, "test_data_set_0", "output_0.pb"), "wb") as f:
        f.write(numpy_helper.from_array(y, "y").SerializeToString())


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
    # stride 2: SqueezeNet's unpadded, ResNet's padded, Inception's
    # padded after only; odd and even sizes, ceil_mode
    for i, (shape, pads, ceil) in enumerate([((1, 3, 111, 111), (0, 0, 0, 0), False),
                                             ((1, 2, 112, 112), (1, 1, 1, 1), False),
                                             ((1, 4, 28, 28), (0, 0, 1, 1), False),
                                             ((2, 3, 13, 13), (0, 0, 0, 0), True),
                                             ((1, 2, 14, 9), (1, 0, 2, 1), True),
                                             ((1, 1, 3, 4), (1, 1, 0, 0), False)]):
        d = os.path.join(work, f"MaxPool_s2_{'x'.join(map(str, shape))}_{i}")
        make_case(d, shape, "MaxPool", False, 100 + i, 2, pads, ceil)
        cases.append(d)
        # AveragePool the same (ShuffleNet's is padded 1): without and, where
        # no window reaches past the padding (no ceil_mode), with
        # count_include_pad
        for inc in (False, True) if not ceil else (False,):
            d = os.path.join(work, f"AveragePool_s2_{inc:d}_{'x'.join(map(str, shape))}_{i}")
            make_case(d, shape, "AveragePool", inc, 150 + i, 2, pads, ceil)
            cases.append(d)
    # 2x2 stride 2 unpadded (BlazeFace's and VGG's; a direct AVX2 path):
    # widths of whole vectors, with a remainder, and odd sizes where
    # ceil_mode's last window is partial (the row path)
    for i, (shape, ceil) in enumerate([((1, 24, 128, 128), False), ((2, 3, 13, 21), False),
                                       ((1, 2, 8, 34), False), ((1, 2, 7, 19), True)]):
        for op in ("MaxPool", "AveragePool"):
            d = os.path.join(work, f"{op}_2x2s2_{'x'.join(map(str, shape))}_{i}")
            make_case(d, shape, op, False, 250 + i, 2, (0, 0, 0, 0), ceil, (2, 2))
            cases.append(d)
    # YOLO's SPP / SPPF windows, stride 1, "same" padding (the row path's
    # 5-, 9- and 13-tap instances): maps narrower than the window too
    for i, (shape, k) in enumerate([((1, 8, 20, 20), 5), ((2, 3, 13, 17), 9), ((1, 2, 9, 40), 13),
                                    ((1, 2, 3, 4), 5)]):
        for op in ("MaxPool", "AveragePool"):
            d = os.path.join(work, f"{op}_{k}x{k}s1_{'x'.join(map(str, shape))}")
            make_case(d, shape, op, False, 300 + i, 1, (k // 2,) * 4, False, (k, k))
            cases.append(d)
    # one window the size of the plane, unpadded (the global path)
    for i, (shape, op) in enumerate([((1, 8, 7, 7), "AveragePool"), ((2, 3, 5, 3), "MaxPool")]):
        d = os.path.join(work, f"{op}_whole_{'x'.join(map(str, shape))}")
        make_case(d, shape, op, False, 200 + i, 1, (0, 0, 0, 0), False, shape[2:])
        cases.append(d)
    # 8-bit MaxPool (an int8 model's): ResNet's 3x3 stride 2 padded, ceil_mode
    # unpadded, 5x5 stride 1, 2x2 stride 2, rows past the 2048-column chunk,
    # stride-2 rows of 16 outputs and more
    for i, (shape, k, st, pads, ceil, dt) in enumerate([
            ((1, 3, 37, 41), 3, 2, (1, 1, 1, 1), False, np.uint8),
            ((2, 2, 13, 13), 3, 2, (0, 0, 0, 0), True, np.int8),
            ((1, 2, 9, 40), 5, 1, (2, 2, 2, 2), False, np.int8),
            ((1, 2, 8, 9), 2, 2, (0, 0, 0, 0), True, np.uint8),
            ((1, 1, 4, 2500), 3, 1, (1, 1, 1, 1), False, np.uint8),
            ((1, 1, 3, 4400), 3, 2, (1, 0, 1, 1), False, np.int8),
            # stride 2 in 16-output vectors: 2- and 4-wide windows, a tail
            ((1, 2, 6, 75), 2, 2, (0, 0, 0, 0), True, np.uint8),
            ((1, 2, 9, 70), 4, 2, (1, 2, 1, 2), False, np.int8)]):
        d = os.path.join(work, f"MaxPool8_{np.dtype(dt).name}_{k}s{st}_{'x'.join(map(str, shape))}")
        make_case(d, shape, "MaxPool", False, 400 + i, st, pads, ceil, (k, k), dt)
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

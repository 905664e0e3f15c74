#!/usr/bin/python3
"""Generate the control-flow models and their reference cases.

  /usr/bin/python3 tests/controlflow/make_controlflow.py OUTDIR

Models built with onnx.helper (Debian's python3-onnx, onnx 1.12) the way
exporters write them: a Loop whose trip count is an input and whose
condition the body computes (tf2onnx's while loops), an If choosing between
two convolution branches on a condition computed from the data (torch.jit's
script ifs), a Scan over two inputs with a reversed direction and a second
output axis, and a Loop with scan outputs whose body holds an If reading
outer-scope values.  Every case is a directory in the layout of
`nn-run --check` (model.onnx, test_data_set_0/input_K.pb, output_K.pb) whose
expected outputs are computed here with numpy; run_controlflow.py replaces
them by ONNX Runtime's when the dev-only onnxruntime-node is installed.
OUTDIR/cases.json lists the cases: {"name", "inputs": [names]}.
"""
import json
import os
import shutil
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

F = TensorProto.FLOAT
I64 = TensorProto.INT64
B = TensorProto.BOOL
CASES = []


def vi(name, elem=F, shape=None):
    return helper.make_tensor_value_info(name, elem, shape)


def model(graph, opset=13):
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 7
    onnx.checker.check_model(m)
    return m


def write_case(out, name, m, inputs, outputs):
    d = os.path.join(out, name)
    ds = os.path.join(d, "test_data_set_0")
    os.makedirs(ds, exist_ok=True)
    onnx.save(m, os.path.join(d, "model.onnx"))
    for k, (n, a) in enumerate(inputs):
        with open(os.path.join(ds, f"input_{k}.pb"), "wb") as f:
            f.write(numpy_helper.from_array(a, n).SerializeToString())
    for k, (n, a) in enumerate(outputs):
        with open(os.path.join(ds, f"output_{k}.pb"), "wb") as f:
            f.write(numpy_helper.from_array(a, n).SerializeToString())
    CASES.append({"name": name, "inputs": [n for n, _ in inputs]})


# ---- a while loop: trip count from the input, condition from the data --------
def loop_accumulate(out, rng):
    one = numpy_helper.from_array(np.array(0.9, np.float32), "decay")
    lim = numpy_helper.from_array(np.array(40.0, np.float32), "limit")
    body = helper.make_graph(
        [helper.make_node("Mul", ["acc_in", "decay"], ["scaled"]),
         helper.make_node("Add", ["scaled", "x"], ["acc_out"]),           # x: outer scope
         helper.make_node("ReduceSum", ["acc_out"], ["total"], keepdims=0),
         helper.make_node("Less", ["total", "limit"], ["cond_out"])],       # limit: outer scope
        "body", [vi("i", I64, []), vi("cond_in", B, []), vi("acc_in", F, [1, 8])],
        [vi("cond_out", B, []), vi("acc_out", F, [1, 8])])
    g = helper.make_graph(
        [helper.make_node("Loop", ["n", "go", "acc0"], ["acc"], body=body)],
        "loop_accumulate", [vi("x", F, [1, 8]), vi("n", I64, [])], [vi("acc", F, [1, 8])],
        initializer=[numpy_helper.from_array(np.zeros((1, 8), np.float32), "acc0"),
                     numpy_helper.from_array(np.array(True), "go"), one, lim])
    m = model(g)
    for tag, n in (("stops_on_condition", 100), ("stops_on_count", 3)):
        x = rng.random((1, 8), dtype=np.float32)
        acc = np.zeros((1, 8), np.float32)
        cond = True
        i = 0
        while i < n and cond:
            acc = (acc * np.float32(0.9) + x).astype(np.float32)
            cond = bool(acc.sum(dtype=np.float32) < np.float32(40.0))
            i += 1
        write_case(out, f"loop_accumulate_{tag}", m, [("x", x), ("n", np.array(n, np.int64))], [("acc", acc)])


# ---- an If between two convolutions on a computed condition ------------------
def conv2d(x, w, b, pad):
    n, c, h, wd = x.shape
    m, _, kh, kw = w.shape
    xp = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    oh, ow = h + 2 * pad - kh + 1, wd + 2 * pad - kw + 1
    y = np.zeros((n, m, oh, ow), np.float64)
    for i in range(kh):
        for j in range(kw):
            patch = xp[:, :, i:i + oh, j:j + ow]
            y += np.einsum("nchw,mc->nmhw", patch, w[:, :, i, j])
    return (y + b.reshape(1, m, 1, 1)).astype(np.float32)


def if_conv(out, rng):
    w1 = rng.standard_normal((4, 3, 3, 3)).astype(np.float32)
    b1 = rng.standard_normal(4).astype(np.float32)
    w2 = rng.standard_normal((4, 3, 1, 1)).astype(np.float32)
    b2 = rng.standard_normal(4).astype(np.float32)
    then_g = helper.make_graph(
        [helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], pads=[1, 1, 1, 1]),
         helper.make_node("Relu", ["c1"], ["then_out"])],
        "then", [], [vi("then_out", F, [1, 4, 8, 8])])
    else_g = helper.make_graph(
        [helper.make_node("Conv", ["x", "w2", "b2"], ["c2"]),
         helper.make_node("Sigmoid", ["c2"], ["else_out"])],
        "else", [], [vi("else_out", F, [1, 4, 8, 8])])
    g = helper.make_graph(
        [helper.make_node("ReduceMean", ["x"], ["mean"], keepdims=0),
         helper.make_node("Greater", ["mean", "half"], ["bright"]),
         helper.make_node("If", ["bright"], ["feat"], then_branch=then_g, else_branch=else_g),
         helper.make_node("Add", ["feat", "x0"], ["y"])],
        "if_conv", [vi("x", F, [1, 3, 8, 8])], [vi("y", F, [1, 4, 8, 8])],
        initializer=[numpy_helper.from_array(a, n) for n, a in
                     (("w1", w1), ("b1", b1), ("w2", w2), ("b2", b2),
                      ("half", np.array(0.5, np.float32)), ("x0", np.full((1, 4, 1, 1), 0.25, np.float32)))])
    m = model(g)
    for tag, shift in (("then", 0.3), ("else", -0.3)):
        x = (rng.random((1, 3, 8, 8), dtype=np.float32) + np.float32(shift)).astype(np.float32)
        if x.mean() > 0.5:
            f = np.maximum(conv2d(x, w1, b1, 1), 0)
        else:
            f = 1 / (1 + np.exp(-conv2d(x, w2, b2, 0)))
        write_case(out, f"if_conv_{tag}", m, [("x", x)], [("y", (f + np.float32(0.25)).astype(np.float32))])


# ---- Scan: two scan inputs, one reversed, an output on axis 1 ------------------
def scan_two_inputs(out, rng):
    body = helper.make_graph(
        [helper.make_node("Mul", ["xt", "zt"], ["p"]),
         helper.make_node("Add", ["s_in", "p"], ["s_out"]),
         helper.make_node("Tanh", ["s_out"], ["y_t"])],
        "body", [vi("s_in", F, [3]), vi("xt", F, [3]), vi("zt", F, [3])],
        [vi("s_out", F, [3]), vi("y_t", F, [3])])
    g = helper.make_graph(
        [helper.make_node("Scan", ["s0", "x", "z"], ["s", "ys"], body=body, num_scan_inputs=2,
                          scan_input_axes=[0, 1], scan_input_directions=[0, 1], scan_output_axes=[1])],
        "scan_two_inputs", [vi("s0", F, [3]), vi("x", F, [5, 3]), vi("z", F, [3, 5])],
        [vi("s", F, [3]), vi("ys", F, [3, 5])])
    m = model(g)
    s0 = rng.standard_normal(3).astype(np.float32)
    x = rng.standard_normal((5, 3)).astype(np.float32)
    z = rng.standard_normal((3, 5)).astype(np.float32)
    s = s0.copy()
    ys = np.zeros((3, 5), np.float32)
    for t in range(5):
        s = (s + x[t] * z[:, 4 - t]).astype(np.float32)
        ys[:, t] = np.tanh(s)
    write_case(out, "scan_two_inputs", m, [("s0", s0), ("x", x), ("z", z)], [("s", s), ("ys", ys)])


# ---- a Loop with scan outputs and an If inside -------------------------------------
def loop_nested_if(out, rng):
    then_g = helper.make_graph([helper.make_node("Add", ["v_in", "step"], ["t_out"])], "then", [],
                               [vi("t_out", F, [2])])
    else_g = helper.make_graph([helper.make_node("Mul", ["v_in", "step"], ["e_out"])], "else", [],
                               [vi("e_out", F, [2])])
    body = helper.make_graph(
        [helper.make_node("Identity", ["cond_in"], ["cond_out"]),
         helper.make_node("Mod", ["i", "two"], ["r"]),
         helper.make_node("Equal", ["r", "zero"], ["even"]),
         helper.make_node("If", ["even"], ["v_out"], then_branch=then_g, else_branch=else_g),
         helper.make_node("Identity", ["v_out"], ["scan_v"])],
        "body", [vi("i", I64, []), vi("cond_in", B, []), vi("v_in", F, [2])],
        [vi("cond_out", B, []), vi("v_out", F, [2]), vi("scan_v", F, [2])])
    g = helper.make_graph(
        [helper.make_node("Loop", ["m", "", "v0"], ["v", "vs"], body=body)],
        "loop_nested_if", [vi("v0", F, [2]), vi("step", F, [2])], [vi("v", F, [2]), vi("vs", F, [5, 2])],
        initializer=[numpy_helper.from_array(np.array(5, np.int64), "m"),
                     numpy_helper.from_array(np.array(2, np.int64), "two"),
                     numpy_helper.from_array(np.array(0, np.int64), "zero")])
    m = model(g)
    v0 = rng.standard_normal(2).astype(np.float32)
    step = (rng.random(2, dtype=np.float32) + np.float32(0.5)).astype(np.float32)
    v = v0.copy()
    vs = []
    for i in range(5):
        v = (v + step if i % 2 == 0 else v * step).astype(np.float32)
        vs.append(v.copy())
    write_case(out, "loop_nested_if", m, [("v0", v0), ("step", step)], [("v", v), ("vs", np.stack(vs))])


def main():
    if len(sys.argv) < 2:
        print(__doc__)
        sys.exit(2)
    out = os.path.abspath(sys.argv[1])
    if os.path.isdir(out):
        shutil.rmtree(out)
    os.makedirs(out)
    rng = np.random.default_rng(14)
    loop_accumulate(out, rng)
    if_conv(out, rng)
    scan_two_inputs(out, rng)
    loop_nested_if(out, rng)
    with open(os.path.join(out, "cases.json"), "w") as f:
        json.dump(CASES, f, indent=1)
    print(f"{len(CASES)} control-flow cases in {out}")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Constant nodes become initializers at load (runtime/passes.c): the value
is right, nothing is folded at plan time (the bytes are held once), and the
session counts them as weights.  A Constant that is a graph output stays a
node and still reads right.

    constants_check.py NN_RUN WORKDIR

Builds the models with the onnx package (python3-onnx); exits 77 (skip)
without it.
"""
import os
import re
import subprocess
import sys

try:
    import numpy as np
    import onnx
    from onnx import TensorProto, helper, numpy_helper
except ImportError as e:  # pragma: no cover
    print(f"SKIP: {e}")
    sys.exit(77)


def write_case(d, graph, feeds, wants, opset=13):
    os.makedirs(os.path.join(d, "test_data_set_0"), exist_ok=True)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    onnx.save(model, os.path.join(d, "model.onnx"))
    for i, (name, a) in enumerate(feeds):
        with open(os.path.join(d, "test_data_set_0", f"input_{i}.pb"), "wb") as f:
            f.write(numpy_helper.from_array(a, name).SerializeToString())
    for i, (name, a) in enumerate(wants):
        with open(os.path.join(d, "test_data_set_0", f"output_{i}.pb"), "wb") as f:
            f.write(numpy_helper.from_array(a, name).SerializeToString())


def stats(nn_run, d, feeds):
    args = [nn_run, os.path.join(d, "model.onnx"), "--bench", "1", "--stats"]
    for i, (name, _) in enumerate(feeds):
        args += ["--input", f"{name}={os.path.join(d, 'test_data_set_0', f'input_{i}.pb')}"]
    out = subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True).stdout
    vals = dict(re.findall(r"(\w+)=([0-9.]+)", out))
    return {k: float(v) for k, v in vals.items()}


def check(nn_run, d):
    p = subprocess.run([nn_run, "--check", d], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       text=True)
    return p.returncode == 0 and "PASS" in p.stdout, p.stdout.strip().splitlines()[-1:]


def main():
    nn_run, work = sys.argv[1], sys.argv[2]
    failures = []
    rng = np.random.default_rng(1)

    # 1. Constant (float [2, 3]) + a Constant int64 shape into Reshape
    x = rng.standard_normal((2, 3)).astype(np.float32)
    k = rng.standard_normal((2, 3)).astype(np.float32)
    shape = np.array([3, 2], dtype=np.int64)
    g = helper.make_graph(
        [helper.make_node("Constant", [], ["k"], value=numpy_helper.from_array(k, "k")),
         helper.make_node("Constant", [], ["s"], value=numpy_helper.from_array(shape, "s")),
         helper.make_node("Add", ["x", "k"], ["a"]),
         helper.make_node("Reshape", ["a", "s"], ["y"])],
        "constants", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [3, 2])])
    d = os.path.join(work, "constants-add-reshape")
    write_case(d, g, [("x", x)], [("y", (x + k).reshape(3, 2))])
    ok, last = check(nn_run, d)
    st = stats(nn_run, d, [("x", x)])
    folded, weights = st.get("nodes_folded"), st.get("weights_bytes")
    want_w = k.nbytes + shape.nbytes
    print(f"{'ok  ' if ok else 'FAIL'} add + reshape on Constant nodes: {' '.join(last)}")
    print(f"{'ok  ' if folded == 0 else 'FAIL'} nodes folded at plan time: {folded} (want 0)")
    print(f"{'ok  ' if weights == want_w else 'FAIL'} weights_bytes {weights} (want {want_w})")
    if not ok or folded != 0 or weights != want_w:
        failures.append("constants-add-reshape")

    # 2. a Constant that is also a graph output stays a node
    g = helper.make_graph(
        [helper.make_node("Constant", [], ["k"], value=numpy_helper.from_array(k, "k")),
         helper.make_node("Mul", ["x", "k"], ["y"])],
        "constant-output", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3]),
         helper.make_tensor_value_info("k", TensorProto.FLOAT, [2, 3])])
    d = os.path.join(work, "constant-graph-output")
    write_case(d, g, [("x", x)], [("y", x * k), ("k", k)])
    ok, last = check(nn_run, d)
    print(f"{'ok  ' if ok else 'FAIL'} Constant as a graph output: {' '.join(last)}")
    if not ok:
        failures.append("constant-graph-output")

    print(f"{2 - len(failures)} of 2 cases passed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""NN_PROFILE=1: the CPU backend's per-step timing reaches the log when the
session ends: one summary line (steps, runs, ms per run), a line per op type
whose shares add up to 100 %, and the slowest nodes with their shapes; with
the knob unset, not a line of it.  A plan's first run (which packs weights)
is left out of the times; NN_PROFILE=N > 1 lists the N slowest nodes.

    nn_run_profile.py NN_RUN WORKDIR

Builds its model with onnx.helper (python3-onnx): Conv (8 -> 16, 3x3) ->
Relu -> MaxPool -> Softmax on a 1x8x32x32 input.
"""
import os
import re
import subprocess
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def make_model(path):
    rng = np.random.default_rng(3)
    w = numpy_helper.from_array(rng.standard_normal((16, 8, 3, 3)).astype(np.float32), "w")
    nodes = [
        helper.make_node("Conv", ["x", "w"], ["c"], name="conv", kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c"], ["r"], name="relu"),
        helper.make_node("MaxPool", ["r"], ["p"], name="pool", kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("Softmax", ["p"], ["y"], name="softmax", axis=1),
    ]
    g = helper.make_graph(nodes, "profile", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 8, 32, 32])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], [w])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 7
    onnx.save(m, path)


def run(nn_run, model, profile):
    env = dict(os.environ)
    env.pop("NN_PROFILE", None)
    env["NN_NO_FUSION"] = "1"  # keep Relu a step of its own
    if profile:
        env["NN_PROFILE"] = str(profile)
    p = subprocess.run([nn_run, model, "--bench", "7"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       text=True, errors="replace", timeout=120, env=env)
    return p.returncode, p.stderr


def main():
    nn_run, work = sys.argv[1], sys.argv[2]
    os.makedirs(work, exist_ok=True)
    model = os.path.join(work, "profile.onnx")
    make_model(model)
    failures = []

    rc, err = run(nn_run, model, False)
    if rc != 0 or "profile:" in err:
        failures.append(f"without NN_PROFILE: rc {rc}, profile lines {err.count('profile:')}")

    rc, err = run(nn_run, model, 1)
    lines = [l.split("profile: ", 1)[1] for l in err.splitlines() if "profile: " in l]
    print("\n".join(lines))
    head = re.match(r"(\d+) steps, (\d+) runs, ([0-9.]+) ms per run", lines[0]) if lines else None
    # at least nn-run's warm-up run and its 7 timed ones
    if rc != 0 or not head or int(head.group(1)) != 4 or int(head.group(2)) < 8 or float(head.group(3)) <= 0:
        failures.append(f"summary line: rc {rc}, {lines[:1]}")
    types = {}
    for l in lines:
        m = re.match(r"(\w+)\s+(\d+) nodes\s+([0-9.]+) ms\s+([0-9.]+) %", l)
        if m:
            types[m.group(1)] = (int(m.group(2)), float(m.group(4)))
    if sorted(types) != ["Conv", "MaxPool", "Relu", "Softmax"] or any(n != 1 for n, _ in types.values()):
        failures.append(f"op types: {types}")
    elif abs(sum(p for _, p in types.values()) - 100.0) > 0.5:
        failures.append(f"shares add up to {sum(p for _, p in types.values())} %")
    conv = [l for l in lines if l.startswith("node conv ")]
    if len(conv) != 1 or "1x8x32x32 -> 1x16x32x32" not in conv[0]:
        failures.append(f"conv node line: {conv}")
    pool = [l for l in lines if l.startswith("node pool ")]
    if len(pool) != 1 or "1x16x32x32 -> 1x16x16x16" not in pool[0]:
        failures.append(f"pool node line: {pool}")

    rc, err = run(nn_run, model, 2)
    nodes = [l for l in err.splitlines() if "profile: node " in l]
    if rc != 0 or len(nodes) != 2:
        failures.append(f"NN_PROFILE=2: rc {rc}, {len(nodes)} node lines, not 2")

    for f in failures:
        print("FAIL " + f)
    print(f"{0 if failures else 1} passed, {1 if failures else 0} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

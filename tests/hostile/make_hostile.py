#!/usr/bin/python3
"""Generate the hostile-model set: models that must be refused with one clear
line (nn-run exit 2), or that are odd but valid and must run (exit 0), and
never crash, hang or read outside their directory.

  /usr/bin/python3 tests/hostile/make_hostile.py OUTDIR [SHARED_DIR]

Every case gets its own directory OUTDIR/<case>/ holding model.onnx (and any
external-data files or links), so "the model directory" is well defined;
OUTDIR/secret/ plays the files an attacker would like to read.  The list of
cases with their expectations is written to OUTDIR/cases.json:
  {"name", "args": [extra nn-run args], "expect": [allowed exit codes],
   "msg": regex the error line must match (exit 2 only)}
Everything is generated (small, deterministic); truncated and bit-flipped
copies of the real models in SHARED_DIR/real-cases are added when present.
Needs Debian's python3-onnx (onnx 1.12: opsets <= 17 for helper checks, but
nothing here is checked: most of these models are invalid on purpose).
"""
import json
import os
import random
import shutil
import stat
import struct
import sys

import numpy as np
import onnx
from onnx import TensorProto, external_data_helper, helper, numpy_helper

F = TensorProto.FLOAT
I64 = TensorProto.INT64
CASES = []
OUT = None


def case(name, model, expect=2, msg=None, args=(), extra=None, check=False, model_path=None, allow=()):
    """Write OUT/name/model.onnx (bytes or ModelProto); extra(dir) adds files.
    args may say {dir} for the case directory.  check: run `nn-run --check
    DIR` (the verdict on stdout is judged); model_path: the path given to
    nn-run instead of model.onnx (relative to the case directory); allow:
    files outside the directory that nn-run may open (to refuse them)."""
    d = os.path.join(OUT, name)
    os.makedirs(d, exist_ok=True)
    data = model if isinstance(model, (bytes, bytearray)) else model.SerializeToString()
    with open(os.path.join(d, "model.onnx"), "wb") as f:
        f.write(data)
    if extra:
        extra(d)
    exp = list(expect) if isinstance(expect, (list, tuple)) else [expect]
    c = {"name": name, "args": list(args), "expect": exp, "msg": msg}
    if check:
        c["check"] = True
    if model_path:
        c["model"] = model_path
    if allow:
        c["allow"] = list(allow)
    CASES.append(c)


def vi(name, elem=F, shape=None):
    return helper.make_tensor_value_info(name, elem, shape)


def model(nodes, inputs, outputs, inits=(), opset=17, ir=8, value_info=()):
    g = helper.make_graph(nodes, "g", inputs, outputs, initializer=list(inits), value_info=list(value_info))
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = ir
    return m


def const_i64(name, vals, dims=None):
    return helper.make_tensor(name, I64, [len(vals)] if dims is None else dims, vals)


def raw_tensor(name, elem, dims, raw):
    t = TensorProto()
    t.name = name
    t.data_type = elem
    t.dims.extend(dims)
    t.raw_data = raw
    return t


def ext_tensor(name, dims, location, offset=None, length=None, elem=F):
    t = TensorProto()
    t.name = name
    t.data_type = elem
    t.dims.extend(dims)
    t.data_location = TensorProto.EXTERNAL
    for k, v in (("location", location), ("offset", offset), ("length", length)):
        if v is not None:
            e = t.external_data.add()
            e.key, e.value = k, str(v)
    return t


def add_model_with_init(init, shape):
    """y = x + w, w an initializer (possibly external)."""
    return model([helper.make_node("Add", ["x", "w"], ["y"])], [vi("x", F, shape)], [vi("y", F, shape)], [init])


def small_convnet(seed=0):
    """A small realistic model (conv, relu, pool, gemm, softmax) to corrupt."""
    rng = np.random.default_rng(seed)
    w1 = numpy_helper.from_array(rng.standard_normal((8, 3, 3, 3)).astype(np.float32), "w1")
    b1 = numpy_helper.from_array(rng.standard_normal(8).astype(np.float32), "b1")
    w2 = numpy_helper.from_array(rng.standard_normal((10, 8 * 8 * 8)).astype(np.float32), "w2")
    b2 = numpy_helper.from_array(rng.standard_normal(10).astype(np.float32), "b2")
    shp = const_i64("shp", [1, 512])
    nodes = [
        helper.make_node("Conv", ["x", "w1", "b1"], ["c"], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c"], ["r"]),
        helper.make_node("MaxPool", ["r"], ["p"], kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("Reshape", ["p", "shp"], ["f"]),
        helper.make_node("Gemm", ["f", "w2", "b2"], ["g"], transB=1),
        helper.make_node("Softmax", ["g"], ["y"], axis=1),
    ]
    return model(nodes, [vi("x", F, [1, 3, 16, 16])], [vi("y", F, [1, 10])], [w1, b1, w2, b2, shp], opset=13)


# ---- raw protobuf helpers (for what onnx's Python API cannot express) ------
def varint(n):
    out = b""
    while True:
        b, n = n & 0x7F, n >> 7
        if n:
            out += bytes([b | 0x80])
        else:
            return out + bytes([b])


def field(num, payload):
    return varint(num << 3 | 2) + varint(len(payload)) + payload


def deep_nesting(levels):
    """graph.node.attribute.g.node.attribute.g... `levels` deep."""
    inner = b""
    for _ in range(levels):
        inner = field(1, field(5, field(6, inner)))
    return varint(1 << 3) + varint(8) + field(7, inner)


def deep_type(levels):
    """graph input of type sequence(sequence(...(tensor)))."""
    t = field(1, varint(1 << 3) + varint(1))           # TypeProto.tensor_type{elem_type=1}
    for _ in range(levels):
        t = field(4, field(1, t))                       # TypeProto.sequence_type{elem_type=t}
    inp = field(1, b"x") + field(2, t)                  # ValueInfoProto{name, type}
    return varint(1 << 3) + varint(8) + field(7, field(11, inp))


def gen_structure():
    x4 = vi("x", F, [1, 4])
    y4 = vi("y", F, [1, 4])
    case("cycle", model([helper.make_node("Add", ["x", "b"], ["a"]), helper.make_node("Relu", ["a"], ["b"])],
                        [x4], [vi("a", F, [1, 4])]), msg="cycle")
    case("self-loop", model([helper.make_node("Add", ["x", "y"], ["y"])], [x4], [y4]), msg="cycle")
    case("identity-self-loop", model([helper.make_node("Identity", ["y"], ["y"])], [x4], [y4]), msg="cycle")
    case("output-never-produced", model([helper.make_node("Relu", ["x"], ["a"])], [x4], [y4]),
         msg="never produced")
    case("input-never-produced", model([helper.make_node("Add", ["x", "ghost"], ["y"])], [x4], [y4]),
         msg="neither a graph input")
    case("produced-twice", model([helper.make_node("Relu", ["x"], ["y"]), helper.make_node("Neg", ["x"], ["y"])],
                                 [x4], [y4]), msg="produced twice")
    case("initializer-twice", model([helper.make_node("Add", ["x", "w"], ["y"])], [x4], [y4],
                                    [numpy_helper.from_array(np.ones((1, 4), np.float32), "w")] * 2),
         msg="defined twice")
    case("input-listed-twice", model([helper.make_node("Relu", ["x"], ["y"])], [x4, x4], [y4]), msg="listed twice")
    case("node-writes-graph-input", model([helper.make_node("Relu", ["y"], ["x"])], [x4], [y4]),
         msg="produced twice|never produced|neither")
    # depth: a chain deeper than the default limit of 100,000, and a short
    # chain against a small limit
    n = 100002
    chain = [helper.make_node("Neg", ["x" if i == 0 else f"t{i - 1}"], [f"t{i}" if i < n - 1 else "y"]) for i in range(n)]
    case("chain-100k-deep", model(chain, [x4], [y4]), msg="deep, more than the limit 100000")
    chain = [helper.make_node("Neg", ["x" if i == 0 else f"t{i - 1}"], [f"t{i}" if i < 99 else "y"]) for i in range(100)]
    case("chain-limit-depth", model(chain, [x4], [y4]), args=["--limit-depth", "50"], msg="deep, more than the limit 50")
    case("chain-limit-nodes", model(chain, [x4], [y4]), args=["--limit-nodes", "10"], msg="100 nodes, more than the limit 10")
    case("chain-100-ok", model(chain, [x4], [y4]), expect=0)
    # protobuf nesting that overflows a recursive decoder's stack
    case("nested-graph-attrs-100k", deep_nesting(100000), msg="nests protobuf messages more than 100 levels")
    case("nested-sequence-type-100k", deep_type(100000), msg="nests protobuf messages more than 100 levels")
    case("nested-graph-attrs-20", deep_nesting(20), msg="has no op_type")


def gen_controlflow():
    """If / Loop / Scan: nesting, iteration and size limits, bodies that do
    not fit their node, values no scope defines."""
    B = TensorProto.BOOL
    x4 = vi("x", F, [1, 4])
    y4 = vi("y", F, [1, 4])

    def nested_if(levels):
        # only the then branches nest (both would double the file per level)
        g = helper.make_graph([helper.make_node("Neg", ["x"], ["o0"])], "leaf", [], [vi("o0", F, [1, 4])])
        for i in range(1, levels + 1):
            other = helper.make_graph([helper.make_node("Abs", ["x"], [f"e{i}"])], f"e{i}", [], [vi(f"e{i}", F, [1, 4])])
            g = helper.make_graph([helper.make_node("If", ["c"], [f"o{i}"], then_branch=g, else_branch=other)],
                                  f"l{i}", [], [vi(f"o{i}", F, [1, 4])])
        return g
    inner = nested_if(20)
    case("subgraph-nesting-20", model([helper.make_node("If", ["c"], ["y"], then_branch=inner, else_branch=inner)],
                                      [vi("c", B, []), x4], [y4]), msg="subgraphs nest more than 16 levels deep")
    ok = nested_if(3)
    case("subgraph-nesting-3-ok", model([helper.make_node("If", ["c"], ["y"], then_branch=ok, else_branch=ok)],
                                        [vi("c", B, []), x4], [y4]), expect=0)
    # a while loop whose condition never turns false: INT64_MAX trips
    big = numpy_helper.from_array(np.array(2**63 - 1, np.int64), "m")
    body = helper.make_graph(
        [helper.make_node("Constant", [], ["cond_out"], value=helper.make_tensor("t", B, [], [True])),
         helper.make_node("Identity", ["v_in"], ["v_out"])],
        "body", [vi("i", I64, []), vi("cond_in", B, []), vi("v_in", F, [1, 4])],
        [vi("cond_out", B, []), vi("v_out", F, [1, 4])])
    case("loop-never-ends", model([helper.make_node("Loop", ["m", "", "x"], ["y"], body=body)], [x4], [y4], [big]),
         msg="ran 1000000 iterations, the limit")
    # scan outputs as long as a trip count of 2^40
    body_s = helper.make_graph(
        [helper.make_node("Identity", ["cond_in"], ["cond_out"]), helper.make_node("Identity", ["v_in"], ["v_out"]),
         helper.make_node("Identity", ["v_in"], ["s_out"])],
        "body", [vi("i", I64, []), vi("cond_in", B, []), vi("v_in", F, [1, 4])],
        [vi("cond_out", B, []), vi("v_out", F, [1, 4]), vi("s_out", F, [1, 4])])
    huge = numpy_helper.from_array(np.array(2**40, np.int64), "m")
    case("loop-scan-2^40", model([helper.make_node("Loop", ["m", "", "x"], ["y", "ys"], body=body_s)], [x4],
                                 [y4, vi("ys", F, None)], [huge]), msg="more than the limit")
    # bodies that do not fit their node
    short = helper.make_graph([helper.make_node("Identity", ["cond_in"], ["cond_out"])], "body",
                              [vi("i", I64, []), vi("cond_in", B, []), vi("v_in", F, [1, 4])], [vi("cond_out", B, [])])
    three = numpy_helper.from_array(np.array(3, np.int64), "m")
    case("loop-body-outputs-mismatch", model([helper.make_node("Loop", ["m", "", "x"], ["y"], body=short)], [x4],
                                             [y4], [three]), msg="its body takes 3 inputs and returns 1 values")
    two = helper.make_graph([helper.make_node("Neg", ["x"], ["a"]), helper.make_node("Abs", ["x"], ["b"])], "two", [],
                            [vi("a", F, [1, 4]), vi("b", F, [1, 4])])
    one = helper.make_graph([helper.make_node("Neg", ["x"], ["a"])], "one", [], [vi("a", F, [1, 4])])
    case("if-branch-outputs-mismatch", model([helper.make_node("If", ["c"], ["y"], then_branch=two, else_branch=one)],
                                             [vi("c", B, []), x4], [y4]), msg="branch returns 2 values, the node has 1")
    scan_body = helper.make_graph([helper.make_node("Add", ["s_in", "xt"], ["s_out"])], "body",
                                  [vi("s_in", F, [4]), vi("xt", F, [4])], [vi("s_out", F, [4])])
    case("scan-body-mismatch", model([helper.make_node("Scan", ["s0", "xs"], ["s", "ys"], body=scan_body,
                                                       num_scan_inputs=1)],
                                     [vi("s0", F, [4]), vi("xs", F, [3, 4])], [vi("s", F, [4]), vi("ys", F, [3, 4])]),
         msg="its body takes 2 inputs and returns 1 values")
    # a Loop body reading a name that is nowhere, two levels down
    deep_ghost = helper.make_graph([helper.make_node("Add", ["v_in", "ghost"], ["t"])], "then", [], [vi("t", F, [1, 4])])
    body_g = helper.make_graph(
        [helper.make_node("Identity", ["cond_in"], ["cond_out"]),
         helper.make_node("If", ["cond_in"], ["v_out"], then_branch=deep_ghost, else_branch=deep_ghost)],
        "body", [vi("i", I64, []), vi("cond_in", B, []), vi("v_in", F, [1, 4])],
        [vi("cond_out", B, []), vi("v_out", F, [1, 4])])
    case("loop-outer-value-missing", model([helper.make_node("Loop", ["m", "", "x"], ["y"], body=body_g)], [x4], [y4],
                                           [three]), msg="reads 'ghost', which no enclosing scope defines")
    # a graph attribute on an op that takes none
    case("graph-attr-on-relu", model([helper.make_node("Relu", ["x"], ["y"], body=one)], [x4], [y4]),
         msg="attribute 'body' is not defined")
    # a sequence position out of range
    pos = numpy_helper.from_array(np.array(5, np.int64), "p")
    case("sequence-at-out-of-range", model([helper.make_node("SequenceConstruct", ["x", "x"], ["s"]),
                                            helper.make_node("SequenceAt", ["s", "p"], ["y"])], [x4], [y4], [pos]),
         msg="out of the sequence")


def gen_dims():
    x4 = vi("x", F, [1, 4])
    y4 = vi("y", F, [1, 4])
    big = 1 << 40
    case("init-huge-dims", add_model_with_init(raw_tensor("w", F, [big, big], b"\0" * 16), [1, 4]),
         msg="overflows|elements, more than the limit")
    case("init-huge-dim-little-data", add_model_with_init(raw_tensor("w", F, [1 << 30], b"\0" * 16), [1, 4]),
         msg="raw_data has 16 bytes")
    case("init-negative-dim", add_model_with_init(raw_tensor("w", F, [-4, 1], b"\0" * 16), [1, 4]), msg="negative dim")
    case("init-dims-overflow-int64", add_model_with_init(raw_tensor("w", F, [1 << 32, 1 << 32, 1 << 32], b""), [1, 4]),
         msg="overflows")
    t = helper.make_tensor("w", F, [2], [1.0, 2.0])
    t.dims[0] = 1000000
    case("init-typed-count-mismatch", add_model_with_init(t, [1, 4]),
         msg="holds 2 values, its shape needs 1000000")
    case("init-rank-100", add_model_with_init(raw_tensor("w", F, [1] * 100, b"\0" * 4), [1, 4]), msg="rank 100")
    # strings load (nn_strings.h); Add refuses them next to a float
    case("init-string-dtype", add_model_with_init(helper.make_tensor("w", TensorProto.STRING, [1], [b"a"]), [1, 4]),
         msg="input 1 is string but input 0 is float32")
    case("init-string-raw", add_model_with_init(raw_tensor("w", TensorProto.STRING, [1], b"\0" * 16), [1, 4]),
         msg="must use string_data")
    t = helper.make_tensor("w", TensorProto.STRING, [2], [b"a", b"b"])
    t.dims[0] = 1000000
    case("init-string-count-mismatch", add_model_with_init(t, [1, 4]), msg="holds 2 strings, its shape needs 1000000")
    case("init-dtype-999", add_model_with_init(raw_tensor("w", 999, [1], b"\0"), [1, 4]), msg="data type 999")
    case("input-huge-dims", model([helper.make_node("Relu", ["x"], ["y"])], [vi("x", F, [1 << 40, 1 << 40])], [y4]),
         msg="overflows|more than the limit")
    case("input-1e12-elems", model([helper.make_node("Relu", ["x"], ["y"])], [vi("x", F, [1000000, 1000000])], [y4]),
         msg="elements, more than the limit")
    case("input-rank-100", model([helper.make_node("Relu", ["x"], ["y"])], [vi("x", F, [1] * 100)], [y4]),
         msg="rank 100, more than the limit 8")
    # a negative dim_value is read as "dynamic": nn-run then picks 1
    case("input-negative-dim-is-dynamic", model([helper.make_node("Relu", ["x"], ["y"])],
                                                [vi("x", F, [-5, 4])], [vi("y", F, [-5, 4])]), expect=0)
    case("value-info-huge", model([helper.make_node("Relu", ["x"], ["y"])], [x4], [y4],
                                  value_info=[vi("y", F, [1 << 62, 1 << 62])]), expect=0)
    case("output-value-info-rank-100", model([helper.make_node("Relu", ["x"], ["y"])], [x4], [vi("y", F, [1] * 100)]),
         expect=0)
    case("limit-elems", add_model_with_init(numpy_helper.from_array(np.ones((1, 4), np.float32), "w"), [1, 4]),
         args=["--limit-elems", "3"], msg="4 elements, more than the limit 3")
    case("limit-weights", add_model_with_init(numpy_helper.from_array(np.ones((64, 4), np.float32), "w"), [64, 4]),
         args=["--limit-weights", "1000"], msg="weights exceed the limit of 1000")
    case("limit-rank", model([helper.make_node("Relu", ["x"], ["y"])], [vi("x", F, [1, 1, 1, 4])], [y4]),
         args=["--limit-rank", "3"], msg="rank 4, more than the limit 3")
    # a 64x64 intermediate (16 KiB in the arena) between tiny input and output
    case("limit-arena", model([helper.make_node("Expand", ["x", "s"], ["a"]),
                               helper.make_node("ReduceSum", ["a"], ["y"], keepdims=0)],
                              [vi("x", F, [1, 1])], [vi("y", F, [])], [const_i64("s", [64, 64])], opset=13),
         args=["--limit-arena", "8192"], msg="planned arena \\([0-9]+ bytes\\) exceeds the limit of 8192")
    case("limit-arena-ok", model([helper.make_node("Expand", ["x", "s"], ["a"]),
                                  helper.make_node("ReduceSum", ["a"], ["y"], keepdims=0)],
                                 [vi("x", F, [1, 1])], [vi("y", F, [])], [const_i64("s", [64, 64])], opset=13),
         args=["--limit-arena", "32768"], expect=0)
    # a convolution of constants, folded at plan time: its workspace is
    # allocated on its own, and must be held to the arena limit all the same
    xc = numpy_helper.from_array(np.ones((1, 8, 16, 16), np.float32), "xc")
    w = numpy_helper.from_array(np.ones((16, 8, 3, 3), np.float32), "w")
    case("limit-arena-workspace", model([helper.make_node("Conv", ["xc", "w"], ["y"], pads=[1, 1, 1, 1])],
                                        [], [vi("y", F, [1, 16, 16, 16])], [xc, w]),
         args=["--limit-arena", "256"], msg="workspace, more than the arena limit of 256 bytes")
    case("limit-rank-output", model([helper.make_node("Unsqueeze", ["x", "ax"], ["y"])], [vi("x", F, [1, 1, 1])],
                                    [vi("y", F, None)], [const_i64("ax", [0, 1])], opset=13),
         args=["--limit-rank", "4"], msg="would have rank 5 \\(limit 4\\)")
    case("limit-model-bytes", small_convnet(), args=["--limit-model", "1000"], msg="bytes, more than the limit 1000")
    # an 8-bit convolution with pads near INT_MAX (stride alike, so the output
    # stays tiny): its padded copy's size must not wrap
    P = (1 << 31) - 5
    qin = [numpy_helper.from_array(np.array(0.02, np.float32), "xs"),
           numpy_helper.from_array(np.array(128, np.uint8), "xz"),
           numpy_helper.from_array(np.ones((4, 2, 3, 3), np.int8), "w"),
           numpy_helper.from_array(np.array(0.01, np.float32), "ws"),
           numpy_helper.from_array(np.array(0, np.int8), "wz"),
           numpy_helper.from_array(np.array(0.05, np.float32), "ys"),
           numpy_helper.from_array(np.array(128, np.uint8), "yz")]
    case("qlinearconv-huge-pads", model([helper.make_node("QLinearConv", ["x", "xs", "xz", "w", "ws", "wz", "ys", "yz"],
                                                          ["y"], kernel_shape=[3, 3], pads=[P] * 4, strides=[P, P])],
                                        [vi("x", TensorProto.UINT8, [1, 2, 4, 4])], [vi("y", TensorProto.UINT8, None)],
                                        qin, opset=13),
         msg="padded input .* is too large")
    # the direct integer kernel's channels-last copy (group 1, 4 channels,
    # weight zero point 0): pads of 20000 with a stride alike keep the output
    # at 5x5 but the copy at 40008 x 40008 x 4 (x 2 on AVX2): over the arena
    qdin = [numpy_helper.from_array(np.ones((64, 4, 3, 3), np.int8), "w4") if t.name == "w" else t for t in qin]
    case("qlinearconv-direct-huge-copy",
         model([helper.make_node("QLinearConv", ["x", "xs", "xz", "w4", "ws", "wz", "ys", "yz"], ["y"],
                                 kernel_shape=[3, 3], pads=[20000] * 4, strides=[10000, 10000])],
               [vi("x", TensorProto.UINT8, [1, 4, 8, 8])], [vi("y", TensorProto.UINT8, None)], qdin, opset=13),
         msg="workspace, more than the arena limit")
    # com.microsoft MatMulIntegerToFloat with operands it cannot take: a bias
    # of the wrong length, a vector a_scale, a float A, too few inputs
    def mmif(ins, inits, a_elem=TensorProto.UINT8):
        m = model([helper.make_node("MatMulIntegerToFloat", ins, ["y"], domain="com.microsoft")],
                  [vi("a", a_elem, [3, 8])], [vi("y", F, None)], inits, opset=13)
        m.opset_import.append(helper.make_opsetid("com.microsoft", 1))
        return m
    mb = numpy_helper.from_array(np.ones((8, 4), np.int8), "b")
    one = numpy_helper.from_array(np.array(0.5, np.float32), "s1")
    case("mmif-bias-length", mmif(["a", "b", "s1", "s1", "", "", "bias"],
                                  [mb, one, numpy_helper.from_array(np.ones(5, np.float32), "bias")]),
         msg="bias N")
    case("mmif-a-scale-vector", mmif(["a", "b", "s3", "s1"],
                                     [mb, one, numpy_helper.from_array(np.ones(3, np.float32), "s3")]),
         msg="a_scale and a_zero_point must be one value")
    case("mmif-float-a", mmif(["a", "b", "s1", "s1"], [mb, one], a_elem=F), msg="is not supported")
    case("mmif-too-few-inputs", mmif(["a", "b", "s1"], [mb, one]), msg="needs A, B, a_scale")
    # a QDQ-looking Conv whose weight DequantizeLinear has an axis out of
    # range: the load-time fusion leaves it alone, DequantizeLinear refuses it
    qdq_inits = [numpy_helper.from_array(np.ones((4, 4, 1, 1), np.int8), "wq"),
                 numpy_helper.from_array(np.ones(4, np.float32), "wsc"),
                 numpy_helper.from_array(np.zeros(4, np.int8), "wzp"),
                 numpy_helper.from_array(np.array(0.1, np.float32), "as"),
                 numpy_helper.from_array(np.array(128, np.uint8), "az")]
    case("qdq-conv-bad-axis",
         model([helper.make_node("QuantizeLinear", ["x", "as", "az"], ["xq"]),
                helper.make_node("DequantizeLinear", ["xq", "as", "az"], ["xd"]),
                helper.make_node("DequantizeLinear", ["wq", "wsc", "wzp"], ["wd"], axis=7),
                helper.make_node("Conv", ["xd", "wd"], ["c"]),
                helper.make_node("QuantizeLinear", ["c", "as", "az"], ["y"])],
               [vi("x", F, [1, 4, 5, 5])], [vi("y", TensorProto.UINT8, None)], qdq_inits, opset=13),
         msg="axis")
    # thousands of inputs, each within the element limit, together over the
    # I/O budget
    ins = [vi(f"x{i}", F, [1 << 20]) for i in range(64)]
    case("many-big-inputs", model([helper.make_node("Sum", [f"x{i}" for i in range(64)], ["y"])], ins,
                                  [vi("y", F, [1 << 20])]), args=["--limit-arena", str(128 << 20)],
         msg="input and output buffers would exceed the limit")


def gen_external():
    w16 = np.arange(16, dtype=np.float32).tobytes()

    def write_w(d, name="w.bin", data=w16):
        with open(os.path.join(d, name), "wb") as f:
            f.write(data)

    case("ext-ok", add_model_with_init(ext_tensor("w", [4, 4], "w.bin"), [4, 4]), expect=0, extra=write_w)
    case("ext-ok-offset", add_model_with_init(ext_tensor("w", [2, 4], "w.bin", offset=32, length=32), [2, 4]),
         expect=0, extra=write_w)
    case("ext-ok-subdir", add_model_with_init(ext_tensor("w", [4, 4], "sub/w.bin"), [4, 4]), expect=0,
         extra=lambda d: (os.makedirs(os.path.join(d, "sub"), exist_ok=True), write_w(os.path.join(d, "sub"))))

    def link_inside(d):
        write_w(d, "real.bin")
        os.symlink("real.bin", os.path.join(d, "w.bin"))
    case("ext-symlink-inside-ok", add_model_with_init(ext_tensor("w", [4, 4], "w.bin"), [4, 4]), expect=0,
         extra=link_inside)
    secret = os.path.join(OUT, "secret", "outside.bin")
    case("ext-absolute", add_model_with_init(ext_tensor("w", [4, 4], secret), [4, 4]), msg="leaves the model directory")
    case("ext-etc-passwd", add_model_with_init(ext_tensor("w", [4], "/etc/passwd", elem=TensorProto.UINT8), [4]),
         msg="leaves the model directory")
    case("ext-dotdot", add_model_with_init(ext_tensor("w", [4, 4], "../secret/outside.bin"), [4, 4]),
         msg="leaves the model directory")
    case("ext-dotdot-middle", add_model_with_init(ext_tensor("w", [4, 4], "sub/../../secret/outside.bin"), [4, 4]),
         msg="leaves the model directory", extra=lambda d: os.makedirs(os.path.join(d, "sub"), exist_ok=True))
    case("ext-backslash", add_model_with_init(ext_tensor("w", [4, 4], "..\\secret\\outside.bin"), [4, 4]),
         msg="leaves the model directory")
    case("ext-drive-letter", add_model_with_init(ext_tensor("w", [4, 4], "C:w.bin"), [4, 4]),
         msg="leaves the model directory")
    case("ext-empty-location", add_model_with_init(ext_tensor("w", [4, 4], ""), [4, 4]), msg="leaves the model directory")
    case("ext-no-location", add_model_with_init(ext_tensor("w", [4, 4], None), [4, 4]), msg="leaves the model directory")
    case("ext-symlink-outside", add_model_with_init(ext_tensor("w", [4, 4], "w.bin"), [4, 4]),
         msg="resolves outside the directory",
         extra=lambda d: os.symlink(secret, os.path.join(d, "w.bin")))
    case("ext-symlink-relative-outside", add_model_with_init(ext_tensor("w", [4, 4], "w.bin"), [4, 4]),
         msg="resolves outside the directory",
         extra=lambda d: os.symlink("../secret/outside.bin", os.path.join(d, "w.bin")))
    case("ext-symlinked-dir-outside", add_model_with_init(ext_tensor("w", [4, 4], "sub/outside.bin"), [4, 4]),
         msg="resolves outside the directory",
         extra=lambda d: os.symlink(os.path.join(OUT, "secret"), os.path.join(d, "sub")))
    case("ext-symlink-to-etc-passwd", add_model_with_init(ext_tensor("w", [4], "w.bin", elem=TensorProto.UINT8), [4]),
         msg="resolves outside the directory",
         extra=lambda d: os.symlink("/etc/passwd", os.path.join(d, "w.bin")))
    case("ext-dangling-symlink", add_model_with_init(ext_tensor("w", [4, 4], "w.bin"), [4, 4]),
         msg="cannot read external data: '.*w.bin' is a dangling symbolic link",
         extra=lambda d: os.symlink("nowhere.bin", os.path.join(d, "w.bin")))
    case("ext-missing", add_model_with_init(ext_tensor("w", [4, 4], "missing.bin"), [4, 4]),
         msg="cannot read external data: '.*missing.bin' does not exist")
    case("ext-offset-past-eof", add_model_with_init(ext_tensor("w", [4, 4], "w.bin", offset=1 << 20), [4, 4]),
         msg="is outside 'w.bin'", extra=write_w)
    case("ext-length-past-eof", add_model_with_init(ext_tensor("w", [8, 4], "w.bin"), [8, 4]),
         msg="is outside 'w.bin'", extra=write_w)
    case("ext-offset-overflow", add_model_with_init(ext_tensor("w", [4, 4], "w.bin", offset=(1 << 63) - 1), [4, 4]),
         msg="is outside 'w.bin'", extra=write_w)
    case("ext-offset-negative", add_model_with_init(ext_tensor("w", [4, 4], "w.bin", offset=-64), [4, 4]),
         msg="offset '-64' is not a non-negative integer", extra=write_w)
    case("ext-offset-garbage", add_model_with_init(ext_tensor("w", [4, 4], "w.bin", offset="12abc"), [4, 4]),
         msg="offset '12abc' is not a non-negative integer", extra=write_w)
    case("ext-offset-huge-digits", add_model_with_init(ext_tensor("w", [4, 4], "w.bin", offset="9" * 40), [4, 4]),
         msg="is not a non-negative integer", extra=write_w)
    case("ext-length-mismatch", add_model_with_init(ext_tensor("w", [4, 4], "w.bin", length=8), [4, 4]),
         msg="length 8 does not match its 64 bytes", extra=write_w)
    case("ext-huge-tensor-tiny-file", add_model_with_init(ext_tensor("w", [1 << 28, 4], "w.bin"), [1 << 28, 4]),
         args=["--limit-weights", str(1 << 30)], msg="weights exceed the limit|is outside 'w.bin'", extra=write_w)
    case("ext-is-directory", add_model_with_init(ext_tensor("w", [4, 4], "sub"), [4, 4]),
         msg="'.*sub' is a directory, not a regular file",
         extra=lambda d: os.makedirs(os.path.join(d, "sub"), exist_ok=True))
    case("ext-is-fifo", add_model_with_init(ext_tensor("w", [4, 4], "w.bin"), [4, 4]),
         msg="'.*w.bin' is a FIFO, not a regular file",
         extra=lambda d: os.mkfifo(os.path.join(d, "w.bin")))
    case("ext-dev-zero-link", add_model_with_init(ext_tensor("w", [4, 4], "w.bin"), [4, 4]),
         msg="resolves outside the directory",
         extra=lambda d: os.symlink("/dev/zero", os.path.join(d, "w.bin")))
    # the model file itself
    case("model-empty", b"", msg="empty")
    case("model-garbage", bytes(random.Random(7).getrandbits(8) for _ in range(4096)),
         msg="does not decode|no ir_version|no graph|not supported|opset")
    case("model-text", b"this is not a protobuf at all\n" * 20, msg="does not decode|no ir_version|no graph")


def gen_ops():
    x4 = vi("x", F, [1, 4])
    y4 = vi("y", F, [1, 4])
    case("unknown-op-unknown-domain", helper.make_model(
        helper.make_graph([helper.make_node("Frobnicate", ["x"], ["y"], domain="com.evil")], "g", [x4], [y4]),
        opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("com.evil", 1)]),
        msg="unsupported operator com.evil:Frobnicate at node")
    case("unknown-domain-not-imported", model([helper.make_node("Relu", ["x"], ["y"], domain="com.evil")], [x4], [y4]),
         msg="unsupported operator com.evil:Relu")
    case("unknown-op", model([helper.make_node("Frobnicate", ["x"], ["y"])], [x4], [y4]),
         msg="unsupported operator Frobnicate")
    case("opset-0", model([helper.make_node("Relu", ["x"], ["y"])], [x4], [y4], opset=0), msg="opset 0 is not supported")
    case("opset-9999", model([helper.make_node("Relu", ["x"], ["y"])], [x4], [y4], opset=9999),
         msg="opset 9999 is not supported")
    case("ir-version-999", model([helper.make_node("Relu", ["x"], ["y"])], [x4], [y4], ir=999),
         msg="IR version 999 is not supported")
    case("no-op-type", model([helper.make_node("", ["x"], ["y"])], [x4], [y4]), msg="has no op_type")
    # a branch reading a value no enclosing scope defines (x is no input here)
    sub = helper.make_graph([helper.make_node("Identity", ["x"], ["z"])], "sub", [], [vi("z", F, [1, 4])])
    case("if-subgraph", model([helper.make_node("If", ["c"], ["y"], then_branch=sub, else_branch=sub)],
                              [vi("c", TensorProto.BOOL, [])], [y4]), msg="reads 'x', which no enclosing scope defines")
    # wrong attribute types
    case("attr-perm-float", model([helper.make_node("Transpose", ["x"], ["y"], perm=[1.0, 0.0])], [x4], [vi("y", F, [4, 1])]),
         msg="attribute 'perm' has type FLOATS, the operator declares INTS")
    case("attr-axis-string", model([helper.make_node("Softmax", ["x"], ["y"], axis="one")], [x4], [y4]),
         msg="attribute 'axis' has type STRING, the operator declares INT")
    case("attr-alpha-tensor", model([helper.make_node("LeakyRelu", ["x"], ["y"],
                                                      alpha=helper.make_tensor("t", F, [1], [0.1]))], [x4], [y4]),
         msg="attribute 'alpha' has type TENSOR, the operator declares FLOAT")
    case("attr-kernel-shape-graph", model([helper.make_node("MaxPool", ["x"], ["y"], kernel_shape=sub)],
                                          [vi("x", F, [1, 1, 4, 4])], [y4]),
         msg="attribute 'kernel_shape' has type GRAPH, the operator declares INTS")
    case("attr-perm-1m-entries", model([helper.make_node("Transpose", ["x"], ["y"], perm=list(range(1000000)))],
                                       [x4], [vi("y", F, [4, 1])]), msg="perm has 1000000 entries")
    case("attr-int-for-float-ok", model([helper.make_node("LeakyRelu", ["x"], ["y"], alpha=1)], [x4], [y4]), expect=0)
    # wrong input and output counts
    case("add-one-input", model([helper.make_node("Add", ["x"], ["y"])], [x4], [y4]), msg="has 1 inputs, the operator takes 2")
    case("add-three-inputs", model([helper.make_node("Add", ["x", "x", "x"], ["y"])], [x4], [y4]),
         msg="has 3 inputs, the operator takes 2")
    case("conv-no-inputs", model([helper.make_node("Conv", [], ["y"])], [x4], [y4]), msg="has 0 inputs, the operator takes 2 to 3")
    case("relu-no-outputs", model([helper.make_node("Relu", ["x"], [])], [x4], [x4]), msg="has 0 outputs")
    case("relu-empty-input", model([helper.make_node("Relu", [""], ["y"])], [x4], [y4]), msg="required input 0 is empty")
    case("relu-empty-output", model([helper.make_node("Relu", ["x"], [""])], [x4], [x4]), msg="required output 0 is empty")
    case("concat-empty-entry", model([helper.make_node("Concat", ["x", "", "x"], ["y"], axis=0)], [x4], [vi("y", F, [2, 4])]),
         msg="required input 1 is empty")
    case("node-70000-inputs", model([helper.make_node("Sum", ["x"] * 70000, ["y"])], [x4], [y4]),
         msg="too many inputs")
    # non-tensor graph inputs and outputs
    def typed(name, kind):
        tp = onnx.TypeProto()
        tensor = helper.make_tensor_type_proto(F, [1, 4])
        if kind == "seq":
            tp.sequence_type.elem_type.CopyFrom(tensor)
        elif kind == "map":
            tp.map_type.key_type = I64
            tp.map_type.value_type.CopyFrom(tensor)
        else:
            tp.optional_type.elem_type.CopyFrom(tensor)
        return helper.make_value_info(name, tp)
    case("sequence-input", model([helper.make_node("SequenceAt", ["s", "i"], ["y"])],
                                 [typed("s", "seq"), vi("i", I64, [])], [y4]), msg="is a sequence or optional")
    case("map-input", model([helper.make_node("Identity", ["m"], ["y"])], [typed("m", "map")], [y4]), msg="not a tensor")
    # sequences and optionals are fed through nn_session_set_input_items,
    # which nn-run's random fill does not do: refused by name
    case("optional-input", model([helper.make_node("Identity", ["o"], ["y"])], [typed("o", "opt")], [y4]),
         msg="is a sequence or optional")
    case("sequence-output", model([helper.make_node("SequenceConstruct", ["x"], ["s"])], [x4], [typed("s", "seq")]),
         expect=0)
    # hostile names: the error stays one line
    case("name-with-newlines", model([helper.make_node("Frobnicate", ["x"], ["y"], name="a\nb\r\x1b[2Jc")], [x4], [y4]),
         msg="unsupported operator Frobnicate at node 'a\\?b\\?\\?\\[2Jc'")


def gen_huge_outputs():
    """Shape-deciding inputs that ask for huge or absurd outputs."""
    def one(name, nodes, inits, out_type=F, args=(), msg="more than the limit|overflows", out_shape=None,
            expect=2, inputs=None):
        case(name, model(nodes, inputs if inputs is not None else [], [vi("y", out_type, out_shape)], inits),
             args=args, msg=msg, expect=expect)

    f32 = lambda n, v: numpy_helper.from_array(np.array(v, np.float32), n)
    i64 = lambda n, v: numpy_helper.from_array(np.array(v, np.int64), n)
    one("range-1e12", [helper.make_node("Range", ["a", "b", "c"], ["y"])], [i64("a", 0), i64("b", 10 ** 12), i64("c", 1)],
        I64)
    one("range-float-1e12", [helper.make_node("Range", ["a", "b", "c"], ["y"])],
        [f32("a", 0), f32("b", 1e12), f32("c", 1)])
    one("range-delta-zero", [helper.make_node("Range", ["a", "b", "c"], ["y"])], [i64("a", 0), i64("b", 10), i64("c", 0)],
        I64, msg="delta|zero")
    one("range-nan-delta", [helper.make_node("Range", ["a", "b", "c"], ["y"])],
        [f32("a", 0), f32("b", 10), f32("c", float("nan"))], msg="NaN|not finite|finite|delta")
    one("range-inf-limit", [helper.make_node("Range", ["a", "b", "c"], ["y"])],
        [f32("a", 0), f32("b", float("inf")), f32("c", 1)], msg="NaN|not finite|finite|more than the limit")
    one("range-int64-min-max", [helper.make_node("Range", ["a", "b", "c"], ["y"])],
        [i64("a", -(1 << 63)), i64("b", (1 << 63) - 1), i64("c", 1)], I64, msg="range is too large")
    one("tile-huge", [helper.make_node("Tile", ["x", "r"], ["y"])], [f32("x", [[1.0]]), i64("r", [1 << 31, 1 << 31])])
    one("tile-zero-and-huge", [helper.make_node("Tile", ["x", "r"], ["y"])], [f32("x", [[1.0]]), i64("r", [0, 1 << 40])],
        msg="dimension 1099511627776, more than the limit")
    one("tile-zero-and-big-ok", [helper.make_node("Tile", ["x", "r"], ["y"])], [f32("x", [[1.0]]), i64("r", [0, 1 << 30])],
        expect=0)
    one("expand-huge", [helper.make_node("Expand", ["x", "s"], ["y"])], [f32("x", [1.0]), i64("s", [1 << 20, 1 << 20, 1 << 20])])
    one("expand-zero-and-huge", [helper.make_node("Expand", ["x", "s"], ["y"])], [f32("x", [1.0]), i64("s", [0, 1 << 62])],
        msg="more than the limit")
    one("constantofshape-2e40", [helper.make_node("ConstantOfShape", ["s"], ["y"])], [i64("s", [1 << 40])])
    one("constantofshape-negative", [helper.make_node("ConstantOfShape", ["s"], ["y"])], [i64("s", [-1, 4])],
        msg="negative")
    one("constantofshape-limit-weights", [helper.make_node("ConstantOfShape", ["s"], ["y"])], [i64("s", [1 << 20])],
        args=["--limit-weights", "1000000"], msg="exceed the weights limit of 1000000")
    one("constantofshape-8gib", [helper.make_node("ConstantOfShape", ["s"], ["y"])], [i64("s", [1 << 31, 4])])
    one("resize-scale-1e10", [helper.make_node("Resize", ["x", "", "sc"], ["y"])],
        [f32("x", np.ones((1, 1, 2, 2))), f32("sc", [1, 1, 1e10, 1e10])], msg="more than the limit|overflows")
    one("resize-scale-nan", [helper.make_node("Resize", ["x", "", "sc"], ["y"])],
        [f32("x", np.ones((1, 1, 2, 2))), f32("sc", [1, 1, float("nan"), 2])], msg="scale|NaN|finite|invalid")
    one("resize-scale-inf", [helper.make_node("Resize", ["x", "", "sc"], ["y"])],
        [f32("x", np.ones((1, 1, 2, 2))), f32("sc", [1, 1, float("inf"), 2])], msg="scale|finite|more than the limit|overflows")
    one("resize-scale-negative", [helper.make_node("Resize", ["x", "", "sc"], ["y"])],
        [f32("x", np.ones((1, 1, 2, 2))), f32("sc", [1, 1, -2, 2])], msg="scale|negative|invalid")
    one("resize-sizes-huge", [helper.make_node("Resize", ["x", "", "", "sz"], ["y"])],
        [f32("x", np.ones((1, 1, 2, 2))), i64("sz", [1, 1, 1 << 31, 1 << 31])])
    one("upsample-scale-nan", [helper.make_node("Upsample", ["x", "sc"], ["y"])],
        [f32("x", np.ones((1, 1, 2, 2))), f32("sc", [1, 1, float("nan"), 2])], msg="scale|NaN|finite|invalid")
    one("onehot-depth-nan", [helper.make_node("OneHot", ["i", "d", "v"], ["y"])],
        [i64("i", [0, 1]), f32("d", float("nan")), f32("v", [0, 1])], msg="depth|NaN|finite")
    one("onehot-depth-huge", [helper.make_node("OneHot", ["i", "d", "v"], ["y"])],
        [i64("i", [0, 1]), f32("d", 1e15), f32("v", [0, 1])], msg="more than the limit|depth")
    one("reshape-cast-nan", [helper.make_node("Cast", ["f"], ["s"], to=I64), helper.make_node("Reshape", ["x", "s"], ["y"])],
        [f32("f", [float("nan"), 4.0]), f32("x", np.ones((1, 4)))], msg="shape|reshape|Reshape|negative|limit", expect=[0, 2])
    one("reshape-huge", [helper.make_node("Reshape", ["x", "s"], ["y"])], [f32("x", [1.0]), i64("s", [1 << 40, 0])],
        msg="shape|Reshape|elements|limit")
    one("pad-huge", [helper.make_node("Pad", ["x", "p"], ["y"])], [f32("x", [[1.0]]), i64("p", [0, 0, 1 << 40, 1 << 40])])
    one("pad-negative-overflow", [helper.make_node("Pad", ["x", "p"], ["y"])],
        [f32("x", [[1.0]]), i64("p", [0, -(1 << 62), 0, -(1 << 62)])], msg="negative or huge")
    one("slice-huge-steps", [helper.make_node("Slice", ["x", "a", "b", "ax", "st"], ["y"])],
        [f32("x", np.ones((4,))), i64("a", [-(1 << 63)]), i64("b", [(1 << 63) - 1]), i64("ax", [0]), i64("st", [-(1 << 63)])],
        expect=[0, 2], msg="step|Slice|slice")
    one("topk-k-huge", [helper.make_node("TopK", ["x", "k"], ["y", "idx"])], [f32("x", np.ones((4,))), i64("k", [1 << 40])],
        msg="k|K|more than")
    one("constantofshape-zero-and-huge", [helper.make_node("ConstantOfShape", ["s"], ["y"])], [i64("s", [0, 1 << 40])],
        msg="dimension 1099511627776, more than the limit")


def write_file(path, data):
    with open(path, "wb") as f:
        f.write(data)


def gen_special_files():
    """Special files and odd paths everywhere nn-run takes a path: the model,
    --input, the data of a --check case.  Each is refused by the guarded
    reader within the timeout, saying what the path is: a FIFO must not block
    open(), /dev/zero must not be read forever, a loop or an over-long path is
    not "does not exist", and a --check case never reads outside itself."""
    relu = model([helper.make_node("Relu", ["x"], ["y"])], [vi("x", F, [1, 4])], [vi("y", F, [1, 4])])
    x = numpy_helper.from_array(np.array([[-1, 0, 2, -3]], np.float32), "x").SerializeToString()
    y = numpy_helper.from_array(np.array([[0, 0, 2, 0]], np.float32), "y").SerializeToString()

    def as_model(make):
        """extra(): model.onnx replaced by what make(path) puts there"""
        def f(d):
            os.unlink(os.path.join(d, "model.onnx"))
            make(os.path.join(d, "model.onnx"))
        return f

    # the model (nn_session_create_from_file)
    case("model-fifo", relu, msg="model.onnx' is a FIFO, not a regular file", extra=as_model(os.mkfifo))
    case("model-dev-zero", relu, msg="model.onnx' is a character device, not a regular file",
         extra=as_model(lambda p: os.symlink("/dev/zero", p)), allow=["/dev/zero"])
    case("model-directory", relu, msg="model.onnx' is a directory, not a regular file", extra=as_model(os.mkdir))
    case("model-symlink-loop", relu, msg="too many levels of symbolic links",
         extra=as_model(lambda p: os.symlink("model.onnx", p)))
    case("model-dangling-symlink", relu, msg="is a dangling symbolic link",
         extra=as_model(lambda p: os.symlink("gone.onnx", p)))
    case("model-missing", relu, msg="gone.onnx' does not exist", model_path="gone.onnx")
    case("model-name-too-long", relu, msg="is too long \\(a name in it has more than 255 bytes",
         model_path="m" * 300 + ".onnx")
    case("model-path-too-long", relu, msg="is too long \\([0-9]+ bytes, the system takes 4095\\)",
         model_path="/".join(["d"] * 2100) + "/model.onnx")

    # --input FILE.pb
    inp = ["--input", "x={dir}/x.pb"]
    case("input-ok", relu, expect=0, args=inp, extra=lambda d: write_file(os.path.join(d, "x.pb"), x))
    case("input-empty", relu, msg="x.pb': the tensor file is empty \\(0 bytes\\)", args=inp,
         extra=lambda d: write_file(os.path.join(d, "x.pb"), b""))
    case("input-nul-bytes", relu, msg="x.pb': not a TensorProto|does not decode", args=inp,
         extra=lambda d: write_file(os.path.join(d, "x.pb"), bytes(64)))
    case("input-dev-zero", relu, msg="'/dev/zero' is a character device, not a regular file",
         args=["--input", "x=/dev/zero"], allow=["/dev/zero"])
    case("input-dev-zero-link", relu, msg="x.pb' is a character device, not a regular file", args=inp,
         extra=lambda d: os.symlink("/dev/zero", os.path.join(d, "x.pb")), allow=["/dev/zero"])
    case("input-fifo", relu, msg="x.pb' is a FIFO, not a regular file", args=inp,
         extra=lambda d: os.mkfifo(os.path.join(d, "x.pb")))
    case("input-directory", relu, msg="x.pb' is a directory, not a regular file", args=inp,
         extra=lambda d: os.mkdir(os.path.join(d, "x.pb")))
    case("input-symlink-loop", relu, msg="x.pb': too many levels of symbolic links", args=inp,
         extra=lambda d: os.symlink("x.pb", os.path.join(d, "x.pb")))
    case("input-missing", relu, msg="x.pb' does not exist", args=inp)
    case("input-name-too-long", relu, msg="is too long", args=["--input", "x={dir}/" + "x" * 300 + ".pb"])

    def sparse_3g(d):
        # over the 2 GiB cap of a .pb, refused from its size: nothing is read
        # (a sparse file: no disk is used)
        with open(os.path.join(d, "x.pb"), "wb") as f:
            f.truncate(3 << 30)
    case("input-over-cap", relu, msg="x.pb' is 3221225472 bytes, more than the limit 2147483648", args=inp,
         extra=sparse_3g)

    # --check CASE_DIR: the model and every data file must stay inside the case
    secret = os.path.join(OUT, "secret")
    write_file(os.path.join(secret, "x.pb"), x)
    write_file(os.path.join(secret, "y.pb"), y)
    write_file(os.path.join(secret, "model.onnx"), relu.SerializeToString())
    os.makedirs(os.path.join(secret, "set"), exist_ok=True)
    write_file(os.path.join(secret, "set", "input_0.pb"), x)
    write_file(os.path.join(secret, "set", "output_0.pb"), y)

    def check_case(name, expect=2, msg=None, tweak=None, m=relu, allow=()):
        def build(d):
            sd = os.path.join(d, "test_data_set_0")
            os.makedirs(sd)
            write_file(os.path.join(sd, "input_0.pb"), x)
            write_file(os.path.join(sd, "output_0.pb"), y)
            if tweak:
                tweak(d, sd)
        case(name, m, expect=expect, msg=msg, extra=build, check=True, allow=allow)

    def replace(fname, make):
        def t(d, sd):
            p = os.path.join(sd, fname)
            os.unlink(p)
            make(p)
        return t
    check_case("check-ok", expect=0)
    check_case("check-input-symlink-outside", msg="input_0.pb' resolves outside the directory",
               tweak=replace("input_0.pb", lambda p: os.symlink(os.path.join(secret, "x.pb"), p)))
    check_case("check-input-relative-symlink-outside", msg="input_0.pb' resolves outside the directory",
               tweak=replace("input_0.pb", lambda p: os.symlink("../../secret/x.pb", p)))
    check_case("check-output-symlink-outside", msg="output_0.pb' resolves outside the directory",
               tweak=replace("output_0.pb", lambda p: os.symlink(os.path.join(secret, "y.pb"), p)))
    check_case("check-input-dev-zero", msg="input_0.pb' resolves outside the directory",
               tweak=replace("input_0.pb", lambda p: os.symlink("/dev/zero", p)))
    check_case("check-input-symlink-inside-ok", expect=0,
               tweak=replace("input_0.pb", lambda p: (write_file(p + ".real", x), os.symlink("input_0.pb.real", p))))
    check_case("check-input-fifo", msg="input_0.pb' is a FIFO, not a regular file",
               tweak=replace("input_0.pb", os.mkfifo))
    check_case("check-input-directory", msg="input_0.pb' is a directory, not a regular file",
               tweak=replace("input_0.pb", os.mkdir))
    check_case("check-input-symlink-loop", msg="input_0.pb': too many levels of symbolic links",
               tweak=replace("input_0.pb", lambda p: os.symlink("input_0.pb", p)))
    check_case("check-input-empty", msg="input_0.pb': the tensor file is empty",
               tweak=replace("input_0.pb", lambda p: write_file(p, b"")))

    def set_outside(d, sd):
        shutil.rmtree(sd)
        os.symlink(os.path.join(secret, "set"), sd)
    check_case("check-dataset-symlink-outside", msg="test_data_set_0 resolves outside the case directory",
               tweak=set_outside)

    def model_outside(d, sd):
        os.unlink(os.path.join(d, "model.onnx"))
        os.symlink(os.path.join(secret, "model.onnx"), os.path.join(d, "model.onnx"))
    check_case("check-model-symlink-outside", msg="model.onnx resolves outside the case directory",
               tweak=model_outside)


def gen_schema():
    """Attributes the operator version does not define, a Constant with two
    values, the same attribute twice: refused at load, naming node and
    attribute (ONNX checker rules)."""
    x = vi("x", F, [2, 3])
    y = vi("y", F, None)
    ax = const_i64("ax", [1])
    # at opset 13 ReduceSum takes axes as an input: an attribute left over
    # from opset 11 used to reduce over every axis in silence
    case("reducesum13-axes-attribute",
         model([helper.make_node("ReduceSum", ["x"], ["y"], axes=[1], name="rs")], [x], [y], opset=13),
         msg="node 'rs' \\(ReduceSum-13\\): attribute 'axes' is not defined by the operator at opset 13")
    case("reducesum11-axes-attribute-ok",
         model([helper.make_node("ReduceSum", ["x"], ["y"], axes=[1])], [x], [y], opset=11), expect=0)
    case("reducesum13-axes-input-ok",
         model([helper.make_node("ReduceSum", ["x", "ax"], ["y"])], [x], [y], [ax], opset=13), expect=0)
    case("reducemean18-axes-attribute",
         model([helper.make_node("ReduceMean", ["x"], ["y"], axes=[1], name="rm")], [x], [y], opset=18),
         msg="node 'rm' \\(ReduceMean-18\\): attribute 'axes' is not defined by the operator at opset 18")
    case("reducemean18-noop-attribute-ok",
         model([helper.make_node("ReduceMean", ["x", "ax"], ["y"], noop_with_empty_axes=0)], [x], [y], [ax],
               opset=18), expect=0)
    case("relu-unknown-attribute",
         model([helper.make_node("Relu", ["x"], ["y"], alpha=0.5, name="r")], [x], [y]),
         msg="node 'r' \\(Relu-14\\): attribute 'alpha' is not defined by the operator at opset 17")
    case("split18-num-outputs-ok",
         model([helper.make_node("Split", ["x"], ["a", "b", "c"], axis=1, num_outputs=3)], [x],
               [vi("a", F, None), vi("b", F, None), vi("c", F, None)], opset=18), expect=0)
    case("constant-two-values",
         model([helper.make_node("Constant", [], ["y"], name="k",
                                 value=numpy_helper.from_array(np.ones((2, 3), np.float32), "v"), value_float=1.0)],
               [], [y]), msg="node 'k' \\(Constant\\): attributes 'value' and 'value_float' both give the value")
    case("constant-no-value", model([helper.make_node("Constant", [], ["y"], name="k")], [], [y]),
         msg="node 'k' \\(Constant\\) has no value attribute")

    def twice(op, name, attr, domain=""):
        n = helper.make_node(op, ["x"], ["y"], name=name, domain=domain, **{attr: 1})
        n.attribute.append(helper.make_attribute(attr, 0))
        return n
    case("attribute-twice", model([twice("Softmax", "sm", "axis")], [x], [y]),
         msg="node 'sm' \\(Softmax\\): attribute 'axis' is given more than once")
    case("attribute-twice-other-domain", helper.make_model(
        helper.make_graph([twice("Frobnicate", "f", "k", "com.evil")], "g", [x], [y]),
        opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("com.evil", 1)]),
         msg="node 'f' \\(Frobnicate\\): attribute 'k' is given more than once")
    # many attributes: the duplicate check must not be quadratic
    many = helper.make_node("Frobnicate", ["x"], ["y"], name="f", domain="com.evil")
    many.attribute.extend(helper.make_attribute(f"a{i}", i) for i in range(60000))
    many.attribute.append(helper.make_attribute("a59999", 0))
    case("attribute-60000-last-twice", helper.make_model(
        helper.make_graph([many], "g", [x], [y]),
        opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("com.evil", 1)]),
         msg="attribute 'a59999' is given more than once")


def gen_constant_external():
    """A Constant whose value is external data, as
    onnx.external_data_helper writes it with convert_attribute=True: valid
    (run through --check against numpy), with the confinement rules of
    initializers."""
    c = np.arange(64, dtype=np.float32).reshape(8, 8) - 20
    xv = np.linspace(-3, 3, 64, dtype=np.float32).reshape(8, 8)

    def const_model(value):
        return model([helper.make_node("Constant", [], ["c"], value=value), helper.make_node("Add", ["x", "c"], ["y"])],
                     [vi("x", F, [8, 8])], [vi("y", F, [8, 8])])

    name = "constant-external-ok"
    d = os.path.join(OUT, name)
    os.makedirs(d)
    m = const_model(numpy_helper.from_array(c, "cval"))
    external_data_helper.convert_model_to_external_data(m, all_tensors_to_one_file=True, location="const.bin",
                                                        size_threshold=0, convert_attribute=True)
    external_data_helper.write_external_data_tensors(m, d)
    t = m.graph.node[0].attribute[0].t
    assert t.data_location == TensorProto.EXTERNAL and not t.raw_data, "the constant did not go external"
    assert os.path.getsize(os.path.join(d, "const.bin")) == 256

    def data(dd):
        sd = os.path.join(dd, "test_data_set_0")
        os.makedirs(sd)
        write_file(os.path.join(sd, "input_0.pb"), numpy_helper.from_array(xv, "x").SerializeToString())
        write_file(os.path.join(sd, "output_0.pb"), numpy_helper.from_array(xv + c, "y").SerializeToString())
    case(name, m, expect=0, check=True, extra=data)

    w = lambda dd: write_file(os.path.join(dd, "c.bin"), c.tobytes())
    case("constant-external-dotdot", const_model(ext_tensor("cval", [8, 8], "../secret/outside.bin")),
         msg="tensor 'cval': external data location '../secret/outside.bin' leaves the model directory")
    case("constant-external-symlink-outside", const_model(ext_tensor("cval", [8, 8], "c.bin")),
         msg="c.bin' resolves outside the directory",
         extra=lambda dd: os.symlink(os.path.join(OUT, "secret", "outside.bin"), os.path.join(dd, "c.bin")))
    case("constant-external-fifo", const_model(ext_tensor("cval", [8, 8], "c.bin")),
         msg="c.bin' is a FIFO, not a regular file", extra=lambda dd: os.mkfifo(os.path.join(dd, "c.bin")))
    case("constant-external-short", const_model(ext_tensor("cval", [8, 8], "c.bin", offset=128)),
         msg="is outside 'c.bin'", extra=w)
    case("ext-symlink-loop", add_model_with_init(ext_tensor("w", [4, 4], "w.bin"), [4, 4]),
         msg="w.bin': too many levels of symbolic links",
         extra=lambda dd: os.symlink("w.bin", os.path.join(dd, "w.bin")))


def gen_corrupted(shared):
    base = small_convnet().SerializeToString()
    case("convnet-ok", base, expect=0)
    for cut in (1, 2, 7, 50, 100, 500, len(base) // 3, len(base) // 2, len(base) - 300, len(base) - 20, len(base) - 1):
        case(f"convnet-truncated-{cut}", base[:cut], expect=[0, 2])
    rng = random.Random(1234)
    for k in range(40):
        b = bytearray(base)
        for _ in range(1 + k % 4):
            pos = rng.randrange(len(b))
            b[pos] ^= 1 << rng.randrange(8)
        case(f"convnet-bitflip-{k}", bytes(b), expect=[0, 2])
    for k in range(10):
        b = bytearray(base)
        pos = rng.randrange(len(b) - 8)
        b[pos:pos + 8] = struct.pack("<q", rng.choice([-1, 1 << 62, (1 << 63) - 1, 1 << 31]))
        case(f"convnet-int-splat-{k}", bytes(b), expect=[0, 2])
    for real in sorted(os.listdir(os.path.join(shared, "real-cases"))) if shared and os.path.isdir(
            os.path.join(shared, "real-cases")) else []:
        p = os.path.join(shared, "real-cases", real, "model.onnx")
        if not os.path.isfile(p):
            continue
        data = open(p, "rb").read()
        for frac in (0.1, 0.5, 0.9, 0.999):
            case(f"{real}-truncated-{int(frac * 1000)}", data[:int(len(data) * frac)], expect=[0, 2])
        for k in range(4):
            b = bytearray(data)
            for _ in range(3):
                pos = rng.randrange(len(b))
                b[pos] ^= 1 << rng.randrange(8)
            case(f"{real}-bitflip-{k}", bytes(b), expect=[0, 2])


def main():
    global OUT
    if len(sys.argv) < 2:
        print(__doc__)
        sys.exit(2)
    OUT = os.path.abspath(sys.argv[1])
    shared = sys.argv[2] if len(sys.argv) > 2 else None
    if os.path.isdir(OUT):
        shutil.rmtree(OUT)
    os.makedirs(os.path.join(OUT, "secret"))
    with open(os.path.join(OUT, "secret", "outside.bin"), "wb") as f:
        f.write(np.full(64, 7, np.float32).tobytes())   # the attacker's target: 256 bytes
    gen_structure()
    gen_controlflow()
    gen_dims()
    gen_external()
    gen_ops()
    gen_huge_outputs()
    gen_special_files()
    gen_schema()
    gen_constant_external()
    gen_corrupted(shared)
    with open(os.path.join(OUT, "cases.json"), "w") as f:
        json.dump(CASES, f, indent=1)
    print(f"{len(CASES)} hostile cases in {OUT}")


if __name__ == "__main__":
    main()

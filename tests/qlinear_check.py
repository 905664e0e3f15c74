#!/usr/bin/env python3
"""qlinear_check.py - ONNX Runtime's QOperator contrib ops (domain
com.microsoft: QLinearAdd, QLinearMul, QLinearGlobalAveragePool,
QLinearAveragePool, QLinearConcat, QLinearSigmoid, QLinearLeakyRelu,
QLinearSoftmax) against a numpy reference of ONNX Runtime's own arithmetic
(its MLAS kernels on x86-64 with AVX2/FMA, in float32 where they use
float32), byte for byte.

Builds small models with onnx.helper (opsets: "" 13, com.microsoft 1) for
uint8 and int8, broadcasting shapes, zero points present and absent,
parameters as constants (tables built at prepare) and as graph inputs (built
at run), channels_last both ways, pools with pads / ceil_mode /
count_include_pad / auto_pad, Concat with equal and different scales;
writes each as a case (model.onnx + test_data_set_0) and runs
`nn-run --check --rtol 0 --atol 0` on 1 and 2 threads (and the portable CPU
path).  Models with bad inputs (wrong types, scales that are not scalars,
missing attributes, ...) must fail with a clear message.  When nn-run has a
Vulkan device, a few cases also run with --backend vulkan (the CPU runs these
ops: the Vulkan backend takes no other domain).

    qlinear_check.py NN_RUN WORKDIR [--seed N] [--ort tools/ort/ort-run.js]

--ort (development only; needs node and tools/ort/install.sh): also runs
every case through ONNX Runtime (ort-run.js --make-case) and reports, per op,
the largest difference of ONNX Runtime from the reference and from nn-run.
"""
import os
import subprocess
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

F = np.float32
I32_MIN = -2147483648


# ---- float32 arithmetic as the hardware does it ---------------------------------------

def f32(x):
    return np.asarray(x, np.float32)


def fma(a, b, c):
    """float32 fma(a, b, c): a * b exactly in double (24 x 24 bits), the sum
    with its exact error term (TwoSum), then one rounding to float32; when the
    double sum lies exactly halfway between two floats the error term says
    which way the exact value lies."""
    a = f32(a).astype(np.float64)
    b = f32(b).astype(np.float64)
    c = f32(c).astype(np.float64)
    p = a * b
    s = p + c
    bb = s - p
    e = (p - (s - bb)) + (c - bb)
    f = s.astype(np.float32)
    fd = f.astype(np.float64)
    g = np.nextafter(f, np.where(fd < s, F(np.inf), F(-np.inf)).astype(np.float32))
    gd = g.astype(np.float64)
    is_mid = (fd != s) & ((fd + gd) * 0.5 == s) & (e != 0)
    beyond = np.where(gd > fd, e > 0, e < 0)
    return np.where(is_mid & beyond, g, f).astype(np.float32)


def cvt_sat(v, lo, hi):
    """_mm_cvtps_epi32 (half to even; NaN or out of int32 range: INT32_MIN),
    then saturation to [lo, hi] (the packs)."""
    v = f32(v)
    r = np.rint(v).astype(np.float64)
    ok = np.isfinite(r) & (r >= -2147483648.0) & (r < 2147483648.0)
    i = np.where(ok, r, I32_MIN).astype(np.int64)
    return np.clip(i, lo, hi)


def clamp_round(v, zp, lo, hi):
    """MlasQuantizeLinear / MlasRequantizeOutput: clamp to [lo - zp, hi -
    zp] (NaN to the lower bound), round half to even, add zp."""
    v = f32(v)
    v = np.where(v >= F(lo - zp), v, F(lo - zp))
    v = np.where(v <= F(hi - zp), v, F(hi - zp))
    return np.rint(v).astype(np.int64) + zp


def wrap32(x):
    x = np.asarray(x, np.int64) & 0xFFFFFFFF
    return np.where(x >= 2 ** 31, x - 2 ** 32, x)


def rng_of(dt):
    return (-128, 127) if dt == np.int8 else (0, 255)


# ---- the reference ----------------------------------------------------------------------

def a_spans_scalar(sa, sb):
    """ONNX Runtime's broadcaster: A is the scalar of each span."""
    ra, rb = len(sa), len(sb)
    rmin = min(ra, rb)
    if rmin == 0:
        return ra == 0 or sa[-1] <= 1
    for i in range(rmin):
        da, db = sa[ra - 1 - i], sb[rb - 1 - i]
        if max(da, db) == 1 and i + 1 < rmin:
            continue
        return da <= 1
    return False


def ref_add(a, sa, za, b, sb, zb, sc, zc):
    lo, hi = rng_of(a.dtype)
    A, B = np.broadcast_arrays(a.astype(np.float32), b.astype(np.float32))
    ra, rb = f32(F(sa) / F(sc)), f32(F(sb) / F(sc))
    if not a_spans_scalar(a.shape, b.shape):
        fixed = f32(F(zc) - fma(ra, F(za), f32(rb * F(zb))))
        v = fma(A, ra, fma(B, rb, fixed))
    else:
        fixed = f32(F(zc) - fma(rb, F(zb), f32(ra * F(za))))
        v = fma(B, rb, fma(A, ra, fixed))
    return cvt_sat(v, lo, hi).astype(a.dtype)


def ref_mul(a, sa, za, b, sb, zb, sc, zc):
    lo, hi = rng_of(a.dtype)
    ratio = f32(f32(F(sa) * F(sb)) / F(sc))
    prod = (a.astype(np.int64) - za) * (b.astype(np.int64) - zb)
    v = f32(f32(prod.astype(np.float32) * ratio) + F(zc))
    return cvt_sat(v, lo, hi).astype(a.dtype)


def ref_gap_ncx(x, sx, zx, sy, zy):
    """(N, C, spatial...) -> (N, C): the global pool's integer arithmetic."""
    lo, hi = rng_of(x.dtype)
    img = int(np.prod(x.shape[2:]))
    s = x.astype(np.int64).reshape(x.shape[0], x.shape[1], -1).sum(axis=2)
    acc = wrap32(s - zx * img)
    scale = f32(F(sx) / f32(F(sy) * F(img)))
    return clamp_round(f32(acc.astype(np.float32) * scale), zy, lo, hi).astype(x.dtype)


def pool_geometry(in_sp, k, strides, pads, auto_pad, ceil):
    """Output sizes and begin pads (the ONNX rules; a ceil_mode window that
    would start in the end padding is dropped)."""
    n = len(in_sp)
    out, pb, pe = [], [], []
    for i in range(n):
        s = strides[i]
        if auto_pad in ("SAME_UPPER", "SAME_LOWER"):
            o = (in_sp[i] + s - 1) // s
            total = max(0, (o - 1) * s + k[i] - in_sp[i])
            b = total // 2 if auto_pad == "SAME_UPPER" else total - total // 2
            e = total - b
        else:
            b, e = (pads[i], pads[n + i]) if auto_pad in ("", "NOTSET") else (0, 0)
            span = in_sp[i] + b + e - k[i]
            o = (span + s - 1) // s + 1 if ceil else span // s + 1
            if ceil and o > 1 and (o - 1) * s >= in_sp[i] + b:
                o -= 1
        out.append(o)
        pb.append(b)
        pe.append(e)
    return out, pb, pe


def ref_avgpool(x, sx, zx, sy, zy, k, strides, pads, auto_pad, ceil, cip, channels_last):
    lo, hi = rng_of(x.dtype)
    if channels_last:
        x = np.moveaxis(x, -1, 1)
    in_sp = list(x.shape[2:])
    out, pb, pe = pool_geometry(in_sp, k, strides, pads, auto_pad, ceil)
    if list(k) == in_sp and not any(pb) and not any(pe):
        y = ref_gap_ncx(x, sx, zx, sy, zy).reshape(x.shape[:2] + (1,) * len(in_sp))
    else:
        deq = f32(F(sx) * (x.astype(np.int64) - zx).astype(np.float32))
        y = np.zeros(x.shape[:2] + tuple(out), x.dtype)
        for o in np.ndindex(*out):
            ranges = []
            for d in range(len(in_sp)):
                st = o[d] * strides[d] - pb[d]
                ranges.append(range(max(st, 0), min(st + k[d], in_sp[d])))
            acc = np.zeros(x.shape[:2], np.float32)
            for idx in np.ndindex(*[len(r) for r in ranges]):
                pos = tuple(ranges[d][idx[d]] for d in range(len(in_sp)))
                acc = f32(acc + deq[(slice(None), slice(None)) + pos])
            count = int(np.prod(k)) if cip else int(np.prod([len(r) for r in ranges]))
            yv = f32(acc / F(count))
            y[(slice(None), slice(None)) + o] = cvt_sat(f32(f32(yv / F(sy)) + F(zy)), lo, hi)
    if channels_last:
        y = np.moveaxis(y, 1, -1)
    return y


def logistic(x):
    """MlasComputeLogistic, FMA kernel."""
    x = f32(x)
    x = np.where(x < F(-18), F(-18), x)
    x = np.where(x > F(18), F(18), x).astype(np.float32)
    x2 = f32(x * x)
    p = fma(x2, F(4.37031012579801e-11), F(1.15627324459942e-07))
    p = fma(x2, p, F(6.08574864600143e-05))
    p = fma(x2, p, F(8.51377133304701e-03))
    p = fma(x2, p, F(2.48287947061529e-01))
    q = fma(x2, F(6.10247389755681e-13), F(5.76102136993427e-09))
    q = fma(x2, q, F(6.29106785017040e-06))
    q = fma(x2, q, F(1.70198817374094e-03))
    q = fma(x2, q, F(1.16817656904453e-01))
    q = fma(x2, q, F(9.93151921023180e-01))
    p = f32(x * p)
    r = f32(f32(p / q) + F(0.5))
    return np.where(r >= 0, r, F(0)).astype(np.float32)


def table(dt, sx, zx, sy, zy, fn=None):
    """QlinearBuildLookupTable: by value x of the type."""
    lo, hi = rng_of(dt)
    xs = np.arange(lo, hi + 1)
    v = f32(F(sx) * (xs - zx).astype(np.float32))
    if fn is not None:
        v = f32(fn(v))
    return xs, clamp_round(f32(v / F(sy)), zy, lo, hi).astype(dt)


def apply_table(x, tab):
    lo = -128 if x.dtype == np.int8 else 0
    return tab[1][x.astype(np.int64) - lo]


def ref_lut(x, sx, zx, sy, zy, fn):
    return apply_table(x, table(x.dtype, sx, zx, sy, zy, fn))


def leaky(alpha):
    return lambda v: np.where(v >= 0, v, f32(F(alpha) * v))


def ref_concat(xs, params, sy, zy, axis):
    parts = []
    for x, (sx, zx) in zip(xs, params):
        same = F(sx) == F(sy) and zx == zy
        parts.append(x if same else apply_table(x, table(x.dtype, sx, zx, sy, zy)))
    return np.concatenate(parts, axis=axis)


def ref_softmax(x, sx, sy, zy, axis, opset):
    rank = x.ndim
    axis = (axis if axis is not None else -1) % rank  # -1 at every opset (ORT's schema default)
    if opset < 13:
        rows = x.reshape(int(np.prod(x.shape[:axis])), -1)
        y = ref_softmax_rows(rows, sx, sy, zy, rows.shape[1]).reshape(x.shape)
    else:
        xt = np.moveaxis(x, axis, -1)
        rows = xt.reshape(-1, xt.shape[-1])
        y = ref_softmax_rows(rows, sx, sy, zy, rows.shape[1])
        y = np.moveaxis(y.reshape(xt.shape), -1, axis)
    return np.ascontiguousarray(y)


def ref_softmax_rows(rows, sx, sy, zy, D):
    shift = np.log(np.float64(F(np.finfo(np.float32).max) / F(D)))
    shift = max(0.0, shift - 5.0) / np.float64(F(sx))
    tab = np.array([np.exp((i - 255.0 + shift) * np.float64(F(sx))) for i in range(256)], np.float32)
    ys = f32(np.floor(f32(F(1.0) / F(sy))))
    s8 = rows.dtype == np.int8
    out = np.zeros(rows.shape, rows.dtype)
    for r in range(rows.shape[0]):
        x = rows[r].astype(np.int64)
        e = tab[255 - (x.max() - x)]
        s = F(0)
        for v in e:
            s = f32(s + v)
        v = np.rint(f32(f32(e * ys) / s)).astype(np.int64)
        if not s8:
            q = (v + zy) & 0xFFFFFFFF
            out[r] = np.where(q > 255, 255, q).astype(np.uint8)
        else:
            q = wrap32(v + zy)
            out[r] = np.where(q > 127, 127, q).astype(np.int64).astype(np.uint8).view(np.int8)
    return out


# ---- models -----------------------------------------------------------------------------

TYPE = {np.uint8: TensorProto.UINT8, np.int8: TensorProto.INT8}


class Case:
    """One model: inputs fed (name -> array), constants, nodes, expected outputs."""

    def __init__(self, name, op):
        self.name, self.op = name, op
        self.nodes, self.inits, self.inputs, self.feeds, self.outputs, self.expect = [], [], [], {}, [], []

    def const(self, name, arr):
        self.inits.append(numpy_helper.from_array(np.asarray(arr), name))
        return name

    def feed(self, name, arr):
        arr = np.asarray(arr)
        dt = TensorProto.FLOAT if arr.dtype == np.float32 else TYPE[arr.dtype.type]
        self.inputs.append(helper.make_tensor_value_info(name, dt, list(arr.shape)))
        self.feeds[name] = arr
        return name

    def param(self, name, arr, dynamic):
        return self.feed(name, arr) if dynamic else self.const(name, arr)

    def node(self, op, ins, out, expect, **attrs):
        self.nodes.append(helper.make_node(op, ins, [out], domain="com.microsoft", **attrs))
        self.outputs.append(helper.make_tensor_value_info(out, TYPE[expect.dtype.type], list(expect.shape)))
        self.expect.append(expect)

    def model(self):
        g = helper.make_graph(self.nodes, self.name, self.inputs, self.outputs, initializer=self.inits)
        m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13),
                                                helper.make_opsetid("com.microsoft", 1)])
        m.ir_version = 7
        return m

    def write(self, d):
        os.makedirs(os.path.join(d, "test_data_set_0"), exist_ok=True)
        onnx.save(self.model(), os.path.join(d, "model.onnx"))
        for i, (k, v) in enumerate(self.feeds.items()):
            with open(os.path.join(d, "test_data_set_0", f"input_{i}.pb"), "wb") as f:
                f.write(numpy_helper.from_array(v, k).SerializeToString())
        for i, (o, v) in enumerate(zip(self.outputs, self.expect)):
            with open(os.path.join(d, "test_data_set_0", f"output_{i}.pb"), "wb") as f:
                f.write(numpy_helper.from_array(v, o.name).SerializeToString())


def rand_q(rng, dt, shape):
    lo, hi = rng_of(dt)
    return rng.integers(lo, hi + 1, size=shape).astype(dt)


def rand_params(rng, dt, scale=(0.005, 0.1)):
    lo, hi = rng_of(dt)
    return F(rng.uniform(*scale)), int(rng.integers(lo, hi + 1))


def zp_arr(dt, z):
    return np.array(z, dt)


def binary_cases(rng):
    cases = []
    shapes = [((2, 3, 17, 19), (2, 3, 17, 19)), ((1, 8, 64, 64), (1, 8, 64, 64)),
              ((2, 6, 9, 11), (1, 6, 1, 1)), ((1, 6, 1, 1), (2, 6, 9, 11)),
              ((1,), (2, 5, 7)), ((2, 5, 7), ()), ((5, 1), (1, 7)), ((1, 7), (5, 1)),
              ((3, 1, 4), (2, 1, 5, 1)), ((4, 1, 1), (1, 1, 1)), ((1, 1), (1,)),
              ((2, 40000), (1, 40000))]
    for op, ref in (("QLinearAdd", ref_add), ("QLinearMul", ref_mul)):
        for dt in (np.uint8, np.int8):
            for i, (sa_, sb_) in enumerate(shapes):
                c = Case(f"{op}_{dt.__name__}_{i}", op)
                a, b = rand_q(rng, dt, sa_), rand_q(rng, dt, sb_)
                (sa, za), (sb, zb) = rand_params(rng, dt), rand_params(rng, dt)
                sc, zc = rand_params(rng, dt, (0.02, 0.2) if op == "QLinearAdd" else (0.05, 2.0))
                # zero points: all given, none (omitted / empty names), or some
                mode = (0, 1, 2, 0)[i % 4]
                if mode == 1:
                    za = zb = zc = 0
                dyn = i % 4 == 3
                ins = [c.feed("a", a), c.param("sa", F(sa), dyn),
                       c.param("za", zp_arr(dt, za), dyn) if mode != 1 else "",
                       c.feed("b", b), c.param("sb", F(sb), dyn),
                       c.param("zb", zp_arr(dt, zb), dyn) if mode == 0 else "",
                       c.param("sc", F(sc), dyn)]
                if mode == 2:
                    zb = 0
                if mode != 1:
                    ins.append(c.param("zc", zp_arr(dt, zc), dyn))
                c.node(op, ins, "y", ref(a, sa, za, b, sb, zb, sc, zc))
                cases.append(c)
    return cases


def pair_cases(rng):
    """Every pair of 8-bit values through several parameter sets, with A
    the span, A the scalar of each span, and both spans: where a rounding
    step differs from ONNX Runtime's, some of these land on the other side
    of a .5."""
    cases = []
    for op, ref in (("QLinearAdd", ref_add), ("QLinearMul", ref_mul)):
        for dt in (np.uint8, np.int8):
            lo, hi = rng_of(dt)
            vals = np.arange(lo, hi + 1).astype(dt)
            c = Case(f"{op}_{dt.__name__}_pairs", op)
            shapes = {"a0": np.repeat(vals, 256), "b0": np.tile(vals, 256),
                      "a1": vals.reshape(1, 256), "b1": vals.reshape(256, 1)}
            for k, v in shapes.items():
                c.feed(k, v)
            for k in range(6):
                (sa, za), (sb, zb) = rand_params(rng, dt), rand_params(rng, dt)
                sc, zc = rand_params(rng, dt, (0.02, 0.2) if op == "QLinearAdd" else (0.05, 2.0))
                p = [c.const(f"sa{k}", F(sa)), c.const(f"za{k}", zp_arr(dt, za)), c.const(f"sb{k}", F(sb)),
                     c.const(f"zb{k}", zp_arr(dt, zb)), c.const(f"sc{k}", F(sc)), c.const(f"zc{k}", zp_arr(dt, zc))]
                for j, (an, bn) in enumerate((("a0", "b0"), ("a1", "b1"), ("b1", "a1"))):
                    a, b = shapes[an], shapes[bn]
                    c.node(op, [an, p[0], p[1], bn, p[2], p[3], p[4], p[5]], f"y{k}_{j}",
                           ref(a, sa, za, b, sb, zb, sc, zc))
            cases.append(c)
    return cases


def gap_cases(rng):
    cases = []
    for dt in (np.uint8, np.int8):
        for i, (shape, cl) in enumerate([((2, 16, 7, 7), 0), ((2, 7, 7, 16), 1), ((1, 3, 5), 0),
                                         ((1, 4, 3, 4, 5), 0), ((1, 5, 6, 1), 1), ((3, 2, 33, 31), 0),
                                         ((1, 9, 9, 20), 1)]):
            c = Case(f"QLinearGlobalAveragePool_{dt.__name__}_{i}", "QLinearGlobalAveragePool")
            x = rand_q(rng, dt, shape)
            (sx, zx), (sy, zy) = rand_params(rng, dt), rand_params(rng, dt)
            if i == 2:
                zx = zy = 0
            xn = np.moveaxis(x, -1, 1) if cl else x
            y = ref_gap_ncx(xn, sx, zx, sy, zy).reshape(xn.shape[:2] + (1,) * (x.ndim - 2))
            if cl:
                y = np.moveaxis(y, 1, -1)
            dyn = i == 3
            ins = [c.feed("x", x), c.param("sx", F(sx), dyn),
                   c.param("zx", zp_arr(dt, zx), dyn) if i != 2 else "",
                   c.param("sy", F(sy), dyn)]
            if i != 2:
                ins.append(c.param("zy", zp_arr(dt, zy), dyn))
            attrs = {"channels_last": cl} if cl or i % 2 else {}
            c.node("QLinearGlobalAveragePool", ins, "y", np.ascontiguousarray(y), **attrs)
            cases.append(c)
    return cases


def avgpool_cases(rng):
    cases = []
    specs = [  # shape (NCHW), kernel, strides, pads, auto_pad, ceil, count_include_pad
        ((1, 3, 8, 8), [3, 3], [1, 1], [1, 1, 1, 1], "", 0, 0),
        ((1, 3, 8, 8), [3, 3], [1, 1], [1, 1, 1, 1], "", 0, 1),
        ((2, 4, 9, 7), [2, 2], [2, 2], [0, 0, 0, 0], "", 1, 0),
        ((2, 4, 9, 7), [2, 2], [2, 2], [0, 0, 0, 0], "", 1, 1),
        ((1, 5, 11, 10), [3, 3], [2, 2], [1, 1, 0, 0], "", 0, 0),
        ((1, 5, 11, 10), [3, 3], [2, 2], [1, 0, 1, 1], "", 1, 1),
        ((1, 2, 10, 10), [3, 3], [2, 2], [0, 0, 0, 0], "SAME_UPPER", 0, 0),
        ((1, 2, 10, 10), [4, 4], [3, 3], [0, 0, 0, 0], "SAME_LOWER", 0, 1),
        ((1, 2, 5, 6), [5, 6], [1, 1], [0, 0, 0, 0], "", 0, 0),      # the whole image: global
        ((1, 3, 12), [3], [2], [1, 1], "", 1, 0),
        ((1, 2, 4, 5, 6), [2, 3, 2], [1, 2, 2], [0, 1, 0, 1, 1, 1], "", 0, 1),
        ((2, 16, 7, 7), [7, 7], [1, 1], [0, 0, 0, 0], "VALID", 0, 0),  # global again
        ((1, 2, 2, 5), [2, 2], [3, 3], [1, 1, 1, 1], "", 1, 0),     # a ceil window dropped
    ]
    for dt in (np.uint8, np.int8):
        for i, (shape, k, s, pads, ap, ceil, cip) in enumerate(specs):
            for cl in (0, 1):
                if cl and i % 2:
                    continue
                c = Case(f"QLinearAveragePool_{dt.__name__}_{i}_{cl}", "QLinearAveragePool")
                xn = rand_q(rng, dt, shape)
                x = np.ascontiguousarray(np.moveaxis(xn, 1, -1)) if cl else xn
                (sx, zx), (sy, zy) = rand_params(rng, dt), rand_params(rng, dt)
                if i == 3:
                    zx = zy = 0
                y = ref_avgpool(x, sx, zx, sy, zy, k, s, pads, ap, ceil, cip, cl)
                attrs = dict(kernel_shape=k, strides=s)
                if ap:
                    attrs["auto_pad"] = ap
                else:
                    attrs["pads"] = pads
                if ceil:
                    attrs["ceil_mode"] = 1
                if cip:
                    attrs["count_include_pad"] = 1
                if cl:
                    attrs["channels_last"] = 1
                ins = [c.feed("x", x), c.const("sx", F(sx)), c.const("zx", zp_arr(dt, zx)) if i != 3 else "",
                       c.const("sy", F(sy))]
                if i != 3:
                    ins.append(c.const("zy", zp_arr(dt, zy)))
                c.node("QLinearAveragePool", ins, "y", np.ascontiguousarray(y), **attrs)
                cases.append(c)
    return cases


def lut_cases(rng):
    cases = []
    for op in ("QLinearSigmoid", "QLinearLeakyRelu"):
        for dt in (np.uint8, np.int8):
            for i in range(4):
                c = Case(f"{op}_{dt.__name__}_{i}", op)
                lo, hi = rng_of(dt)
                # every value of the type, then random ones past a chunk
                x = np.concatenate([np.arange(lo, hi + 1), rng.integers(lo, hi + 1, 20000 * (i == 0))])
                x = x.astype(dt).reshape(1, -1)
                (sx, zx) = rand_params(rng, dt, (0.01, 0.1))
                (sy, zy) = rand_params(rng, dt, (0.002, 0.02)) if op == "QLinearSigmoid" else rand_params(rng, dt)
                if i == 1:
                    zx = zy = 0
                alpha = [0.01, 0.1, 0.3, 0.2][i]
                fn = logistic if op == "QLinearSigmoid" else leaky(alpha)
                dyn = i == 2
                ins = [c.feed("x", x), c.param("sx", F(sx), dyn), c.param("zx", zp_arr(dt, zx), dyn) if i != 1 else "",
                       c.param("sy", F(sy), dyn)]
                if i != 1:
                    ins.append(c.param("zy", zp_arr(dt, zy), dyn))
                attrs = {"alpha": alpha} if op == "QLinearLeakyRelu" and i else {}
                c.node(op, ins, "y", ref_lut(x, sx, zx, sy, zy, fn), **attrs)
                cases.append(c)
    return cases


def concat_cases(rng):
    cases = []
    for dt in (np.uint8, np.int8):
        for i, (shapes, axis) in enumerate([([(1, 3, 4, 5), (1, 2, 4, 5), (1, 4, 4, 5)], 1),
                                            ([(2, 3, 4), (2, 3, 1), (2, 3, 6)], -1),
                                            ([(3, 7), (5, 7)], 0),
                                            ([(1, 8, 16, 16), (1, 24, 16, 16)], 1)]):
            c = Case(f"QLinearConcat_{dt.__name__}_{i}", "QLinearConcat")
            sy, zy = rand_params(rng, dt)
            xs, params = [], []
            dyn = i == 2
            ins = [c.param("sy", F(sy), dyn), c.param("zy", zp_arr(dt, zy), dyn)]
            for k, sh in enumerate(shapes):
                x = rand_q(rng, dt, sh)
                # input 0 shares Y's parameters (a copy), the others differ
                sx, zx = (sy, zy) if k == 0 else rand_params(rng, dt)
                xs.append(x)
                params.append((sx, zx))
                ins += [c.feed(f"x{k}", x), c.param(f"sx{k}", F(sx), dyn), c.param(f"zx{k}", zp_arr(dt, zx), dyn)]
            c.node("QLinearConcat", ins, "y", ref_concat(xs, params, sy, zy, axis), axis=axis)
            cases.append(c)
    return cases


def softmax_cases(rng):
    cases = []
    for dt in (np.uint8, np.int8):
        for i, (shape, axis, opset) in enumerate([((4, 10), -1, 13), ((2, 5, 3), 1, 13), ((2, 3, 7), None, 13),
                                                  ((2, 3, 4), 1, 12), ((3, 1000), None, 13),
                                                  ((2, 6, 5), None, 11)]):
            c = Case(f"QLinearSoftmax_{dt.__name__}_{i}", "QLinearSoftmax")
            x = rand_q(rng, dt, shape)
            sx, zx = rand_params(rng, dt, (0.02, 0.2))
            sy = F(1.0 / 256.0) if i % 2 == 0 else F(rng.uniform(0.003, 0.01))
            zy = (-128 if dt == np.int8 else 0) if i % 3 != 2 else int(rng.integers(*rng_of(dt)) // 4)
            dyn = i == 1
            ins = [c.feed("x", x), c.param("sx", F(sx), dyn), c.param("zx", zp_arr(dt, zx), dyn),
                   c.param("sy", F(sy), dyn), c.param("zy", zp_arr(dt, zy), dyn)]
            attrs = {"opset": opset}
            if axis is not None:
                attrs["axis"] = axis
            c.node("QLinearSoftmax", ins, "y", ref_softmax(x, sx, sy, zy, axis, opset), **attrs)
            cases.append(c)
    return cases


def error_cases():
    """Models that must be refused: (name, case, words the message must hold)."""
    out = []
    u8, s8 = np.zeros((2, 3), np.uint8), np.zeros((2, 3), np.int8)

    def mk(name, op, ins, attrs=None, words=()):
        c = Case(name, op)
        names = []
        for k, v in ins:
            if v is None:
                names.append("")
            elif k.startswith("in_"):
                names.append(c.feed(k, v))
            else:
                names.append(c.const(k, v))
        c.nodes.append(helper.make_node(op, names, ["y"], domain="com.microsoft", **(attrs or {})))
        c.outputs.append(helper.make_tensor_value_info("y", TensorProto.UINT8, None))
        out.append((name, c, words))

    one, zu, zs = F(0.1), np.array(3, np.uint8), np.array(3, np.int8)
    mk("add_mixed_types", "QLinearAdd", [("in_a", u8), ("sa", one), ("za", zu), ("in_b", s8), ("sb", one),
                                         ("zb", zs), ("sc", one), ("zc", zu)], words=("same type",))
    mk("add_float", "QLinearAdd", [("in_a", np.zeros((2, 3), np.float32)), ("sa", one), ("za", None),
                                   ("in_b", np.zeros((2, 3), np.float32)), ("sb", one), ("zb", None),
                                   ("sc", one)], words=("uint8 or int8",))
    mk("add_scale_vector", "QLinearAdd", [("in_a", u8), ("sa", np.array([0.1, 0.2], np.float32)), ("za", zu),
                                          ("in_b", u8), ("sb", one), ("zb", zu), ("sc", one)],
       words=("scale", "scalar"))
    mk("mul_zp_type", "QLinearMul", [("in_a", u8), ("sa", one), ("za", zs), ("in_b", u8), ("sb", one),
                                     ("zb", zu), ("sc", one)], words=("zero point",))
    mk("mul_scale_double", "QLinearMul", [("in_a", u8), ("sa", np.array(0.1)), ("za", zu), ("in_b", u8),
                                          ("sb", one), ("zb", zu), ("sc", one)], words=("float32",))
    mk("add_no_broadcast", "QLinearAdd", [("in_a", u8), ("sa", one), ("za", zu), ("in_b", np.zeros((4,), np.uint8)),
                                          ("sb", one), ("zb", zu), ("sc", one)], words=("broadcast",))
    mk("add_missing_scale", "QLinearAdd", [("in_a", u8), ("sa", one), ("za", zu), ("in_b", u8), ("sb", one),
                                           ("zb", zu)], words=("inputs",))
    x4 = np.zeros((1, 2, 4, 4), np.uint8)
    mk("avgpool_no_kernel", "QLinearAveragePool", [("in_x", x4), ("sx", one), ("zx", zu), ("sy", one), ("zy", zu)],
       words=("kernel_shape",))
    mk("avgpool_big_pads", "QLinearAveragePool", [("in_x", x4), ("sx", one), ("zx", zu), ("sy", one), ("zy", zu)],
       {"kernel_shape": [2, 2], "pads": [2, 0, 0, 0]}, words=("pads",))
    mk("avgpool_dilations", "QLinearAveragePool", [("in_x", x4), ("sx", one), ("zx", zu), ("sy", one), ("zy", zu)],
       {"kernel_shape": [2, 2], "dilations": [2, 2]}, words=("dilations",))
    mk("gap_rank2", "QLinearGlobalAveragePool", [("in_x", u8), ("sx", one), ("zx", zu), ("sy", one), ("zy", zu)],
       words=("rank",))
    mk("gap_channels_last_2", "QLinearGlobalAveragePool", [("in_x", x4), ("sx", one), ("zx", zu), ("sy", one),
                                                          ("zy", zu)], {"channels_last": 2}, words=("channels_last",))
    mk("concat_bad_count", "QLinearConcat", [("sy", one), ("zy", zu), ("in_x0", u8), ("sx0", one), ("zx0", zu),
                                             ("in_x1", u8)], {"axis": 1}, words=("inputs",))
    mk("concat_no_axis", "QLinearConcat", [("sy", one), ("zy", zu), ("in_x0", u8), ("sx0", one), ("zx0", zu)],
       words=("axis",))
    mk("concat_shapes", "QLinearConcat", [("sy", one), ("zy", zu), ("in_x0", u8), ("sx0", one), ("zx0", zu),
                                          ("in_x1", np.zeros((3, 3), np.uint8)), ("sx1", one), ("zx1", zu)],
       {"axis": 1}, words=("dim",))
    mk("concat_types", "QLinearConcat", [("sy", one), ("zy", zu), ("in_x0", s8), ("sx0", one), ("zx0", zs)],
       {"axis": 1}, words=("type",))
    mk("sigmoid_float", "QLinearSigmoid", [("in_x", np.zeros((2,), np.float32)), ("sx", one), ("zx", None),
                                           ("sy", one)], words=("uint8 or int8",))
    mk("leaky_unknown_attr", "QLinearLeakyRelu", [("in_x", u8), ("sx", one), ("zx", zu), ("sy", one), ("zy", zu)],
       {"beta": 0.5}, words=("beta",))
    mk("softmax_no_opset", "QLinearSoftmax", [("in_x", u8), ("sx", one), ("zx", zu), ("sy", one), ("zy", zu)],
       words=("opset",))
    mk("softmax_axis", "QLinearSoftmax", [("in_x", u8), ("sx", one), ("zx", zu), ("sy", one), ("zy", zu)],
       {"opset": 13, "axis": 5}, words=("axis",))
    return out


# ---- running ------------------------------------------------------------------------------

def run(cmd, env=None):
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env, timeout=300)
    return p.returncode, p.stdout.strip()


def read_outputs(case_dir):
    outs, k = [], 0
    while os.path.exists(os.path.join(case_dir, "test_data_set_0", f"output_{k}.pb")):
        t = onnx.TensorProto()
        with open(os.path.join(case_dir, "test_data_set_0", f"output_{k}.pb"), "rb") as f:
            t.ParseFromString(f.read())
        outs.append(numpy_helper.to_array(t))
        k += 1
    return outs


def compare_with_ort(ort_js, cases, work, nn_run):
    """ONNX Runtime's outputs against the reference and against nn-run."""
    worst_ref, worst_nn, n_cases = {}, {}, {}
    full = {"QLinearAdd": 8, "QLinearMul": 8}
    for c in cases:
        node = c.nodes[0]
        if "" in node.input or len(node.input) < full.get(c.op, 5 if c.op != "QLinearConcat" else 0):
            continue  # ONNX Runtime cannot load omitted zero points (type inference, or an assert)
        d = os.path.join(work, c.name)
        args = ["node", ort_js, "--make-case", os.path.join(d, "model.onnx"), d + "_ort"]
        for i, k in enumerate(c.feeds):
            args += ["--input", f"{k}={os.path.join(d, 'test_data_set_0', f'input_{i}.pb')}"]
        rc, out = run(args)
        if rc != 0:
            print(f"ORT FAIL {c.name}: {out.splitlines()[-1:]}")
            worst_ref[c.op] = float("inf")
            continue
        got = read_outputs(d + "_ort")
        e = max(int(np.abs(g.astype(np.int64) - w.astype(np.int64)).max(initial=0)) for g, w in zip(got, c.expect))
        worst_ref[c.op] = max(worst_ref.get(c.op, 0), e)
        rc, out = run([nn_run, "--check", d + "_ort", "--rtol", "0", "--atol", "0"])
        errs = [float(w.split("=", 1)[1]) for w in out.split() if w.startswith("max_abs_err=")]
        en = 0 if rc == 0 else max(errs) if errs else float("inf")
        worst_nn[c.op] = max(worst_nn.get(c.op, 0), en)
        n_cases[c.op] = n_cases.get(c.op, 0) + 1
        if e or en:
            print(f"ORT differs on {c.name}: reference {e}, nn-run {en}")
    for op in sorted(n_cases):
        print(f"ONNX Runtime vs reference / nn-run: {op:26s} {n_cases[op]:3d} cases, max diff "
              f"{worst_ref[op]} / {worst_nn[op]}")
    return all(v == 0 for v in worst_ref.values()) and all(v == 0 for v in worst_nn.values())


def main():
    args = sys.argv[1:]
    ort_js = None
    if "--ort" in args:
        i = args.index("--ort")
        ort_js = os.path.abspath(args[i + 1])
        del args[i:i + 2]
    seed = 20261203
    if "--seed" in args:
        i = args.index("--seed")
        seed = int(args[i + 1])
        del args[i:i + 2]
    nn_run, work = args[0], args[1]
    os.makedirs(work, exist_ok=True)
    rng = np.random.default_rng(seed)
    cases = (binary_cases(rng) + pair_cases(rng) + gap_cases(rng) + avgpool_cases(rng) + lut_cases(rng) + concat_cases(rng)
             + softmax_cases(rng))
    for c in cases:
        c.write(os.path.join(work, c.name))
    failures, runs = [], 0
    for isa, threads in (("", "1"), ("", "2"), ("portable", "2")):
        env = dict(os.environ)
        if isa:
            env["NN_CPU"] = isa
        for c in cases:
            rc, out = run([nn_run, "--check", os.path.join(work, c.name), "--threads", threads,
                           "--rtol", "0", "--atol", "0"], env)
            runs += 1
            if rc != 0:
                failures.append(f"{c.name} threads={threads}{' NN_CPU=' + isa if isa else ''}: "
                                f"{out.splitlines()[-1:]}")
    # the Vulkan backend runs these on the CPU: same bytes
    probe = os.path.join(work, cases[0].name, "model.onnx")
    rc, out = run([nn_run, probe, "--backend", "vulkan"])
    if rc == 0:
        for c in cases[::7]:
            rc, out = run([nn_run, "--check", os.path.join(work, c.name), "--backend", "vulkan",
                           "--rtol", "0", "--atol", "0"])
            runs += 1
            if rc != 0:
                failures.append(f"{c.name} vulkan: {out.splitlines()[-1:]}")
    else:
        print("no Vulkan device: the Vulkan fallback runs skipped")
    # refused models: a non-zero exit and a message that says why
    errs = error_cases()
    for name, c, words in errs:
        d = os.path.join(work, "err_" + name)
        os.makedirs(d, exist_ok=True)
        onnx.save(c.model(), os.path.join(d, "model.onnx"))
        rc, out = run([nn_run, os.path.join(d, "model.onnx")])
        runs += 1
        low = out.lower()
        if rc == 0 or any(w.lower() not in low for w in words):
            failures.append(f"error case {name}: exit {rc}, wanted {words}: {out.splitlines()[-1:]}")
    for f in failures:
        print("FAIL " + f)
    print(f"{len(cases)} qlinear cases x 3 runs, {len(errs)} refused models: {runs - len(failures)} of {runs} ok")
    ok = not failures
    if ort_js:
        ok = compare_with_ort(ort_js, cases, work, nn_run) and ok
    print(f"{1 if ok else 0} passed, {0 if ok else 1} failed")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

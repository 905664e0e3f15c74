#!/usr/bin/env python3
"""qdq_check.py - 8-bit models in the QDQ format run as their QOperator twins;
dynamically quantized MatMuls as MatMulIntegerToFloat.

ONNX Runtime's quantizer writes 8-bit models by default as float operators
between DequantizeLinear (DQ) and QuantizeLinear (Q); the CPU session turns
each group into the 8-bit operator holding the same integers (runtime/qdq.c),
as ONNX Runtime does.  For each case below this builds (onnx.helper) the
model twice from the same integers, in the QDQ format and in the QOperator
format (QLinearConv, QLinearMatMul, com.microsoft QLinearAdd / QLinearMul /
QLinearGlobalAveragePool), runs both with nn-run on the same input and
checks:

  - the QDQ model's outputs equal the QOperator model's byte for byte (the
    float output behind the last DequantizeLinear too);
  - the QDQ model ran as 8-bit operators: the op counts NN_PROFILE reports
    (no Conv, MatMul, Add, Mul, GlobalAveragePool or Relu / Clip left, one
    DequantizeLinear per float output);
  - with NN_NO_FUSION=1 the QDQ model runs as written (float operators) and
    agrees with the fused run within one quantization step (a few where
    roundings compound along a chain: the Sigmoid after a pool after a
    Concat), a tenth of a step on average.

Groups that must stay as written are checked the other way round (the
float operator still runs, the outputs equal NN_NO_FUSION=1's): a bias
whose scale is not x_scale * w_scale, a Clip(0, 6) narrower than the
output's range (the float Conv runs with it in its epilogue), a Conv
output also read as a graph output, a MaxPool between different scales.

Dynamically quantized layers (ONNX Runtime's quantize_dynamic:
DynamicQuantizeLinear -> MatMulInteger -> Cast -> Mul by Mul(a_scale,
b_scale) -> Add bias) become com.microsoft MatMulIntegerToFloat: its
outputs equal NN_NO_FUSION=1's byte for byte (the same float32 steps),
scales in either order, per-column scales, with and without bias and B's
zero point.

The three QDQ models also equal ONNX Runtime 1.30's outputs byte for byte
(checked in development: ort-run.js --make-case on WORKDIR/*_qdq.onnx with
WORKDIR/*_x.pb, then nn-run --check --rtol 0 --atol 0), as do the
mobilenetv2_qdq and resnet_qdq stand-ins of tools/arch-models.py.

    qdq_check.py NN_RUN WORKDIR

Exits 77 without onnx/numpy.
"""
import os
import re
import subprocess
import sys

try:
    import numpy as np
    import onnx
    from onnx import TensorProto as T, helper as h, numpy_helper as nh
except ImportError:
    print('SKIP: needs python3-onnx and numpy (/usr/bin/python3 on Debian)')
    sys.exit(77)

RNG = np.random.default_rng(5)


class B:
    """One network built in either format from the same integers."""

    def __init__(s, qdq, seed=5):
        s.qdq, s.nodes, s.inits, s.n = qdq, [], [], 0
        s.rng = np.random.default_rng(seed)   # both formats draw the same integers

    def name(s, p='t'):
        s.n += 1
        return '%s%d' % (p, s.n)

    def init(s, arr, dt):
        nm = s.name('c')
        s.inits.append(nh.from_array(np.asarray(arr, dtype=dt), nm))
        return nm

    def op(s, typ, ins, **kw):
        out = s.name()
        s.nodes.append(h.make_node(typ, ins, [out], **kw))
        return out

    def qp(s, q):              # (scale, zero point, dtype) -> two initializers
        return [s.init(q[0], np.float32), s.init(q[1], q[2])]

    def dq(s, x, q):
        return s.op('DequantizeLinear', [x, *s.qp(q)])

    def quant(s, x, q):
        return s.op('QuantizeLinear', [x, *s.qp(q)])

    def conv(s, x, xq, yq, wq, ws, bq=None, act=None, bias_scale=None, **attrs):
        """wq int8 [M, C/g, k, k], ws per channel [M] or a scalar; act:
        None, 'relu' or (lo, hi) for a Clip between the Conv and its Q."""
        per_ch = np.ndim(ws) == 1
        wz = np.zeros(len(ws), np.int8) if per_ch else np.int8(0)
        if not s.qdq:
            ins = [x, *s.qp(xq), s.init(wq, np.int8), s.init(ws, np.float32), s.init(wz, np.int8),
                   *s.qp(yq)]
            if bq is not None:
                ins.append(s.init(bq, np.int32))
            return s.op('QLinearConv', ins, **attrs)
        kw = {'axis': 0} if per_ch else {}
        w = s.op('DequantizeLinear', [s.init(wq, np.int8), s.init(ws, np.float32), s.init(wz, np.int8)], **kw)
        ins = [s.dq(x, xq), w]
        if bq is not None:
            bsc = np.float32(xq[0]) * np.asarray(ws, np.float32) if bias_scale is None else bias_scale
            ins.append(s.op('DequantizeLinear', [s.init(bq, np.int32), s.init(bsc, np.float32),
                                                 s.init(np.zeros(np.shape(bsc), np.int32), np.int32)], **kw))
        y = s.op('Conv', ins, **attrs)
        if act == 'relu':
            y = s.op('Relu', [y])
        elif act is not None:
            y = s.op('Clip', [y, s.init(act[0], np.float32), s.init(act[1], np.float32)])
        return s.quant(y, yq)

    def binary(s, typ, a, aq, b, bq, yq):
        if not s.qdq:
            return s.op('QLinear' + typ, [a, *s.qp(aq), b, *s.qp(bq), *s.qp(yq)], domain='com.microsoft')
        return s.quant(s.op(typ, [s.dq(a, aq), s.dq(b, bq)]), yq)

    def gap(s, x, xq, yq):
        if not s.qdq:
            return s.op('QLinearGlobalAveragePool', [x, *s.qp(xq), *s.qp(yq)], domain='com.microsoft')
        return s.quant(s.op('GlobalAveragePool', [s.dq(x, xq)]), yq)

    def matmul(s, a, aq, wq, wsc, yq):
        if not s.qdq:
            return s.op('QLinearMatMul', [a, *s.qp(aq), s.init(wq, np.int8), s.init(wsc, np.float32),
                                          s.init(0, np.int8), *s.qp(yq)])
        w = s.op('DequantizeLinear', [s.init(wq, np.int8), s.init(wsc, np.float32), s.init(0, np.int8)])
        return s.quant(s.op('MatMul', [s.dq(a, aq), w]), yq)

    def unary(s, typ, x, xq, yq, **attrs):
        """Sigmoid / LeakyRelu / AveragePool: their QLinear twin in the
        QOperator format."""
        if not s.qdq:
            return s.op('QLinear' + typ, [x, *s.qp(xq), *s.qp(yq)], domain='com.microsoft', **attrs)
        return s.quant(s.op(typ, [s.dq(x, xq)], **attrs), yq)

    def concat(s, xs, yq, axis):
        """xs: (name, params) pairs."""
        if not s.qdq:
            ins = [*s.qp(yq)]
            for x, xq in xs:
                ins += [x, *s.qp(xq)]
            return s.op('QLinearConcat', ins, domain='com.microsoft', axis=axis)
        return s.quant(s.op('Concat', [s.dq(x, xq) for x, xq in xs], axis=axis), yq)

    def mover(s, typ, x, xq, ins=(), **attrs):
        """An op that moves or selects elements: on the 8-bit tensor in the
        QOperator format, between DQ and Q of the same parameters in QDQ."""
        if not s.qdq:
            return s.op(typ, [x, *ins], **attrs)
        return s.quant(s.op(typ, [s.dq(x, xq), *ins], **attrs), xq)

    def save(s, path, shape, outs):
        """outs: (name, elem type); the model takes float x of shape."""
        g = h.make_graph(s.nodes, 'qdq', [h.make_tensor_value_info('x', T.FLOAT, shape)],
                         [h.make_tensor_value_info(o, t, None) for o, t in outs], s.inits)
        m = h.make_model(g, opset_imports=[h.make_opsetid('', 13), h.make_opsetid('com.microsoft', 1)])
        m.ir_version = 8
        onnx.save(m, path)


def rand_w(rng, m, cg, k):
    wf = rng.standard_normal((m, cg, k, k)).astype(np.float32)
    ws = (np.abs(wf).reshape(m, -1).max(1) / 127.0).astype(np.float32)
    return np.clip(np.round(wf / ws[:, None, None, None]), -127, 127).astype(np.int8), ws


U8 = np.uint8
S8 = np.int8


def net_conv_chain(b):
    """u8 activations: 3x3 conv per-channel weights with bias -> Relu (into
    Q, zp 0) -> depthwise 3x3 stride 2 -> Clip(0, 6) (into Q, range 0..6)
    -> 1x1 per-tensor weights, no bias -> residual-free head: GAP -> Flatten
    -> MatMul.  Returns the outputs."""
    xq = (0.02, 128, U8)
    x = b.quant('x', xq)
    w, ws = rand_w(b.rng, 16, 8, 3)
    q1 = (0.03, 0, U8)
    y = b.conv(x, xq, q1, w, ws, b.rng.integers(-500, 500, 16), act='relu', kernel_shape=[3, 3],
               pads=[1, 1, 1, 1])
    w, ws = rand_w(b.rng, 16, 1, 3)
    q2 = (6.0 / 255, 0, U8)
    y = b.conv(y, q1, q2, w, ws, b.rng.integers(-500, 500, 16), act=(0.0, 6.0), kernel_shape=[3, 3],
               pads=[1, 1, 1, 1], strides=[2, 2], group=16)
    w, _ = rand_w(b.rng, 24, 16, 1)
    q3 = (0.05, 120, U8)
    y = b.conv(y, q2, q3, w, np.float32(0.004), kernel_shape=[1, 1])
    q4 = (0.01, 110, U8)
    p = b.gap(y, q3, q4)
    p = b.mover('Flatten', p, q4)
    q5 = (0.04, 130, U8)
    l = b.matmul(p, q4, b.rng.integers(-127, 128, (24, 10)), np.float32(0.01), q5)
    return [(b.dq(l, q5), T.FLOAT), (l, T.UINT8), (b.dq(y, q3), T.FLOAT)]


def net_residual_s8(b):
    """int8 activations: two convs, their sum (Add), a product (Mul) with
    the input, MaxPool and Reshape on 8 bits."""
    xq = (0.03, -3, S8)
    x = b.quant('x', xq)
    w, ws = rand_w(b.rng, 8, 8, 3)
    qa = (0.05, 2, S8)
    a = b.conv(x, xq, qa, w, ws, b.rng.integers(-300, 300, 8), kernel_shape=[3, 3], pads=[1, 1, 1, 1])
    w, ws = rand_w(b.rng, 8, 8, 1)
    qb = (0.04, -5, S8)
    c = b.conv(x, xq, qb, w, ws, b.rng.integers(-300, 300, 8), kernel_shape=[1, 1])
    qs = (0.07, 1, S8)
    s = b.binary('Add', a, qa, c, qb, qs)
    qm = (0.02, -1, S8)
    m = b.binary('Mul', s, qs, x, xq, qm)
    m = b.mover('MaxPool', m, qm, kernel_shape=[2, 2], strides=[2, 2])
    m = b.mover('Reshape', m, qm, ins=[b.init([1, 8, -1], np.int64)])
    return [(b.dq(m, qm), T.FLOAT), (m, T.INT8)]


def net_concat_pool_act(b):
    """u8: two convs concatenated (different scales), AveragePool,
    Sigmoid and LeakyRelu on 8 bits."""
    xq = (0.02, 128, U8)
    x = b.quant('x', xq)
    w, ws = rand_w(b.rng, 8, 8, 1)
    qa = (0.05, 0, U8)
    a = b.conv(x, xq, qa, w, ws, b.rng.integers(-300, 300, 8), act='relu', kernel_shape=[1, 1])
    w, ws = rand_w(b.rng, 4, 8, 3)
    qc = (0.06, 120, U8)
    c = b.conv(x, xq, qc, w, ws, b.rng.integers(-300, 300, 4), kernel_shape=[3, 3], pads=[1, 1, 1, 1])
    qk = (0.055, 110, U8)
    k = b.concat([(a, qa), (c, qc)], qk, 1)
    qp = (0.03, 115, U8)
    pl = b.unary('AveragePool', k, qk, qp, kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1],
                 count_include_pad=0)
    qs = (1.0 / 255, 0, U8)
    sg = b.unary('Sigmoid', pl, qp, qs)
    ql = (0.025, 100, U8)
    lr = b.unary('LeakyRelu', pl, qp, ql, alpha=0.1)
    return [(b.dq(sg, qs), T.FLOAT), (sg, T.UINT8), (lr, T.UINT8)]


# ---- groups that must stay as written: (name, builder, op that must remain)

def net_bias_scale(b):
    xq = (0.02, 128, U8)
    x = b.quant('x', xq)
    w, ws = rand_w(b.rng, 8, 8, 3)
    y = b.conv(x, xq, (0.05, 100, U8), w, ws, b.rng.integers(-300, 300, 8),
               bias_scale=(np.float32(0.021) * ws).astype(np.float32), kernel_shape=[3, 3], pads=[1, 1, 1, 1])
    return [(b.dq(y, (0.05, 100, U8)), T.FLOAT)]


def net_clip_narrow(b):
    xq = (0.02, 128, U8)
    x = b.quant('x', xq)
    w, ws = rand_w(b.rng, 8, 8, 3)
    yq = (0.05, 0, U8)      # 0 .. 12.75: the Clip at 6 does something
    y = b.conv(x, xq, yq, w, ws, None, act=(0.0, 6.0), kernel_shape=[3, 3], pads=[1, 1, 1, 1])
    return [(b.dq(y, yq), T.FLOAT)]


def net_conv_output_read(b):
    xq = (0.02, 128, U8)
    x = b.quant('x', xq)
    w, ws = rand_w(b.rng, 8, 8, 3)
    d = b.dq(x, xq)
    wd = b.op('DequantizeLinear', [b.init(w, np.int8), b.init(ws, np.float32), b.init(np.zeros(8), np.int8)],
              axis=0)
    y = b.op('Conv', [d, wd], kernel_shape=[3, 3], pads=[1, 1, 1, 1])
    yq = (0.05, 100, U8)
    return [(b.dq(b.quant(y, yq), yq), T.FLOAT), (y, T.FLOAT)]


def net_maxpool_scales(b):
    xq = (0.02, 128, U8)
    x = b.quant('x', xq)
    m = b.op('MaxPool', [b.dq(x, xq)], kernel_shape=[2, 2], strides=[2, 2])
    yq = (0.021, 128, U8)
    return [(b.dq(b.quant(m, yq), yq), T.FLOAT)]


POSITIVE = [('conv_chain_u8', net_conv_chain, [1, 8, 20, 20],
             {'QLinearConv': 3, 'QLinearGlobalAveragePool': 1, 'QLinearMatMul': 1, 'DequantizeLinear': 2}, 1),
            ('residual_s8', net_residual_s8, [1, 8, 12, 12],
             {'QLinearConv': 2, 'QLinearAdd': 1, 'QLinearMul': 1, 'MaxPool': 1, 'DequantizeLinear': 1}, 1),
            ('concat_pool_act', net_concat_pool_act, [1, 8, 14, 14],
             {'QLinearConv': 2, 'QLinearConcat': 1, 'QLinearAveragePool': 1, 'QLinearSigmoid': 1,
              'QLinearLeakyRelu': 1, 'DequantizeLinear': 1}, 3)]
NEGATIVE = [('bias_scale', net_bias_scale, [1, 8, 10, 10], 'Conv'),
            ('clip_narrow', net_clip_narrow, [1, 8, 10, 10], 'Conv'),
            ('conv_output_read', net_conv_output_read, [1, 8, 10, 10], 'Conv'),
            ('maxpool_scales', net_maxpool_scales, [1, 8, 10, 10], 'MaxPool')]
FLOAT_OPS = ('Conv', 'MatMul', 'Add', 'Mul', 'GlobalAveragePool', 'AveragePool', 'Concat', 'Sigmoid',
             'LeakyRelu', 'Relu', 'Clip')


def run(nn_run, model, inp, outdir, env_extra=None, threads=1):
    env = dict(os.environ, NN_PROFILE='1', **(env_extra or {}))
    os.makedirs(outdir, exist_ok=True)
    r = subprocess.run([nn_run, model, '--input', 'x=' + inp, '--save-outputs', outdir, '--bench', '1',
                        '--threads', str(threads)], capture_output=True, text=True, env=env, timeout=120)
    if r.returncode != 0:
        raise RuntimeError('%s failed (%d): %s' % (model, r.returncode, r.stderr.strip()[-400:]))
    ops = {m.group(1): int(m.group(2))
           for m in re.finditer(r'profile: (\w+) +(\d+) nodes', r.stderr)}
    outs = []
    for i in range(len(os.listdir(outdir))):
        outs.append(nh.to_array(onnx.load_tensor(os.path.join(outdir, 'output_%d.pb' % i))))
    return outs, ops


def net_dynamic(b, scale_order=0, per_col=False, bias=True, zb_const=True):
    """ONNX Runtime's quantize_dynamic: DynamicQuantizeLinear, MatMulInteger
    against constant int8 weights, Cast to float, Mul by the product of the
    scales, a bias Add; a second layer after a Relu.  Fused into
    com.microsoft MatMulIntegerToFloat."""
    x = 'x'
    for (k, n) in ((16, 24), (24, 12)):
        wf = b.rng.standard_normal((k, n)).astype(np.float32)
        ws = (np.abs(wf).max(0) / 127).astype(np.float32) if per_col else np.float32(np.abs(wf).max() / 127)
        wq = np.clip(np.round(wf / ws), -127, 127).astype(np.int8)
        xq, xs, xz = [b.name() for _ in range(3)]
        b.nodes.append(h.make_node('DynamicQuantizeLinear', [x], [xq, xs, xz]))
        zb = b.init(np.zeros(n if per_col else (), np.int8), np.int8) if zb_const else ''
        y = b.op('MatMulInteger', [xq, b.init(wq, np.int8), xz] + ([zb] if zb else []))
        y = b.op('Cast', [y], to=T.FLOAT)
        wsn = b.init(ws, np.float32)
        sc = b.op('Mul', [xs, wsn] if scale_order == 0 else [wsn, xs])
        y = b.op('Mul', [y, sc] if scale_order == 0 else [sc, y])
        if bias:
            y = b.op('Add', [y, b.init(b.rng.standard_normal(n).astype(np.float32), np.float32)])
        x = b.op('Relu', [y])
    return [(x, T.FLOAT)]


# dynamic quantization: (name, builder kwargs, MatMulIntegerToFloat nodes expected)
DYNAMIC = [('dynamic', {}, 2), ('dynamic_scales_swapped', {'scale_order': 1}, 2),
           ('dynamic_per_column_no_bias', {'per_col': True, 'bias': False}, 2),
           ('dynamic_no_zero_point', {'zb_const': False}, 2)]


def main():
    if len(sys.argv) != 3:
        print(__doc__)
        return 2
    nn_run, work = sys.argv[1], sys.argv[2]
    os.makedirs(work, exist_ok=True)
    fails = checks = 0

    def check(ok, what):
        nonlocal fails, checks
        checks += 1
        if not ok:
            fails += 1
            print('FAIL', what)

    for name, build, shape, want_ops, steps in POSITIVE:
        paths = {}
        for fmt in ('qdq', 'qop'):
            b = B(fmt == 'qdq')
            outs = build(b)
            paths[fmt] = os.path.join(work, '%s_%s.onnx' % (name, fmt))
            b.save(paths[fmt], shape, outs)
        inp = os.path.join(work, name + '_x.pb')
        open(inp, 'wb').write(nh.from_array(RNG.standard_normal(shape).astype(np.float32) * 2, 'x')
                              .SerializeToString())
        ref, _ = run(nn_run, paths['qop'], inp, os.path.join(work, name + '_out_qop'))
        for env, threads, tag in ((None, 1, ''), (None, 2, ' (2 threads)'),
                                  ({'NN_CPU': 'portable'}, 1, ' (portable)')):
            got, ops = run(nn_run, paths['qdq'], inp, os.path.join(work, name + '_out_qdq'), env, threads)
            for i, (a, r) in enumerate(zip(got, ref)):
                check(a.dtype == r.dtype and a.shape == r.shape and np.array_equal(a, r),
                      '%s%s: output %d differs from the QOperator model (max diff %s)'
                      % (name, tag, i, np.abs(a.astype(np.float64) - r.astype(np.float64)).max()
                         if a.shape == r.shape else 'shape'))
            for op, n in want_ops.items():
                check(ops.get(op, 0) == n, '%s%s: %d %s nodes ran, want %d (%s)' % (name, tag, ops.get(op, 0),
                                                                                   op, n, ops))
            for op in FLOAT_OPS:
                check(op not in ops, '%s%s: %s left unfused (%s)' % (name, tag, op, ops))
        unf, ops = run(nn_run, paths['qdq'], inp, os.path.join(work, name + '_out_nofuse'), {'NN_NO_FUSION': '1'})
        check('QLinearConv' not in ops and ops.get('Conv', 0) > 0,
              '%s: NN_NO_FUSION=1 still fused (%s)' % (name, ops))
        for i, (a, r) in enumerate(zip(unf, ref)):
            if a.dtype == np.float32:
                continue   # a float output behind DQ: compared through its 8-bit twin
            d = np.abs(a.astype(int) - r.astype(int))
            check(d.max() <= steps and d.mean() < 0.1,
                  '%s: the float graph is %d steps from the fused one on output %d (mean %.3f)'
                  % (name, d.max(), i, d.mean()))

    for name, build, shape, stays in NEGATIVE:
        b = B(True)
        path = os.path.join(work, name + '.onnx')
        b.save(path, shape, build(b))
        inp = os.path.join(work, name + '_x.pb')
        open(inp, 'wb').write(nh.from_array(RNG.standard_normal(shape).astype(np.float32) * 2, 'x')
                              .SerializeToString())
        got, ops = run(nn_run, path, inp, os.path.join(work, name + '_out'))
        ref, _ = run(nn_run, path, inp, os.path.join(work, name + '_out_nofuse'), {'NN_NO_FUSION': '1'})
        check(ops.get(stays, 0) >= 1, '%s: %s was fused away (%s)' % (name, stays, ops))
        for i, (a, r) in enumerate(zip(got, ref)):
            check(np.array_equal(a, r), '%s: output %d differs from NN_NO_FUSION=1' % (name, i))

    for name, kw, want in DYNAMIC:
        b = B(True)
        path = os.path.join(work, name + '.onnx')
        b.save(path, [3, 7, 16], net_dynamic(b, **kw))
        inp = os.path.join(work, name + '_x.pb')
        open(inp, 'wb').write(nh.from_array(RNG.standard_normal([3, 7, 16]).astype(np.float32), 'x')
                              .SerializeToString())
        for env, threads, tag in ((None, 1, ''), (None, 2, ' (2 threads)'), ({'NN_CPU': 'portable'}, 1,
                                                                             ' (portable)')):
            got, ops = run(nn_run, path, inp, os.path.join(work, name + '_out'), env, threads)
            ref, rops = run(nn_run, path, inp, os.path.join(work, name + '_out_nofuse'),
                            dict(env or {}, NN_NO_FUSION='1'), threads)
            check(ops.get('MatMulIntegerToFloat', 0) == want and 'Cast' not in ops,
                  '%s%s: not fused as expected (%s)' % (name, tag, ops))
            check('MatMulInteger' in rops, '%s%s: NN_NO_FUSION=1 fused (%s)' % (name, tag, rops))
            for i, (a, r) in enumerate(zip(got, ref)):
                check(np.array_equal(a, r), '%s%s: output %d differs from NN_NO_FUSION=1' % (name, tag, i))

    print('qdq_check: %d checks, %d failed' % (checks, fails))
    return 1 if fails else 0


if __name__ == '__main__':
    sys.exit(main())

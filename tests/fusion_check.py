#!/usr/bin/env python3
"""fusion_check.py - the plan-time fusions keep the results and do fuse.

Builds (onnx.helper) the block PaddleOCR's PP-LCNetV3 repeats, with its
weights given the two ways exporters do (initializers, and Constant nodes
that only plan-time folding turns into constants):

    Conv(3x3, pad 1) -> Mul(scalar) -> Add([1,C,1,1])     learnable affine
    -> x * Clip(x + 3, 0, 6) / 6                          HardSwish written out
    -> Mul(scalar) -> Add(scalar) -> Conv(1x1, pad 0)     affine into the next Conv
    -> Mul([C,1,1]) -> Sub(scalar) -> Conv(3x3 depthwise, pad 1)   not folded: padded

runs it with nn-run (random input) with the fusions and with NN_NO_FUSION=1
(every node its own kernel, the conformance-checked path), and checks that
the outputs agree (1e-4 relative to the output's range) and that the fused
plan executes exactly the nodes it should (nodes_cpu).

A second model checks the residual fusion (a shortcut Add into the epilogue
of the Conv producing one side, then its Relu), through each Conv path:

    DW3x3 -> Conv1x1 -> Add(x, .) -> Relu          residual = the graph input
    Conv3x3 -> Sum(., previous)                    3x3 path, no activation; a 2-input Sum
    DW3x3 -> Add(previous, .) -> Relu              the depthwise kernel
    Conv1x1 a, Conv1x1 b -> Add(a, b)              fused into b (a is ready)
    Conv1x1 -> Add(., ReduceMean(...))             broadcast: not fused

on 1 and 2 threads and on the portable kernels; the first depthwise
Conv also fuses into the 1x1 Conv after it (see below).

A third model checks the depthwise -> pointwise fusion (the 1x1 Conv runs
the depthwise Conv before it, computing its output where its GEMM reads
it), in each of its modes:

    DW3x3 (bias) -> Relu -> Conv1x1 24->24        per GEMM block, in cache
    -> Add(x, .)                                  (into the 1x1 Conv)
    DW3x3 -> Conv1x1 24->128                      packed once (M > a row tile)
    DW3x3 stride 2 -> Conv1x1 128->16             as planes (no vector path)

and at 72x64 (more than 4096 pixels) the first two a band of rows at a time
(the last band shorter); MobileNetV2's first block (DW3x3 -> Clip -> 1x1
32->16 at 112x112) runs in bands too.

A fourth model checks the normalization folds of pre-activation blocks
(Caffe2's DenseNet-121 writes each of its 62 that way):

    BatchNorm -> Mul([C,1,1]) -> Add([C,1,1]) -> Relu -> Conv1x1   all into the BN
    -> Add(., x)                                                   (into the Conv)
    BatchNorm -> Sub(scalar) -> Clip(0, 6)                         Sub and Clip into the BN
    BatchNorm -> Mul([1,C,1,1]) (also a graph output)              the BN's output read twice:
    -> Sigmoid                                                     not folded

With its Relu, the first BatchNorm above also runs inside the 1x1 Conv
after it (the normalization -> pointwise fusion: the Conv applies it to its
input as it packs it).  A fifth model checks that fusion on its own, through
both 1x1 paths (B packed per tile, and packed once when M is 96 or more):

    BatchNorm -> Clip(0, 6) -> Conv1x1 (bias)      the normalization and its Clip
    BatchNorm -> Conv1x1 -> Add(., the other)      no activation; a residual too

A sixth model checks Concat placement (the Concat's inputs planned as
slices of its output, written there by their producers): nested Concats,
an input read again after the Concat, an input given twice, slices that
are not 64-byte aligned (5x5 maps: copied), an in-place activation on a
Concat's output, on 1 and 2 threads:

    a = Relu(Conv1x1(x)), b = Conv3x3(x), d = Conv1x1(x)
    c1 = Concat(a, b, d); e = Sigmoid(a); c2 = Concat(c1, e, e)
    y = Concat(Relu(c2), a)           (1, 39, hw, hw)

An eighth checks squeeze-excitation gates fused into the 1x1 Conv after
them (see build_se).  A seventh model checks a transformer's linear layers: MatMul with its bias
Add, its shortcut Add and GELU (five nodes, three orders) in its epilogue,
and what must not fuse (a bias along rows, a GELU with a wrong constant);
a batched MatMul with a constant residual (see build_transformer).

Exits 77 without onnx/numpy.
"""
import os
import subprocess
import sys
import tempfile

try:
    import numpy as np
    import onnx
    from onnx import helper, numpy_helper, TensorProto
except ImportError as e:
    print('SKIP: %s (python3-onnx, python3-numpy)' % e)
    sys.exit(77)


def build(as_constants, rng):
    nodes, inits = [], []

    def const(name, arr):
        arr = np.asarray(arr, dtype=np.float32)
        if as_constants:
            nodes.append(helper.make_node('Constant', [], [name],
                                          value=numpy_helper.from_array(arr, name)))
        else:
            inits.append(numpy_helper.from_array(arr, name))
        return name

    c = 8
    const('w1', rng.standard_normal((c, 3, 3, 3)) * 0.3)
    const('b1', rng.standard_normal(c) * 0.1)
    nodes.append(helper.make_node('Conv', ['x', 'w1', 'b1'], ['c1'], pads=[1, 1, 1, 1]))
    nodes.append(helper.make_node('Mul', [const('s1', [1.3]), 'c1'], ['m1']))
    nodes.append(helper.make_node('Add', ['m1', const('t1', rng.standard_normal((1, c, 1, 1)))],
                                  ['a1']))
    nodes.append(helper.make_node('Add', ['a1', const('three', 3.0)], ['h0']))
    nodes.append(helper.make_node('Clip', ['h0', const('lo', 0.0), const('hi', 6.0)], ['h1']))
    nodes.append(helper.make_node('Mul', ['a1', 'h1'], ['h2']))
    nodes.append(helper.make_node('Div', ['h2', const('six', 6.0)], ['hs']))
    nodes.append(helper.make_node('Mul', ['hs', const('s2', [0.7])], ['m2']))
    nodes.append(helper.make_node('Add', [const('t2', [0.25]), 'm2'], ['a2']))
    const('w2', rng.standard_normal((c, c, 1, 1)) * 0.3)
    const('b2', rng.standard_normal(c) * 0.1)
    nodes.append(helper.make_node('Conv', ['a2', 'w2', 'b2'], ['c2'], pads=[0, 0, 0, 0]))
    nodes.append(helper.make_node('Mul', ['c2c', const('s3', rng.standard_normal((c, 1, 1)))],
                                  ['m3']))
    nodes[-1].input[0] = 'c2'
    nodes.append(helper.make_node('Relu', ['m3'], ['r3']))
    nodes.append(helper.make_node('Sub', ['r3', const('t3', [0.5])], ['a3']))
    const('w3', rng.standard_normal((c, 1, 3, 3)) * 0.3)
    nodes.append(helper.make_node('Conv', ['a3', 'w3'], ['y'], pads=[1, 1, 1, 1], group=c))
    g = helper.make_graph(nodes, 'lcnet_block',
                          [helper.make_tensor_value_info('x', TensorProto.FLOAT, [1, 3, 12, 20])],
                          [helper.make_tensor_value_info('y', TensorProto.FLOAT, [1, c, 12, 20])],
                          inits)
    return helper.make_model(g, opset_imports=[helper.make_opsetid('', 13)])


def build_residual(rng, c, hw):
    inits, nodes = [], []

    def w(name, shape, scale=0.3):
        inits.append(numpy_helper.from_array(
            (rng.standard_normal(shape) * scale).astype(np.float32), name))
        return name

    def conv(x, y, k, dw=False, bias=True):
        ins = [x, w(y + '_w', (c, 1 if dw else c, k, k))]
        if bias:
            ins.append(w(y + '_b', (c,), 0.1))
        nodes.append(helper.make_node('Conv', ins, [y], pads=[k // 2] * 4,
                                      group=c if dw else 1))

    conv('x', 'd1', 3, dw=True)
    conv('d1', 'p1', 1)
    nodes.append(helper.make_node('Add', ['x', 'p1'], ['a1']))
    nodes.append(helper.make_node('Relu', ['a1'], ['r1']))
    conv('r1', 'c2', 3, bias=False)
    # a two-input Sum is an Add (caffe2 exports, ResNet-50 among them)
    nodes.append(helper.make_node('Sum', ['c2', 'r1'], ['a2']))
    conv('a2', 'd3', 3, dw=True)
    nodes.append(helper.make_node('Add', ['a2', 'd3'], ['a3']))
    nodes.append(helper.make_node('Relu', ['a3'], ['r3']))
    conv('r3', 'c4', 1)
    conv('r3', 'c5', 1, bias=False)
    nodes.append(helper.make_node('Add', ['c4', 'c5'], ['a4']))
    conv('a4', 'e4', 1)
    nodes.append(helper.make_node('ReduceMean', ['a4'], ['t'], axes=[1], keepdims=1))
    nodes.append(helper.make_node('Add', ['e4', 't'], ['y']))
    g = helper.make_graph(nodes, 'residual_blocks',
                          [helper.make_tensor_value_info('x', TensorProto.FLOAT, [1, c, hw, hw])],
                          [helper.make_tensor_value_info('y', TensorProto.FLOAT, [1, c, hw, hw])],
                          inits)
    return helper.make_model(g, opset_imports=[helper.make_opsetid('', 13)])


def build_separable(rng, hw):
    inits, nodes = [], []

    def w(name, shape, scale=0.3):
        inits.append(numpy_helper.from_array(
            (rng.standard_normal(shape) * scale).astype(np.float32), name))
        return name

    def dw(x, y, c, stride=1, bias=True):
        ins = [x, w(y + '_w', (c, 1, 3, 3))] + ([w(y + '_b', (c,), 0.1)] if bias else [])
        nodes.append(helper.make_node('Conv', ins, [y], pads=[1] * 4, group=c,
                                      strides=[stride, stride]))

    def pw(x, y, cin, cout):
        nodes.append(helper.make_node('Conv', [x, w(y + '_w', (cout, cin, 1, 1)),
                                               w(y + '_b', (cout,), 0.1)], [y]))

    dw('x', 'd1', 24)
    nodes.append(helper.make_node('Relu', ['d1'], ['r1']))
    pw('r1', 'p1', 24, 24)
    nodes.append(helper.make_node('Add', ['x', 'p1'], ['a1']))
    dw('a1', 'd2', 24, bias=False)
    pw('d2', 'p2', 24, 128)
    dw('p2', 'd3', 128, stride=2)
    pw('d3', 'y', 128, 16)
    h, wd = hw
    g = helper.make_graph(nodes, 'separable',
                          [helper.make_tensor_value_info('x', TensorProto.FLOAT, [1, 24, h, wd])],
                          [helper.make_tensor_value_info('y', TensorProto.FLOAT,
                                                         [1, 16, (h + 1) // 2, (wd + 1) // 2])],
                          inits)
    return helper.make_model(g, opset_imports=[helper.make_opsetid('', 13)])


def build_inverted(rng):
    """MobileNetV2's first block: DW3x3 32 -> Clip(0, 6) -> Conv1x1 32->16 at
    112x112.  Its bands are 672 pixels and the last 448, which the GEMM splits
    differently: the workspace sized for a full band must cover it."""
    def w(name, arr):
        return numpy_helper.from_array(arr.astype(np.float32), name)
    inits = [w('dw_w', rng.standard_normal((32, 1, 3, 3)) * 0.3), w('dw_b', rng.standard_normal(32) * 0.1),
             w('lo', np.array(0.0)), w('hi', np.array(6.0)),
             w('pw_w', rng.standard_normal((16, 32, 1, 1)) * 0.2), w('pw_b', rng.standard_normal(16) * 0.1)]
    nodes = [helper.make_node('Conv', ['x', 'dw_w', 'dw_b'], ['d'], pads=[1] * 4, group=32),
             helper.make_node('Clip', ['d', 'lo', 'hi'], ['c']),
             helper.make_node('Conv', ['c', 'pw_w', 'pw_b'], ['y'])]
    g = helper.make_graph(nodes, 'inverted',
                          [helper.make_tensor_value_info('x', TensorProto.FLOAT, [1, 32, 112, 112])],
                          [helper.make_tensor_value_info('y', TensorProto.FLOAT, [1, 16, 112, 112])],
                          inits)
    return helper.make_model(g, opset_imports=[helper.make_opsetid('', 13)])


class Parts:
    """Initializers and nodes of a model being built: t() adds a float32
    initializer, bn() a BatchNormalization with random parameters."""

    def __init__(self, rng):
        self.rng, self.inits, self.nodes = rng, [], []

    def t(self, name, arr):
        self.inits.append(numpy_helper.from_array(np.asarray(arr, np.float32), name))
        return name

    def bn(self, x, y, c, eps):
        r = self.rng
        self.nodes.append(helper.make_node('BatchNormalization', [
            x, self.t(y + '_s', r.standard_normal(c)), self.t(y + '_b', r.standard_normal(c)),
            self.t(y + '_m', r.standard_normal(c) * 0.1), self.t(y + '_v', r.uniform(0.5, 2.0, c))],
            [y], epsilon=eps))


def build_preact(rng, c, hw):
    P = Parts(rng)
    inits, nodes, t = P.inits, P.nodes, P.t

    def bn(x, y):
        P.bn(x, y, c, 1e-5)

    bn('x', 'n1')
    nodes.append(helper.make_node('Mul', ['n1', t('k1', rng.standard_normal((c, 1, 1)))], ['m1']))
    nodes.append(helper.make_node('Add', [t('d1', rng.standard_normal((c, 1, 1))), 'm1'], ['a1']))
    nodes.append(helper.make_node('Relu', ['a1'], ['r1']))
    nodes.append(helper.make_node('Conv', ['r1', t('w1', rng.standard_normal((c, c, 1, 1)) * 0.3)],
                                  ['c1']))
    nodes.append(helper.make_node('Add', ['c1', 'x'], ['e1']))   # not a Conv's output: no BN fold
    bn('e1', 'n2')
    nodes.append(helper.make_node('Sub', ['n2', t('d2', [0.25])], ['s2']))
    nodes.append(helper.make_node('Clip', ['s2', t('lo', 0.0), t('hi', 6.0)], ['q2']))
    bn('q2', 'n3')
    nodes.append(helper.make_node('Mul', ['n3', t('k3', rng.standard_normal((1, c, 1, 1)))], ['y2']))
    nodes.append(helper.make_node('Sigmoid', ['n3'], ['y']))
    g = helper.make_graph(nodes, 'preact',
                          [helper.make_tensor_value_info('x', TensorProto.FLOAT, [1, c, hw, hw])],
                          [helper.make_tensor_value_info('y', TensorProto.FLOAT, [1, c, hw, hw]),
                           helper.make_tensor_value_info('y2', TensorProto.FLOAT, [1, c, hw, hw])],
                          inits)
    return helper.make_model(g, opset_imports=[helper.make_opsetid('', 13)])


def build_norm_pw(rng, c, m, hw):
    P = Parts(rng)
    inits, nodes, t = P.inits, P.nodes, P.t

    def bn(x, y):
        P.bn(x, y, c, 1e-3)

    bn('x', 'n1')
    nodes.append(helper.make_node('Clip', ['n1', t('lo', 0.0), t('hi', 6.0)], ['q1']))
    nodes.append(helper.make_node('Conv', ['q1', t('w1', rng.standard_normal((m, c, 1, 1)) * 0.3),
                                           t('b1', rng.standard_normal(m))], ['c1']))
    bn('x', 'n2')
    nodes.append(helper.make_node('Conv', ['n2', t('w2', rng.standard_normal((m, c, 1, 1)) * 0.3)],
                                  ['c2']))
    nodes.append(helper.make_node('Add', ['c1', 'c2'], ['y']))
    g = helper.make_graph(nodes, 'norm_pw',
                          [helper.make_tensor_value_info('x', TensorProto.FLOAT, [1, c, hw, hw])],
                          [helper.make_tensor_value_info('y', TensorProto.FLOAT, [1, m, hw, hw])],
                          inits)
    return helper.make_model(g, opset_imports=[helper.make_opsetid('', 13)])


def build_concat(rng, c, hw):
    P = Parts(rng)
    inits, nodes, t = P.inits, P.nodes, P.t

    def conv(x, y, m, k):
        nodes.append(helper.make_node('Conv', [x, t(y + '_w', rng.standard_normal((m, c, k, k)) * 0.3),
                                               t(y + '_b', rng.standard_normal(m))], [y],
                                      pads=[k // 2] * 4))

    conv('x', 'ca', 8, 1)
    nodes.append(helper.make_node('Relu', ['ca'], ['a']))
    conv('x', 'b', 3, 3)
    conv('x', 'd', 4, 1)
    nodes.append(helper.make_node('Concat', ['a', 'b', 'd'], ['c1'], axis=1))
    nodes.append(helper.make_node('Sigmoid', ['a'], ['e']))
    nodes.append(helper.make_node('Concat', ['c1', 'e', 'e'], ['c2'], axis=-3))
    nodes.append(helper.make_node('Relu', ['c2'], ['r2']))
    nodes.append(helper.make_node('Concat', ['r2', 'a'], ['y'], axis=1))
    g = helper.make_graph(nodes, 'concat',
                          [helper.make_tensor_value_info('x', TensorProto.FLOAT, [1, c, hw, hw])],
                          [helper.make_tensor_value_info('y', TensorProto.FLOAT, None)], inits)
    return helper.make_model(g, opset_imports=[helper.make_opsetid('', 13)])


def build_silu(rng, c, hw):
    """SiLU as exporters write it, Mul(x, Sigmoid(x)), after a Conv (Mul's
    operands in both orders), a depthwise Conv and a MatMul: each fuses into
    its producer; after a 1x1 Conv whose output a third node reads it must
    not."""
    inits, nodes = [], []

    def w(name, shape, scale=0.4):
        inits.append(numpy_helper.from_array((rng.standard_normal(shape) * scale).astype(np.float32), name))
        return name

    def silu(x, y, swap=False):
        nodes.append(helper.make_node('Sigmoid', [x], [y + '_s']))
        nodes.append(helper.make_node('Mul', [y + '_s', x] if swap else [x, y + '_s'], [y]))

    nodes.append(helper.make_node('Conv', ['x', w('w1', (c, c, 3, 3)), w('b1', (c,), 0.1)], ['c1'], pads=[1] * 4))
    silu('c1', 'a')
    nodes.append(helper.make_node('Conv', ['a', w('w2', (c, 1, 3, 3)), w('b2', (c,), 0.1)], ['c2'],
                                  pads=[1] * 4, group=c))
    silu('c2', 'b', swap=True)
    nodes.append(helper.make_node('Conv', ['b', w('w3', (c, c, 1, 1))], ['c3']))
    silu('c3', 'm')
    nodes.append(helper.make_node('Add', ['c3', 'm'], ['e']))
    nodes.append(helper.make_node('MatMul', ['e', w('w4', (hw, hw))], ['c4']))
    silu('c4', 'y')
    g = helper.make_graph(nodes, 'silu',
                          [helper.make_tensor_value_info('x', TensorProto.FLOAT, [1, c, hw, hw])],
                          [helper.make_tensor_value_info('y', TensorProto.FLOAT, [1, c, hw, hw])], inits)
    return helper.make_model(g, opset_imports=[helper.make_opsetid('', 13)])


def build_transformer(rng, t, d):
    """A transformer's linear layers as exporters write them: MatMul then
    Add(bias), the block's shortcut Add, and GELU as its five nodes in the
    three orders of the tail (Div or Mul by 1/sqrt 2 first):

        m1 = MatMul(x, W1) + b1[4d]; GELU (Div; Mul(Mul(h, a), 0.5))   all into m1
        m2 = b2[1,1,d] + MatMul(., W2); Add(x, .)                      bias and residual
        m3 = MatMul(., W3); GELU (Mul 0.7071; Mul(Mul(h, 0.5), a))     into m3
        m4 = MatMul(., W4) + b4[d]; GELU (Div; Mul(h, Mul(a, 0.5)))    into m4
        m5 = MatMul(., W5); Add(., c[t,1])          a bias along rows: not fused
        m6 = MatMul(., W6); GELU with 0.49 for 0.5  not fused
        m7 = MatMul(r, Transpose(r)) of r [2, t, d/2]; Add(., mask[2,t,t])
                                                    batched, a constant residual

    Output [2, t, t]."""
    inits, nodes = [], []

    def w(name, shape, scale=0.3):
        inits.append(numpy_helper.from_array((rng.standard_normal(shape) * scale).astype(np.float32), name))
        return name

    def const(name, v):
        inits.append(numpy_helper.from_array(np.array(v, dtype=np.float32), name))
        return name

    def node(op, ins, out, **kw):
        nodes.append(helper.make_node(op, ins, [out], **kw))
        return out

    def gelu(h, y, form, half=0.5):
        if form == 1:
            s = node('Mul', [const(y + '_r', 0.70710678), h], y + '_d')
        else:
            s = node('Div', [h, const(y + '_r', 1.4142135)], y + '_d')
        e = node('Erf', [s], y + '_e')
        a = node('Add', [const(y + '_1', 1.0), e] if form == 1 else [e, const(y + '_1', 1.0)], y + '_a')
        if form == 0:
            return node('Mul', [node('Mul', [h, a], y + '_m'), const(y + '_h', half)], y)
        if form == 1:
            return node('Mul', [node('Mul', [const(y + '_h', half), h], y + '_m'), a], y)
        return node('Mul', [h, node('Mul', [a, const(y + '_h', half)], y + '_m')], y)

    h = node('Add', [node('MatMul', ['x', w('w1', (d, 4 * d))], 'm1'), w('b1', (4 * d,), 0.1)], 'a1')
    g = gelu(h, 'g1', 0)
    h = node('Add', [w('b2', (1, 1, d), 0.1), node('MatMul', [g, w('w2', (4 * d, d))], 'm2')], 'a2')
    r = node('Add', ['x', h], 'r1')
    g = gelu(node('MatMul', [r, w('w3', (d, d))], 'm3'), 'g2', 1)
    g = gelu(node('Add', [node('MatMul', [g, w('w4', (d, d))], 'm4'), w('b4', (d,), 0.1)], 'a4'), 'g3', 2)
    h = node('Add', [node('MatMul', [g, w('w5', (d, d))], 'm5'), w('b5', (t, 1), 0.1)], 'a5')
    g = gelu(node('MatMul', [h, w('w6', (d, d))], 'm6'), 'g4', 0, half=0.49)
    inits.append(numpy_helper.from_array(np.array([2, t, d // 2], dtype=np.int64), 'shp'))
    q = node('Reshape', [g, 'shp'], 'q')
    k = node('Transpose', [q], 'k', perm=[0, 2, 1])
    node('Add', [node('MatMul', [q, k], 'm7'), w('mask', (2, t, t), 0.5)], 'y')
    gr = helper.make_graph(nodes, 'transformer',
                           [helper.make_tensor_value_info('x', TensorProto.FLOAT, [1, t, d])],
                           [helper.make_tensor_value_info('y', TensorProto.FLOAT, [2, t, t])], inits)
    return helper.make_model(gr, opset_imports=[helper.make_opsetid('', 13)])


def build_se(rng, c, m):
    """Squeeze-excitation gates (EfficientNet's Sigmoid, MobileNetV3's
    HardSigmoid) before a 1x1 projection, which packs its input through the
    channel scales:

        s1 = Sigmoid(Conv1x1(GAP(x))); Conv1x1(Mul(x, s1)) -> c->m   fused
        s2 = HardSigmoid(...(GAP(a))); Conv1x1(Mul(s2, a)) -> m->m   fused (scale first)
        Mul(b, s3) also a graph output; Conv1x1 after it             not fused
        Mul(b, s3) -> Conv3x3                                        not fused (not 1x1)

    The scales are per image (batch 2 in main)."""
    inits, nodes = [], []

    def w(name, shape, scale=0.3):
        inits.append(numpy_helper.from_array((rng.standard_normal(shape) * scale).astype(np.float32), name))
        return name

    def node(op, ins, out, **kw):
        nodes.append(helper.make_node(op, ins, [out], **kw))
        return out

    def gate(x, ch, y, hard=False):
        z = node('GlobalAveragePool', [x], y + '_p')
        z = node('Relu', [node('Conv', [z, w(y + '_w1', (4, ch, 1, 1)), w(y + '_b1', (4,), 0.1)], y + '_c1')], y + '_r')
        z = node('Conv', [z, w(y + '_w2', (ch, 4, 1, 1)), w(y + '_b2', (ch,), 0.1)], y + '_c2')
        if hard:
            return node('HardSigmoid', [z], y, alpha=1.0 / 6, beta=0.5)
        return node('Sigmoid', [z], y)

    a = node('Conv', [node('Mul', ['x', gate('x', c, 's1')], 'm1'), w('p1', (m, c, 1, 1)), w('q1', (m,), 0.1)], 'a')
    b = node('Conv', [node('Mul', [gate(a, m, 's2', True), a], 'm2'), w('p2', (m, m, 1, 1))], 'b')
    s3 = gate(b, m, 's3')
    node('Mul', [b, s3], 'm3')
    e = node('Conv', ['m3', w('p3', (m, m, 1, 1)), w('q3', (m,), 0.1)], 'e')
    f = node('Conv', [node('Mul', [b, s3], 'm4'), w('p4', (m, m, 3, 3)), w('q4', (m,), 0.1)], 'f', pads=[1] * 4)
    node('Add', [e, f], 'y')
    gr = helper.make_graph(nodes, 'se', [helper.make_tensor_value_info('x', TensorProto.FLOAT, None)],
                           [helper.make_tensor_value_info('y', TensorProto.FLOAT, None),
                            helper.make_tensor_value_info('m3', TensorProto.FLOAT, None)], inits)
    return helper.make_model(gr, opset_imports=[helper.make_opsetid('', 13)])


def run(nn_run, model, inp, outdir, fusion, threads=1, cpu=None):
    env = dict(os.environ)
    env.pop('NN_NO_FUSION', None)
    env.pop('NN_CPU', None)
    if not fusion:
        env['NN_NO_FUSION'] = '1'
    if cpu:
        env['NN_CPU'] = cpu
    os.makedirs(outdir, exist_ok=True)
    r = subprocess.run([nn_run, model, '--input', 'x=' + inp, '--save-outputs', outdir, '--stats',
                        '--threads', str(threads)], capture_output=True, text=True, env=env)
    if r.returncode != 0:
        raise SystemExit('nn-run failed: %s %s' % (r.stdout, r.stderr))
    stats = dict(kv.split('=') for line in r.stdout.splitlines() if 'nodes_cpu=' in line
                 for kv in line.split())
    files = [f for f in os.listdir(outdir) if f.endswith('.pb')]
    t = onnx.TensorProto()
    with open(os.path.join(outdir, files[0]), 'rb') as f:
        t.ParseFromString(f.read())
    return numpy_helper.to_array(t), int(stats['nodes_cpu'])


def compare(nn_run, d, tag, model_proto, x, configs, want_plain, want_fused, what, tol=1e-4):
    """Runs the model unfused, then fused in each (threads, cpu) config;
    True when every fused run has want_fused nodes (unfused: want_plain)
    and agrees with the unfused output within tol of its range."""
    model = os.path.join(d, tag + '.onnx')
    onnx.save(model_proto, model)
    inp = os.path.join(d, tag + '_x.pb')
    with open(inp, 'wb') as f:
        f.write(numpy_helper.from_array(x, 'x').SerializeToString())
    plain, n_plain = run(nn_run, model, inp, os.path.join(d, tag + '_p'), False)
    scale = float(np.max(np.abs(plain))) or 1.0
    ok = True
    for threads, cpu in configs:
        out = os.path.join(d, '%s_f%d_%s' % (tag, threads, cpu))
        fused, n_fused = run(nn_run, model, inp, out, True, threads, cpu)
        err = float(np.max(np.abs(fused - plain))) if fused.shape == plain.shape else float('inf')
        print('%s, %d thread(s)%s: output %s, %d nodes unfused, %d fused (want %d); '
              'max |fused - unfused| = %.3g (output range %.3g)'
              % (what, threads, ', portable' if cpu else '', 'x'.join(map(str, fused.shape)),
                 n_plain, n_fused, want_fused, err, scale))
        if n_plain != want_plain or n_fused != want_fused or err > tol * scale:
            ok = False
    return ok


ALL = ((1, None), (2, None), (1, 'portable'))


def main():
    nn_run = sys.argv[1]
    rng = np.random.default_rng(7)
    ok = True
    with tempfile.TemporaryDirectory() as d:
        x = (rng.standard_normal((1, 3, 12, 20)) * 2).astype(np.float32)
        for as_constants in (False, True):
            # unfused: 14 nodes; fused: Conv (+Mul +Add +HardSwish), Conv
            # (+Mul +Add before it, +Mul after it, +Relu), Sub, Conv = 4
            ok &= compare(nn_run, d, 'm%d' % as_constants, build(as_constants, rng), x,
                          ((1, None),), 14, 4,
                          'Constant nodes' if as_constants else 'initializers')
        # residual blocks: 15 nodes unfused; fused: p1 (+d1 +Add +Relu), c2 (+Add),
        # d3 (+Add +Relu), c4, c5 (+Add), e4, ReduceMean, Add = 8.  Three map
        # sizes and widths: the 3x3 Conv takes the implicit GEMM, Winograd (odd
        # width) and, at 96 channels, the 1x1 Convs the packed path.
        for c, hw in ((8, 16), (16, 15), (96, 8)):
            x = rng.standard_normal((1, c, hw, hw)).astype(np.float32)
            ok &= compare(nn_run, d, 'res%d' % hw, build_residual(rng, c, hw), x, ALL, 15, 8,
                          'residual %dx%dx%d' % (c, hw, hw))
        # separable blocks: 8 nodes unfused, 3 fused (each 1x1 Conv runs its
        # depthwise Conv, the first the Add too); 64x64 spans several GEMM
        # column blocks, 40x24 is a width that is a multiple of 8 but not of a
        # panel, 72x64 runs in bands of 16 rows
        for hw in ((64, 64), (40, 24), (72, 64)):
            x = rng.standard_normal((1, 24) + hw).astype(np.float32)
            ok &= compare(nn_run, d, 'sep%d' % hw[0], build_separable(rng, hw), x, ALL, 8, 3,
                          'separable %dx%d' % hw)
        # 3 nodes unfused, 1 fused (the Clip into the depthwise Conv, that
        # into the 1x1 Conv), in bands with a last band the GEMM tiles apart
        x = rng.standard_normal((1, 32, 112, 112)).astype(np.float32)
        ok &= compare(nn_run, d, 'inv', build_inverted(rng), x, ALL, 3, 1, 'inverted 32x112x112')
        # SiLU: 13 nodes unfused; fused: the 3x3 and the MatMul each with
        # their Sigmoid and Mul, the 1x1 Conv with the depthwise Conv (its
        # SiLU in the depthwise epilogue), Sigmoid, Mul, Add = 6; at 40x40 the
        # depthwise kernel's vector path
        for c, hw in ((8, 12), (16, 40)):
            x = rng.standard_normal((1, c, hw, hw)).astype(np.float32) * 2
            ok &= compare(nn_run, d, 'silu%d' % hw, build_silu(rng, c, hw), x, ALL, 13, 6,
                          'silu %dx%dx%d' % (c, hw, hw))
        # transformer layers: 35 nodes unfused; fused: m1 .. m6, the Add
        # after m5, the GELU with a wrong constant (5), Reshape, Transpose,
        # m7 = 15.  One token: the single-row products.
        for t in (7, 1):
            x = rng.standard_normal((1, t, 16)).astype(np.float32)
            ok &= compare(nn_run, d, 'tf%d' % t, build_transformer(rng, t, 16), x, ALL, 35, 15,
                          'transformer %d tokens' % t)
        # squeeze-excitation: 24 nodes unfused; fused: the first two Muls
        # into their 1x1 Convs, the Relus and Sigmoids into theirs, the Add
        # into f = 16.  M = 24: B per tile, M = 128 at 7x7 packed once;
        # batch 2: scales per image
        for c, m, hw in ((16, 24, 9), (32, 128, 7)):
            x = rng.standard_normal((2, c, hw, hw)).astype(np.float32)
            ok &= compare(nn_run, d, 'se%d' % m, build_se(rng, c, m), x, ALL, 24, 16,
                          'squeeze-excitation %d->%d at %dx%d' % (c, m, hw, hw))
        # pre-activation: 12 nodes unfused; fused: c1 (+n1 +Mul +Add +Relu
        # before it, +Add after it), n2 (+Sub +Clip), n3, Mul, Sigmoid = 5
        for c, hw in ((16, 9), (64, 14)):
            x = rng.standard_normal((1, c, hw, hw)).astype(np.float32)
            ok &= compare(nn_run, d, 'pre%d' % c, build_preact(rng, c, hw), x,
                          ((1, None), (2, None)), 12, 5, 'pre-activation %dx%dx%d' % (c, hw, hw))
        # normalization -> pointwise: 6 nodes unfused; fused: c1 (+n1 +Clip),
        # c2 (+n2, +Add) = 2.  M = 24: B packed per tile; M = 128 at 7x7: once.
        for c, m, hw in ((16, 24, 9), (32, 128, 7)):
            x = (rng.standard_normal((1, c, hw, hw)) * 3).astype(np.float32)
            ok &= compare(nn_run, d, 'npw%d' % m, build_norm_pw(rng, c, m, hw), x, ALL, 6, 2,
                          'normalization -> 1x1 %d->%d at %dx%d' % (c, m, hw, hw))
        # Concat placement: the same values with and without it (4x4 maps:
        # every slice aligned; 5x5: the slices after an odd one are copied);
        # 9 nodes unfused, 8 fused (the Relu into its Conv)
        for hw in (4, 5):
            x = rng.standard_normal((1, 6, hw, hw)).astype(np.float32)
            ok &= compare(nn_run, d, 'cat%d' % hw, build_concat(rng, 6, hw), x,
                          ((1, None), (2, None)), 9, 8, 'concat placement %dx%d' % (hw, hw),
                          tol=1e-5)
    print('OK' if ok else 'FAILED')
    return 0 if ok else 1


if __name__ == '__main__':
    sys.exit(main())

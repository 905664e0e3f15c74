#!/usr/bin/env python3
"""matmulinteger_check.py - MatMulInteger and com.microsoft
MatMulIntegerToFloat against numpy.

MatMulInteger runs two ways (cpu/gemm.c): with a constant 8-bit B whose
column zero points are 0 (128 for uint8) on the direct integer kernel
(cpu/qconv_direct.h), A's rows as channels-last pixels and A's zero point
any value, also one computed at run time (DynamicQuantizeLinear's, as ONNX
Runtime's quantize_dynamic writes transformers); anything else (B a graph
input, other zero points, per-row A zero points, K not a multiple of 4)
through a portable loop over rows on the workers.  Each case below is
built with onnx.helper, run by nn-run on 1 and 2 threads and on each
instruction-set path, and its int32 output compared with numpy's, which
wraps modulo 2^32 as the reference does.  The same cases as
MatMulIntegerToFloat (ONNX Runtime's contrib op: the sums times a_scale *
b_scale, per column too, plus a bias, in float32, multiply then add) are
compared byte for byte with numpy's float32 arithmetic.

    matmulinteger_check.py NN_RUN WORKDIR

Exits 77 without onnx/numpy.
"""
import os
import subprocess
import sys

try:
    import numpy as np
    import onnx
    from onnx import TensorProto as T, helper as h, numpy_helper as nh
except ImportError:
    print('SKIP: needs python3-onnx and numpy (/usr/bin/python3 on Debian)')
    sys.exit(77)

RNG = np.random.default_rng(9)
TYPES = {np.uint8: T.UINT8, np.int8: T.INT8}


def rand8(dt, shape):
    lo, hi = (0, 256) if dt == np.uint8 else (-128, 128)
    return RNG.integers(lo, hi, shape).astype(dt)


# name, A shape, B shape, A type, B type, a zp, b zp, B constant
#   zp: None (absent), an int (scalar), or 'row' / 'col' (per row of A / column of B)
CASES = [
    ('direct u8 x s8 2-D', (37, 64), (64, 96), np.uint8, np.int8, 131, 0, True),
    ('direct u8 x s8 3-D, no zero points', (2, 45, 32), (32, 200), np.uint8, np.int8, None, None, True),
    ('direct s8 x s8', (29, 48), (48, 64), np.int8, np.int8, -7, 0, True),
    ('direct u8 x u8 at 128', (50, 96), (96, 192), np.uint8, np.uint8, 3, 128, True),
    ('direct per-column zero points all 0', (33, 64), (64, 64), np.uint8, np.int8, 200, 'col0', True),
    ('portable: b zero point 5', (31, 40), (40, 50), np.uint8, np.int8, 128, 5, True),
    ('portable: B a graph input', (17, 24), (24, 33), np.uint8, np.uint8, 100, 120, False),
    ('portable: per-row and per-column zero points', (19, 20), (20, 21), np.int8, np.uint8, 'row', 'col', True),
    ('portable: K 30', (23, 30), (30, 70), np.uint8, np.int8, 12, 0, True),
    ('portable: batched B', (3, 9, 16), (3, 16, 12), np.uint8, np.int8, 7, 0, True),
]


def build(work, name, ashape, bshape, adt, bdt, azp, bzp, bconst, to_float=False):
    a = rand8(adt, ashape)
    b = rand8(bdt, bshape)
    M, K, N = ashape[-2], ashape[-1], bshape[-1]
    inits, inputs, feeds = [], [h.make_tensor_value_info('a', TYPES[adt], list(ashape))], {'a': a}
    if bconst:
        inits.append(nh.from_array(b, 'b'))
    else:
        inputs.append(h.make_tensor_value_info('b', TYPES[bdt], list(bshape)))
        feeds['b'] = b
    ins = ['a', 'b']
    za = np.zeros(M, np.int64) if azp is None else None
    if azp == 'row':
        za = rand8(adt, (M,)).astype(np.int64)
        inits.append(nh.from_array(za.astype(adt), 'za'))
    elif azp is not None:
        za = np.full(M, azp, np.int64)
        inits.append(nh.from_array(np.array(azp, adt), 'za'))
    if bzp is None:
        zb = np.zeros(N, np.int64)
    elif bzp == 'col':
        zb = rand8(bdt, (N,)).astype(np.int64)
        inits.append(nh.from_array(zb.astype(bdt), 'zb'))
    elif bzp == 'col0':
        zb = np.zeros(N, np.int64)
        inits.append(nh.from_array(zb.astype(bdt), 'zb'))
    else:
        zb = np.full(N, bzp, np.int64)
        inits.append(nh.from_array(np.array(bzp, bdt), 'zb'))
    if to_float:   # A, B, a_scale, b_scale, a_zp, b_zp, bias
        as_ = np.float32(0.0123)
        bs = (RNG.random(N) * 0.01 + 0.001).astype(np.float32) if N % 2 else np.float32(0.0071)
        bias = (RNG.standard_normal(N) * 0.5).astype(np.float32)
        inits += [nh.from_array(np.array(as_), 'as'), nh.from_array(np.asarray(bs), 'bs'),
                  nh.from_array(bias, 'bias')]
        ins += ['as', 'bs', 'za' if azp is not None else '', 'zb' if bzp is not None else '', 'bias']
        node = h.make_node('MatMulIntegerToFloat', ins, ['y'], domain='com.microsoft')
    else:
        if azp is not None or bzp is not None:
            ins.append('za' if azp is not None else '')
        if bzp is not None:
            ins.append('zb')
        node = h.make_node('MatMulInteger', ins, ['y'])
    g = h.make_graph([node], 'mmi', inputs, [h.make_tensor_value_info('y', T.FLOAT if to_float else T.INT32,
                                                                      None)], inits)
    m = h.make_model(g, opset_imports=[h.make_opsetid('', 13), h.make_opsetid('com.microsoft', 1)])
    m.ir_version = 8
    base = os.path.join(work, name.replace(' ', '_').replace(':', '').replace(',', '') + ('_f' if to_float else ''))
    onnx.save(m, base + '.onnx')
    args = []
    for k, v in feeds.items():
        open(base + '_' + k + '.pb', 'wb').write(nh.from_array(v, k).SerializeToString())
        args += ['--input', '%s=%s_%s.pb' % (k, base, k)]
    want = np.matmul(a.astype(np.int64) - za[:, None], b.astype(np.int64) - zb[None, :])
    want = ((want + 2**31) % 2**32 - 2**31).astype(np.int32)
    if to_float:   # float32 steps: the product of the scales, the sum times it, plus the bias
        mult = (np.float32(as_) * np.asarray(bs, np.float32)).astype(np.float32)
        want = (want.astype(np.float32) * mult).astype(np.float32) + bias
    return base, args, want


def main():
    if len(sys.argv) != 3:
        print(__doc__)
        return 2
    nn_run, work = sys.argv[1], sys.argv[2]
    os.makedirs(work, exist_ok=True)
    fails = checks = 0
    # (MatMulIntegerToFloat takes one A zero point: no per-row case)
    for case in [c + (f,) for c in CASES for f in (False, True) if not (f and c[5] == 'row')]:
        base, args, want = build(work, *case)
        for cpu in ('', 'avx2', 'portable'):
            for threads in (1, 2):
                out = base + '_out'
                os.makedirs(out, exist_ok=True)
                env = dict(os.environ, NN_CPU=cpu) if cpu else dict(os.environ)
                r = subprocess.run([nn_run, base + '.onnx', *args, '--save-outputs', out, '--threads',
                                    str(threads)], capture_output=True, text=True, env=env, timeout=120)
                checks += 1
                tag = '%s%s (%s, %d threads)' % (case[0], ' to float' if case[-1] else '', cpu or 'native',
                                                 threads)
                if r.returncode != 0:
                    fails += 1
                    print('FAIL %s: nn-run exited %d: %s' % (tag, r.returncode, r.stderr.strip()[-300:]))
                    continue
                got = nh.to_array(onnx.load_tensor(os.path.join(out, 'output_0.pb')))
                if got.dtype != want.dtype or got.shape != want.shape or not np.array_equal(got, want):
                    fails += 1
                    bad = np.argwhere(got != want)[0] if got.shape == want.shape else 'shape'
                    print('FAIL %s: differs from numpy at %s' % (tag, bad))
    print('matmulinteger_check: %d checks, %d failed' % (checks, fails))
    return 1 if fails else 0


if __name__ == '__main__':
    sys.exit(main())

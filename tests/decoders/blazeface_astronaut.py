#!/usr/bin/env python3
"""BlazeFace on astronaut.png through the runtime, decoded by nndecode.

  1. astronaut.png (512x512 RGB) is read (pngio: numpy + zlib), scaled to the
     model's input (--size: 128 for the front model, 256 for the back model)
     by area averaging (the frame is square, so this is the plain "stretch"
     mapping) and normalized to [-1, 1] as MediaPipe does: x / 127.5 - 1.
     Written as an ONNX TensorProto (input_0.pb).
  2. `nn-run MODEL --input input:0=input_0.pb --save-outputs OUT` runs it.
  3. test-blazeface-astronaut OUT 512 512 --expect ... --input-size N decodes
     the four outputs (anchors of that input size, sigmoid, weighted NMS),
     maps the boxes back to 512x512 and checks: exactly one face, IoU >= 0.5
     with the box below.

The hand-labelled face box and how it was labelled: ground_truth.py.

Exit 77 (skip) when the image or the model is not there (tools/fetch-media.sh
fetches both).
"""
import argparse
import os
import subprocess
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ground_truth  # noqa: E402
import pngio  # noqa: E402

FACE_BOX = ground_truth.FACE_BOX


def resize(img, w, h):
    """Area average for integer factors, else bilinear with half-pixel centers."""
    H, W = img.shape[:2]
    if H % h == 0 and W % w == 0:
        fy, fx = H // h, W // w
        return img.reshape(h, fy, w, fx, -1).mean(axis=(1, 3))
    ys = (np.arange(h) + 0.5) * H / h - 0.5
    xs = (np.arange(w) + 0.5) * W / w - 0.5
    y0 = np.clip(np.floor(ys).astype(int), 0, H - 1)
    x0 = np.clip(np.floor(xs).astype(int), 0, W - 1)
    y1 = np.clip(y0 + 1, 0, H - 1)
    x1 = np.clip(x0 + 1, 0, W - 1)
    wy = np.clip(ys - y0, 0, 1)[:, None, None]
    wx = np.clip(xs - x0, 0, 1)[None, :, None]
    a = img[y0][:, x0] * (1 - wx) + img[y0][:, x1] * wx
    b = img[y1][:, x0] * (1 - wx) + img[y1][:, x1] * wx
    return a * (1 - wy) + b * wy


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--nn-run', required=True)
    ap.add_argument('--checker', required=True)
    ap.add_argument('--model', action='append', required=True,
                    help='candidate model paths, the first that exists is used')
    ap.add_argument('--image', required=True)
    ap.add_argument('--workdir', required=True)
    ap.add_argument('--size', type=int, default=128, help='the model input size')
    a = ap.parse_args()

    model = next((m for m in a.model if os.path.exists(m)), None)
    if not os.path.exists(a.image) or model is None:
        print('SKIP: need %s and one of %s (run tools/fetch-media.sh)' % (a.image, a.model))
        return 77
    from onnx import numpy_helper

    img = pngio.read_png(a.image)[:, :, :3].astype(np.float32)
    H, W = img.shape[:2]
    x = resize(img, a.size, a.size) / 127.5 - 1.0
    x = x[None].astype(np.float32)  # 1xNxNx3 NHWC
    os.makedirs(a.workdir, exist_ok=True)
    inp = os.path.join(a.workdir, 'input_0.pb')
    with open(inp, 'wb') as f:
        f.write(numpy_helper.from_array(x, 'input:0').SerializeToString())
    out = os.path.join(a.workdir, 'out')
    r = subprocess.run([a.nn_run, model, '--input', 'input:0=' + inp, '--save-outputs', out])
    if r.returncode != 0:
        print('nn-run failed with %d' % r.returncode)
        return 1
    expect = ','.join(str(v) for v in FACE_BOX)
    return subprocess.run([a.checker, out, str(W), str(H), '--expect', expect,
                           '--input-size', str(a.size)]).returncode


if __name__ == '__main__':
    sys.exit(main())

#!/usr/bin/env python3
"""ocr_real_image.py - the OCR decoders on a real page through the real models.

The PP-OCRv4 detector runs (nn-run) on an image of printed text (OpenCV's
imageTextN.png / imageTextR.png, tools/fetch-media.sh), its probability map is
decoded by the DBNet decoder (test-ocr --det-pb), every box is cut out of the
image along its rotation, the PP-OCRv4 recogniser runs on each crop and its
output is decoded by the CTC decoder (test-ocr --rec-pb) with
ppocr_keys_v1.txt.  Preprocessing is PaddleOCR's (DetResizeForTest with
limit_side_len 960 'max', ImageNet mean/std on BGR; rec: height 48, width to
the aspect ratio, (x/255-0.5)/0.5, padded to
max(320, 48 * w/h) as PaddleOCR's resize_norm_img).

Checks: the number of boxes is the number of text lines the page shows
(--lines, within --tolerance), and the recognised lines contain the words of
--expect (each a substring of one line).  Prints every box and text.
Exits 77 (skip) when the image, the models or the dictionary are absent.
"""
import argparse
import math
import os
import shutil
import subprocess
import sys

import numpy as np
from onnx import numpy_helper


def skip(msg):
    print('SKIP: ' + msg)
    sys.exit(77)


def decode_image(path, workdir):
    """RGB array (H, W, 3) through gst-launch pngdec (palette PNGs too)."""
    out = os.path.join(workdir, 'image.rgb')
    if not shutil.which('gst-launch-1.0'):
        skip('gst-launch-1.0 (to decode %s) not found' % path)
    with open(path, 'rb') as f:
        head = f.read(24)
    if head[:8] != b'\x89PNG\r\n\x1a\n' or head[12:16] != b'IHDR':
        skip('%s is not a PNG' % path)
    w = int.from_bytes(head[16:20], 'big')
    h = int.from_bytes(head[20:24], 'big')
    r = subprocess.run(['gst-launch-1.0', '-q', 'filesrc', 'location=' + path, '!', 'pngdec',
                        '!', 'videoconvert', '!', 'video/x-raw,format=RGB', '!', 'filesink',
                        'location=' + out], capture_output=True, text=True)
    if r.returncode != 0:
        skip('gst-launch-1.0 cannot decode %s: %s' % (path, r.stderr.strip()))
    data = np.fromfile(out, dtype=np.uint8)
    stride = (w * 3 + 3) // 4 * 4
    if data.size != stride * h:
        raise SystemExit('decoded %d bytes, expected %d' % (data.size, stride * h))
    return data.reshape(h, stride)[:, :w * 3].reshape(h, w, 3)


def resize_bilinear(img, nh, nw):
    """cv2.INTER_LINEAR-like (pixel centers aligned) resize of (H, W, C) float."""
    h, w = img.shape[:2]
    ys = (np.arange(nh) + 0.5) * h / nh - 0.5
    xs = (np.arange(nw) + 0.5) * w / nw - 0.5
    ys = np.clip(ys, 0, h - 1)
    xs = np.clip(xs, 0, w - 1)
    y0 = np.floor(ys).astype(int)
    x0 = np.floor(xs).astype(int)
    y1 = np.minimum(y0 + 1, h - 1)
    x1 = np.minimum(x0 + 1, w - 1)
    fy = (ys - y0)[:, None, None]
    fx = (xs - x0)[None, :, None]
    a = img[y0][:, x0]
    b = img[y0][:, x1]
    c = img[y1][:, x0]
    d = img[y1][:, x1]
    return (a * (1 - fx) + b * fx) * (1 - fy) + (c * (1 - fx) + d * fx) * fy


def sample(img, pts, cw, ch):
    """The quad pts (tl, tr, br, bl) of img warped to a cw x ch image
    (PaddleOCR's get_rotate_crop_image, as a bilinear affine sample)."""
    p0, p1, _, p3 = [np.array(p, dtype=np.float64) for p in pts]
    u = (np.arange(cw) + 0.5) / cw
    v = (np.arange(ch) + 0.5) / ch
    xs = p0[0] + u[None, :] * (p1[0] - p0[0]) + v[:, None] * (p3[0] - p0[0])
    ys = p0[1] + u[None, :] * (p1[1] - p0[1]) + v[:, None] * (p3[1] - p0[1])
    h, w = img.shape[:2]
    xs = np.clip(xs, 0, w - 1)
    ys = np.clip(ys, 0, h - 1)
    x0 = np.floor(xs).astype(int)
    y0 = np.floor(ys).astype(int)
    x1 = np.minimum(x0 + 1, w - 1)
    y1 = np.minimum(y0 + 1, h - 1)
    fx = (xs - x0)[..., None]
    fy = (ys - y0)[..., None]
    return ((img[y0, x0] * (1 - fx) + img[y0, x1] * fx) * (1 - fy) +
            (img[y1, x0] * (1 - fx) + img[y1, x1] * fx) * fy)


def run_model(nn_run, model, arr, workdir, tag):
    inp = os.path.join(workdir, tag + '_input.pb')
    t = numpy_helper.from_array(arr.astype(np.float32), 'x')
    with open(inp, 'wb') as f:
        f.write(t.SerializeToString())
    outdir = os.path.join(workdir, tag + '_out')
    os.makedirs(outdir, exist_ok=True)
    r = subprocess.run([nn_run, model, '--input', 'x=' + inp, '--save-outputs', outdir],
                       capture_output=True, text=True)
    if r.returncode != 0:
        raise SystemExit('nn-run %s failed: %s %s' % (model, r.stdout, r.stderr))
    return os.path.join(outdir, 'output_0.pb')


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--nn-run', required=True)
    ap.add_argument('--checker', required=True, help='test-ocr')
    ap.add_argument('--shared', required=True)
    ap.add_argument('--dict', required=True)
    ap.add_argument('--image', required=True)
    ap.add_argument('--lines', type=int, required=True)
    ap.add_argument('--tolerance', type=int, default=1)
    ap.add_argument('--expect', action='append', default=[])
    ap.add_argument('--workdir', required=True)
    a = ap.parse_args()

    det_model = os.path.join(a.shared, 'real-cases', 'ppocr_v4_det', 'model.onnx')
    rec_model = os.path.join(a.shared, 'real-cases', 'ppocr_v4_rec', 'model.onnx')
    for p, what in ((a.image, 'image'), (det_model, 'detector'), (rec_model, 'recogniser'),
                    (a.dict, 'dictionary')):
        if not os.path.exists(p):
            skip('%s %s absent (tools/fetch-media.sh)' % (what, p))
    os.makedirs(a.workdir, exist_ok=True)

    rgb = decode_image(a.image, a.workdir).astype(np.float32)
    bgr = rgb[:, :, ::-1]
    h, w = bgr.shape[:2]
    ratio = min(1.0, 960.0 / max(h, w))
    rh = max(int(round(h * ratio / 32)) * 32, 32)
    rw = max(int(round(w * ratio / 32)) * 32, 32)
    x = resize_bilinear(bgr, rh, rw) / 255.0
    x = (x - np.array([0.485, 0.456, 0.406])) / np.array([0.229, 0.224, 0.225])
    x = x.transpose(2, 0, 1)[None]
    det_out = run_model(a.nn_run, det_model, x, a.workdir, 'det')

    r = subprocess.run([a.checker, '--det-pb', det_out], capture_output=True, text=True)
    if r.returncode != 0:
        raise SystemExit('det decode failed: ' + r.stderr)
    boxes = []
    for line in r.stdout.splitlines():
        f = line.split()
        if f[0] == 'box':
            v = [float(s) for s in f[1:]]
            pts = [(v[6 + 2 * k] * w / rw, v[7 + 2 * k] * h / rh) for k in range(4)]
            boxes.append((v[5], v[4], pts))
    print('%s: %dx%d -> map %dx%d, %d text boxes' % (os.path.basename(a.image), w, h, rw, rh,
                                                     len(boxes)))
    texts = []
    for i, (score, angle, pts) in enumerate(boxes):
        bw = math.dist(pts[0], pts[1])
        bh = math.dist(pts[0], pts[3])
        # PaddleOCR's resize_norm_img for a batch of one: the input is
        # 48 x int(48 * max(w/h, 320/48)) (dynamic width), the crop resized
        # to 48 x ceil(48 * w/h) within it
        ch = 48
        ratio = bw / max(bh, 1.0)
        iw = int(ch * max(ratio, 320.0 / 48.0))
        cw = max(1, min(iw, int(math.ceil(ch * ratio))))
        # sample at the source resolution first, then to 48 high
        crop = sample(bgr, pts, max(1, int(round(bw))), max(1, int(round(bh))))
        crop = resize_bilinear(crop, ch, cw)
        crop = (crop / 255.0 - 0.5) / 0.5
        pad = np.zeros((ch, iw, 3), dtype=np.float32)
        pad[:, :cw] = crop
        rec_out = run_model(a.nn_run, rec_model, pad.transpose(2, 0, 1)[None], a.workdir,
                            'rec%d' % i)
        rr = subprocess.run([a.checker, '--rec-pb', rec_out, a.dict], capture_output=True,
                            text=True)
        if rr.returncode != 0:
            raise SystemExit('rec decode failed: ' + rr.stderr)
        f = rr.stdout.splitlines()[0].split(' ', 2)
        conf, text = float(f[1]), (f[2] if len(f) > 2 else '')
        texts.append(text)
        print('  box %2d: score %.3f angle %6.2f (%.0f,%.0f) (%.0f,%.0f) (%.0f,%.0f) (%.0f,%.0f)'
              ' -> %.3f "%s"' % (i, score, angle, pts[0][0], pts[0][1], pts[1][0], pts[1][1],
                                 pts[2][0], pts[2][1], pts[3][0], pts[3][1], conf, text))
    ok = True
    if abs(len(boxes) - a.lines) > a.tolerance:
        print('FAIL: %d boxes, the page has %d lines' % (len(boxes), a.lines))
        ok = False
    for word in a.expect:
        if not any(word in t for t in texts):
            print('FAIL: "%s" not recognised' % word)
            ok = False
    print('OK' if ok else 'FAILED')
    return 0 if ok else 1


if __name__ == '__main__':
    sys.exit(main())

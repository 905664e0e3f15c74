#!/usr/bin/python3
"""Independent reference for runtime/image (nn_image.h), in numpy.

The definition of a conversion is restated here from the header, not ported
from the C loops: dense per-axis weight matrices built from the footprint of
each tensor pixel (tent weights for bilinear, interval overlaps for the area
average, clamped indices accumulated onto the edge sample), applied as
Wy @ plane @ Wx.T in float64 per component (a turned rect, angle != 0:
every tensor pixel's n x m sample points mapped from the rect's first corner
along its own axes, each sampled bilinearly with clamped indices on the
component's grid, averaged), then the textbook YUV -> RGB
(G from Y = Kr R + Kg G + Kb B), clamp, channel order, padding, (v - mean) /
std, rounding, layout and batch slot.  image-dump runs the C code on the
same bytes.

Tolerances (in 0..255 pixel units, i.e. after multiplying the normalised
error by |std|):
  float32 tensors   max |C - reference| <= 1e-3
  uint8 tensors     equal, except +-1 where the reference is within 1e-3
                    of a rounding boundary
  geometry          every field within 1e-9 (relative)

Then GStreamer's own videoconvert ! videoscale on smooth images at mild
scales, uint8 RGB out, two pixels of border left out (its filters, edge
handling and chroma siting differ from ours, so only a loose agreement is
expected):
  RGB input     mean |difference| <= 1 level of 255, max <= 4
  I420 input    mean |difference| <= 4 levels, max <= 12: videoconvert's
                8-bit YUV -> RGB path rounds the BT.601 coefficients to
                1/64 (Y = 235, U = V = 128 gives 253, not 255; Y = 126 gives
                126, not 128), about 2.5 levels off the formula on its own.
Skipped, with the reason printed, when gst-launch-1.0 is missing.

    reference.py --dump build/tests/image-dump [--cases N] [--seed S]
"""
import argparse
import math
import os
import shutil
import subprocess
import sys
import tempfile

try:
    import numpy as np
except ImportError:
    print("reference: skipped (numpy not available to %s)" % sys.executable)
    sys.exit(77)   # meson: skipped

FLOAT_TOL = 1e-3
GEO_TOL = 1e-9

# packed RGB formats: bytes per pixel and the byte offsets of R, G, B, A
RGB_FORMATS = {
    "RGB": (3, 0, 1, 2, None), "BGR": (3, 2, 1, 0, None),
    "RGBA": (4, 0, 1, 2, 3), "BGRA": (4, 2, 1, 0, 3),
    "RGBx": (4, 0, 1, 2, None), "BGRx": (4, 2, 1, 0, None),
    "xRGB": (4, 1, 2, 3, None), "xBGR": (4, 3, 2, 1, None),
    "ARGB": (4, 1, 2, 3, 0), "ABGR": (4, 3, 2, 1, 0),
}
YUV_FORMATS = ["NV12", "NV21", "I420", "YV12", "YUY2", "UYVY"]
ALL_FORMATS = list(RGB_FORMATS) + ["GRAY8"] + YUV_FORMATS
MATRICES = {"601": (0.299, 0.114), "709": (0.2126, 0.0722), "2020": (0.2627, 0.0593)}


def cdiv(a, b):
    return -(-a // b)


def plane_shapes(fmt, w, h):
    """(rows, row bytes) of each plane."""
    if fmt in RGB_FORMATS:
        return [(h, RGB_FORMATS[fmt][0] * w)]
    if fmt == "GRAY8":
        return [(h, w)]
    if fmt in ("NV12", "NV21"):
        return [(h, w), (cdiv(h, 2), 2 * cdiv(w, 2))]
    if fmt in ("I420", "YV12"):
        return [(h, w), (cdiv(h, 2), cdiv(w, 2)), (cdiv(h, 2), cdiv(w, 2))]
    return [(h, 4 * cdiv(w, 2))]  # YUY2, UYVY


def components(fmt, planes, w, h):
    """Component arrays (float64): dict name -> (array, subx, suby)."""
    out = {}
    if fmt in RGB_FORMATS:
        bpp, r, g, b, a = RGB_FORMATS[fmt]
        p = planes[0][:, : bpp * w].reshape(h, w, bpp).astype(np.float64)
        out["R"], out["G"], out["B"] = (p[:, :, r], 1, 1), (p[:, :, g], 1, 1), (p[:, :, b], 1, 1)
        if a is not None:
            out["A"] = (p[:, :, a], 1, 1)
        return out
    if fmt == "GRAY8":
        out["Y"] = (planes[0][:, :w].astype(np.float64), 1, 1)
        return out
    cw, ch = cdiv(w, 2), cdiv(h, 2)
    if fmt in ("NV12", "NV21"):
        out["Y"] = (planes[0][:, :w].astype(np.float64), 1, 1)
        uv = planes[1][:, : 2 * cw].reshape(ch, cw, 2).astype(np.float64)
        iu, iv = (0, 1) if fmt == "NV12" else (1, 0)
        out["U"], out["V"] = (uv[:, :, iu], 2, 2), (uv[:, :, iv], 2, 2)
    elif fmt in ("I420", "YV12"):
        out["Y"] = (planes[0][:, :w].astype(np.float64), 1, 1)
        pu, pv = (1, 2) if fmt == "I420" else (2, 1)
        out["U"] = (planes[pu][:, :cw].astype(np.float64), 2, 2)
        out["V"] = (planes[pv][:, :cw].astype(np.float64), 2, 2)
    else:
        m = planes[0][:, : 4 * cw].reshape(h, cw, 4).astype(np.float64)
        if fmt == "YUY2":
            y0, y1, u, v = m[:, :, 0], m[:, :, 2], m[:, :, 1], m[:, :, 3]
        else:
            y0, y1, u, v = m[:, :, 1], m[:, :, 3], m[:, :, 0], m[:, :, 2]
        y = np.stack([y0, y1], axis=2).reshape(h, 2 * cw)[:, :w]
        out["Y"], out["U"], out["V"] = (y, 1, 1), (u, 2, 1), (v, 2, 1)
    return out


def geometry(w, h, rect, mode, dw, dh, angle=0.0, content=(0.0, 0.0, 0.0, 0.0)):
    """The mapping of nn_image.h: u = R(-angle) (image - centre) + half,
    tensor = u * scale + offset (angle 0: (image - src) * scale + offset)."""
    if rect[2] > 0 and rect[3] > 0:
        sx, sy, sw, sh = rect
    else:
        sx, sy, sw, sh = 0.0, 0.0, float(w), float(h)
    angle = math.fmod(angle, 360.0)
    angle = angle + 360.0 if angle < 0 else angle
    angle = 0.0 if angle >= 360.0 else angle
    if content[2] > 0 and content[3] > 0:
        cx, cy, cw, ch = content
        return dict(src=(sx, sy, sw, sh), scale=(cw / sw, ch / sh), offset=(cx, cy),
                    content=tuple(content), angle=angle)
    if mode == "stretch":
        scx, scy = dw / sw, dh / sh
        ox = oy = 0.0
        content = (0.0, 0.0, float(dw), float(dh))
    else:
        s = min(dw / sw, dh / sh) if mode == "letterbox" else max(dw / sw, dh / sh)
        scx = scy = s
        ox, oy = (dw - sw * s) / 2, (dh - sh * s) / 2
        content = (ox, oy, sw * s, sh * s) if mode == "letterbox" else (0.0, 0.0, float(dw), float(dh))
    return dict(src=(sx, sy, sw, sh), scale=(scx, scy), offset=(ox, oy), content=content, angle=angle)


def weights(n_out, n_src, src0, off, scale, sub):
    """Dense (n_out x n_src) filter of one axis, from the footprints."""
    W = np.zeros((n_out, n_src))
    for t in range(n_out):
        a = ((t - off) / scale + src0) / sub
        b = ((t + 1 - off) / scale + src0) / sub
        if b - a <= 1:
            c = (a + b) / 2
            lo = math.floor(c - 0.5) - 1
            for i in range(lo, lo + 4):
                wt = max(0.0, 1.0 - abs(c - (i + 0.5)))   # tent over the sample centres
                if wt > 0:
                    W[t, min(max(i, 0), n_src - 1)] += wt
        else:
            # samples far outside all clamp to the edge: sum their overlap in one go
            ia, ib = math.floor(a), math.ceil(b)
            lo_in, hi_in = max(ia, 0), min(ib, n_src)
            if a < 0:
                W[t, 0] += min(b, 0.0) - a
            if b > n_src:
                W[t, n_src - 1] += b - max(a, float(n_src))
            for i in range(lo_in, hi_in):
                W[t, i] += max(0.0, min(b, i + 1) - max(a, i))
        W[t] /= W[t].sum()
    return W


def turned_points(geo, dw, dh):
    """Image points (px, py), each dh x dw x m x n, of the samples of every
    tensor pixel of a turned rect: n = ceil(pixels per tensor pixel), at most
    8, at (x + (i + 0.5) / n, y + (j + 0.5) / m)."""
    (sx, sy, sw, sh), (scx, scy), (ox, oy) = geo["src"], geo["scale"], geo["offset"]
    fx, fy = 1.0 / scx, 1.0 / scy
    n = min(math.ceil(fx), 8) if fx > 1 else 1
    m = min(math.ceil(fy), 8) if fy > 1 else 1
    a = math.radians(geo["angle"])
    ca, sa = math.cos(a), math.sin(a)
    tx = np.arange(dw)[None, :, None, None] + (np.arange(n)[None, None, None, :] + 0.5) / n
    ty = np.arange(dh)[:, None, None, None] + (np.arange(m)[None, None, :, None] + 0.5) / m
    ux, uy = (tx - ox) * fx, (ty - oy) * fy           # the rect's own frame
    # its first corner: the centre less half of each (turned) axis
    kx = sx + sw / 2 - ca * sw / 2 + sa * sh / 2
    ky = sy + sh / 2 - sa * sw / 2 - ca * sh / 2
    return kx + ux * ca - uy * sa, ky + ux * sa + uy * ca


def bilinear(arr, gx, gy):
    """arr sampled at grid coordinates (gx, gy) (sample centres at i + 0.5),
    indices clamped to the edge."""
    ny, nx = arr.shape
    x0, y0 = np.floor(gx - 0.5), np.floor(gy - 0.5)
    fx, fy = gx - 0.5 - x0, gy - 0.5 - y0
    xi = [np.clip(x0 + k, 0, nx - 1).astype(np.int64) for k in (0, 1)]
    yi = [np.clip(y0 + k, 0, ny - 1).astype(np.int64) for k in (0, 1)]
    top = (1 - fx) * arr[yi[0], xi[0]] + fx * arr[yi[0], xi[1]]
    bot = (1 - fx) * arr[yi[1], xi[0]] + fx * arr[yi[1], xi[1]]
    return (1 - fy) * top + fy * bot


def reference(case, planes):
    fmt, w, h, dw, dh, C = case["format"], case["w"], case["h"], case["dw"], case["dh"], case["channels"]
    geo = geometry(w, h, case["rect"], case["mode"], dw, dh, case.get("angle", 0.0),
                   case.get("content", (0.0, 0.0, 0.0, 0.0)))
    (sx, sy, _, _), (scx, scy), (ox, oy) = geo["src"], geo["scale"], geo["offset"]
    comps = components(fmt, planes, w, h)
    res = {}
    pts = turned_points(geo, dw, dh) if geo["angle"] != 0 else None
    for name, (arr, subx, suby) in comps.items():
        if pts is not None:
            res[name] = bilinear(arr, pts[0] / subx, pts[1] / suby).mean(axis=(2, 3))
            continue
        ny, nx = arr.shape
        Wx = weights(dw, nx, sx, ox, scx, subx)
        Wy = weights(dh, ny, sy, oy, scy, suby)
        res[name] = Wy @ arr @ Wx.T
    if fmt in YUV_FORMATS:
        kr, kb = MATRICES[case["matrix"]]
        kg = 1 - kr - kb
        if case["range"] == "limited":
            y, pb, pr = (res["Y"] - 16) / 219, (res.get("U", 128) - 128) / 224, (res.get("V", 128) - 128) / 224
        else:
            y, pb, pr = res["Y"] / 255, (res.get("U", 128) - 128) / 255, (res.get("V", 128) - 128) / 255
        R = y + 2 * (1 - kr) * pr
        B = y + 2 * (1 - kb) * pb
        G = (y - kr * R - kb * B) / kg
        rgb = [np.clip(v * 255, 0, 255) for v in (R, G, B)]
        gray = np.clip(y * 255, 0, 255)
        alpha = np.full((dh, dw), 255.0)
    elif fmt == "GRAY8":
        gray = np.clip(res["Y"], 0, 255)
        rgb = [gray, gray, gray]
        alpha = np.full((dh, dw), 255.0)
    else:
        rgb = [np.clip(res[k], 0, 255) for k in "RGB"]
        gray = np.clip(0.299 * rgb[0] + 0.587 * rgb[1] + 0.114 * rgb[2], 0, 255)
        alpha = np.clip(res["A"], 0, 255) if "A" in res else np.full((dh, dw), 255.0)
    if C == 1:
        chans = [gray]
    else:
        order = [rgb[2], rgb[1], rgb[0]] if case["bgr"] else rgb
        chans = order + ([alpha] if C == 4 else [])
    # padding: a tensor pixel is content iff its centre is in the content rect
    cx, cy, cw, ch = geo["content"]
    xs, ys = np.arange(dw) + 0.5, np.arange(dh) + 0.5
    inside = ((ys >= cy) & (ys < cy + ch))[:, None] & ((xs >= cx) & (xs < cx + cw))[None, :]
    out = np.stack([np.where(inside, c, case["pad"]) for c in chans])   # C x H x W, 0..255
    mean = np.array(case["mean"][:C])[:, None, None]
    std = np.array(case["std"][:C])[:, None, None]
    return geo, (out - mean) / std


def write_planes(path, planes):
    with open(path, "wb") as f:
        for p in planes:
            f.write(p.tobytes())


def run_dump(dump, case, planes, tmp, extra=()):
    inp, outp = os.path.join(tmp, "in.raw"), os.path.join(tmp, "out.bin")
    write_planes(inp, planes)
    args = [dump, inp, outp, "format=" + case["format"], "width=%d" % case["w"], "height=%d" % case["h"],
            "matrix=" + case["matrix"], "range=" + case["range"], "mode=" + case["mode"],
            "rect=%.17g,%.17g,%.17g,%.17g" % tuple(case["rect"]), "pad=%.17g" % case["pad"],
            "angle=%.17g" % case.get("angle", 0.0),
            "content=%.17g,%.17g,%.17g,%.17g" % tuple(case.get("content", (0.0, 0.0, 0.0, 0.0))),
            "bgr=%d" % case["bgr"], "mean=" + ",".join("%.9g" % v for v in case["mean"]),
            "std=" + ",".join("%.9g" % v for v in case["std"]), "dtype=" + case["dtype"],
            "layout=" + case["layout"], "channels=%d" % case["channels"], "dw=%d" % case["dw"],
            "dh=%d" % case["dh"], "batch=%d" % case["batch"], "nbatch=%d" % case["nbatch"]]
    args += ["stride%d=%d" % (i, p.shape[1]) for i, p in enumerate(planes)]
    args += list(extra)
    r = subprocess.run(args, capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError("image-dump failed (%d): %s %s" % (r.returncode, r.stdout, r.stderr))
    g = [float(v) for v in r.stdout.split()[1:]]
    geo = dict(src=tuple(g[0:4]), scale=tuple(g[4:6]), offset=tuple(g[6:8]), content=tuple(g[8:12]),
               angle=(g[12],))
    dt = np.float32 if case["dtype"] == "float" else np.uint8
    return geo, np.fromfile(outp, dtype=dt)


def make_planes(rng, fmt, w, h, smooth=False):
    planes = []
    for rows, row in plane_shapes(fmt, w, h):
        stride = row + int(rng.integers(0, 9))
        if smooth:
            p = np.zeros((rows, stride), np.uint8)
        else:
            p = rng.integers(0, 256, size=(rows, stride), dtype=np.uint8)
        planes.append(p)
    return planes


def compare(case, geo_c, out_c, geo_r, ref):
    """None when they agree, else a message.  Returns (msg, max float err)."""
    geo_r = dict(geo_r, angle=(geo_r["angle"],))
    for k in ("src", "scale", "offset", "content", "angle"):
        for a, b in zip(geo_c[k], geo_r[k]):
            if abs(a - b) > GEO_TOL * max(1.0, abs(b)):
                return "geometry %s: C %s, reference %s" % (k, geo_c[k], geo_r[k]), 0.0
    C, H, W = ref.shape
    slot = C * H * W
    b = case["batch"]
    if np.any(out_c[: b * slot] != 0) or np.any(out_c[(b + 1) * slot:] != 0):
        return "wrote outside batch slot %d" % b, 0.0
    got = out_c[b * slot:(b + 1) * slot].astype(np.float64)
    got = got.reshape(C, H, W) if case["layout"] == "nchw" else got.reshape(H, W, C).transpose(2, 0, 1)
    std = np.abs(np.array(case["std"][:C]))[:, None, None]
    if case["dtype"] == "float":
        err = np.abs(got - ref) * std
        m = float(err.max())
        if m > FLOAT_TOL:
            i = np.unravel_index(err.argmax(), err.shape)
            return "max |err| %.3g at (c, y, x) = %s: C %r, reference %r" % (
                m, tuple(int(v) for v in i), float(got[i]), float(ref[i])), m
        return None, m
    want = np.floor(np.clip(ref, 0, 255) + 0.5)
    diff = np.abs(got - want)
    near = np.abs(np.clip(ref, 0, 255) - np.floor(np.clip(ref, 0, 255)) - 0.5) <= FLOAT_TOL / std
    bad = (diff > 1) | ((diff == 1) & ~near)
    if bad.any():
        i = np.unravel_index(np.argmax(bad), bad.shape)
        return "uint8 mismatch at %s: C %d, reference %.6f" % (tuple(int(v) for v in i), got[i], ref[i]), 0.0
    return None, 0.0


def random_case(rng):
    fmt = ALL_FORMATS[int(rng.integers(0, len(ALL_FORMATS)))]
    big = rng.random() < 0.15
    w = int(rng.integers(1, 1200 if big else 160))
    h = int(rng.integers(1, 800 if big else 120))
    dw, dh = int(rng.integers(1, 200)), int(rng.integers(1, 150))
    if rng.random() < 0.5:
        rect = [float(rng.uniform(-0.3 * w, w)), float(rng.uniform(-0.3 * h, h)),
                float(rng.uniform(0.05, 1.5) * w), float(rng.uniform(0.05, 1.5) * h)]
        if rng.random() < 0.3:
            rect = [float(round(v)) for v in rect]
            rect[2], rect[3] = max(rect[2], 1.0), max(rect[3], 1.0)
    else:
        rect = [0.0, 0.0, 0.0, 0.0]
    C = [1, 3, 4][int(rng.integers(0, 3))]
    nbatch = int(rng.integers(1, 3))
    # a turned rect in a quarter of the cases, an explicit content rect in another
    angle = float(rng.uniform(-400, 400)) if rng.random() < 0.25 else 0.0
    content = [0.0] * 4
    if rng.random() < 0.25:
        cx, cy = float(rng.uniform(0, dw - 0.5)), float(rng.uniform(0, dh - 0.5))
        content = [cx, cy, float(rng.uniform(0.01, 1.0) * (dw - cx)), float(rng.uniform(0.01, 1.0) * (dh - cy))]
    return dict(format=fmt, w=w, h=h, dw=dw, dh=dh, rect=rect, angle=angle, content=content,
                mode=["stretch", "letterbox", "crop"][int(rng.integers(0, 3))],
                matrix=["601", "709", "2020"][int(rng.integers(0, 3))],
                range=["limited", "full"][int(rng.integers(0, 2))],
                pad=float(rng.integers(0, 256)), bgr=int(rng.integers(0, 2)),
                mean=[float(rng.integers(0, 200)) if rng.random() < 0.5 else 0.0 for _ in range(4)],
                std=[float(rng.choice([1.0, 2.0, 57.5, 127.5, -3.0])) for _ in range(4)],
                dtype=["float", "uint8"][int(rng.integers(0, 2))],
                layout=["nchw", "nhwc"][int(rng.integers(0, 2))],
                channels=C, batch=int(rng.integers(0, nbatch)), nbatch=nbatch)


def fixed_cases():
    """Edge cases worth having every time."""
    base = dict(rect=[0.0, 0.0, 0.0, 0.0], mode="stretch", matrix="601", range="limited", pad=0.0,
                bgr=0, mean=[0.0] * 4, std=[1.0] * 4, dtype="float", layout="nchw", channels=3,
                batch=0, nbatch=1)
    out = []
    for fmt in ALL_FORMATS:
        out.append(dict(base, format=fmt, w=33, h=17, dw=33, dh=17))            # 1:1
        out.append(dict(base, format=fmt, w=1, h=1, dw=5, dh=3))                # one pixel
        out.append(dict(base, format=fmt, w=640, h=360, dw=128, dh=128, mode="letterbox", pad=114.0))
        out.append(dict(base, format=fmt, w=127, h=93, dw=64, dh=80, mode="crop", channels=4))
        out.append(dict(base, format=fmt, w=50, h=40, dw=90, dh=70, rect=[-20.5, 30.25, 60.0, 30.0]))
        out.append(dict(base, format=fmt, w=1920, h=1080, dw=96, dh=54, channels=1, dtype="uint8"))
        # turned: 1:1 half turn, an OCR line fitted PaddleOCR's way (height
        # 48, left-aligned, padded right), a strong downscale (8 x 8 samples)
        out.append(dict(base, format=fmt, w=31, h=19, dw=21, dh=13, rect=[5.0, 3.0, 21.0, 13.0],
                        angle=180.0))
        out.append(dict(base, format=fmt, w=200, h=120, dw=320, dh=48, rect=[40.5, 50.25, 120.0, 24.0],
                        angle=-8.5, content=[0.0, 0.0, 240.0, 48.0], pad=0.0, mean=[127.5] * 4,
                        std=[127.5] * 4))
        out.append(dict(base, format=fmt, w=480, h=300, dw=40, dh=6, rect=[40.0, 120.0, 400.0, 60.0],
                        angle=20.0, channels=4))
    return out


def gst_compare(dump, tmp):
    """Our uint8 RGB against videoconvert ! videoscale on smooth images."""
    gst = shutil.which("gst-launch-1.0")
    if not gst:
        print("gstreamer: skipped (gst-launch-1.0 not found)")
        return True
    ok = True
    w, h = 320, 240
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float64)
    def smooth(phase):
        return 128 + 60 * np.sin(xx / 37.0 + phase) * np.cos(yy / 29.0 - phase) + 0.1 * (xx - w / 2)
    Y = np.clip(smooth(0.0) * 0.8 + 30, 16, 235).astype(np.uint8)
    cw, ch = w // 2, h // 2
    U = np.clip(smooth(1.0)[::2, ::2] * 0.5 + 64, 16, 240).astype(np.uint8)
    V = np.clip(smooth(2.0)[::2, ::2] * 0.5 + 64, 16, 240).astype(np.uint8)
    rgb = np.stack([np.clip(smooth(p), 0, 255) for p in (0.0, 1.5, 3.0)], axis=2).astype(np.uint8)
    for name, fmt, planes, dw, dh, lim_mean, lim_max in (
            ("I420 320x240 -> RGB 256x192", "I420", [Y, U, V], 256, 192, 4.0, 12),
            ("RGB 320x240 -> RGB 400x300", "RGB", [rgb.reshape(h, w * 3)], 400, 300, 1.0, 4),
            ("RGB 320x240 -> RGB 256x200", "RGB", [rgb.reshape(h, w * 3)], 256, 200, 1.0, 4)):
        raw = os.path.join(tmp, "gst-in.raw")
        out = os.path.join(tmp, "gst-out.raw")
        write_planes(raw, planes)
        pipeline = [gst, "-q", "filesrc", "location=" + raw, "!", "rawvideoparse",
                    "format=" + fmt.lower(), "width=%d" % w, "height=%d" % h, "framerate=1/1"]
        if fmt == "I420":
            pipeline += ["colorimetry=bt601"]
        pipeline += ["!", "videoconvert", "!", "videoscale", "!",
                     "video/x-raw,format=RGB,width=%d,height=%d" % (dw, dh), "!", "filesink",
                     "location=" + out]
        r = subprocess.run(pipeline, capture_output=True, text=True)
        if r.returncode != 0 or not os.path.exists(out):
            print("gstreamer: %s: skipped (pipeline failed: %s)" % (name, (r.stderr or r.stdout).strip()))
            continue
        theirs = np.fromfile(out, np.uint8)
        if theirs.size != dw * dh * 3:
            print("gstreamer: %s: skipped (%d bytes out)" % (name, theirs.size))
            continue
        case = dict(format=fmt, w=w, h=h, dw=dw, dh=dh, rect=[0.0] * 4, mode="stretch", matrix="601",
                    range="limited", pad=0.0, bgr=0, mean=[0.0] * 4, std=[1.0] * 4, dtype="uint8",
                    layout="nhwc", channels=3, batch=0, nbatch=1)
        _, ours = run_dump(dump, case, [np.ascontiguousarray(p) for p in planes], tmp)
        d = np.abs(ours.astype(np.int32) - theirs.reshape(-1).astype(np.int32))
        # the border rows/columns depend on each filter's edge handling
        d = d.reshape(dh, dw, 3)[2:-2, 2:-2]
        good = d.mean() <= lim_mean and d.max() <= lim_max
        ok &= good
        print("gstreamer: %s: mean |diff| %.3f, max %d (limits %g, %d) %s" % (
            name, d.mean(), d.max(), lim_mean, lim_max, "ok" if good else "FAIL"))
    return ok


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dump", required=True)
    ap.add_argument("--cases", type=int, default=300)
    ap.add_argument("--seed", type=int, default=20240601)
    a = ap.parse_args()
    rng = np.random.default_rng(a.seed)
    failures, worst, n = 0, 0.0, 0
    with tempfile.TemporaryDirectory() as tmp:
        cases = fixed_cases() + [random_case(rng) for _ in range(a.cases)]
        for i, case in enumerate(cases):
            planes = make_planes(rng, case["format"], case["w"], case["h"])
            geo_r, ref = reference(case, planes)
            # the default kernels; every 5th case also portable, every 7th on 2 threads
            runs = [()]
            if i % 5 == 0:
                runs.append(("simd=0",))
            if i % 7 == 0:
                runs.append(("threads=2",))
            for extra in runs:
                geo_c, out_c = run_dump(a.dump, case, planes, tmp, extra)
                msg, m = compare(case, geo_c, out_c, geo_r, ref)
                worst = max(worst, m)
                n += 1
                if msg:
                    failures += 1
                    desc = {k: v for k, v in case.items()}
                    print("FAIL case %d %s %s: %s" % (i, desc, " ".join(extra), msg))
        print("reference: %d runs of %d cases, %d failed; worst float error %.3g (limit %g)" % (
            n, len(cases), failures, worst, FLOAT_TOL))
        ok = failures == 0
        ok &= gst_compare(a.dump, tmp)
    print("PASS" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""ocr_rendered.py - the OCR cascade reads back text GStreamer rendered.

Each case renders lines with textoverlay (pango; Debian's gstreamer1.0-x)
on a plain background at a size, font and colour of its own, optionally
turns the picture (a slanted page, an upside-down one: the direction
classifier must turn it back), writes a PNG and runs tools/ocr-read (the
program behind pipelines/ocr.sh: PP-OCRv4 det -> direction classifier ->
PP-OCRv4 rec, all onnxinfer) on all of them in one process.  Every case
must come back exactly: the same lines, in reading order, character for
character (spaces between words are reported, not required: see the
check); a blank frame must give no line and no error.

Exits 77 (skip) without textoverlay, the models (tools/fetch-media.sh) or
ocr-read; a case needing a CJK font is skipped alone (and said so) when
fc-list has none.
"""
import argparse
import os
import shutil
import subprocess
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pngio import read_png, write_png  # noqa: E402


def skip(msg):
    print('SKIP: ' + msg)
    sys.exit(77)


# Known misreadings, asserted as such so that a change shows: PaddleOCR's
# box (unclip 1.5) ends at the baseline of this line, below which the
# underscore lies; @gutenye/ocr-node reads it the same way.  (unclip 2.0 or
# a taller crop reads it, but merges the lines of a dense page.)
KNOWN = {'mono-36-white-on-dark': ['GST DEBUG=4']}

# name, lines, font, text colour (ARGB), background (ARGB), frame size, turn
CASES = [
    ('sans-28-black', ['Real video in, text out'], 'DejaVu Sans 28', 0xFF000000,
     0xFFFFFFFF, (640, 120), 0),
    ('serif-20-blue', ['Invoice 2026-12-01', 'Total: 1,234.56 EUR'], 'DejaVu Serif 20',
     0xFF1030A0, 0xFFF4F0E0, (480, 160), 0),
    ('mono-36-white-on-dark', ['GST_DEBUG=4'], 'DejaVu Sans Mono Bold 36', 0xFFFFFFFF,
     0xFF202830, (520, 110), 0),
    ('sans-16-red', ['The quick brown fox jumps over the lazy dog'], 'DejaVu Sans 16',
     0xFFC01010, 0xFFFFFFFF, (640, 80), 0),
    ('slanted-8deg', ['Rotated line of text'], 'DejaVu Sans 30', 0xFF000000, 0xFFFFFFFF,
     (560, 240), 8),
    ('upside-down', ['Upside down text'], 'DejaVu Sans 30', 0xFF000000, 0xFFFFFFFF,
     (480, 120), 180),
    ('chinese', ['你好世界', '实时视频文字识别'], 'WenQuanYi Micro Hei 32', 0xFF000000,
     0xFFFFFFFF, (520, 180), 0),
]


def render(path, lines, font, fg, bg, size, workdir):
    """textoverlay on a solid frame -> RGB array."""
    w, h = size
    raw = os.path.join(workdir, 'render.png')
    # one textoverlay a line (gst-launch has no way to pass a newline);
    # the point size at pango's 96 dpi, 1.6 line heights apart
    pt = float(font.split()[-1])
    step = int(round(pt * 96 / 72 * 1.6))
    cmd = ['gst-launch-1.0', '-q', 'videotestsrc', 'num-buffers=1', 'pattern=solid-color',
           'foreground-color=%d' % bg, '!',
           'video/x-raw,format=BGRx,width=%d,height=%d' % (w, h)]
    for i, line in enumerate(lines):
        cmd += ['!', 'textoverlay', 'text="%s"' % line, 'font-desc="%s"' % font,
                'color=%d' % fg, 'halignment=left', 'valignment=top', 'xpad=24',
                'ypad=%d' % (24 + i * step), 'draw-shadow=false', 'draw-outline=false',
                'shaded-background=false']
    cmd += ['!',
           'videoconvert', '!', 'video/x-raw,format=RGB', '!', 'pngenc', '!',
           'filesink', 'location=' + raw]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        raise SystemExit('rendering %s failed: %s' % (path, r.stderr.strip()))
    return read_png(raw)[:, :, :3]


def turn(img, degrees, fill):
    """img turned by degrees (clockwise on screen) about its centre, bilinear,
    into the same size; outside the picture: fill."""
    if degrees == 180:
        return img[::-1, ::-1].copy()
    h, w = img.shape[:2]
    a = np.radians(degrees)
    ys, xs = np.mgrid[0:h, 0:w].astype(np.float64)
    cx, cy = (w - 1) / 2.0, (h - 1) / 2.0
    # destination pixel -> source: turn back by -degrees
    sx = np.cos(a) * (xs - cx) + np.sin(a) * (ys - cy) + cx
    sy = -np.sin(a) * (xs - cx) + np.cos(a) * (ys - cy) + cy
    x0 = np.floor(sx).astype(int)
    y0 = np.floor(sy).astype(int)
    fx = (sx - x0)[..., None]
    fy = (sy - y0)[..., None]
    src = np.concatenate([img.astype(np.float64), np.ones((h, w, 1))], axis=2)

    def at(y, x):
        inside = (x >= 0) & (x < w) & (y >= 0) & (y < h)
        v = src[np.clip(y, 0, h - 1), np.clip(x, 0, w - 1)]
        return v * inside[..., None]
    v = (at(y0, x0) * (1 - fx) * (1 - fy) + at(y0, x0 + 1) * fx * (1 - fy) +
         at(y0 + 1, x0) * (1 - fx) * fy + at(y0 + 1, x0 + 1) * fx * fy)
    cover = v[..., 3:4]
    out = v[..., :3] + (1 - cover) * np.array(fill, dtype=np.float64)
    return np.clip(np.rint(out), 0, 255).astype(np.uint8)


def has_cjk_font():
    if not shutil.which('fc-list'):
        return False
    r = subprocess.run(['fc-list', ':lang=zh'], capture_output=True, text=True)
    return r.returncode == 0 and r.stdout.strip() != ''


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--reader', required=True)
    ap.add_argument('--det', required=True)
    ap.add_argument('--rec', required=True)
    ap.add_argument('--cls', required=True)
    ap.add_argument('--dict', required=True)
    ap.add_argument('--workdir', required=True)
    a = ap.parse_args()

    for what, p in (('ocr-read', a.reader), ('detector', a.det), ('recogniser', a.rec),
                    ('classifier', a.cls), ('dictionary', a.dict)):
        if not os.path.exists(p):
            skip('%s %s absent (tools/fetch-media.sh, ninja)' % (what, p))
    if not shutil.which('gst-launch-1.0'):
        skip('gst-launch-1.0 not found')
    r = subprocess.run(['gst-inspect-1.0', 'textoverlay'], capture_output=True, text=True)
    if r.returncode != 0:
        skip('textoverlay not found (Debian gstreamer1.0-x)')
    os.makedirs(a.workdir, exist_ok=True)

    cjk = has_cjk_font()
    files, expected = [], []
    for name, lines, font, fg, bg, size, degrees in CASES:
        if name == 'chinese' and not cjk:
            print('case %s skipped: no CJK font (fc-list :lang=zh; Debian '
                  'fonts-wqy-microhei)' % name)
            continue
        img = render(name, lines, font, fg, bg, size, a.workdir)
        if degrees:
            img = turn(img, degrees, ((bg >> 16) & 255, (bg >> 8) & 255, bg & 255))
        path = os.path.join(a.workdir, name + '.png')
        write_png(path, img)
        files.append(path)
        expected.append(KNOWN.get(name, lines))
    blank = os.path.join(a.workdir, 'blank.png')
    write_png(blank, np.full((120, 320, 3), 255, dtype=np.uint8))
    files.append(blank)
    expected.append([])

    r = subprocess.run([a.reader, '--det', a.det, '--rec', a.rec, '--cls', a.cls,
                        '--dict', a.dict] + files, capture_output=True, text=True)
    if r.returncode != 0:
        print(r.stderr)
        raise SystemExit('ocr-read failed (%d)' % r.returncode)
    got, cur = {}, None
    for line in r.stdout.splitlines():
        if line.startswith('==> ') and line.endswith(' <=='):
            cur = line[4:-4]
            got[cur] = []
        elif cur is not None:
            got[cur].append(line)
    # Every character, in order, line by line; the spaces are counted
    # apart: PaddleOCR's detector boxes (unclip 1.5) hug a lone line of sans
    # text so tightly that the recogniser can miss an inter-word space
    # (unclip 2.0 reads them, but merges a dense page's lines: imageTextN).
    ok = True
    exact = 0
    for path, lines in zip(files, expected):
        read = got.get(path)
        bare = [ln.replace(' ', '') for ln in read] if read is not None else None
        same = bare == [ln.replace(' ', '') for ln in lines]
        exact += read == lines
        ok = ok and same
        print('%-28s %s: expected %r, read %r' % (os.path.basename(path),
              ('exact' if read == lines else 'ok (spaces differ)') if same else 'FAIL',
              lines, read))
    print('%d of %d cases exact, spaces included' % (exact, len(files)))
    print('OK' if ok else 'FAILED')
    return 0 if ok else 1


if __name__ == '__main__':
    sys.exit(main())

"""Minimal PNG reader/writer on numpy + zlib (no PIL on the target machine).

Reads 8-bit, non-interlaced gray / gray+alpha / RGB / RGBA images, which is
what the test media are; anything else raises ValueError.
"""
import struct
import zlib

import numpy as np

_CHANNELS = {0: 1, 2: 3, 4: 2, 6: 4}


def read_png(path):
    """Returns an HxWxC uint8 array (C = 1, 2, 3 or 4)."""
    with open(path, 'rb') as f:
        data = f.read()
    if data[:8] != b'\x89PNG\r\n\x1a\n':
        raise ValueError('%s: not a PNG file' % path)
    pos, idat, hdr = 8, [], None
    while pos < len(data):
        length, ctype = struct.unpack('>I4s', data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        pos += 12 + length
        if ctype == b'IHDR':
            hdr = struct.unpack('>IIBBBBB', body)
        elif ctype == b'IDAT':
            idat.append(body)
        elif ctype == b'IEND':
            break
    w, h, depth, color, _, _, interlace = hdr
    if depth != 8 or color not in _CHANNELS or interlace:
        raise ValueError('%s: unsupported PNG (depth %d, color %d, interlace %d)'
                         % (path, depth, color, interlace))
    c = _CHANNELS[color]
    raw = np.frombuffer(zlib.decompress(b''.join(idat)), dtype=np.uint8)
    stride = w * c
    raw = raw.reshape(h, stride + 1)
    out = np.zeros((h, stride), dtype=np.uint8)
    prev = [0] * stride
    for y in range(h):
        ft, line = raw[y, 0], raw[y, 1:].tolist()
        if ft == 0:
            cur = line
        elif ft == 2:
            cur = [(v + b) & 255 for v, b in zip(line, prev)]
        elif ft in (1, 3, 4):
            # sequential: each byte depends on its left neighbour
            cur = [0] * stride
            for x in range(stride):
                a = cur[x - c] if x >= c else 0
                b = prev[x]
                if ft == 1:
                    p = a
                elif ft == 3:
                    p = (a + b) >> 1
                else:
                    cc = prev[x - c] if x >= c else 0
                    pa, pb, pc = abs(b - cc), abs(a - cc), abs(a + b - 2 * cc)
                    p = a if pa <= pb and pa <= pc else (b if pb <= pc else cc)
                cur[x] = (line[x] + p) & 255
        else:
            raise ValueError('%s: bad filter %d' % (path, ft))
        out[y] = cur
        prev = cur
    return out.astype(np.uint8).reshape(h, w, c)


def write_png(path, img):
    """Writes an HxWx3 (or HxW) uint8 array."""
    img = np.ascontiguousarray(img, dtype=np.uint8)
    if img.ndim == 2:
        img = img[:, :, None]
    h, w, c = img.shape
    color = {1: 0, 3: 2, 4: 6}[c]
    raw = b''.join(b'\x00' + img[y].tobytes() for y in range(h))

    def chunk(t, b):
        return struct.pack('>I', len(b)) + t + b + struct.pack('>I', zlib.crc32(t + b) & 0xffffffff)
    with open(path, 'wb') as f:
        f.write(b'\x89PNG\r\n\x1a\n' + chunk(b'IHDR', struct.pack('>IIBBBBB', w, h, 8, color, 0, 0, 0))
                + chunk(b'IDAT', zlib.compress(raw, 6)) + chunk(b'IEND', b''))

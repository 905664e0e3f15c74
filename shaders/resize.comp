#version 450
#extension GL_GOOGLE_include_directive : require
// Resize of the last two dims of [NC, H, W] (ONNX Resize, nearest, bilinear
// or bicubic), one invocation per output.  Cubic: 4x4 taps around the source
// coordinate (the reference's, cpu/resize.c: the neighbour left of the
// coordinate, indices clamped to the edge), Keys' kernel with coefficient a;
// EXCLUDE drops the taps outside the input and renormalizes.
#include "common.glsl"

layout(local_size_x_id = 0) in;   // LX, set by the host
layout(constant_id = 1) const uint MODE = 0;
layout(constant_id = 2) const uint COORD = 0;
layout(constant_id = 3) const uint NEAREST = 0;
layout(constant_id = 4) const uint EXCLUDE = 0;

layout(set = 0, binding = 0) readonly buffer X { float x[]; };
layout(set = 0, binding = 1) writeonly buffer Y { float y[]; };
layout(push_constant) uniform P {
  uint n; uint H; uint W; uint OH; uint OW; float sh; float sw; uint ox; uint oy; float cubic_a;
} p;

float cubic(float t) {
  float a = p.cubic_a;
  t = abs(t);
  if (t <= 1.0)
    return ((a + 2.0) * t - (a + 3.0)) * t * t + 1.0;
  if (t < 2.0)
    return ((a * t - 5.0 * a) * t + 8.0 * a) * t - 4.0 * a;
  return 0.0;
}

// The 4 cubic taps of source coordinate c: the first index and the weights.
int cubic_taps(float c, uint len, out vec4 w) {
  float f = floor(c);
  float base = c == f ? f - 1.0 : f;
  float ratio = c - base;
  int first = int(base) - 1;
  float sum = 0.0;
  for (int i = 0; i < 4; i++) {
    float v = cubic(float(i - 1) - ratio);
    if (EXCLUDE != 0 && (first + i < 0 || first + i >= int(len)))
      v = 0.0;
    w[i] = v;
    sum += v;
  }
  w = sum != 0.0 ? w / sum : vec4(0.0);
  return first;
}

float src_coord(uint o, uint in_len, uint out_len, float scale) {
  float xo = float(o);
  switch (COORD) {
  case NN_VK_COORD_ASYMMETRIC: return xo / scale;
  // ONNX measures the resized length as input * scale, before rounding
  case NN_VK_COORD_ALIGN_CORNERS: {
    float len = float(in_len) * scale;
    return len == 1.0 ? 0.0 : xo * float(in_len - 1) / (len - 1.0);
  }
  case NN_VK_COORD_PYTORCH_HALF_PIXEL:
    return float(in_len) * scale > 1.0 ? (xo + 0.5) / scale - 0.5 : 0.0;
  case NN_VK_COORD_HALF_PIXEL_SYMMETRIC: {
    float adj = float(out_len) / (scale * float(in_len));
    float center = float(in_len) * 0.5;
    return center * (1.0 - adj) + (xo + 0.5) / scale - 0.5;
  }
  }
  return (xo + 0.5) / scale - 0.5;
}

int nearest_index(float c, uint len) {
  float r;
  switch (NEAREST) {
  case NN_VK_NEAREST_ROUND_PREFER_CEIL: r = floor(c + 0.5); break;
  case NN_VK_NEAREST_FLOOR: r = floor(c); break;
  case NN_VK_NEAREST_CEIL: r = ceil(c); break;
  default: r = (c - floor(c) == 0.5) ? floor(c) : floor(c + 0.5); break;
  }
  return clamp(int(r), 0, int(len) - 1);
}

void main() {
  for (uint i = NN_GID; i < p.n; i += NN_GSTRIDE) {
    uint ow = i % p.OW, t = i / p.OW;
    uint oh = t % p.OH, nc = t / p.OH;
    uint xb = p.ox + nc * p.H * p.W;
    float ch = src_coord(oh, p.H, p.OH, p.sh);
    float cw = src_coord(ow, p.W, p.OW, p.sw);
    float v;
    if (MODE == NN_VK_RESIZE_CUBIC) {
      vec4 wh, ww;
      int h0 = cubic_taps(ch, p.H, wh), w0 = cubic_taps(cw, p.W, ww);
      v = 0.0;
      for (int a = 0; a < 4; a++) {
        uint hh = uint(clamp(h0 + a, 0, int(p.H) - 1));
        float r = 0.0;
        for (int b = 0; b < 4; b++)
          r = fma(ww[b], x[xb + hh * p.W + uint(clamp(w0 + b, 0, int(p.W) - 1))], r);
        v = fma(wh[a], r, v);
      }
    } else if (MODE == NN_VK_RESIZE_NEAREST) {
      v = x[xb + uint(nearest_index(ch, p.H)) * p.W + uint(nearest_index(cw, p.W))];
    } else {
      ch = clamp(ch, 0.0, float(p.H - 1));
      cw = clamp(cw, 0.0, float(p.W - 1));
      uint h0 = uint(floor(ch)), w0 = uint(floor(cw));
      uint h1 = min(h0 + 1, p.H - 1), w1 = min(w0 + 1, p.W - 1);
      float fh = ch - float(h0), fw = cw - float(w0);
      float v00 = x[xb + h0 * p.W + w0], v01 = x[xb + h0 * p.W + w1];
      float v10 = x[xb + h1 * p.W + w0], v11 = x[xb + h1 * p.W + w1];
      v = mix(mix(v00, v01, fw), mix(v10, v11, fw), fh);
    }
    y[p.oy + i] = v;
  }
}

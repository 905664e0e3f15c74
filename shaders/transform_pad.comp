#version 450
#extension GL_GOOGLE_include_directive : require
// Pad (32-bit words): every output element finds its source along each axis
// by the mode (constant, reflect, edge, wrap); negative pads crop.
#include "common.glsl"

layout(local_size_x_id = 0) in;   // LX, set by the host
layout(constant_id = 1) const uint MODE = 0;
layout(constant_id = 2) const uint RANK = 1;

layout(set = 0, binding = 0) readonly buffer X { uint x[]; };
layout(set = 0, binding = 1) writeonly buffer Y { uint y[]; };
layout(push_constant) uniform P {
  uint n; uint ox; uint oy; uint value;
  uint idims[NN_VK_MAX_RANK]; uint odims[NN_VK_MAX_RANK]; int pb[NN_VK_MAX_RANK];
} p;

void main() {
  for (uint i = NN_GID; i < p.n; i += NN_GSTRIDE) {
    uint rem = i, ix = 0, stride = 1;
    bool inside = true;
    for (int k = int(RANK) - 1; k >= 0; k--) {
      int d = int(p.idims[k]);
      int c = int(rem % p.odims[k]) - p.pb[k];
      rem /= p.odims[k];
      if (c < 0 || c >= d) {
        if (MODE == NN_VK_PAD_CONSTANT) {
          inside = false;
        } else if (MODE == NN_VK_PAD_EDGE) {
          c = clamp(c, 0, d - 1);
        } else if (MODE == NN_VK_PAD_WRAP) {
          c = ((c % d) + d) % d;
        } else if (d == 1) {
          c = 0;
        } else {
          // reflect without repeating the edge, folded as often as needed
          int period = 2 * (d - 1);
          c = ((c % period) + period) % period;
          if (c >= d) c = period - c;
        }
      }
      ix += uint(c) * stride;
      stride *= uint(d);
    }
    y[p.oy + i] = inside ? x[p.ox + ix] : p.value;
  }
}

#version 450
#extension GL_GOOGLE_include_directive : require
// Strided copy of 32-bit words:
//   y[oy + sum c_k*ys_k] = x[ox + sum c_k*xs_k]  for every c over dims.
// Transpose, slice (negative steps too), concat/split parts, expand.
#include "common.glsl"

layout(local_size_x_id = 0) in;   // LX, set by the host
layout(constant_id = 1) const uint RANK = 1;

layout(set = 0, binding = 0) readonly buffer X { uint x[]; };
layout(set = 0, binding = 1) writeonly buffer Y { uint y[]; };
layout(push_constant) uniform P {
  uint n; uint ox; uint oy;
  uint dims[NN_VK_MAX_RANK]; int xs[NN_VK_MAX_RANK]; uint ys[NN_VK_MAX_RANK];
} p;

void main() {
  for (uint i = NN_GID; i < p.n; i += NN_GSTRIDE) {
    uint rem = i, iy = p.oy;
    int ix = int(p.ox);
    for (int k = int(RANK) - 1; k >= 0; k--) {
      uint c = rem % p.dims[k];
      rem /= p.dims[k];
      ix += int(c) * p.xs[k];
      iy += c * p.ys[k];
    }
    y[iy] = x[uint(ix)];
  }
}

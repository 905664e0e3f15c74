#version 450
#extension GL_GOOGLE_include_directive : require
// Integer Add, Sub, Mul, Max, Min with numpy broadcasting, for the 8/16/32/
// 64-bit integer types (ET).  As the CPU kernels (cpu/ew_conv.h): computed on
// the 64-bit value, stored truncated to the type's width (wrapping).  Each
// invocation writes one output word (4 or 2 narrow elements) or one element;
// the tail of the last word is allocation padding.  The host collapses the
// shapes and passes the output dims and the operands' element strides.
#include "common.glsl"
#include "elem.glsl"

layout(local_size_x_id = 0) in;   // LX, set by the host
layout(constant_id = 1) const uint OP = 0;
layout(constant_id = 2) const uint ET = 0;
layout(constant_id = 3) const uint RANK = 1;

layout(set = 0, binding = 0) readonly buffer A { uint a[]; };
layout(set = 0, binding = 1) readonly buffer B { uint b[]; };
layout(set = 0, binding = 2) writeonly buffer Y { uint y[]; };
layout(push_constant) uniform P {
  uint n; uint oa; uint ob; uint oy;
  uint dims[NN_VK_MAX_RANK]; uint sa[NN_VK_MAX_RANK]; uint sb[NN_VK_MAX_RANK];
} p;

NN_ELEM_LOADER(load_a, a)
NN_ELEM_LOADER(load_b, b)

uvec2 op(uvec2 u, uvec2 v) {
  switch (OP) {
  case NN_VK_BIN_ADD: {
    uint lo = u.x + v.x;
    return uvec2(lo, u.y + v.y + (lo < u.x ? 1u : 0u));
  }
  case NN_VK_BIN_SUB: return nn_sub64(u, v);
  case NN_VK_BIN_MUL: {
    uint hi, lo;
    umulExtended(u.x, v.x, hi, lo);
    return uvec2(lo, hi + u.x * v.y + u.y * v.x);
  }
  case NN_VK_BIN_MAX: return nn_elem_cmp(ET, u, v) >= 0 ? u : v;
  case NN_VK_BIN_MIN: return nn_elem_cmp(ET, u, v) <= 0 ? u : v;
  }
  return u;
}

uvec2 elem(uint i) {
  uint rem = i, ia = 0u, ib = 0u;
  for (int k = int(RANK) - 1; k >= 0; k--) {
    uint d = p.dims[k];
    uint c = rem % d;
    rem /= d;
    ia += c * p.sa[k];
    ib += c * p.sb[k];
  }
  return op(load_a(ET, p.oa, ia), load_b(ET, p.ob, ib));
}

void main() {
  const uint SZ = nn_et_size(ET);
  const uint PER = SZ < 4u ? 4u / SZ : 1u;   // elements per invocation
  uint units = (p.n + PER - 1u) / PER;
  for (uint u = NN_GID; u < units; u += NN_GSTRIDE) {
    if (SZ == 8u) {
      uvec2 v = elem(u);
      y[p.oy + 2u * u] = v.x;
      y[p.oy + 2u * u + 1u] = v.y;
    } else if (SZ == 4u) {
      y[p.oy + u] = elem(u).x;
    } else {
      uint bits = 0u, mask = SZ == 1u ? 0xffu : 0xffffu;
      for (uint j = 0u; j < PER; j++) {
        uint i = u * PER + j;
        if (i >= p.n)
          break;
        bits |= (elem(i).x & mask) << (8u * SZ * j);
      }
      y[p.oy + u] = bits;
    }
  }
}

#version 450
#extension GL_GOOGLE_include_directive : require
// Cast between float32, float16, bfloat16, double, bool and the
// 8/16/32/64-bit integers, element-wise, with the CPU's semantics
// (cpu/ew_conv.h, numpy astype): float -> integer truncates toward zero and
// saturates to 64 bits before wrapping to the target width (NaN -> 0),
// to a float type rounds to nearest even (through float32 for the half
// types, as the host does), anything -> bool is "nonzero".  1- and 2-byte outputs are written a word per
// invocation (the tail of the last word is allocation padding).
#include "common.glsl"
#include "elem.glsl"

layout(local_size_x_id = 0) in;   // LX, set by the host
layout(constant_id = 1) const uint ETI = 0;
layout(constant_id = 2) const uint ETO = 0;

layout(set = 0, binding = 0) readonly buffer X { uint x[]; };
layout(set = 0, binding = 1) writeonly buffer Y { uint y[]; };
layout(push_constant) uniform P { uint n; uint ox; uint oy; } p;

NN_ELEM_LOADER(load_x, x)

// the output element's raw bits
uvec2 conv(uint i) { return nn_et_narrow(ETO, nn_elem_convert(ETI, ETO, load_x(ETI, p.ox, i))); }

void main() {
  const uint SZ = nn_et_size(ETO);
  const uint PER = SZ < 4u ? 4u / SZ : 1u;   // elements per invocation
  uint units = (p.n + PER - 1u) / PER;
  for (uint u = NN_GID; u < units; u += NN_GSTRIDE) {
    if (SZ == 8u) {
      uvec2 v = conv(u);
      y[p.oy + 2u * u] = v.x;
      y[p.oy + 2u * u + 1u] = v.y;
    } else if (SZ == 4u) {
      y[p.oy + u] = conv(u).x;
    } else {
      uint bits = 0u, mask = SZ == 1u ? 0xffu : 0xffffu;
      for (uint j = 0u; j < PER; j++) {
        uint i = u * PER + j;
        if (i >= p.n)
          break;
        bits |= (conv(i).x & mask) << (8u * SZ * j);
      }
      y[p.oy + u] = bits;
    }
  }
}

#version 450
#extension GL_GOOGLE_include_directive : require
// Per-channel affine of x viewed as [outer, C, inner]:
//   y = act(x * scale[c] + bias[c])
// (inference BatchNormalization with folded mean/var, scale-and-shift).
#include "common.glsl"

layout(local_size_x_id = 0) in;   // LX, set by the host
layout(constant_id = 1) const uint ACT = 0;

layout(set = 0, binding = 0) readonly buffer X { float x[]; };
layout(set = 0, binding = 1) readonly buffer S { float s[]; };
layout(set = 0, binding = 2) readonly buffer Bb { float bias[]; };
layout(set = 0, binding = 3) writeonly buffer Y { float y[]; };
layout(push_constant) uniform P {
  uint n; uint C; uint inner; uint ox; uint os; uint ob; uint oy; float act_a; float act_b;
} p;

void main() {
  for (uint i = NN_GID; i < p.n; i += NN_GSTRIDE) {
    uint c = (i / p.inner) % p.C;
    y[p.oy + i] = nn_act(fma(x[p.ox + i], s[p.os + c], bias[p.ob + c]), ACT, p.act_a, p.act_b);
  }
}

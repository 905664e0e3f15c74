#version 450
#extension GL_GOOGLE_include_directive : require
// y = act(x) element-wise.
#include "common.glsl"

layout(local_size_x_id = 0) in;   // LX, set by the host
layout(constant_id = 1) const uint ACT = 0;

layout(set = 0, binding = 0) readonly buffer X { float x[]; };
layout(set = 0, binding = 1) writeonly buffer Y { float y[]; };
layout(push_constant) uniform P { uint n; uint ox; uint oy; float a; float b; } p;

void main() {
  for (uint i = NN_GID; i < p.n; i += NN_GSTRIDE)
    y[p.oy + i] = nn_act(x[p.ox + i], ACT, p.a, p.b);
}

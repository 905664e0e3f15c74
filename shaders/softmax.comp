#version 450
#extension GL_GOOGLE_include_directive : require
// (Log)softmax of x viewed as [outer, r, inner] along r: one workgroup per
// row (outer, inner), three passes over the row (max, sum of exp, write).
#include "common.glsl"

layout(local_size_x_id = 0) in;   // LX (a power of two), set by the host
layout(constant_id = 1) const uint LOG = 0;

layout(set = 0, binding = 0) readonly buffer X { float x[]; };
layout(set = 0, binding = 1) writeonly buffer Y { float y[]; };
layout(push_constant) uniform P { uint outer; uint r; uint inner; uint ox; uint oy; uint rows; } p;

shared float red[gl_WorkGroupSize.x];

void main() {
  uint tid = gl_LocalInvocationID.x;
  for (uint row = gl_WorkGroupID.x; row < p.rows; row += gl_NumWorkGroups.x) {
    uint base = (row / p.inner) * p.r * p.inner + row % p.inner;
    float m = -1.0 / 0.0;
    for (uint k = tid; k < p.r; k += gl_WorkGroupSize.x)
      m = max(m, x[p.ox + base + k * p.inner]);
    red[tid] = m;
    barrier();
    for (uint w = gl_WorkGroupSize.x / 2; w > 0; w >>= 1) {
      if (tid < w)
        red[tid] = max(red[tid], red[tid + w]);
      barrier();
    }
    m = red[0];
    barrier();
    float s = 0.0;
    for (uint k = tid; k < p.r; k += gl_WorkGroupSize.x)
      s += exp(x[p.ox + base + k * p.inner] - m);
    red[tid] = s;
    barrier();
    for (uint w = gl_WorkGroupSize.x / 2; w > 0; w >>= 1) {
      if (tid < w)
        red[tid] += red[tid + w];
      barrier();
    }
    s = red[0];
    barrier();
    float ls = log(s), inv = 1.0 / s;
    for (uint k = tid; k < p.r; k += gl_WorkGroupSize.x) {
      float v = x[p.ox + base + k * p.inner] - m;
      y[p.oy + base + k * p.inner] = LOG != 0 ? v - ls : exp(v) * inv;
    }
  }
}

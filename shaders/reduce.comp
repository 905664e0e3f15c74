#version 450
#extension GL_GOOGLE_include_directive : require
// Reduction of x viewed as [outer, r, inner] over r.  MODE 0: a workgroup
// per output, its invocations stride over r and combine in shared memory
// (long rows: global pools, mean over a large axis).  MODE 1: one invocation
// per output (short rows, many outputs).
#include "common.glsl"

layout(local_size_x_id = 0) in;   // LX (a power of two), set by the host
layout(constant_id = 1) const uint KIND = 0;
layout(constant_id = 2) const uint MODE = 0;

layout(set = 0, binding = 0) readonly buffer X { float x[]; };
layout(set = 0, binding = 1) writeonly buffer Y { float y[]; };
layout(push_constant) uniform P { uint outer; uint r; uint inner; uint ox; uint oy; uint n; } p;

shared float red[gl_WorkGroupSize.x];

float init_val() {
  if (KIND == NN_VK_RED_MAX || KIND == NN_VK_RED_LOG_SUM_EXP) return -1.0 / 0.0;
  if (KIND == NN_VK_RED_MIN) return 1.0 / 0.0;
  if (KIND == NN_VK_RED_PROD) return 1.0;
  return 0.0;
}

// pass 0 of LOG_SUM_EXP finds the max, pass 1 sums exp(x - max)
float combine(float acc, float v, uint pass, float shift) {
  switch (KIND) {
  case NN_VK_RED_MAX: return (v > acc || isnan(v)) ? v : acc;
  case NN_VK_RED_MIN: return (v < acc || isnan(v)) ? v : acc;
  case NN_VK_RED_PROD: return acc * v;
  case NN_VK_RED_SUM_SQUARE: case NN_VK_RED_L2: return fma(v, v, acc);
  case NN_VK_RED_L1: return acc + abs(v);
  case NN_VK_RED_LOG_SUM_EXP:
    if (pass == 0) return (v > acc || isnan(v)) ? v : acc;
    return acc + exp(v - shift);
  }
  return acc + v;
}

float merge(float u, float v, uint pass) {
  switch (KIND) {
  case NN_VK_RED_MAX: return (v > u || isnan(v)) ? v : u;
  case NN_VK_RED_MIN: return (v < u || isnan(v)) ? v : u;
  case NN_VK_RED_PROD: return u * v;
  case NN_VK_RED_LOG_SUM_EXP:
    if (pass == 0) return (v > u || isnan(v)) ? v : u;
    return u + v;
  }
  return u + v;
}

float finish(float acc, float shift) {
  switch (KIND) {
  case NN_VK_RED_MEAN: return acc / float(p.r);
  case NN_VK_RED_L2: return sqrt(acc);
  case NN_VK_RED_LOG_SUM: return log(acc);
  case NN_VK_RED_LOG_SUM_EXP: return isinf(shift) ? shift : shift + log(acc);
  }
  return acc;
}

void main() {
  uint passes = KIND == NN_VK_RED_LOG_SUM_EXP ? 2 : 1;
  if (MODE == 1) {
    for (uint o = NN_GID; o < p.n; o += NN_GSTRIDE) {
      uint base = p.ox + (o / p.inner) * p.r * p.inner + o % p.inner;
      float shift = 0.0, acc = 0.0;
      for (uint pass = 0; pass < passes; pass++) {
        acc = pass == 1 ? 0.0 : init_val();
        for (uint k = 0; k < p.r; k++)
          acc = combine(acc, x[base + k * p.inner], pass, shift);
        if (pass == 0) shift = acc;
      }
      y[p.oy + o] = finish(acc, shift);
    }
    return;
  }
  uint tid = gl_LocalInvocationID.x;
  for (uint o = gl_WorkGroupID.x; o < p.n; o += gl_NumWorkGroups.x) {
    uint base = p.ox + (o / p.inner) * p.r * p.inner + o % p.inner;
    float shift = 0.0, acc = 0.0;
    for (uint pass = 0; pass < passes; pass++) {
      acc = pass == 1 ? 0.0 : init_val();
      for (uint k = tid; k < p.r; k += gl_WorkGroupSize.x)
        acc = combine(acc, x[base + k * p.inner], pass, shift);
      red[tid] = acc;
      barrier();
      for (uint w = gl_WorkGroupSize.x / 2; w > 0; w >>= 1) {
        if (tid < w)
          red[tid] = merge(red[tid], red[tid + w], pass);
        barrier();
      }
      acc = red[0];
      barrier();
      if (pass == 0) shift = acc;
    }
    if (tid == 0)
      y[p.oy + o] = finish(acc, shift);
  }
}

#version 450
#extension GL_GOOGLE_include_directive : require
// Normalization of the rows of x viewed as [rows, len] (Layer, RMS,
// Instance and Group normalization):
//   LAYER  y = (x - mean) * inv * scale + bias,  inv = 1 / sqrt(var + eps)
//   RMS    y = x * inv * scale,                  inv = 1 / sqrt(mean(x^2) + eps)
// Scale and bias element of row r, position j: (r % RM) * rs + (j / JD) * js
// (a full row: rs 0, js 1; a scalar: 0, 0; per channel of instance norm:
// RM = C, rs 1, js 0; ...).  Optional outputs: the mean and inv per row.
// MODE 0: a workgroup per row, reducing in shared memory; MODE 1: an
// invocation per row (short rows).
#include "common.glsl"

layout(local_size_x_id = 0) in;   // LX (a power of two), set by the host
layout(constant_id = 1) const uint KIND = 0;
layout(constant_id = 2) const uint MODE = 0;
layout(constant_id = 3) const uint HAS_BIAS = 0;
layout(constant_id = 4) const uint HAS_MEAN = 0;
layout(constant_id = 5) const uint HAS_INV = 0;

layout(set = 0, binding = 0) readonly buffer X { float x[]; };
layout(set = 0, binding = 1) readonly buffer S { float sc[]; };
layout(set = 0, binding = 2) readonly buffer Bb { float bi[]; };
layout(set = 0, binding = 3) writeonly buffer Y { float y[]; };
layout(set = 0, binding = 4) writeonly buffer Mn { float ymean[]; };
layout(set = 0, binding = 5) writeonly buffer Iv { float yinv[]; };
layout(push_constant) uniform P {
  uint rows; uint len; float eps; uint RM; uint JD; uint rs_s; uint js_s; uint rs_b; uint js_b;
  uint ox; uint os; uint ob; uint oy; uint om; uint oi;
} p;

shared float red[gl_WorkGroupSize.x];

float param_s(uint r, uint j) { return sc[p.os + (r % p.RM) * p.rs_s + (j / p.JD) * p.js_s]; }
float param_b(uint r, uint j) {
  return HAS_BIAS != 0 ? bi[p.ob + (r % p.RM) * p.rs_b + (j / p.JD) * p.js_b] : 0.0;
}

void finish_row(uint r, float mean, float inv, uint j0, uint step) {
  uint base = r * p.len;
  for (uint j = j0; j < p.len; j += step) {
    float v = (KIND == NN_VK_ROWNORM_RMS ? x[p.ox + base + j] : x[p.ox + base + j] - mean) * inv;
    y[p.oy + base + j] = fma(v, param_s(r, j), param_b(r, j));
  }
}

void stats_out(uint r, float mean, float inv) {
  if (HAS_MEAN != 0)
    ymean[p.om + r] = mean;
  if (HAS_INV != 0)
    yinv[p.oi + r] = inv;
}

// sum over the workgroup (every invocation gets it)
float wg_sum(float v) {
  uint tid = gl_LocalInvocationID.x;
  red[tid] = v;
  barrier();
  for (uint w = gl_WorkGroupSize.x / 2; w > 0; w >>= 1) {
    if (tid < w)
      red[tid] += red[tid + w];
    barrier();
  }
  float s = red[0];
  barrier();
  return s;
}

void main() {
  float fl = float(p.len);
  if (MODE == 1) {
    for (uint r = NN_GID; r < p.rows; r += NN_GSTRIDE) {
      uint base = p.ox + r * p.len;
      float mean = 0.0, q = 0.0;
      if (KIND == NN_VK_ROWNORM_LAYER) {
        for (uint j = 0; j < p.len; j++)
          mean += x[base + j];
        mean /= fl;
      }
      for (uint j = 0; j < p.len; j++) {
        float d = x[base + j] - mean;
        q = fma(d, d, q);
      }
      float inv = 1.0 / sqrt(q / fl + p.eps);
      stats_out(r, mean, inv);
      finish_row(r, mean, inv, 0u, 1u);
    }
    return;
  }
  uint tid = gl_LocalInvocationID.x;
  for (uint r = gl_WorkGroupID.x; r < p.rows; r += gl_NumWorkGroups.x) {
    uint base = p.ox + r * p.len;
    float mean = 0.0;
    if (KIND == NN_VK_ROWNORM_LAYER) {
      float s = 0.0;
      for (uint j = tid; j < p.len; j += gl_WorkGroupSize.x)
        s += x[base + j];
      mean = wg_sum(s) / fl;
    }
    float q = 0.0;
    for (uint j = tid; j < p.len; j += gl_WorkGroupSize.x) {
      float d = x[base + j] - mean;
      q = fma(d, d, q);
    }
    float inv = 1.0 / sqrt(wg_sum(q) / fl + p.eps);
    if (tid == 0)
      stats_out(r, mean, inv);
    // every read of the row happened before the barriers of wg_sum: y may
    // alias x
    finish_row(r, mean, inv, tid, gl_WorkGroupSize.x);
  }
}

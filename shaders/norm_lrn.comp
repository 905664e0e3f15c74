#version 450
#extension GL_GOOGLE_include_directive : require
// Local response normalization across channels of [N, C, inner]:
//   y = x / (bias + alpha / size * sum_{c' in window} x[c']^2) ^ beta
// with the window [c - floor((size-1)/2), c + ceil((size-1)/2)].
#include "common.glsl"

layout(local_size_x_id = 0) in;   // LX, set by the host

layout(set = 0, binding = 0) readonly buffer X { float x[]; };
layout(set = 0, binding = 1) writeonly buffer Y { float y[]; };
layout(push_constant) uniform P {
  uint n; uint C; uint inner; uint size; float alpha; float beta; float bias; uint ox; uint oy;
} p;

void main() {
  int lo = -int((p.size - 1) / 2), hi = int(p.size / 2);
  for (uint i = NN_GID; i < p.n; i += NN_GSTRIDE) {
    uint s_ = i % p.inner, t = i / p.inner;
    int c = int(t % p.C);
    uint nb = p.ox + (t / p.C) * p.C * p.inner + s_;
    float sq = 0.0;
    for (int k = max(c + lo, 0); k <= min(c + hi, int(p.C) - 1); k++) {
      float v = x[nb + uint(k) * p.inner];
      sq = fma(v, v, sq);
    }
    float d = pow(p.bias + p.alpha / float(p.size) * sq, p.beta);
    y[p.oy + i] = x[p.ox + i] / d;
  }
}

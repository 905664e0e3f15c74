#version 450
#extension GL_GOOGLE_include_directive : require
// 2-D convolution (NCHW), one invocation per output element.  For depthwise
// convolutions (C/G == 1: 9 multiply-adds per output, nothing for shared
// memory to reuse) and any case too small for the tiled kernel.
#include "common.glsl"

layout(local_size_x_id = 0) in;   // LX, set by the host
layout(constant_id = 1) const uint ACT = 0;
layout(constant_id = 2) const uint HAS_BIAS = 0;
layout(constant_id = 3) const int KH = 3;
layout(constant_id = 4) const int KW = 3;
layout(constant_id = 5) const int SH = 1;
layout(constant_id = 6) const int SW = 1;
layout(constant_id = 7) const int DH = 1;
layout(constant_id = 8) const int DW = 1;

layout(set = 0, binding = 0) readonly buffer X { float x[]; };
layout(set = 0, binding = 1) readonly buffer Wt { float w[]; };
layout(set = 0, binding = 2) readonly buffer Bias { float bias[]; };
layout(set = 0, binding = 3) writeonly buffer Y { float y[]; };
layout(push_constant) uniform P {
  uint n; uint Cg; uint H; uint W; uint M; uint Mg; uint OH; uint OW; int PT; int PL;
  uint ox; uint ow; uint ob; uint oy; float act_a; float act_b;
} p;

void main() {
  for (uint i = NN_GID; i < p.n; i += NN_GSTRIDE) {
    uint ow_ = i % p.OW, t = i / p.OW;
    uint oh = t % p.OH;
    t /= p.OH;
    uint m = t % p.M, img = t / p.M;
    uint g = m / p.Mg;
    uint C = p.Cg * (p.M / p.Mg);
    int ih0 = int(oh) * SH - p.PT, iw0 = int(ow_) * SW - p.PL;
    float s = HAS_BIAS != 0 ? bias[p.ob + m] : 0.0;
    for (uint c = 0; c < p.Cg; c++) {
      uint xb = p.ox + (img * C + g * p.Cg + c) * p.H * p.W;
      uint wb = p.ow + (m * p.Cg + c) * uint(KH * KW);
      for (int kh = 0; kh < KH; kh++) {
        int ih = ih0 + kh * DH;
        if (ih < 0 || ih >= int(p.H))
          continue;
        for (int kw = 0; kw < KW; kw++) {
          int iw = iw0 + kw * DW;
          if (iw >= 0 && iw < int(p.W))
            s = fma(x[xb + uint(ih) * p.W + uint(iw)], w[wb + uint(kh * KW + kw)], s);
        }
      }
    }
    y[p.oy + i] = nn_act(s, ACT, p.act_a, p.act_b);
  }
}

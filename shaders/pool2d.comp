#version 450
#extension GL_GOOGLE_include_directive : require
// Max / average pooling over the last two dims of [NC, H, W], one invocation
// per output.  Average counts the taps inside the padded input
// (count_include_pad) or inside the input, tap by tap, which stays right
// with dilation and ceil_mode windows that run past the padding.
#include "common.glsl"

layout(local_size_x_id = 0) in;   // LX, set by the host
layout(constant_id = 1) const uint KIND = 0;
layout(constant_id = 2) const int KH = 2;
layout(constant_id = 3) const int KW = 2;
layout(constant_id = 4) const int SH = 2;
layout(constant_id = 5) const int SW = 2;
layout(constant_id = 6) const int DH = 1;
layout(constant_id = 7) const int DW = 1;

layout(set = 0, binding = 0) readonly buffer X { float x[]; };
layout(set = 0, binding = 1) writeonly buffer Y { float y[]; };
layout(push_constant) uniform P {
  uint n; uint H; uint W; uint OH; uint OW; int PT; int PL; int PB; int PR;
  uint include_pad; uint ox; uint oy;
} p;

void main() {
  for (uint i = NN_GID; i < p.n; i += NN_GSTRIDE) {
    uint ow = i % p.OW, t = i / p.OW;
    uint oh = t % p.OH, nc = t / p.OH;
    int ih0 = int(oh) * SH - p.PT, iw0 = int(ow) * SW - p.PL;
    uint xb = p.ox + nc * p.H * p.W;
    float acc = KIND == NN_VK_POOL_MAX ? -1.0 / 0.0 : 0.0;
    int ch_in = 0, ch_pad = 0, cw_in = 0, cw_pad = 0;
    for (int kw = 0; kw < KW; kw++) {
      int iw = iw0 + kw * DW;
      cw_in += (iw >= 0 && iw < int(p.W)) ? 1 : 0;
      cw_pad += (iw >= -p.PL && iw < int(p.W) + p.PR) ? 1 : 0;
    }
    for (int kh = 0; kh < KH; kh++) {
      int ih = ih0 + kh * DH;
      ch_pad += (ih >= -p.PT && ih < int(p.H) + p.PB) ? 1 : 0;
      if (ih < 0 || ih >= int(p.H))
        continue;
      ch_in++;
      for (int kw = 0; kw < KW; kw++) {
        int iw = iw0 + kw * DW;
        if (iw < 0 || iw >= int(p.W))
          continue;
        float v = x[xb + uint(ih) * p.W + uint(iw)];
        if (KIND == NN_VK_POOL_MAX)
          acc = (v > acc || isnan(v)) ? v : acc;
        else
          acc += v;
      }
    }
    if (KIND == NN_VK_POOL_AVG) {
      int cnt = p.include_pad != 0 ? ch_pad * cw_pad : ch_in * cw_in;
      acc = cnt > 0 ? acc / float(cnt) : 0.0;
    }
    y[p.oy + i] = acc;
  }
}

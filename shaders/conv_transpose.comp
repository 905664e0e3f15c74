#version 450
#extension GL_GOOGLE_include_directive : require
// ConvTranspose (NCDHW; 1-D and 2-D as D = 1, H = 1), one invocation per
// output element, gathering the inputs that scatter into it:
//   y[n, m, o] = bias[m] + sum_{c, t} x[n, g*Cg + c, i] * w[g*Cg + c, m % Mg, t]
// over kernel taps t with o + pad_begin - t*dil = i*stride, 0 <= i < in, per
// spatial dim (g = m / Mg).  Weights in the ONNX layout [C, M/group, k...].
#include "common.glsl"

layout(local_size_x_id = 0) in;   // LX, set by the host
layout(constant_id = 1) const uint ACT = 0;
layout(constant_id = 2) const uint HAS_BIAS = 0;
layout(constant_id = 3) const int KD = 1;
layout(constant_id = 4) const int KH = 1;
layout(constant_id = 5) const int KW = 1;
layout(constant_id = 6) const int SD = 1;
layout(constant_id = 7) const int SH = 1;
layout(constant_id = 8) const int SW = 1;
layout(constant_id = 9) const int DD = 1;
layout(constant_id = 10) const int DH = 1;
layout(constant_id = 11) const int DW = 1;

layout(set = 0, binding = 0) readonly buffer X { float x[]; };
layout(set = 0, binding = 1) readonly buffer Wt { float w[]; };
layout(set = 0, binding = 2) readonly buffer Bias { float bias[]; };
layout(set = 0, binding = 3) writeonly buffer Y { float y[]; };
layout(push_constant) uniform P {
  uint n; uint Cg; uint D; uint H; uint W; uint M; uint Mg; uint OD; uint OH; uint OW;
  int PF; int PT; int PL; uint ox; uint ow; uint ob; uint oy; float act_a; float act_b;
} p;

void main() {
  const uint KSZ = uint(KD * KH * KW);
  for (uint i = NN_GID; i < p.n; i += NN_GSTRIDE) {
    uint ow_ = i % p.OW, t = i / p.OW;
    uint oh = t % p.OH;
    t /= p.OH;
    uint od = t % p.OD;
    t /= p.OD;
    uint m = t % p.M, img = t / p.M;
    uint g = m / p.Mg, mm = m % p.Mg;
    uint C = p.Cg * (p.M / p.Mg);
    uint xb = p.ox + (img * C + g * p.Cg) * p.D * p.H * p.W;
    uint wb = p.ow + (g * p.Cg * p.Mg + mm) * KSZ;
    uint xcs = p.D * p.H * p.W, wcs = p.Mg * KSZ;   // per input channel
    float s = HAS_BIAS != 0 ? bias[p.ob + m] : 0.0;
    for (int kd = 0; kd < KD; kd++) {
      int td = int(od) + p.PF - kd * DD;
      if (td < 0 || td % SD != 0 || td / SD >= int(p.D))
        continue;
      uint id = uint(td / SD);
      for (int kh = 0; kh < KH; kh++) {
        int th = int(oh) + p.PT - kh * DH;
        if (th < 0 || th % SH != 0 || th / SH >= int(p.H))
          continue;
        uint ih = uint(th / SH);
        for (int kw = 0; kw < KW; kw++) {
          int tw = int(ow_) + p.PL - kw * DW;
          if (tw < 0 || tw % SW != 0 || tw / SW >= int(p.W))
            continue;
          uint xo = xb + (id * p.H + ih) * p.W + uint(tw / SW);
          uint wo = wb + uint((kd * KH + kh) * KW + kw);
          for (uint c = 0u; c < p.Cg; c++)
            s = fma(x[xo + c * xcs], w[wo + c * wcs], s);
        }
      }
    }
    y[p.oy + i] = nn_act(s, ACT, p.act_a, p.act_b);
  }
}

#version 450
#extension GL_GOOGLE_include_directive : require
// 2-D convolution (NCHW) as an implicit GEMM tiled in shared memory, per
// batch image and group (gl_WorkGroupID.z = n * G + g):
//   Y[m, p] = act(sum_k W[m, k] * Xcol[k, p] + bias[m])
// with k = (c, kh, kw) over C/G * KH * KW and p = (oh, ow).  Xcol is never
// materialized: the B tile is gathered from the input with padding and
// dilation.  FAST1X1 (1x1 kernel, stride 1, no pad) reads X as a plain
// matrix.  Kernel geometry is specialized so the index math folds.
#include "common.glsl"

// 16x16 invocations; the tile is BM x BN = 16*TM x 16*TN.
layout(local_size_x = 16, local_size_y = 16) in;
layout(constant_id = 0) const uint TM = 4;
layout(constant_id = 1) const uint TN = 4;
layout(constant_id = 2) const uint BK = 16;
const uint BM = 16 * TM;
const uint BN = 16 * TN;
layout(constant_id = 3) const uint ACT = 0;
layout(constant_id = 4) const uint HAS_BIAS = 0;
layout(constant_id = 5) const int KH = 3;
layout(constant_id = 6) const int KW = 3;
layout(constant_id = 7) const int SH = 1;
layout(constant_id = 8) const int SW = 1;
layout(constant_id = 9) const int DH = 1;
layout(constant_id = 10) const int DW = 1;
layout(constant_id = 11) const uint FAST1X1 = 0;

layout(set = 0, binding = 0) readonly buffer X { float x[]; };
layout(set = 0, binding = 1) readonly buffer Wt { float w[]; };
layout(set = 0, binding = 2) readonly buffer Bias { float bias[]; };
layout(set = 0, binding = 3) writeonly buffer Y { float y[]; };
layout(push_constant) uniform P {
  uint Cg; uint H; uint W; uint Mg; uint OH; uint OW; int PT; int PL; uint G;
  uint ox; uint ow; uint ob; uint oy; float act_a; float act_b;
} p;

shared float As[BK * BM];
shared float Bs[BK * BN];

void main() {
  const uint LX = gl_WorkGroupSize.x, LY = gl_WorkGroupSize.y;
  uint tx = gl_LocalInvocationID.x, ty = gl_LocalInvocationID.y;
  uint tid = ty * LX + tx, nth = LX * LY;
  uint n0 = gl_WorkGroupID.x * BN, m0 = gl_WorkGroupID.y * BM;
  uint img = gl_WorkGroupID.z / p.G, g = gl_WorkGroupID.z % p.G;
  uint K = p.Cg * uint(KH * KW), NP = p.OH * p.OW, HW = p.H * p.W;
  uint xbase = p.ox + (img * p.G + g) * p.Cg * HW;
  uint wbase = p.ow + g * p.Mg * K;

  float acc[TM][TN];
  for (uint i = 0; i < TM; i++)
    for (uint j = 0; j < TN; j++)
      acc[i][j] = 0.0;

  for (uint k0 = 0; k0 < K; k0 += BK) {
    for (uint t = tid; t < BM * BK; t += nth) {
      uint kk = t % BK, mm = t / BK;
      uint gm = m0 + mm, gk = k0 + kk;
      As[kk * BM + mm] = (gm < p.Mg && gk < K) ? w[wbase + gm * K + gk] : 0.0;
    }
    for (uint t = tid; t < BN * BK; t += nth) {
      uint nn = t % BN, kk = t / BN;
      uint gp = n0 + nn, gk = k0 + kk;
      float v = 0.0;
      if (gp < NP && gk < K) {
        if (FAST1X1 != 0) {
          v = x[xbase + gk * HW + gp];
        } else {
          uint c = gk / uint(KH * KW), r = gk % uint(KH * KW);
          int kh = int(r) / KW, kw = int(r) % KW;
          int ih = int(gp / p.OW) * SH - p.PT + kh * DH;
          int iw = int(gp % p.OW) * SW - p.PL + kw * DW;
          if (ih >= 0 && ih < int(p.H) && iw >= 0 && iw < int(p.W))
            v = x[xbase + c * HW + uint(ih) * p.W + uint(iw)];
        }
      }
      Bs[kk * BN + nn] = v;
    }
    barrier();
    for (uint kk = 0; kk < BK; kk++) {
      float av[TM];
      float bv[TN];
      for (uint i = 0; i < TM; i++)
        av[i] = As[kk * BM + ty + i * LY];
      for (uint j = 0; j < TN; j++)
        bv[j] = Bs[kk * BN + tx + j * LX];
      for (uint i = 0; i < TM; i++)
        for (uint j = 0; j < TN; j++)
          acc[i][j] = fma(av[i], bv[j], acc[i][j]);
    }
    barrier();
  }

  uint ybase = p.oy + (img * p.G + g) * p.Mg * NP;
  for (uint i = 0; i < TM; i++) {
    uint gm = m0 + ty + i * LY;
    if (gm >= p.Mg)
      continue;
    float bv = HAS_BIAS != 0 ? bias[p.ob + g * p.Mg + gm] : 0.0;
    for (uint j = 0; j < TN; j++) {
      uint gp = n0 + tx + j * LX;
      if (gp < NP)
        y[ybase + gm * NP + gp] = nn_act(acc[i][j] + bv, ACT, p.act_a, p.act_b);
    }
  }
}

#version 450
#extension GL_GOOGLE_include_directive : require
// Batched GEMM tiled in shared memory:
//   y[b][m][n] = act(alpha * sum_k A(b,m,k) * B(b,k,n) + beta * C(m,n))
// Operands are addressed through element strides, so transposes and batch
// broadcasting cost nothing.  A workgroup computes a BM x BN tile of y; each
// invocation a TM x TN sub-tile strided by the workgroup size (conflict-free
// shared reads, coalesced stores).  K advances in steps of BK through two
// shared tiles loaded cooperatively along whichever axis is contiguous.
#include "common.glsl"

// 16x16 invocations; the tile is BM x BN = 16*TM x 16*TN.
layout(local_size_x = 16, local_size_y = 16) in;
layout(constant_id = 0) const uint TM = 4;
layout(constant_id = 1) const uint TN = 4;
layout(constant_id = 2) const uint BK = 16;
const uint BM = 16 * TM;
const uint BN = 16 * TN;
layout(constant_id = 3) const uint ACT = 0;
layout(constant_id = 4) const uint HAS_C = 0;

layout(set = 0, binding = 0) readonly buffer A { float a[]; };
layout(set = 0, binding = 1) readonly buffer B { float b[]; };
layout(set = 0, binding = 2) readonly buffer C { float c[]; };
layout(set = 0, binding = 3) writeonly buffer Y { float y[]; };
layout(push_constant) uniform P {
  uint M; uint N; uint K;
  uint sam; uint sak; uint sbk; uint sbn;
  uint batch2; uint sa1; uint sa2; uint sb1; uint sb2;
  uint scm; uint scn;
  uint oa; uint ob; uint oc; uint oy;
  float alpha; float beta; float act_a; float act_b;
} p;

shared float As[BK * BM];
shared float Bs[BK * BN];

void main() {
  const uint LX = gl_WorkGroupSize.x, LY = gl_WorkGroupSize.y;
  uint tx = gl_LocalInvocationID.x, ty = gl_LocalInvocationID.y;
  uint tid = ty * LX + tx, nth = LX * LY;
  uint n0 = gl_WorkGroupID.x * BN, m0 = gl_WorkGroupID.y * BM, bt = gl_WorkGroupID.z;
  uint b1 = bt / p.batch2, b2 = bt % p.batch2;
  uint abase = p.oa + b1 * p.sa1 + b2 * p.sa2;
  uint bbase = p.ob + b1 * p.sb1 + b2 * p.sb2;

  float acc[TM][TN];
  for (uint i = 0; i < TM; i++)
    for (uint j = 0; j < TN; j++)
      acc[i][j] = 0.0;

  for (uint k0 = 0; k0 < p.K; k0 += BK) {
    for (uint t = tid; t < BM * BK; t += nth) {
      uint mm, kk;
      if (p.sak == 1) { kk = t % BK; mm = t / BK; } else { mm = t % BM; kk = t / BM; }
      uint gm = m0 + mm, gk = k0 + kk;
      As[kk * BM + mm] = (gm < p.M && gk < p.K) ? a[abase + gm * p.sam + gk * p.sak] : 0.0;
    }
    for (uint t = tid; t < BN * BK; t += nth) {
      uint nn, kk;
      if (p.sbn == 1) { nn = t % BN; kk = t / BN; } else { kk = t % BK; nn = t / BK; }
      uint gn = n0 + nn, gk = k0 + kk;
      Bs[kk * BN + nn] = (gn < p.N && gk < p.K) ? b[bbase + gk * p.sbk + gn * p.sbn] : 0.0;
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

  uint ybase = p.oy + bt * p.M * p.N;
  for (uint i = 0; i < TM; i++) {
    uint gm = m0 + ty + i * LY;
    if (gm >= p.M)
      continue;
    for (uint j = 0; j < TN; j++) {
      uint gn = n0 + tx + j * LX;
      if (gn >= p.N)
        continue;
      float v = p.alpha * acc[i][j];
      if (HAS_C != 0)
        v += p.beta * c[p.oc + gm * p.scm + gn * p.scn];
      y[ybase + gm * p.N + gn] = nn_act(v, ACT, p.act_a, p.act_b);
    }
  }
}

#version 450
#extension GL_GOOGLE_include_directive : require
// GEMM for few rows (M small, e.g. a fully-connected layer at batch 1) with
// B contiguous along K (ONNX Gemm transB=1, the usual FC weight layout):
// one workgroup per output element, its invocations split K and reduce in
// shared memory, so the weight rows stream through coalesced.
#include "common.glsl"

layout(local_size_x_id = 0) in;   // LX (a power of two), set by the host
layout(constant_id = 1) const uint ACT = 0;
layout(constant_id = 2) const uint HAS_C = 0;

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
  uint total;
} p;

shared float red[gl_WorkGroupSize.x];

void main() {
  uint tid = gl_LocalInvocationID.x;
  for (uint o = gl_WorkGroupID.x; o < p.total; o += gl_NumWorkGroups.x) {
    uint gn = o % p.N, rest = o / p.N;
    uint gm = rest % p.M, bt = rest / p.M;
    uint b1 = bt / p.batch2, b2 = bt % p.batch2;
    uint abase = p.oa + b1 * p.sa1 + b2 * p.sa2 + gm * p.sam;
    uint bbase = p.ob + b1 * p.sb1 + b2 * p.sb2 + gn * p.sbn;
    float s = 0.0;
    for (uint k = tid; k < p.K; k += gl_WorkGroupSize.x)
      s = fma(a[abase + k * p.sak], b[bbase + k * p.sbk], s);
    red[tid] = s;
    barrier();
    for (uint w = gl_WorkGroupSize.x / 2; w > 0; w >>= 1) {
      if (tid < w)
        red[tid] += red[tid + w];
      barrier();
    }
    if (tid == 0) {
      float v = p.alpha * red[0];
      if (HAS_C != 0)
        v += p.beta * c[p.oc + gm * p.scm + gn * p.scn];
      y[p.oy + o] = nn_act(v, ACT, p.act_a, p.act_b);
    }
    barrier();
  }
}

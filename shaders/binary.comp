#version 450
#extension GL_GOOGLE_include_directive : require
// y = act(a OP b) with numpy broadcasting: the host collapses the shapes
// and passes the output dims and per-operand element strides (0 on
// broadcast dims).  MODE 1: both operands dense in the output shape.
#include "common.glsl"

layout(local_size_x_id = 0) in;   // LX, set by the host
layout(constant_id = 1) const uint OP = 0;
layout(constant_id = 2) const uint ACT = 0;
layout(constant_id = 3) const uint RANK = 1;
layout(constant_id = 4) const uint MODE = 0;

layout(set = 0, binding = 0) readonly buffer A { float a[]; };
layout(set = 0, binding = 1) readonly buffer B { float b[]; };
layout(set = 0, binding = 2) writeonly buffer Y { float y[]; };
layout(push_constant) uniform P {
  uint n; uint oa; uint ob; uint oy; float act_a; float act_b;
  uint dims[NN_VK_MAX_RANK]; uint sa[NN_VK_MAX_RANK]; uint sb[NN_VK_MAX_RANK];
} p;

float op(float u, float v) {
  switch (OP) {
  case NN_VK_BIN_ADD: return u + v;
  case NN_VK_BIN_SUB: return u - v;
  case NN_VK_BIN_MUL: return u * v;
  case NN_VK_BIN_DIV: return u / v;
  case NN_VK_BIN_MAX: return isnan(u) || isnan(v) ? u + v : max(u, v);
  case NN_VK_BIN_MIN: return isnan(u) || isnan(v) ? u + v : min(u, v);
  case NN_VK_BIN_POW: {
    // pow() is undefined for u < 0 in GLSL; ONNX follows C pow.
    if (v == 0.0) return 1.0;
    if (u >= 0.0) return pow(u, v);
    float r = pow(-u, v);
    if (floor(v) != v) return 0.0 / 0.0;
    return mod(v, 2.0) == 1.0 ? -r : r;
  }
  case NN_VK_BIN_PRELU: return u < 0.0 ? u * v : u;
  case NN_VK_BIN_FMOD: return u - v * trunc(u / v);
  }
  return u;
}

void main() {
  for (uint i = NN_GID; i < p.n; i += NN_GSTRIDE) {
    uint ia, ib;
    if (MODE == 1) {
      ia = i;
      ib = i;
    } else {
      uint rem = i;
      ia = 0;
      ib = 0;
      for (int k = int(RANK) - 1; k >= 0; k--) {
        uint d = p.dims[k];
        uint c = rem % d;
        rem /= d;
        ia += c * p.sa[k];
        ib += c * p.sb[k];
      }
    }
    y[p.oy + i] = nn_act(op(a[p.oa + ia], b[p.ob + ib]), ACT, p.act_a, p.act_b);
  }
}

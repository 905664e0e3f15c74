#version 450
#extension GL_GOOGLE_include_directive : require
// Comparisons (Equal, Less, Greater, LessOrEqual, GreaterOrEqual) and logic
// (And, Or, Xor, Not) with numpy broadcasting, bool output.  Each invocation
// writes one word of the output: 4 bool bytes (the tail of the last word is
// the padding every allocation is rounded up with).  The host collapses the
// shapes and passes the output dims and the operands' element strides (0 on
// broadcast dims).  Operands: type ET (both the same); NOT reads a only.
#include "common.glsl"
#include "elem.glsl"

layout(local_size_x_id = 0) in;   // LX, set by the host
layout(constant_id = 1) const uint OP = 0;
layout(constant_id = 2) const uint ET = 0;
layout(constant_id = 3) const uint RANK = 1;

layout(set = 0, binding = 0) readonly buffer A { uint a[]; };
layout(set = 0, binding = 1) readonly buffer B { uint b[]; };
layout(set = 0, binding = 2) writeonly buffer Y { uint y[]; };
layout(push_constant) uniform P {
  uint n; uint oa; uint ob; uint oy;
  uint dims[NN_VK_MAX_RANK]; uint sa[NN_VK_MAX_RANK]; uint sb[NN_VK_MAX_RANK];
} p;

NN_ELEM_LOADER(load_a, a)
NN_ELEM_LOADER(load_b, b)

// -1, 0, 1; 2 when unordered (a NaN: every comparison is false)
int cmp(uvec2 u, uvec2 v) { return nn_elem_cmp(ET, u, v); }

bool op(uvec2 u, uvec2 v) {
  switch (OP) {
  case NN_VK_CMP_EQ: return cmp(u, v) == 0;
  case NN_VK_CMP_LT: return cmp(u, v) == -1;
  case NN_VK_CMP_GT: return cmp(u, v) == 1;
  case NN_VK_CMP_LE: { int c = cmp(u, v); return c == -1 || c == 0; }
  case NN_VK_CMP_GE: { int c = cmp(u, v); return c == 1 || c == 0; }
  case NN_VK_CMP_AND: return nn_elem_true(ET, u) && nn_elem_true(ET, v);
  case NN_VK_CMP_OR: return nn_elem_true(ET, u) || nn_elem_true(ET, v);
  case NN_VK_CMP_XOR: return nn_elem_true(ET, u) != nn_elem_true(ET, v);
  case NN_VK_CMP_NOT: return !nn_elem_true(ET, u);
  }
  return false;
}

void main() {
  uint words = (p.n + 3u) / 4u;
  for (uint w = NN_GID; w < words; w += NN_GSTRIDE) {
    uint bits = 0u;
    for (uint j = 0u; j < 4u; j++) {
      uint i = w * 4u + j;
      if (i >= p.n)
        break;
      uint rem = i, ia = 0u, ib = 0u;
      for (int k = int(RANK) - 1; k >= 0; k--) {
        uint d = p.dims[k];
        uint c = rem % d;
        rem /= d;
        ia += c * p.sa[k];
        ib += c * p.sb[k];
      }
      uvec2 u = load_a(ET, p.oa, ia);
      uvec2 v = OP == NN_VK_CMP_NOT ? uvec2(0u) : load_b(ET, p.ob, ib);
      if (op(u, v))
        bits |= 1u << (8u * j);
    }
    y[p.oy + w] = bits;
  }
}

#version 450
#extension GL_GOOGLE_include_directive : require
// Where: y = cond ? x : z with numpy broadcasting over the three inputs.
// cond is bool; x, z and y have element type ET (any size: 1- and 2-byte
// outputs are written a word, 4 or 2 elements, per invocation; the tail of
// the last word is allocation padding).  Dims and element strides (0 on
// broadcast dims) come collapsed from the host, rank <= NN_VK_WHERE_MAX_RANK.
#include "common.glsl"
#include "elem.glsl"

layout(local_size_x_id = 0) in;   // LX, set by the host
layout(constant_id = 1) const uint ET = 0;
layout(constant_id = 2) const uint RANK = 1;

layout(set = 0, binding = 0) readonly buffer C { uint cnd[]; };
layout(set = 0, binding = 1) readonly buffer X { uint x[]; };
layout(set = 0, binding = 2) readonly buffer Z { uint z[]; };
layout(set = 0, binding = 3) writeonly buffer Y { uint y[]; };
layout(push_constant) uniform P {
  uint n; uint oc; uint ox; uint oz; uint oy;
  uint dims[NN_VK_WHERE_MAX_RANK]; uint sc[NN_VK_WHERE_MAX_RANK];
  uint sx[NN_VK_WHERE_MAX_RANK]; uint sz[NN_VK_WHERE_MAX_RANK];
} p;

NN_ELEM_LOADER(load_c, cnd)
NN_ELEM_LOADER(load_x, x)
NN_ELEM_LOADER(load_z, z)

uvec2 pick(uint i) {
  uint rem = i, ic = 0u, ix = 0u, iz = 0u;
  for (int k = int(RANK) - 1; k >= 0; k--) {
    uint d = p.dims[k];
    uint c = rem % d;
    rem /= d;
    ic += c * p.sc[k];
    ix += c * p.sx[k];
    iz += c * p.sz[k];
  }
  uvec2 v = load_c(NN_VK_ET_BOOL, p.oc, ic).x != 0u ? load_x(ET, p.ox, ix) : load_z(ET, p.oz, iz);
  return nn_et_narrow(ET, v);   // the raw bits again (float16: float32 -> half, exact)
}

void main() {
  const uint SZ = nn_et_size(ET);
  const uint PER = SZ < 4u ? 4u / SZ : 1u;   // elements per invocation
  uint units = (p.n + PER - 1u) / PER;
  for (uint u = NN_GID; u < units; u += NN_GSTRIDE) {
    if (SZ == 8u) {
      uvec2 v = pick(u);
      y[p.oy + 2u * u] = v.x;
      y[p.oy + 2u * u + 1u] = v.y;
    } else if (SZ == 4u) {
      y[p.oy + u] = pick(u).x;
    } else {
      uint bits = 0u, mask = SZ == 1u ? 0xffu : 0xffffu;
      for (uint j = 0u; j < PER; j++) {
        uint i = u * PER + j;
        if (i >= p.n)
          break;
        bits |= (pick(i).x & mask) << (8u * SZ * j);
      }
      y[p.oy + u] = bits;
    }
  }
}

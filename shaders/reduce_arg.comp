#version 450
#extension GL_GOOGLE_include_directive : require
// ArgMax / ArgMin of x viewed as [outer, len, inner] along len -> int64
// indices [outer, inner], one invocation per output.  As the CPU kernel
// (cpu/reduce.c, numpy): the first (or, LAST, the last) extreme wins; a NaN
// beats every number and nothing beats a NaN, so the first NaN is reported.
#include "common.glsl"
#include "elem.glsl"

layout(local_size_x_id = 0) in;   // LX, set by the host
layout(constant_id = 1) const uint ET = 0;
layout(constant_id = 2) const uint IS_MAX = 1;
layout(constant_id = 3) const uint LAST = 0;

layout(set = 0, binding = 0) readonly buffer X { uint x[]; };
layout(set = 0, binding = 1) writeonly buffer Y { uint y[]; };
layout(push_constant) uniform P { uint n; uint len; uint inner; uint ox; uint oy; } p;

NN_ELEM_LOADER(load_x, x)

bool is_nan(uvec2 v) { return nn_elem_isnan(ET, v); }

// -1, 0, 1 for ordered values
int cmp(uvec2 u, uvec2 v) { return nn_elem_cmp(ET, u, v); }

void main() {
  for (uint o = NN_GID; o < p.n; o += NN_GSTRIDE) {
    uint base = (o / p.inner) * p.len * p.inner + o % p.inner;
    uvec2 best = load_x(ET, p.ox, base);
    uint at = 0u;
    for (uint j = 1u; j < p.len && !is_nan(best); j++) {
      uvec2 v = load_x(ET, p.ox, base + j * p.inner);
      bool take;
      if (is_nan(v)) {
        take = true;
      } else {
        int c = cmp(v, best);
        if (IS_MAX != 0)
          take = LAST != 0 ? c >= 0 : c > 0;
        else
          take = LAST != 0 ? c <= 0 : c < 0;
      }
      if (take) {
        best = v;
        at = j;
      }
    }
    y[p.oy + 2u * o] = at;
    y[p.oy + 2u * o + 1u] = 0u;
  }
}

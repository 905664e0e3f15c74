// elem.glsl - typed elements on buffers of 32-bit words, for the kernels that
// are not float32-only (binary_compare, binary_where, cast, reduce_arg).
// Needs GL_GOOGLE_include_directive; include after common.glsl.
//
// Element types are the NN_VK_ET_* codes (nn_vk_kinds.h), specialization
// constants at every call site, so the switches fold away.  Storage is
// little-endian: 1- and 2-byte elements packed into words (element i of a
// byte tensor is byte i % 4 of word i / 4), 8-byte elements as (low, high)
// word pairs.  Views start on a word (the host checks it).
//
// A loaded element is its "canonical" value as uvec2(low, high), in the
// type's domain (the CPU's, cpu/ew_conv.h): integers sign- or zero-extended
// to 64 bits, bool as 0 or 1; float32, float16 and bfloat16 as float32 bits
// in .x; double as its 64 bits.  Storing narrows it back (nn_et_narrow).
// Without shaderInt64 / shaderFloat64, 64-bit values are handled as word
// pairs with integer arithmetic, which also keeps every conversion exact
// (no flush-to-zero, rounding to nearest even as the host does).

uint nn_et_size(uint et) {
  switch (et) {
  case NN_VK_ET_BOOL: case NN_VK_ET_I8: case NN_VK_ET_U8: return 1u;
  case NN_VK_ET_I16: case NN_VK_ET_U16: case NN_VK_ET_F16: case NN_VK_ET_BF16: return 2u;
  case NN_VK_ET_I64: case NN_VK_ET_U64: case NN_VK_ET_F64: return 8u;
  }
  return 4u;
}

bool nn_et_signed(uint et) {
  return et == NN_VK_ET_I8 || et == NN_VK_ET_I16 || et == NN_VK_ET_I32 || et == NN_VK_ET_I64;
}

// float32 domain (float32, float16, bfloat16: canonical = float32 bits)
bool nn_et_f32dom(uint et) {
  return et == NN_VK_ET_F32 || et == NN_VK_ET_F16 || et == NN_VK_ET_BF16;
}

// ---- 64-bit integer arithmetic on (low, high) pairs -----------------------------

uvec2 nn_neg64(uvec2 v) {
  uint lo = ~v.x + 1u;
  return uvec2(lo, ~v.y + (lo == 0u ? 1u : 0u));
}

uvec2 nn_sub64(uvec2 a, uvec2 b) {
  return uvec2(a.x - b.x, a.y - b.y - (a.x < b.x ? 1u : 0u));
}

// shifts by 0..63
uvec2 nn_shr64(uvec2 v, int s) {
  if (s == 0)
    return v;
  if (s >= 32)
    return uvec2(v.y >> uint(s - 32), 0u);
  return uvec2((v.x >> uint(s)) | (v.y << uint(32 - s)), v.y >> uint(s));
}

uvec2 nn_shl64(uvec2 v, int s) {
  if (s == 0)
    return v;
  if (s >= 32)
    return uvec2(0u, v.x << uint(s - 32));
  return uvec2(v.x << uint(s), (v.y << uint(s)) | (v.x >> uint(32 - s)));
}

int nn_cmp64u(uvec2 a, uvec2 b) {
  if (a.y != b.y)
    return a.y < b.y ? -1 : 1;
  if (a.x != b.x)
    return a.x < b.x ? -1 : 1;
  return 0;
}

int nn_cmp64s(uvec2 a, uvec2 b) {
  if (a.y != b.y)
    return int(a.y) < int(b.y) ? -1 : 1;
  if (a.x != b.x)
    return a.x < b.x ? -1 : 1;
  return 0;
}

// Top set bit of a nonzero 64-bit value.
int nn_msb64(uvec2 m) { return m.y != 0u ? 32 + findMSB(m.y) : findMSB(m.x); }

// m >> s rounded to nearest even (s in 1..63); the carry may reach bit 64-s.
uvec2 nn_shr64_rne(uvec2 m, int s) {
  uvec2 q = nn_shr64(m, s);
  uvec2 r = nn_sub64(m, nn_shl64(q, s));
  int c = nn_cmp64u(r, nn_shl64(uvec2(1u, 0u), s - 1));
  if (c > 0 || (c == 0 && (q.x & 1u) != 0u)) {
    q.x += 1u;
    if (q.x == 0u)
      q.y += 1u;
  }
  return q;
}

// ---- half types (bit-exact with the host's dtype.c / ew_conv.h) ---------------------

uint nn_h2f_bits(uint h) {
  uint sign = (h & 0x8000u) << 16, ex = (h >> 10) & 0x1fu, man = h & 0x3ffu;
  if (ex == 0u) {
    if (man == 0u)
      return sign;
    int e = -1;   // subnormal: normalize
    do {
      e++;
      man <<= 1;
    } while ((man & 0x400u) == 0u);
    return sign | (uint(127 - 15 - e) << 23) | ((man & 0x3ffu) << 13);
  }
  if (ex == 0x1fu)
    return sign | 0x7f800000u | (man << 13);
  return sign | ((ex + uint(127 - 15)) << 23) | (man << 13);
}

uint nn_f2h_bits(uint x) {
  uint sign = (x >> 16) & 0x8000u, ex = (x >> 23) & 0xffu, man = x & 0x7fffffu;
  if (ex == 0xffu)   // inf or nan (nan kept quiet)
    return sign | 0x7c00u | (man != 0u ? 0x200u | (man >> 13) : 0u);
  int e = int(ex) - 127 + 15;
  if (e >= 0x1f)
    return sign | 0x7c00u;
  if (e <= 0) {
    if (e < -10)
      return sign;
    man |= 0x800000u;
    uint shift = uint(14 - e);
    uint half_ = man >> shift, rem = man & ((1u << shift) - 1u), mid = 1u << (shift - 1u);
    if (rem > mid || (rem == mid && (half_ & 1u) != 0u))
      half_++;
    return sign | half_;
  }
  uint h = sign | (uint(e) << 10) | (man >> 13);
  uint rem = man & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (h & 1u) != 0u))
    h++;
  return h;
}

uint nn_f2bf_bits(uint x) {
  if ((x & 0x7fffffffu) > 0x7f800000u)
    return (x >> 16) | 0x40u;
  return (x + 0x7fffu + ((x >> 16) & 1u)) >> 16;
}

// ---- double <-> float / integers, on the bits -----------------------------------

bool nn_f64_isnan(uvec2 d) { return (d.y & 0x7fffffffu) > 0x7ff00000u || ((d.y & 0x7fffffffu) == 0x7ff00000u && d.x != 0u); }

uvec2 nn_f2d_bits(uint f) {
  uint sign = f & 0x80000000u, ex = (f >> 23) & 0xffu, man = f & 0x7fffffu;
  if (ex == 0xffu)
    return uvec2(man << 29, sign | 0x7ff00000u | (man >> 3));
  if (ex == 0u) {
    if (man == 0u)
      return uvec2(0u, sign);
    int p = findMSB(man);                     // value = man * 2^-149
    uvec2 m = nn_shl64(uvec2(man, 0u), 52 - p);
    uint e = uint(p - 149 + 1023);
    return uvec2(m.x, sign | (e << 20) | (m.y & 0xfffffu));
  }
  uint e = ex - 127u + 1023u;
  return uvec2(man << 29, sign | (e << 20) | (man >> 3));
}

// double -> float, rounded to nearest even (a C cast)
uint nn_d2f_bits(uvec2 d) {
  uint sign = d.y & 0x80000000u;
  int e = int((d.y >> 20) & 0x7ffu);
  if (e == 0x7ff)
    return nn_f64_isnan(d) ? sign | 0x7fc00000u | ((d.y & 0xfffffu) << 3) | (d.x >> 29)
                           : sign | 0x7f800000u;
  if (e == 0)
    return sign;   // double subnormals are far below float's range
  uvec2 sig = uvec2(d.x, (d.y & 0xfffffu) | 0x100000u);   // 53 bits
  int E = e - 1023 + 127;                                   // float exponent field
  int shift = E > 0 ? 29 : 29 + 1 - E;
  if (shift > 60)
    return sign;
  uint q = nn_shr64_rne(sig, shift).x;
  if (E <= 0)
    return sign | q;   // subnormal (a carry to 2^23 is the smallest normal)
  uint bits = (uint(E) << 23) + q - 0x800000u;   // a mantissa carry bumps the exponent
  if (bits >= 0x7f800000u)
    return sign | 0x7f800000u;
  return sign | bits;
}

// ---- integer <-> float conversions ---------------------------------------------------

// Unsigned 64-bit -> float, rounded to nearest even (a C cast on the host).
float nn_u64_to_f(uvec2 m) {
  if (m.y == 0u && m.x < 16777216u)
    return float(m.x);
  int s = nn_msb64(m) - 23;   // keep 24 bits
  return ldexp(float(nn_shr64_rne(m, s).x), s);
}

// Canonical integer of type et -> float.
float nn_i2f(uint et, uvec2 v) {
  if (nn_et_signed(et) && (v.y >> 31) != 0u)
    return -nn_u64_to_f(nn_neg64(v));
  return nn_u64_to_f(v);
}

// Canonical integer of type et -> double bits, rounded to nearest even.
uvec2 nn_i2d(uint et, uvec2 v) {
  uint sign = 0u;
  if (nn_et_signed(et) && (v.y >> 31) != 0u) {
    sign = 0x80000000u;
    v = nn_neg64(v);
  }
  if ((v.x | v.y) == 0u)
    return uvec2(0u, sign);
  int p = nn_msb64(v);
  uvec2 q;
  if (p <= 52) {
    q = nn_shl64(v, 52 - p);
  } else {
    q = nn_shr64_rne(v, p - 52);
    if ((q.y >> 21) != 0u) {   // rounded up to 2^53
      q = nn_shr64(q, 1);
      p++;
    }
  }
  return uvec2(q.x, sign | (uint(p + 1023) << 20) | (q.y & 0xfffffu));
}

// |a| < 2^64, integral -> 64-bit magnitude
uvec2 nn_fmag64(float a) {
  if (a < 4294967296.0)
    return uvec2(uint(a), 0u);
  float h = floor(a * (1.0 / 4294967296.0));
  return uvec2(uint(a - h * 4294967296.0), uint(h));
}

// float -> int64, truncated toward zero, saturating; NaN -> 0.
uvec2 nn_f2i64(float f) {
  if (isnan(f))
    return uvec2(0u);
  if (f >= 9223372036854775808.0)
    return uvec2(0xffffffffu, 0x7fffffffu);
  if (f < -9223372036854775808.0)
    return uvec2(0u, 0x80000000u);
  float t = trunc(f);
  uvec2 m = nn_fmag64(abs(t));
  return t < 0.0 ? nn_neg64(m) : m;
}

// float -> uint64: negatives through int64 (wrapping), saturating; NaN -> 0.
uvec2 nn_f2u64(float f) {
  if (isnan(f))
    return uvec2(0u);
  if (f >= 18446744073709551616.0)
    return uvec2(0xffffffffu);
  if (f >= 9223372036854775808.0)
    return nn_fmag64(trunc(f));
  return nn_f2i64(f);
}

// |double| truncated to a 64-bit magnitude (|d| < 2^64)
uvec2 nn_dmag64(uvec2 d) {
  int e = int((d.y >> 20) & 0x7ffu) - 1075;   // value = sig * 2^e
  if (e < -52)
    return uvec2(0u);
  uvec2 sig = uvec2(d.x, (d.y & 0xfffffu) | 0x100000u);
  return e >= 0 ? nn_shl64(sig, e) : nn_shr64(sig, -e);
}

// double -> int64 / uint64 with the host's saturation (ew_f64_to_i64/u64)
uvec2 nn_d2i64(uvec2 d) {
  if (nn_f64_isnan(d))
    return uvec2(0u);
  bool neg = (d.y >> 31) != 0u;
  int ex = int((d.y >> 20) & 0x7ffu);
  if (ex >= 1023 + 63)   // |d| >= 2^63
    return neg ? uvec2(0u, 0x80000000u) : uvec2(0xffffffffu, 0x7fffffffu);
  uvec2 m = nn_dmag64(d);
  return neg ? nn_neg64(m) : m;
}

uvec2 nn_d2u64(uvec2 d) {
  if (nn_f64_isnan(d))
    return uvec2(0u);
  bool neg = (d.y >> 31) != 0u;
  int ex = int((d.y >> 20) & 0x7ffu);
  if (!neg && ex >= 1023 + 64)
    return uvec2(0xffffffffu);
  if (!neg && ex >= 1023 + 63)
    return nn_dmag64(d);
  return nn_d2i64(d);
}

// ---- loading, converting, storing ----------------------------------------------------

// Raw element bits (in the low 8 * size bits of v; 8-byte types elsewhere)
// -> canonical value.
uvec2 nn_et_widen(uint et, uint v) {
  switch (et) {
  case NN_VK_ET_BOOL: return uvec2((v & 0xffu) != 0u ? 1u : 0u, 0u);
  case NN_VK_ET_F32: return uvec2(v, 0u);
  case NN_VK_ET_F16: return uvec2(nn_h2f_bits(v & 0xffffu), 0u);
  case NN_VK_ET_BF16: return uvec2((v & 0xffffu) << 16, 0u);
  }
  if (nn_et_signed(et)) {
    int sh = 32 - 8 * int(nn_et_size(et));
    int s = int(v << uint(sh)) >> sh;
    return uvec2(uint(s), s < 0 ? 0xffffffffu : 0u);
  }
  return uvec2(v, 0u);
}

// Canonical value -> the element's raw bits (types up to 4 bytes: .x of the
// result; 8-byte types: both words).
uvec2 nn_et_narrow(uint et, uvec2 v) {
  if (et == NN_VK_ET_F16)
    return uvec2(nn_f2h_bits(v.x), 0u);
  if (et == NN_VK_ET_BF16)
    return uvec2(nn_f2bf_bits(v.x), 0u);
  return v;
}

// Element i of type et at word offset o of buffer BUF (a uint[] block):
// defines `uvec2 FN(uint et, uint o, uint i)`, the canonical value.
#define NN_ELEM_LOADER(FN, BUF)                                                   \
  uvec2 FN(uint et, uint o, uint i) {                                             \
    uint sz = nn_et_size(et);                                                     \
    if (sz == 8u)                                                                 \
      return uvec2(BUF[o + 2u * i], BUF[o + 2u * i + 1u]);                        \
    if (sz == 4u)                                                                 \
      return nn_et_widen(et, BUF[o + i]);                                         \
    uint byte_ = i * sz;                                                          \
    uint w_ = BUF[o + (byte_ >> 2u)] >> ((byte_ & 3u) * 8u);                      \
    return nn_et_widen(et, w_ & (sz == 1u ? 0xffu : 0xffffu));                    \
  }

// Truth value: nonzero (NaN included).
bool nn_elem_true(uint et, uvec2 v) {
  if (nn_et_f32dom(et))
    return (v.x & 0x7fffffffu) != 0u;
  if (et == NN_VK_ET_F64)
    return ((v.y & 0x7fffffffu) | v.x) != 0u;
  return (v.x | v.y) != 0u;
}

bool nn_elem_isnan(uint et, uvec2 v) {
  if (nn_et_f32dom(et))
    return (v.x & 0x7fffffffu) > 0x7f800000u;
  if (et == NN_VK_ET_F64)
    return nn_f64_isnan(v);
  return false;
}

// Order of two canonical values of type et: -1, 0, 1; 2 when unordered
// (a NaN).  +0 and -0 are equal.
int nn_elem_cmp(uint et, uvec2 u, uvec2 v) {
  if (nn_elem_isnan(et, u) || nn_elem_isnan(et, v))
    return 2;
  if (nn_et_f32dom(et) || et == NN_VK_ET_F64) {
    bool d = et == NN_VK_ET_F64;
    uint su = d ? u.y : u.x, sv = d ? v.y : v.x;
    uvec2 mu = d ? uvec2(u.x, u.y & 0x7fffffffu) : uvec2(u.x & 0x7fffffffu, 0u);
    uvec2 mv = d ? uvec2(v.x, v.y & 0x7fffffffu) : uvec2(v.x & 0x7fffffffu, 0u);
    if ((mu.x | mu.y | mv.x | mv.y) == 0u)
      return 0;
    bool nu = (su >> 31) != 0u && (mu.x | mu.y) != 0u, nv = (sv >> 31) != 0u && (mv.x | mv.y) != 0u;
    if (nu != nv)
      return nu ? -1 : 1;
    int c = nn_cmp64u(mu, mv);
    return nu ? -c : c;
  }
  return nn_et_signed(et) ? nn_cmp64s(u, v) : nn_cmp64u(u, v);
}

// Canonical value of type `from` -> canonical value of type `to` (the
// host's Cast: float -> integer truncates and saturates to 64 bits, NaN -> 0;
// to float rounds to nearest even; anything -> bool is "nonzero").  Integer
// targets keep all 64 bits; storing truncates to the target width.
uvec2 nn_elem_convert(uint from, uint to, uvec2 v) {
  if (from == to)
    return v;
  if (to == NN_VK_ET_BOOL)
    return uvec2(nn_elem_true(from, v) ? 1u : 0u, 0u);
  bool f32_from = nn_et_f32dom(from), f64_from = from == NN_VK_ET_F64;
  if (nn_et_f32dom(to)) {
    if (f32_from)
      return v;
    if (f64_from)
      return uvec2(nn_d2f_bits(v), 0u);
    return uvec2(floatBitsToUint(nn_i2f(from, v)), 0u);
  }
  if (to == NN_VK_ET_F64) {
    if (f32_from)
      return nn_f2d_bits(v.x);
    return nn_i2d(from, v);
  }
  if (f32_from) {
    float f = uintBitsToFloat(v.x);
    return nn_et_signed(to) ? nn_f2i64(f) : nn_f2u64(f);
  }
  if (f64_from)
    return nn_et_signed(to) ? nn_d2i64(v) : nn_d2u64(v);
  return v;
}

/* ew_conv.h - private to the elementwise family (unary.c, binary.c, cast.c).
 *
 * Kernels of this family compute in four "domains": float, double, int64 and
 * uint64.  Every element type the runtime holds maps to one of them (float16
 * and bfloat16 compute in float, narrow integers in the 64-bit integer of
 * their signedness, bool in uint64), so an operator is written once per
 * domain instead of once per dtype.  A dtype whose storage already is its
 * domain type (float32, double, int64, uint64) is computed directly on the
 * tensor memory; the others travel through small stack chunks of EW_CHUNK
 * elements.
 *
 * Integer results are stored by truncation to the destination width, which
 * is arithmetic modulo 2^bits: int8 100 + 100 gives -56 exactly as a
 * wrapping int8 add would.
 */
#ifndef NN_CPU_EW_CONV_H
#define NN_CPU_EW_CONV_H

#include <math.h>
#include <string.h>

#include "nn_internal.h"

typedef enum ew_dom {
  EW_NONE = 0,
  EW_F32,
  EW_F64,
  EW_I64,
  EW_U64,
} ew_dom;

/* Elements per conversion chunk; buffers of this many 8-byte values live on
 * the stack of the running thread, so keep it small. */
#define EW_CHUNK 128

/* Elements per parallel work item: below this, threading costs more than it
 * saves for memory-bound loops. */
#define EW_GRAIN ((int64_t)1 << 15)

static inline ew_dom ew_dom_of(nn_dtype dt) {
  switch (dt) {
  case NN_DTYPE_FLOAT: case NN_DTYPE_FLOAT16: case NN_DTYPE_BFLOAT16:
    return EW_F32;
  case NN_DTYPE_DOUBLE:
    return EW_F64;
  case NN_DTYPE_INT8: case NN_DTYPE_INT16: case NN_DTYPE_INT32: case NN_DTYPE_INT64:
    return EW_I64;
  case NN_DTYPE_UINT8: case NN_DTYPE_UINT16: case NN_DTYPE_UINT32: case NN_DTYPE_UINT64:
  case NN_DTYPE_BOOL:
    return EW_U64;
  default:
    return EW_NONE;
  }
}

/* True when the storage of dt is the domain's own type: no conversion. */
static inline bool ew_native(nn_dtype dt, ew_dom d) {
  return (dt == NN_DTYPE_FLOAT && d == EW_F32) || (dt == NN_DTYPE_DOUBLE && d == EW_F64) ||
         (dt == NN_DTYPE_INT64 && d == EW_I64) || (dt == NN_DTYPE_UINT64 && d == EW_U64);
}

static inline bool ew_dom_is_float(ew_dom d) { return d == EW_F32 || d == EW_F64; }

/* Half-precision conversions used per element on the chunk paths: inline
 * and nearly branch-free, bit-exact with nn_f16_to_f32 / nn_f32_to_f16 of
 * dtype.c (round to nearest even, NaN kept quiet).  Subnormal halves are
 * built with normal-float arithmetic, so they survive flush-to-zero modes. */
static inline float ew_bits_f32(uint32_t u) { float f; memcpy(&f, &u, 4); return f; }
static inline uint32_t ew_f32_bits(float f) { uint32_t u; memcpy(&u, &f, 4); return u; }

static inline float ew_h2f(uint16_t h) {
  const uint32_t shifted_exp = 0x7c00u << 13;
  uint32_t u = (uint32_t)(h & 0x7fffu) << 13;
  const uint32_t exp = u & shifted_exp;
  u += (uint32_t)(127 - 15) << 23;
  if (exp == shifted_exp) {        /* inf, nan */
    u += (uint32_t)(128 - 16) << 23;
  } else if (exp == 0) {           /* zero, subnormal: renormalize via 2^-14 */
    u += 1u << 23;
    u = ew_f32_bits(ew_bits_f32(u) - ew_bits_f32(113u << 23));
  }
  return ew_bits_f32(u | (uint32_t)(h & 0x8000u) << 16);
}

static inline uint16_t ew_f2h(float f) {
  uint32_t u = ew_f32_bits(f);
  const uint32_t sign = u & 0x80000000u;
  u ^= sign;
  uint16_t o;
  if (u >= (uint32_t)(127 + 16) << 23) {           /* overflow, inf, nan */
    o = u > 0x7f800000u ? (uint16_t)(0x7c00u | 0x200u | ((u >> 13) & 0x3ffu)) : 0x7c00u;
  } else if (u < (uint32_t)113 << 23) {            /* subnormal or zero half */
    /* Adding 0.5 aligns the 10 mantissa bits at the bottom; the FPU's
     * round-to-nearest-even does the rounding. */
    const float magic = ew_bits_f32((uint32_t)((127 - 15) + (23 - 10) + 1) << 23);
    o = (uint16_t)(ew_f32_bits(ew_bits_f32(u) + magic) - ew_f32_bits(magic));
  } else {
    const uint32_t odd = (u >> 13) & 1u;
    u += ((uint32_t)(15 - 127) << 23) + 0xfffu + odd;
    o = (uint16_t)(u >> 13);
  }
  return (uint16_t)(o | sign >> 16);
}

static inline float ew_bf2f(uint16_t h) { return ew_bits_f32((uint32_t)h << 16); }

static inline uint16_t ew_f2bf(float f) {
  uint32_t x = ew_f32_bits(f);
  if ((x & 0x7fffffffu) > 0x7f800000u)
    return (uint16_t)((x >> 16) | 0x40u);
  return (uint16_t)((x + 0x7fffu + ((x >> 16) & 1u)) >> 16);
}

/* Float to integer conversions are undefined behaviour in C outside the
 * target range; these saturate instead (NaN gives 0), which is also what the
 * hardware of most targets does for in-range-of-int64 values. */
static inline int64_t ew_f64_to_i64(double v) {
  if (v != v)
    return 0;
  if (v >= 9223372036854775808.0)
    return INT64_MAX;
  if (v < -9223372036854775808.0)
    return INT64_MIN;
  return (int64_t)v;
}

/* Negative values go through int64 and wrap, as numpy's astype does on
 * common platforms (-1.0 -> uint8 255). */
static inline uint64_t ew_f64_to_u64(double v) {
  if (v != v)
    return 0;
  if (v >= 18446744073709551616.0)
    return UINT64_MAX;
  if (v >= 9223372036854775808.0)
    return (uint64_t)v;
  return (uint64_t)ew_f64_to_i64(v);
}

#define EW_CVT_LOOP(ST, DT, EXPR)                                                  \
  do {                                                                             \
    const ST *s_ = (const ST *)src;                                                \
    DT *d_ = (DT *)dst;                                                            \
    for (int64_t i_ = 0; i_ < n; i_++) {                                           \
      ST v_ = s_[i_];                                                              \
      d_[i_] = (EXPR);                                                             \
    }                                                                              \
  } while (0)

/* n contiguous elements of dtype dt -> n values of domain ew_dom_of(dt). */
static inline void ew_load(nn_dtype dt, const void *src, void *dst, int64_t n) {
  switch (dt) {
  case NN_DTYPE_FLOAT: memcpy(dst, src, (size_t)n * 4); break;
  case NN_DTYPE_DOUBLE: memcpy(dst, src, (size_t)n * 8); break;
  case NN_DTYPE_INT64: memcpy(dst, src, (size_t)n * 8); break;
  case NN_DTYPE_UINT64: memcpy(dst, src, (size_t)n * 8); break;
  case NN_DTYPE_FLOAT16: EW_CVT_LOOP(uint16_t, float, ew_h2f(v_)); break;
  case NN_DTYPE_BFLOAT16: EW_CVT_LOOP(uint16_t, float, ew_bf2f(v_)); break;
  case NN_DTYPE_INT8: EW_CVT_LOOP(int8_t, int64_t, v_); break;
  case NN_DTYPE_INT16: EW_CVT_LOOP(int16_t, int64_t, v_); break;
  case NN_DTYPE_INT32: EW_CVT_LOOP(int32_t, int64_t, v_); break;
  case NN_DTYPE_UINT8: EW_CVT_LOOP(uint8_t, uint64_t, v_); break;
  case NN_DTYPE_UINT16: EW_CVT_LOOP(uint16_t, uint64_t, v_); break;
  case NN_DTYPE_UINT32: EW_CVT_LOOP(uint32_t, uint64_t, v_); break;
  case NN_DTYPE_BOOL: EW_CVT_LOOP(uint8_t, uint64_t, v_ != 0); break;
  default: break;
  }
}

/* n values of domain ew_dom_of(dt) -> n contiguous elements of dtype dt.
 * Narrow integers truncate (modulo 2^bits); half types round to nearest even. */
static inline void ew_store(nn_dtype dt, const void *src, void *dst, int64_t n) {
  switch (dt) {
  case NN_DTYPE_FLOAT: memcpy(dst, src, (size_t)n * 4); break;
  case NN_DTYPE_DOUBLE: memcpy(dst, src, (size_t)n * 8); break;
  case NN_DTYPE_INT64: memcpy(dst, src, (size_t)n * 8); break;
  case NN_DTYPE_UINT64: memcpy(dst, src, (size_t)n * 8); break;
  case NN_DTYPE_FLOAT16: EW_CVT_LOOP(float, uint16_t, ew_f2h(v_)); break;
  case NN_DTYPE_BFLOAT16: EW_CVT_LOOP(float, uint16_t, ew_f2bf(v_)); break;
  case NN_DTYPE_INT8: EW_CVT_LOOP(int64_t, int8_t, (int8_t)(uint8_t)v_); break;
  case NN_DTYPE_INT16: EW_CVT_LOOP(int64_t, int16_t, (int16_t)(uint16_t)v_); break;
  case NN_DTYPE_INT32: EW_CVT_LOOP(int64_t, int32_t, (int32_t)(uint32_t)v_); break;
  case NN_DTYPE_UINT8: EW_CVT_LOOP(uint64_t, uint8_t, (uint8_t)v_); break;
  case NN_DTYPE_UINT16: EW_CVT_LOOP(uint64_t, uint16_t, (uint16_t)v_); break;
  case NN_DTYPE_UINT32: EW_CVT_LOOP(uint64_t, uint32_t, (uint32_t)v_); break;
  case NN_DTYPE_BOOL: EW_CVT_LOOP(uint64_t, uint8_t, v_ != 0); break;
  default: break;
  }
}

/* n values from domain `from` to domain `to` (src and dst must not overlap
 * unless from == to).  Float -> integer saturates (see ew_f64_to_i64). */
static inline void ew_convert(ew_dom from, const void *src, ew_dom to, void *dst, int64_t n) {
  if (from == to) {
    if (src != dst)
      memmove(dst, src, (size_t)n * (from == EW_F32 ? 4 : 8));
    return;
  }
  switch (from) {
  case EW_F32:
    if (to == EW_F64) EW_CVT_LOOP(float, double, (double)v_);
    else if (to == EW_I64) EW_CVT_LOOP(float, int64_t, ew_f64_to_i64(v_));
    else EW_CVT_LOOP(float, uint64_t, ew_f64_to_u64(v_));
    break;
  case EW_F64:
    if (to == EW_F32) EW_CVT_LOOP(double, float, (float)v_);
    else if (to == EW_I64) EW_CVT_LOOP(double, int64_t, ew_f64_to_i64(v_));
    else EW_CVT_LOOP(double, uint64_t, ew_f64_to_u64(v_));
    break;
  case EW_I64:
    if (to == EW_F32) EW_CVT_LOOP(int64_t, float, (float)v_);
    else if (to == EW_F64) EW_CVT_LOOP(int64_t, double, (double)v_);
    else EW_CVT_LOOP(int64_t, uint64_t, (uint64_t)v_);
    break;
  case EW_U64:
    if (to == EW_F32) EW_CVT_LOOP(uint64_t, float, (float)v_);
    else if (to == EW_F64) EW_CVT_LOOP(uint64_t, double, (double)v_);
    else EW_CVT_LOOP(uint64_t, int64_t, (int64_t)v_);
    break;
  default:
    break;
  }
}

/* Truth value of n domain values (nonzero, NaN included) as bool bytes. */
static inline void ew_to_bool(ew_dom from, const void *src, uint8_t *dst, int64_t n) {
  switch (from) {
  case EW_F32: { const float *s = src; for (int64_t i = 0; i < n; i++) dst[i] = s[i] != 0.0f; break; }
  case EW_F64: { const double *s = src; for (int64_t i = 0; i < n; i++) dst[i] = s[i] != 0.0; break; }
  case EW_I64: { const int64_t *s = src; for (int64_t i = 0; i < n; i++) dst[i] = s[i] != 0; break; }
  case EW_U64: { const uint64_t *s = src; for (int64_t i = 0; i < n; i++) dst[i] = s[i] != 0; break; }
  default: break;
  }
}

/* m elements of dtype dt at src as domain d values: src itself when the
 * storage is native, else converted into buf (EW_CHUNK values) with tmp as
 * the intermediate for a change of domain. */
static inline const void *ew_fetch(nn_dtype dt, const void *src, int64_t m, ew_dom d,
                                   void *buf, void *tmp) {
  if (ew_native(dt, d))
    return src;
  ew_dom own = ew_dom_of(dt);
  if (own == d) {
    ew_load(dt, src, buf, m);
    return buf;
  }
  ew_load(dt, src, tmp, m);
  ew_convert(own, tmp, d, buf, m);
  return buf;
}

/* Inverse of ew_fetch: m domain d values at src into dtype dt at dst
 * (tmp: EW_CHUNK values, the intermediate for a change of domain). */
static inline void ew_put(ew_dom d, const void *src, nn_dtype dt, void *dst, int64_t m, void *tmp) {
  if (ew_native(dt, d)) {
    if (src != dst)
      memmove(dst, src, (size_t)m * (d == EW_F32 ? 4 : 8));
    return;
  }
  ew_dom own = ew_dom_of(dt);
  if (dt == NN_DTYPE_BOOL && own != d) {
    ew_to_bool(d, src, dst, m);
    return;
  }
  if (own != d) {
    ew_convert(d, src, own, tmp, m);
    src = tmp;
  }
  ew_store(dt, src, dst, m);
}

/* dtypes every kernel of the family can hold: numeric and bool. */
static inline bool ew_dtype_ok(nn_dtype dt) { return ew_dom_of(dt) != EW_NONE; }

#endif /* NN_CPU_EW_CONV_H */

/* kernel_util.h - small helpers shared by the CPU kernel families that work
 * element by element on any dtype (attention.c, recurrent.c, loss.c,
 * linalg.c, quant.c, sampling.c, nms.c, select.c, signal.c, text.c).
 *
 * The element accessors (ku_ldf, ku_stf, ku_ldd, ku_std) stay static inline:
 * the kernels call them once per element inside their loops, where an
 * out-of-line call would cost more than the switch itself.  The helpers used
 * only at prepare are defined once, in kernel_util.c. */
#ifndef NN_CPU_KERNEL_UTIL_H
#define NN_CPU_KERNEL_UTIL_H

#include <float.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "cpu/ops.h"

/* Optional inputs and outputs: absent when omitted in the model or trailing. */
static inline nn_value *ku_in(const nn_node *n, int i) {
  return i < n->n_in ? n->x[i] : NULL;
}
static inline nn_value *ku_out(const nn_node *n, int i) {
  return i < n->n_out ? n->y[i] : NULL;
}

/* dst[t] = row[base + t * step] for t < len, 0 where that index falls
 * outside [0, n): one output row of an im2col tap or of a zero-padded,
 * strided copy (cpu/conv.c, cpu/conv_smallc.c).  step >= 1. */
static inline void ku_gather_row(float *dst, const float *row, int64_t n, int64_t base,
                                 int64_t step, int64_t len) {
  int64_t lo = base < 0 ? (-base + step - 1) / step : 0;
  int64_t hi = base >= n ? 0 : (n - 1 - base) / step + 1;
  if (lo > len)
    lo = len;
  if (hi > len)
    hi = len;
  if (hi < lo)
    hi = lo;
  for (int64_t t = 0; t < lo; t++)
    dst[t] = 0.0f;
  if (step == 1)
    memcpy(dst + lo, row + base + lo, (size_t)(hi - lo) * sizeof(float));
  else
    for (int64_t t = lo; t < hi; t++)
      dst[t] = row[base + t * step];
  for (int64_t t = hi; t < len; t++)
    dst[t] = 0.0f;
}

static inline bool ku_is_real(nn_dtype dt) {
  return dt == NN_DTYPE_FLOAT || dt == NN_DTYPE_DOUBLE || dt == NN_DTYPE_FLOAT16 ||
         dt == NN_DTYPE_BFLOAT16;
}

static inline bool ku_is_index(nn_dtype dt) {
  return dt == NN_DTYPE_INT64 || dt == NN_DTYPE_INT32;
}

/* Element i of a real tensor as float (the compute type of most kernels). */
static inline float ku_ldf(const void *p, nn_dtype dt, int64_t i) {
  switch (dt) {
  case NN_DTYPE_FLOAT: return ((const float *)p)[i];
  case NN_DTYPE_FLOAT16: return nn_f16_to_f32(((const uint16_t *)p)[i]);
  case NN_DTYPE_BFLOAT16: return nn_bf16_to_f32(((const uint16_t *)p)[i]);
  case NN_DTYPE_DOUBLE: return (float)((const double *)p)[i];
  default: return 0.0f;
  }
}

static inline void ku_stf(void *p, nn_dtype dt, int64_t i, float v) {
  switch (dt) {
  case NN_DTYPE_FLOAT: ((float *)p)[i] = v; break;
  case NN_DTYPE_FLOAT16: ((uint16_t *)p)[i] = nn_f32_to_f16(v); break;
  case NN_DTYPE_BFLOAT16: ((uint16_t *)p)[i] = nn_f32_to_bf16(v); break;
  case NN_DTYPE_DOUBLE: ((double *)p)[i] = v; break;
  default: break;
  }
}

/* Element i of any numeric tensor as double. */
static inline double ku_ldd(const void *p, nn_dtype dt, int64_t i) {
  switch (dt) {
  case NN_DTYPE_FLOAT: return ((const float *)p)[i];
  case NN_DTYPE_DOUBLE: return ((const double *)p)[i];
  case NN_DTYPE_FLOAT16: return nn_f16_to_f32(((const uint16_t *)p)[i]);
  case NN_DTYPE_BFLOAT16: return nn_bf16_to_f32(((const uint16_t *)p)[i]);
  case NN_DTYPE_INT8: return ((const int8_t *)p)[i];
  case NN_DTYPE_UINT8: return ((const uint8_t *)p)[i];
  case NN_DTYPE_INT16: return ((const int16_t *)p)[i];
  case NN_DTYPE_UINT16: return ((const uint16_t *)p)[i];
  case NN_DTYPE_INT32: return ((const int32_t *)p)[i];
  case NN_DTYPE_UINT32: return ((const uint32_t *)p)[i];
  case NN_DTYPE_INT64: return (double)((const int64_t *)p)[i];
  case NN_DTYPE_UINT64: return (double)((const uint64_t *)p)[i];
  case NN_DTYPE_BOOL: return ((const uint8_t *)p)[i] != 0;
  default: return 0.0;
  }
}

/* Converting an out-of-range double to an integer type is undefined in C, so
 * integer stores saturate (NaN becomes 0). */
static inline double ku_clampd(double v, double lo, double hi) {
  if (v != v)
    return 0.0;
  return v < lo ? lo : (v > hi ? hi : v);
}

/* Store v as element i of a tensor of any dtype ku_dtype_storable accepts. */
static inline void ku_std(void *p, nn_dtype dt, int64_t i, double v) {
  switch (dt) {
  case NN_DTYPE_FLOAT: ((float *)p)[i] = (float)v; break;
  case NN_DTYPE_DOUBLE: ((double *)p)[i] = v; break;
  case NN_DTYPE_FLOAT16: ((uint16_t *)p)[i] = nn_f32_to_f16((float)v); break;
  case NN_DTYPE_BFLOAT16: ((uint16_t *)p)[i] = nn_f32_to_bf16((float)v); break;
  case NN_DTYPE_INT8: ((int8_t *)p)[i] = (int8_t)ku_clampd(v, INT8_MIN, INT8_MAX); break;
  case NN_DTYPE_UINT8: ((uint8_t *)p)[i] = (uint8_t)ku_clampd(v, 0, UINT8_MAX); break;
  case NN_DTYPE_INT16: ((int16_t *)p)[i] = (int16_t)ku_clampd(v, INT16_MIN, INT16_MAX); break;
  case NN_DTYPE_UINT16: ((uint16_t *)p)[i] = (uint16_t)ku_clampd(v, 0, UINT16_MAX); break;
  case NN_DTYPE_INT32: ((int32_t *)p)[i] = (int32_t)ku_clampd(v, INT32_MIN, INT32_MAX); break;
  case NN_DTYPE_UINT32: ((uint32_t *)p)[i] = (uint32_t)ku_clampd(v, 0, UINT32_MAX); break;
  /* 2^63 is the first double above INT64_MAX */
  case NN_DTYPE_INT64:
    ((int64_t *)p)[i] = (v != v) ? 0 : v >= 9223372036854775808.0 ? INT64_MAX
                      : v < -9223372036854775808.0 ? INT64_MIN : (int64_t)v;
    break;
  case NN_DTYPE_UINT64:
    ((uint64_t *)p)[i] = (v != v || v <= 0) ? 0 : v >= 18446744073709551616.0 ? UINT64_MAX
                       : (uint64_t)v;
    break;
  case NN_DTYPE_BOOL: ((uint8_t *)p)[i] = v != 0; break;
  default: break;
  }
}

/* Number of independent scratch slots a kernel splits its rows over: each
 * parallel item owns one slot of n->ws, so run needs no allocation. */
static inline int ku_slots(const nn_ctx *c) {
  int t = c->threads > 0 ? c->threads : 1;
  return t > 64 ? 64 : t;
}

/* ---- kernel_util.c ---------------------------------------------------------- */

/* Whether ku_ldd/ku_std handle dt: every numeric dtype and bool. */
bool ku_dtype_storable(nn_dtype dt);

#endif

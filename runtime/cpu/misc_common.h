/* misc_common.h - private helpers shared by the kernels of misc.c.
 * Included only from misc.c: everything here is static. */
#ifndef NN_MISC_COMMON_H
#define NN_MISC_COMMON_H

#include <float.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "cpu/ops.h"

/* Optional inputs and outputs: absent when omitted in the model or trailing. */
static inline nn_value *misc_in(const nn_node *n, int i) {
  return i < n->n_in ? n->x[i] : NULL;
}
static inline nn_value *misc_out(const nn_node *n, int i) {
  return i < n->n_out ? n->y[i] : NULL;
}

static inline bool misc_is_real(nn_dtype dt) {
  return dt == NN_DTYPE_FLOAT || dt == NN_DTYPE_DOUBLE || dt == NN_DTYPE_FLOAT16 ||
         dt == NN_DTYPE_BFLOAT16;
}

static inline bool misc_is_index(nn_dtype dt) {
  return dt == NN_DTYPE_INT64 || dt == NN_DTYPE_INT32;
}

/* Element i of a real tensor as float (the compute type of most kernels). */
static inline float misc_ldf(const void *p, nn_dtype dt, int64_t i) {
  switch (dt) {
  case NN_DTYPE_FLOAT: return ((const float *)p)[i];
  case NN_DTYPE_FLOAT16: return nn_f16_to_f32(((const uint16_t *)p)[i]);
  case NN_DTYPE_BFLOAT16: return nn_bf16_to_f32(((const uint16_t *)p)[i]);
  case NN_DTYPE_DOUBLE: return (float)((const double *)p)[i];
  default: return 0.0f;
  }
}

static inline void misc_stf(void *p, nn_dtype dt, int64_t i, float v) {
  switch (dt) {
  case NN_DTYPE_FLOAT: ((float *)p)[i] = v; break;
  case NN_DTYPE_FLOAT16: ((uint16_t *)p)[i] = nn_f32_to_f16(v); break;
  case NN_DTYPE_BFLOAT16: ((uint16_t *)p)[i] = nn_f32_to_bf16(v); break;
  case NN_DTYPE_DOUBLE: ((double *)p)[i] = v; break;
  default: break;
  }
}

/* Element i of any numeric tensor as double. */
static inline double misc_ldd(const void *p, nn_dtype dt, int64_t i) {
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
static inline double misc_clampd(double v, double lo, double hi) {
  if (v != v)
    return 0.0;
  return v < lo ? lo : (v > hi ? hi : v);
}

static inline void misc_std(void *p, nn_dtype dt, int64_t i, double v) {
  switch (dt) {
  case NN_DTYPE_FLOAT: ((float *)p)[i] = (float)v; break;
  case NN_DTYPE_DOUBLE: ((double *)p)[i] = v; break;
  case NN_DTYPE_FLOAT16: ((uint16_t *)p)[i] = nn_f32_to_f16((float)v); break;
  case NN_DTYPE_BFLOAT16: ((uint16_t *)p)[i] = nn_f32_to_bf16((float)v); break;
  case NN_DTYPE_INT8: ((int8_t *)p)[i] = (int8_t)misc_clampd(v, INT8_MIN, INT8_MAX); break;
  case NN_DTYPE_UINT8: ((uint8_t *)p)[i] = (uint8_t)misc_clampd(v, 0, UINT8_MAX); break;
  case NN_DTYPE_INT16: ((int16_t *)p)[i] = (int16_t)misc_clampd(v, INT16_MIN, INT16_MAX); break;
  case NN_DTYPE_UINT16: ((uint16_t *)p)[i] = (uint16_t)misc_clampd(v, 0, UINT16_MAX); break;
  case NN_DTYPE_INT32: ((int32_t *)p)[i] = (int32_t)misc_clampd(v, INT32_MIN, INT32_MAX); break;
  case NN_DTYPE_UINT32: ((uint32_t *)p)[i] = (uint32_t)misc_clampd(v, 0, UINT32_MAX); break;
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

static inline bool misc_dtype_storable(nn_dtype dt) {
  switch (dt) {
  case NN_DTYPE_FLOAT: case NN_DTYPE_DOUBLE: case NN_DTYPE_FLOAT16: case NN_DTYPE_BFLOAT16:
  case NN_DTYPE_INT8: case NN_DTYPE_UINT8: case NN_DTYPE_INT16: case NN_DTYPE_UINT16:
  case NN_DTYPE_INT32: case NN_DTYPE_UINT32: case NN_DTYPE_INT64: case NN_DTYPE_UINT64:
  case NN_DTYPE_BOOL:
    return true;
  default:
    return false;
  }
}

/* Index of a string attribute's value in `choices` (NULL-terminated); an
 * unknown value is refused as unsupported, naming the attribute. */
static nn_status misc_attr_choice(nn_ctx *c, const nn_node *n, const char *name,
                                  const char *def, const char *const *choices, int *out) {
  const char *v = nn_attr_string(n, name, def);
  for (int i = 0; choices[i]; i++) {
    if (strcmp(v, choices[i]) == 0) {
      *out = i;
      return NN_OK;
    }
  }
  return nn_fail(c, NN_ERR_UNSUPPORTED, "unsupported %s '%s'", name, v);
}

/* Dot product with several partial sums: without -ffast-math the compiler
 * keeps a single serial chain otherwise. */
static inline float misc_dotf(const float *a, const float *b, int64_t n) {
  float s0 = 0, s1 = 0, s2 = 0, s3 = 0, s4 = 0, s5 = 0, s6 = 0, s7 = 0;
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    s0 += a[i] * b[i];
    s1 += a[i + 1] * b[i + 1];
    s2 += a[i + 2] * b[i + 2];
    s3 += a[i + 3] * b[i + 3];
    s4 += a[i + 4] * b[i + 4];
    s5 += a[i + 5] * b[i + 5];
    s6 += a[i + 6] * b[i + 6];
    s7 += a[i + 7] * b[i + 7];
  }
  for (; i < n; i++)
    s0 += a[i] * b[i];
  return ((s0 + s1) + (s2 + s3)) + ((s4 + s5) + (s6 + s7));
}

/* Round half to even, as numpy's rint (the reference of the quantizers). */
#define MISC_PI 3.14159265358979323846

static inline double misc_rint(double v) { return nearbyint(v); }

/* Number of independent scratch slots a kernel splits its rows over: each
 * parallel item owns one slot of n->ws, so run needs no allocation. */
static inline int misc_slots(const nn_ctx *c) {
  int t = c->threads > 0 ? c->threads : 1;
  return t > 64 ? 64 : t;
}

#endif

/* vmath.c - vectorized float32 exp, sigmoid, SiLU, tanh, erf, GELU
 * (vmath.h).  The exp and erf cores are sgemm_simd.h's (the GEMM epilogue's
 * sigmoid and GELU use the same), so a fused and an unfused activation
 * agree bit for bit. */
#include "cpu/vmath.h"

#include <math.h>

#include "cpu/sgemm_simd.h"

/* ---- every path ---------------------------------------------------------------- */

void nn_vmath_requant_1(int32_t acc, int32_t bias, float mult, int32_t zp, bool u8, void *y) {
  const float lo = (float)((u8 ? 0 : -128) - zp), hi = (float)((u8 ? 255 : 127) - zp);
  float v = (float)(int32_t)((uint32_t)acc + (uint32_t)bias) * mult;   /* the sum wraps, as int32 */
  v = v > lo ? v : lo;   /* NaN (zero scales) saturates low */
  v = v < hi ? v : hi;
  const int32_t r = (int32_t)nearbyintf(v) + zp;
  if (u8)
    *(uint8_t *)y = (uint8_t)r;
  else
    *(int8_t *)y = (int8_t)r;
}

static void vm_transpose_u8_c(uint8_t *dst, int64_t ldd, const uint8_t *src, int64_t lds, int64_t rows,
                              int64_t cols, uint8_t flip) {
  for (int64_t i = 0; i < rows; i++)
    for (int64_t j = 0; j < cols; j++)
      dst[j * ldd + i] = src[i * lds + j] ^ flip;
}

#if SG_X86

/* tanh below 0.625: x + x * x^2 * T(x^2) */
#define VM_TANH_SPLIT 0.625f
static const float vm_tanh_t[5] = {-3.333328664e-01f, 1.333151311e-01f, -5.374464020e-02f,
                                   2.065306343e-02f, -5.718891509e-03f};

/* NaN needs no test of its own: sg2_exp / sg5_exp pass it through, and
 * every comparison that picks a piece or a limit is false for it, so the
 * last piece computed from it (a NaN) is what comes out. */

/* ---- AVX2 ---------------------------------------------------------------- */
#define VM2_POLY(acc, c, n, t)                                           \
  do {                                                                   \
    acc = _mm256_set1_ps((c)[(n) - 1]);                                  \
    for (int k_ = (n) - 2; k_ >= 0; k_--)                                \
      acc = _mm256_fmadd_ps(acc, (t), _mm256_set1_ps((c)[k_]));          \
  } while (0)

static SG_ALWAYS_INLINE SG256 __m256 vm2_tanh(__m256 x) {
  const __m256 sign = _mm256_set1_ps(-0.0f), one = _mm256_set1_ps(1.0f);
  __m256 ax = _mm256_andnot_ps(sign, x), t = _mm256_mul_ps(ax, ax), p;
  VM2_POLY(p, vm_tanh_t, 5, t);
  __m256 small = _mm256_fmadd_ps(_mm256_mul_ps(ax, t), p, ax);
  __m256 e = sg2_exp(_mm256_add_ps(ax, ax));
  __m256 big = _mm256_sub_ps(one, _mm256_div_ps(_mm256_set1_ps(2.0f), _mm256_add_ps(e, one)));
  __m256 r = _mm256_blendv_ps(big, small, _mm256_cmp_ps(ax, _mm256_set1_ps(VM_TANH_SPLIT), _CMP_LT_OQ));
  return _mm256_or_ps(r, _mm256_and_ps(sign, x));
}

static SG_ALWAYS_INLINE SG256 __m256 vm2_apply(nn_vmath_fn f, __m256 v) {
  switch (f) {
  case NN_VM_EXP: return sg2_exp(v);
  case NN_VM_SIGMOID: return sg2_sigmoid(v);
  case NN_VM_SILU: return _mm256_mul_ps(v, sg2_sigmoid(v));
  case NN_VM_TANH: return vm2_tanh(v);
  case NN_VM_ERF: return sg2_erf(v);
  case NN_VM_GELU: return sg2_gelu(v);
  default: return v;
  }
}

/* One loop per function (the switch in vm2_apply folds away). */
#define VM_FN_LIST(X) X(exp, NN_VM_EXP) X(sigmoid, NN_VM_SIGMOID) X(silu, NN_VM_SILU) \
  X(tanh, NN_VM_TANH) X(erf, NN_VM_ERF) X(gelu, NN_VM_GELU)

#define VM2_DEF(name, code)                                                          \
  static SG256 void vm2_run_##name(const float *x, float *y, int64_t n) {            \
    int64_t i = 0;                                                                   \
    for (; i + 8 <= n; i += 8)                                                       \
      _mm256_storeu_ps(y + i, vm2_apply(code, _mm256_loadu_ps(x + i)));              \
    if (i < n) {                                                                     \
      float buf[8] = {0};                                                            \
      for (int64_t k = i; k < n; k++)                                                \
        buf[k - i] = x[k];                                                           \
      _mm256_storeu_ps(buf, vm2_apply(code, _mm256_loadu_ps(buf)));                  \
      for (int64_t k = i; k < n; k++)                                                \
        y[k] = buf[k - i];                                                           \
    }                                                                                \
  }
VM_FN_LIST(VM2_DEF)

/* ---- AVX-512 ------------------------------------------------------------- */
#define VM5_POLY(acc, c, n, t)                                           \
  do {                                                                   \
    acc = _mm512_set1_ps((c)[(n) - 1]);                                  \
    for (int k_ = (n) - 2; k_ >= 0; k_--)                                \
      acc = _mm512_fmadd_ps(acc, (t), _mm512_set1_ps((c)[k_]));          \
  } while (0)

static SG_ALWAYS_INLINE SG512 __m512 vm5_tanh(__m512 x) {
  const __m512 one = _mm512_set1_ps(1.0f);
  __m512 ax = _mm512_abs_ps(x), t = _mm512_mul_ps(ax, ax), p;
  VM5_POLY(p, vm_tanh_t, 5, t);
  __m512 small = _mm512_fmadd_ps(_mm512_mul_ps(ax, t), p, ax);
  __m512 e = sg5_exp(_mm512_add_ps(ax, ax));
  __m512 r = _mm512_sub_ps(one, _mm512_div_ps(_mm512_set1_ps(2.0f), _mm512_add_ps(e, one)));
  r = _mm512_mask_mov_ps(r, _mm512_cmp_ps_mask(ax, _mm512_set1_ps(VM_TANH_SPLIT), _CMP_LT_OQ), small);
  return sg5_with_sign(r, x);
}

static SG_ALWAYS_INLINE SG512 __m512 vm5_apply(nn_vmath_fn f, __m512 v) {
  switch (f) {
  case NN_VM_EXP: return sg5_exp(v);
  case NN_VM_SIGMOID: return sg5_sigmoid(v);
  case NN_VM_SILU: return _mm512_mul_ps(v, sg5_sigmoid(v));
  case NN_VM_TANH: return vm5_tanh(v);
  case NN_VM_ERF: return sg5_erf(v);
  case NN_VM_GELU: return sg5_gelu(v);
  default: return v;
  }
}

#define VM5_DEF(name, code)                                                          \
  static SG512 void vm5_run_##name(const float *x, float *y, int64_t n) {            \
    int64_t i = 0;                                                                   \
    for (; i + 16 <= n; i += 16)                                                     \
      _mm512_storeu_ps(y + i, vm5_apply(code, _mm512_loadu_ps(x + i)));              \
    if (i < n) {                                                                     \
      __mmask16 m = (__mmask16)((1u << (n - i)) - 1u);                               \
      _mm512_mask_storeu_ps(y + i, m, vm5_apply(code, _mm512_maskz_loadu_ps(m, x + i))); \
    }                                                                                \
  }
VM_FN_LIST(VM5_DEF)

/* ---- Softmax rows ----------------------------------------------------------
 * Three passes over a row that sits in L1 (an attention row of 197 floats):
 * the maximum, y = exp(x - max) with its sum in the same pass, y *= 1/sum.
 * The sum's lanes are flushed into a double every VM_SM_FLUSH elements (each
 * term is <= 1, so a lane's float sum stays exact to a few ulps).  A NaN
 * anywhere makes the maximum or the sum NaN, and every output NaN. */
#define VM_SM_FLUSH 1024

static SG256 void vm2_softmax_row(const float *x, float *y, int64_t n) {
  __m256 mv = _mm256_set1_ps(-INFINITY);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)   /* max_ps returns its second operand on NaN: x's */
    mv = _mm256_max_ps(mv, _mm256_loadu_ps(x + i));
  float buf[8];
  _mm256_storeu_ps(buf, mv);
  float m = -INFINITY;
  for (int k = 0; k < 8; k++)
    m = buf[k] > m || buf[k] != buf[k] ? buf[k] : m;
  for (; i < n; i++)
    m = x[i] > m || x[i] != x[i] ? x[i] : m;
  const __m256 m8 = _mm256_set1_ps(m);
  double s = 0.0;
  __m256 acc = _mm256_setzero_ps();
  for (i = 0; i + 8 <= n; i += 8) {
    __m256 e = sg2_exp(_mm256_sub_ps(_mm256_loadu_ps(x + i), m8));
    _mm256_storeu_ps(y + i, e);
    acc = _mm256_add_ps(acc, e);
    if ((i + 8) % VM_SM_FLUSH == 0) {
      _mm256_storeu_ps(buf, acc);
      for (int k = 0; k < 8; k++)
        s += (double)buf[k];
      acc = _mm256_setzero_ps();
    }
  }
  if (i < n) {
    for (int k = 0; k < 8; k++)
      buf[k] = i + k < n ? x[i + k] - m : -INFINITY;   /* exp(-inf) = 0 adds nothing */
    __m256 e = sg2_exp(_mm256_loadu_ps(buf));
    acc = _mm256_add_ps(acc, e);
    _mm256_storeu_ps(buf, e);
    for (int64_t k = i; k < n; k++)
      y[k] = buf[k - i];
  }
  _mm256_storeu_ps(buf, acc);
  for (int k = 0; k < 8; k++)
    s += (double)buf[k];
  const __m256 r = _mm256_set1_ps((float)(1.0 / s));
  for (i = 0; i + 8 <= n; i += 8)
    _mm256_storeu_ps(y + i, _mm256_mul_ps(_mm256_loadu_ps(y + i), r));
  for (; i < n; i++)
    y[i] *= (float)(1.0 / s);
}

static SG512 void vm5_softmax_row(const float *x, float *y, int64_t n) {
  __m512 mv = _mm512_set1_ps(-INFINITY);
  int64_t i = 0;
  for (; i + 16 <= n; i += 16)
    mv = _mm512_max_ps(mv, _mm512_loadu_ps(x + i));
  __mmask16 tail = (__mmask16)((1u << (n - i)) - 1u);
  if (tail)
    mv = _mm512_mask_max_ps(mv, tail, mv, _mm512_maskz_loadu_ps(tail, x + i));
  /* a NaN lost by max_ps (which returns its second operand on NaN) is
   * caught here: any NaN in the row makes the row sum NaN below */
  float m = _mm512_reduce_max_ps(mv);
  const __m512 m16 = _mm512_set1_ps(m);
  double s = 0.0;
  __m512 acc = _mm512_setzero_ps();
  for (i = 0; i + 16 <= n; i += 16) {
    __m512 e = sg5_exp(_mm512_sub_ps(_mm512_loadu_ps(x + i), m16));
    _mm512_storeu_ps(y + i, e);
    acc = _mm512_add_ps(acc, e);
    if ((i + 16) % VM_SM_FLUSH == 0) {
      s += (double)_mm512_reduce_add_ps(acc);
      acc = _mm512_setzero_ps();
    }
  }
  if (tail) {
    __m512 e = sg5_exp(_mm512_sub_ps(_mm512_maskz_loadu_ps(tail, x + i), m16));
    e = _mm512_maskz_mov_ps(tail, e);
    _mm512_mask_storeu_ps(y + i, tail, e);
    acc = _mm512_add_ps(acc, e);
  }
  s += (double)_mm512_reduce_add_ps(acc);
  const __m512 r = _mm512_set1_ps((float)(1.0 / s));
  for (i = 0; i + 16 <= n; i += 16)
    _mm512_storeu_ps(y + i, _mm512_mul_ps(_mm512_loadu_ps(y + i), r));
  if (tail)
    _mm512_mask_storeu_ps(y + i, tail, _mm512_mul_ps(_mm512_maskz_loadu_ps(tail, y + i), r));
}

typedef void (*vm_run_fn)(const float *x, float *y, int64_t n);
#define VM2_ENTRY(name, code) [code] = vm2_run_##name,
#define VM5_ENTRY(name, code) [code] = vm5_run_##name,
static const vm_run_fn vm2_table[NN_VM_COUNT] = {VM_FN_LIST(VM2_ENTRY)};
static const vm_run_fn vm5_table[NN_VM_COUNT] = {VM_FN_LIST(VM5_ENTRY)};

bool nn_vmath_f32(nn_vmath_fn f, const float *x, float *y, int64_t n) {
  if ((unsigned)f >= NN_VM_COUNT)
    return false;
  nn_cpu_isa isa = nn_cpu_isa_get();
  const vm_run_fn *t = isa >= NN_CPU_AVX512 ? vm5_table : isa >= NN_CPU_AVX2 ? vm2_table : NULL;
  if (!t)
    return false;
  if (n > 0)
    t[f](x, y, n);
  return true;
}

/* Three interleaved rows (src: cols pixels of 3 channels) to three planes,
 * 8 pixels at a time: each plane's 8 values lie in distinct lanes of the
 * three loaded vectors, two blends gather them and one permute orders them. */
static SG256 void vm2_deinterleave3(float *dst, int64_t ldd, const float *src, int64_t cols) {
  const __m256i i0 = _mm256_setr_epi32(0, 3, 6, 1, 4, 7, 2, 5);
  const __m256i i1 = _mm256_setr_epi32(1, 4, 7, 2, 5, 0, 3, 6);
  const __m256i i2 = _mm256_setr_epi32(2, 5, 0, 3, 6, 1, 4, 7);
  int64_t j = 0;
  for (; j + 8 <= cols; j += 8) {
    const float *s = src + 3 * j;
    const __m256 v0 = _mm256_loadu_ps(s), v1 = _mm256_loadu_ps(s + 8), v2 = _mm256_loadu_ps(s + 16);
    /* channel 0 at lanes 0 3 6 of v0, 1 4 7 of v1, 2 5 of v2; channel 1 at
     * 1 4 7 / 2 5 / 0 3 6; channel 2 at 2 5 / 0 3 6 / 1 4 7 */
    const __m256 c0 = _mm256_blend_ps(_mm256_blend_ps(v0, v1, 0x92), v2, 0x24);
    const __m256 c1 = _mm256_blend_ps(_mm256_blend_ps(v0, v1, 0x24), v2, 0x49);
    const __m256 c2 = _mm256_blend_ps(_mm256_blend_ps(v0, v1, 0x49), v2, 0x92);
    _mm256_storeu_ps(dst + j, _mm256_permutevar8x32_ps(c0, i0));
    _mm256_storeu_ps(dst + ldd + j, _mm256_permutevar8x32_ps(c1, i1));
    _mm256_storeu_ps(dst + 2 * ldd + j, _mm256_permutevar8x32_ps(c2, i2));
  }
  for (; j < cols; j++)
    for (int q = 0; q < 3; q++)
      dst[q * ldd + j] = src[3 * j + q];
}

static SG256 void vm2_transpose(float *dst, int64_t ldd, const float *src, int64_t lds,
                               int64_t rows, int64_t cols) {
  if (rows == 3 && lds == 3) {
    vm2_deinterleave3(dst, ldd, src, cols);
    return;
  }
  int64_t i = 0;
  for (; i + 8 <= rows; i += 8) {
    int64_t j = 0;
    for (; j + 8 <= cols; j += 8) {
      __m256 r[8];
SG_UNROLL(8)
      for (int q = 0; q < 8; q++)
        r[q] = _mm256_loadu_ps(src + (j + q) * lds + i);
      sg_tr8(r);
SG_UNROLL(8)
      for (int q = 0; q < 8; q++)
        _mm256_storeu_ps(dst + (i + q) * ldd + j, r[q]);
    }
    for (; j < cols; j++)
      for (int q = 0; q < 8; q++)
        dst[(i + q) * ldd + j] = src[j * lds + i + q];
  }
  for (; i < rows; i++)
    for (int64_t j = 0; j < cols; j++)
      dst[i * ldd + j] = src[j * lds + i];
}

/* 8 int32 lanes (in the 8-bit range already) -> 8 bytes at y. */
static SG_ALWAYS_INLINE SG256 void vm2_store8(__m256i v, bool u8, void *y) {
  __m128i w = _mm_packs_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
  w = u8 ? _mm_packus_epi16(w, w) : _mm_packs_epi16(w, w);
  _mm_storel_epi64((__m128i *)y, w);
}

static SG256 int64_t vm2_quantize(const float *x, float s, float z, float lo, float hi, bool u8,
                               void *y, int64_t n) {
  const __m256 vs = _mm256_set1_ps(s), vz = _mm256_set1_ps(z), vlo = _mm256_set1_ps(lo),
               vhi = _mm256_set1_ps(hi), zero = _mm256_setzero_ps();
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    __m256 q = _mm256_div_ps(_mm256_loadu_ps(x + i), vs);
    q = _mm256_blendv_ps(q, zero, _mm256_cmp_ps(q, q, _CMP_UNORD_Q));   /* NaN -> 0 */
    q = _mm256_round_ps(q, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    q = _mm256_min_ps(_mm256_max_ps(_mm256_add_ps(q, vz), vlo), vhi);
    vm2_store8(_mm256_cvtps_epi32(q), u8, (unsigned char *)y + i);
  }
  return i;
}

static SG256 int64_t vm2_requant(const float *af, const int32_t *ai, int32_t bias, float mult,
                                 int32_t zp, bool u8, void *y, int64_t n) {
  const float lo = (float)((u8 ? 0 : -128) - zp), hi = (float)((u8 ? 255 : 127) - zp);
  const __m256i vb = _mm256_set1_epi32(bias), vz = _mm256_set1_epi32(zp);
  const __m256 vm = _mm256_set1_ps(mult), vlo = _mm256_set1_ps(lo), vhi = _mm256_set1_ps(hi);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    __m256i a = af ? _mm256_cvttps_epi32(_mm256_loadu_ps(af + i))
                   : _mm256_loadu_si256((const __m256i *)(ai + i));
    __m256 v = _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_add_epi32(a, vb)), vm);
    v = _mm256_min_ps(_mm256_max_ps(v, vlo), vhi);   /* NaN -> lo, as MLAS */
    vm2_store8(_mm256_add_epi32(_mm256_cvtps_epi32(v), vz), u8, (unsigned char *)y + i);
  }
  return i;
}

/* vm2_requant 16 lanes at a time (the values are in range after the
 * clamp, so vpmovdb's truncation is the pack), the rest through it. */
static SG512 int64_t vm5_requant(const float *af, const int32_t *ai, int32_t bias, float mult,
                                 int32_t zp, bool u8, void *y, int64_t n) {
  const float lo = (float)((u8 ? 0 : -128) - zp), hi = (float)((u8 ? 255 : 127) - zp);
  const __m512i vb = _mm512_set1_epi32(bias), vz = _mm512_set1_epi32(zp);
  const __m512 vm = _mm512_set1_ps(mult), vlo = _mm512_set1_ps(lo), vhi = _mm512_set1_ps(hi);
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    __m512i a = af ? _mm512_cvttps_epi32(_mm512_loadu_ps(af + i)) : _mm512_loadu_si512((const void *)(ai + i));
    __m512 v = _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_add_epi32(a, vb)), vm);
    v = _mm512_min_ps(_mm512_max_ps(v, vlo), vhi);   /* NaN -> lo, as MLAS */
    _mm_storeu_si128((__m128i *)((unsigned char *)y + i),
                     _mm512_cvtepi32_epi8(_mm512_add_epi32(_mm512_cvtps_epi32(v), vz)));
  }
  return i + vm2_requant(af ? af + i : NULL, af ? NULL : ai + i, bias, mult, zp, u8,
                         (unsigned char *)y + i, n - i);
}

/* A 16 x 16 block of bytes in registers: four unpack stages (bytes, then
 * 16-, 32- and 64-bit units) take row i's byte j to column j's byte i;
 * column j is stored at dst + j * ldd. */
static SG_ALWAYS_INLINE void vm_tr16_store(const __m128i a[16], uint8_t *dst, int64_t ldd) {
  __m128i b[16], c[16], d[16];
  SG_UNROLL(16)
  for (int i = 0; i < 8; i++) {
    b[i] = _mm_unpacklo_epi8(a[2 * i], a[2 * i + 1]);
    b[i + 8] = _mm_unpackhi_epi8(a[2 * i], a[2 * i + 1]);
  }
  SG_UNROLL(16)
  for (int i = 0; i < 4; i++) {
    c[i] = _mm_unpacklo_epi16(b[2 * i], b[2 * i + 1]);
    c[i + 4] = _mm_unpackhi_epi16(b[2 * i], b[2 * i + 1]);
    c[i + 8] = _mm_unpacklo_epi16(b[2 * i + 8], b[2 * i + 9]);
    c[i + 12] = _mm_unpackhi_epi16(b[2 * i + 8], b[2 * i + 9]);
  }
  SG_UNROLL(16)
  for (int g = 0; g < 4; g++) {
    d[4 * g] = _mm_unpacklo_epi32(c[4 * g], c[4 * g + 1]);
    d[4 * g + 1] = _mm_unpackhi_epi32(c[4 * g], c[4 * g + 1]);
    d[4 * g + 2] = _mm_unpacklo_epi32(c[4 * g + 2], c[4 * g + 3]);
    d[4 * g + 3] = _mm_unpackhi_epi32(c[4 * g + 2], c[4 * g + 3]);
  }
  SG_UNROLL(16)
  for (int g = 0; g < 4; g++)
    SG_UNROLL(16)
    for (int k = 0; k < 4; k++) {
      const __m128i lo = d[4 * g + k / 2], hi = d[4 * g + 2 + k / 2];
      _mm_storeu_si128((__m128i *)(dst + (4 * g + k) * ldd),
                       k % 2 ? _mm_unpackhi_epi64(lo, hi) : _mm_unpacklo_epi64(lo, hi));
    }
}

static void vm_transpose16_u8(uint8_t *dst, int64_t ldd, const uint8_t *src, int64_t lds,
                              __m128i f) {
  __m128i a[16];
  SG_UNROLL(16)
  for (int i = 0; i < 16; i++)
    a[i] = _mm_xor_si128(_mm_loadu_si128((const __m128i *)(src + i * lds)), f);
  vm_tr16_store(a, dst, ldd);
}

void nn_vmath_transpose_u8(uint8_t *dst, int64_t ldd, const uint8_t *src, int64_t lds, int64_t rows,
                           int64_t cols, uint8_t flip) {
  if (rows >= 16 && cols >= 16) {
    const __m128i f = _mm_set1_epi8((char)flip);
    for (int64_t i = 0; i < rows; i += 16)
      for (int64_t j = 0; j < cols; j += 16) {
        const int64_t i0 = i + 16 <= rows ? i : rows - 16, j0 = j + 16 <= cols ? j : cols - 16;
        vm_transpose16_u8(dst + j0 * ldd + i0, ldd, src + i0 * lds + j0, lds, f);
      }
    return;
  }
  vm_transpose_u8_c(dst, ldd, src, lds, rows, cols, flip);
}

int64_t nn_vmath_quantize_f32(const float *x, float s, float z, float lo, float hi, bool u8,
                              void *y, int64_t n) {
  return nn_cpu_isa_get() < NN_CPU_AVX2 ? 0 : vm2_quantize(x, s, z, lo, hi, u8, y, n);
}

int64_t nn_vmath_requant_8(const float *af, const int32_t *ai, int32_t bias, float mult, int32_t zp,
                           bool u8, void *y, int64_t n) {
  const nn_cpu_isa isa = nn_cpu_isa_get();
  return isa >= NN_CPU_AVX512 ? vm5_requant(af, ai, bias, mult, zp, u8, y, n)
         : isa >= NN_CPU_AVX2 ? vm2_requant(af, ai, bias, mult, zp, u8, y, n)
                              : 0;
}

bool nn_vmath_transpose_f32(float *dst, int64_t ldd, const float *src, int64_t lds, int64_t rows,
                            int64_t cols) {
  if (nn_cpu_isa_get() < NN_CPU_AVX2)
    return false;
  vm2_transpose(dst, ldd, src, lds, rows, cols);
  return true;
}

bool nn_vmath_softmax_row_f32(const float *x, float *y, int64_t n) {
  nn_cpu_isa isa = nn_cpu_isa_get();
  if (isa < NN_CPU_AVX2)
    return false;
  if (n > 0)
    (isa >= NN_CPU_AVX512 ? vm5_softmax_row : vm2_softmax_row)(x, y, n);
  return true;
}

/* nn_vmath_range_f32's vector part: blocks of 32, max(x, acc) keeping acc
 * where x is NaN (vmaxps returns its second operand then). */
static SG256 int64_t vm2_range(const float *x, int64_t n, float *mn, float *mx) {
  __m256 lo[4], hi[4];
  for (int k = 0; k < 4; k++)
    lo[k] = hi[k] = _mm256_setzero_ps();
  int64_t i = 0;
  for (; i + 32 <= n; i += 32)
    for (int k = 0; k < 4; k++) {
      const __m256 v = _mm256_loadu_ps(x + i + 8 * k);
      lo[k] = _mm256_min_ps(v, lo[k]);
      hi[k] = _mm256_max_ps(v, hi[k]);
    }
  float a[8], b[8];
  _mm256_storeu_ps(a, _mm256_min_ps(_mm256_min_ps(lo[0], lo[1]), _mm256_min_ps(lo[2], lo[3])));
  _mm256_storeu_ps(b, _mm256_max_ps(_mm256_max_ps(hi[0], hi[1]), _mm256_max_ps(hi[2], hi[3])));
  for (int k = 0; k < 8; k++) {
    *mn = a[k] < *mn ? a[k] : *mn;
    *mx = b[k] > *mx ? b[k] : *mx;
  }
  return i;
}

static int64_t vm_range_vec(const float *x, int64_t n, float *mn, float *mx) {
  return nn_cpu_isa_get() < NN_CPU_AVX2 ? 0 : vm2_range(x, n, mn, mx);
}

/* nn_vmath_scale_i32's vector part, compiled for AVX2 without FMA: the
 * compiler may not contract the multiply and the add into one rounding. */
__attribute__((target("avx2"))) static int64_t vm2_scale_i32(const int32_t *acc, const int32_t *off,
                                                            const float *mult, const float *bias,
                                                            float *y, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    __m256i a = _mm256_loadu_si256((const __m256i *)(acc + i));
    if (off)
      a = _mm256_add_epi32(a, _mm256_loadu_si256((const __m256i *)(off + i)));
    __m256 f = _mm256_mul_ps(_mm256_cvtepi32_ps(a), _mm256_loadu_ps(mult + i));
    if (bias)
      f = _mm256_add_ps(f, _mm256_loadu_ps(bias + i));
    _mm256_storeu_ps(y + i, f);
  }
  return i;
}

static int64_t vm_scale_vec(const int32_t *acc, const int32_t *off, const float *mult, const float *bias,
                            float *y, int64_t n) {
  return nn_cpu_isa_get() < NN_CPU_AVX2 ? 0 : vm2_scale_i32(acc, off, mult, bias, y, n);
}

#else /* no x86 vector path */

static int64_t vm_range_vec(const float *x, int64_t n, float *mn, float *mx) {
  (void)x, (void)n, (void)mn, (void)mx;
  return 0;
}

static int64_t vm_scale_vec(const int32_t *acc, const int32_t *off, const float *mult, const float *bias,
                            float *y, int64_t n) {
  (void)acc, (void)off, (void)mult, (void)bias, (void)y, (void)n;
  return 0;
}

void nn_vmath_transpose_u8(uint8_t *dst, int64_t ldd, const uint8_t *src, int64_t lds, int64_t rows,
                           int64_t cols, uint8_t flip) {
  vm_transpose_u8_c(dst, ldd, src, lds, rows, cols, flip);
}

int64_t nn_vmath_quantize_f32(const float *x, float s, float z, float lo, float hi, bool u8,
                              void *y, int64_t n) {
  (void)x, (void)s, (void)z, (void)lo, (void)hi, (void)u8, (void)y, (void)n;
  return 0;
}

int64_t nn_vmath_requant_8(const float *af, const int32_t *ai, int32_t bias, float mult, int32_t zp,
                           bool u8, void *y, int64_t n) {
  (void)af, (void)ai, (void)bias, (void)mult, (void)zp, (void)u8, (void)y, (void)n;
  return 0;
}

bool nn_vmath_transpose_f32(float *dst, int64_t ldd, const float *src, int64_t lds, int64_t rows,
                            int64_t cols) {
  (void)dst, (void)ldd, (void)src, (void)lds, (void)rows, (void)cols;
  return false;
}

bool nn_vmath_softmax_row_f32(const float *x, float *y, int64_t n) {
  (void)x, (void)y, (void)n;
  return false;
}

bool nn_vmath_f32(nn_vmath_fn f, const float *x, float *y, int64_t n) {
  (void)f, (void)x, (void)y, (void)n;
  return false;
}

#endif

void nn_vmath_range_f32(const float *x, int64_t n, float *mn, float *mx) {
  *mn = *mx = 0.0f;
  for (int64_t i = vm_range_vec(x, n, mn, mx); i < n; i++) {
    *mn = x[i] < *mn ? x[i] : *mn;   /* a NaN compares false: skipped */
    *mx = x[i] > *mx ? x[i] : *mx;
  }
}

void nn_vmath_scale_i32(const int32_t *acc, const int32_t *off, const float *mult, const float *bias,
                        float *y, int64_t n) {
  for (int64_t i = vm_scale_vec(acc, off, mult, bias, y, n); i < n; i++) {
    volatile float f = (float)(int32_t)((uint32_t)acc[i] + (uint32_t)(off ? off[i] : 0)) * mult[i];
    y[i] = bias ? f + bias[i] : f;   /* (volatile: two roundings under any contraction rule) */
  }
}

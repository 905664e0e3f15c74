/* sgemm_simd.h - private to the CPU kernels (sgemm.c, dwconv.c, conv.c's
 * Winograd output, the direct convolutions, pool.c): the fused activations
 * in scalar, AVX2 and AVX-512 form, so every epilogue agrees, and the
 * stride-2 kernels' column masks and lane indices, and the 8x8 transpose.
 *
 * The vector helpers carry target attributes: they may only be inlined into
 * functions compiled for the same (or a wider) target, and must only run
 * after the dispatcher (nn_cpu_isa_get) chose that path.
 */
#ifndef NN_CPU_SGEMM_SIMD_H
#define NN_CPU_SGEMM_SIMD_H

#include <math.h>

#include "cpu/sgemm.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define SG_X86 1
#else
#define SG_X86 0
#endif

#define SG_ALWAYS_INLINE inline __attribute__((always_inline))

/* Unrolling hints for the hot loops, left out of sanitizer builds
 * (NN_SANITIZED, set by meson.build): there they multiply the instrumented
 * code for no use, and dwconv.c alone took 3 minutes to compile under
 * clang's ASan + UBSan (40 s without them). */
#ifdef NN_SANITIZED
#define SG_UNROLL(n)
#else
#define SG_PRAGMA_(x) _Pragma(#x)
#define SG_UNROLL(n) SG_PRAGMA_(GCC unroll n)
#endif

/* The activation, flattened from nn_sgemm_epi. */
typedef struct sg_act {
  nn_sgemm_act act;
  float slope, lo, hi;
} sg_act;

static inline sg_act sg_act_from(const nn_sgemm_epi *e) {
  sg_act a = {NN_SGEMM_ACT_NONE, 0.0f, -INFINITY, INFINITY};
  if (e) {
    a.act = e->act;
    a.slope = e->alpha;
    a.lo = e->lo;
    a.hi = e->hi;
  }
  return a;
}

/* An activation that is a clamp to [lo, hi] (none, Relu, Clip): kind 0 none,
 * 1 the lower bound only, 2 both; -1 for the others.  Lets a hot epilogue
 * test an int per vector instead of switching over every activation. */
typedef struct sg_clamp {
  int kind;
  float lo, hi;
} sg_clamp;

static inline sg_clamp sg_clamp_of(const sg_act *a) {
  sg_clamp c = {-1, a->lo, a->hi};
  if (a->act == NN_SGEMM_ACT_NONE)
    c.kind = 0;
  else if (a->act == NN_SGEMM_ACT_RELU) {
    c.kind = 1;
    c.lo = 0.0f;
  } else if (a->act == NN_SGEMM_ACT_CLIP)
    c.kind = 2;
  return c;
}

/* Whether an epilogue is at most a bias per row and an activation (what
 * the direct convolution kernels apply; a residual or another bias is
 * theirs to refuse).  NULL is none. */
static inline bool sg_epi_row_bias_act(const nn_sgemm_epi *e) {
  return !e || (!e->res && (!e->bias || e->bias_kind == NN_SGEMM_BIAS_ROW));
}

/* Comparisons are written so that NaN falls through unchanged, as in the
 * unfused operators. */
static inline float sg_act1(const sg_act *a, float v) {
  switch (a->act) {
  case NN_SGEMM_ACT_RELU:
    return v < 0.0f ? 0.0f : v;
  case NN_SGEMM_ACT_CLIP:
    v = v < a->lo ? a->lo : v;
    return v > a->hi ? a->hi : v;
  case NN_SGEMM_ACT_LEAKY:
    return v < 0.0f ? v * a->slope : v;
  case NN_SGEMM_ACT_HSWISH: {
    float t = v * (1.0f / 6.0f) + 0.5f;
    t = t < 0.0f ? 0.0f : (t > 1.0f ? 1.0f : t);
    return v * t;
  }
  case NN_SGEMM_ACT_SIGMOID:
    return 1.0f / (1.0f + expf(-v));
  case NN_SGEMM_ACT_SILU:
    return v * (1.0f / (1.0f + expf(-v)));
  case NN_SGEMM_ACT_GELU:
    return 0.5f * v * (1.0f + erff(v * 0.70710678118654752f));
  default:
    return v;
  }
}

/* v[i] = act(v[i]) for 0 <= i < n, in place, any alignment: the kind
 * switched on once, 16 lanes on AVX-512, 8 on AVX2, sg_act1 on the portable
 * path (sgemm.c).  For a costly activation (a sigmoid's exp and divide,
 * erf) over output a kernel has just written: applied per vector in its
 * stores, it was a switch per vector that reloaded its constants, or
 * scalar libm calls (Winograd's output scatter). */
void nn_sgemm_act_run(const sg_act *a, float *v, int64_t n);

/* The activations nn_sgemm_act_run is worth a second pass over L1 for. */
static inline bool sg_act_costly(nn_sgemm_act k) {
  return k == NN_SGEMM_ACT_SIGMOID || k == NN_SGEMM_ACT_SILU || k == NN_SGEMM_ACT_GELU;
}

#if SG_X86
#define SG256 __attribute__((target("avx2,fma")))
#define SG512 __attribute__((target("avx512f,avx2,fma")))

/* exp for the sigmoid: Cephes' expf range reduction and polynomial (relative
 * error ~1e-7).  Inputs are clamped so that the exponent field saturates
 * exactly: below -88.38 the result is 0, above 88.38 it is +inf (so that
 * sigmoid(-inf) is exactly 0 and sigmoid(+inf) exactly 1, as with expf).
 * min/max take x as the second operand: x86 min/max return the second operand
 * when one is NaN, so NaN propagates. */
static SG_ALWAYS_INLINE SG256 __m256 sg2_exp(__m256 x) {
  x = _mm256_min_ps(_mm256_set1_ps(88.7228f), x);
  x = _mm256_max_ps(_mm256_set1_ps(-88.3762626647949f), x);
  __m256 fx = _mm256_fmadd_ps(x, _mm256_set1_ps(1.44269504088896341f), _mm256_set1_ps(0.5f));
  fx = _mm256_floor_ps(fx);
  x = _mm256_fnmadd_ps(fx, _mm256_set1_ps(0.693359375f), x);
  x = _mm256_fnmadd_ps(fx, _mm256_set1_ps(-2.12194440e-4f), x);
  __m256 z = _mm256_mul_ps(x, x);
  __m256 y = _mm256_set1_ps(1.9875691500E-4f);
  y = _mm256_fmadd_ps(y, x, _mm256_set1_ps(1.3981999507E-3f));
  y = _mm256_fmadd_ps(y, x, _mm256_set1_ps(8.3334519073E-3f));
  y = _mm256_fmadd_ps(y, x, _mm256_set1_ps(4.1665795894E-2f));
  y = _mm256_fmadd_ps(y, x, _mm256_set1_ps(1.6666665459E-1f));
  y = _mm256_fmadd_ps(y, x, _mm256_set1_ps(5.0000001201E-1f));
  y = _mm256_fmadd_ps(y, z, _mm256_add_ps(x, _mm256_set1_ps(1.0f)));
  __m256i e = _mm256_add_epi32(_mm256_cvttps_epi32(fx), _mm256_set1_epi32(127));
  return _mm256_mul_ps(y, _mm256_castsi256_ps(_mm256_slli_epi32(e, 23)));
}

static SG_ALWAYS_INLINE SG256 __m256 sg2_sigmoid(__m256 v) {
  const __m256 one = _mm256_set1_ps(1.0f);
  return _mm256_div_ps(one, _mm256_add_ps(one, sg2_exp(_mm256_sub_ps(_mm256_setzero_ps(), v))));
}

/* erf in two pieces: |x| <= 0.9: x P(x^2); 0.9 < |x| < 3.95:
 * 1 - exp(-x^2 + Q(|x|)), Q fitted to log(erfc(x)) + x^2 (fits made for
 * vmath.c; abs err < 1.5e-7, rel err < 2e-7); 1 from 3.95, where erf rounds
 * to 1 in float32.  Coefficients lowest degree first.  NaN passes: every
 * comparison is false for it and the last piece computed from it is NaN.
 * vmath.c's erf and GELU and the epilogue's GELU are this one function. */
#define SG_ERF_SPLIT 0.9f
#define SG_ERF_ONE 3.95f
#define SG_ERF_P(F, t)                                                                     \
  F(F(F(F(F(set1(-6.123181083e-04f), t, set1(5.019108299e-03f)), t,                       \
          set1(-2.678450011e-02f)), t, set1(1.128232777e-01f)), t, set1(-3.761254847e-01f)), \
    t, set1(1.128379107e+00f))
#define SG_ERF_Q(F, t)                                                                     \
  F(F(F(F(F(F(F(F(set1(1.624216566e-06f), t, set1(-4.577458094e-05f)), t,                 \
                  set1(5.941769341e-04f)), t, set1(-4.746139050e-03f)), t,                 \
              set1(2.637960017e-02f)), t, set1(-1.100010723e-01f)), t,                     \
          set1(3.680836558e-01f)), t, set1(-1.130176783e+00f)), t, set1(3.052383545e-04f))

static SG_ALWAYS_INLINE SG256 __m256 sg2_erf(__m256 x) {
#define set1 _mm256_set1_ps
  const __m256 sign = _mm256_set1_ps(-0.0f), one = _mm256_set1_ps(1.0f);
  __m256 ax = _mm256_andnot_ps(sign, x), t = _mm256_mul_ps(ax, ax);
  __m256 small = _mm256_mul_ps(ax, SG_ERF_P(_mm256_fmadd_ps, t));
  __m256 big = _mm256_sub_ps(one, sg2_exp(_mm256_sub_ps(SG_ERF_Q(_mm256_fmadd_ps, ax), t)));
  big = _mm256_blendv_ps(big, one, _mm256_cmp_ps(ax, set1(SG_ERF_ONE), _CMP_GE_OQ));
  __m256 r = _mm256_blendv_ps(big, small, _mm256_cmp_ps(ax, set1(SG_ERF_SPLIT), _CMP_LE_OQ));
  return _mm256_or_ps(r, _mm256_and_ps(sign, x));
#undef set1
}

/* 0.5 v (1 + erf(v / sqrt(2))) */
static SG_ALWAYS_INLINE SG256 __m256 sg2_gelu(__m256 v) {
  __m256 e = sg2_erf(_mm256_mul_ps(v, _mm256_set1_ps(0.70710678118654752f)));
  return _mm256_mul_ps(_mm256_mul_ps(_mm256_set1_ps(0.5f), v),
                       _mm256_add_ps(_mm256_set1_ps(1.0f), e));
}

/* Lanes 0, 2, .. 14 (even) or 1, 3, .. 15 (odd) of the 16 floats lo:hi, in
 * order (stride-2 depthwise taps, 2x2 stride-2 pools). */
static SG_ALWAYS_INLINE SG256 __m256 sg2_even_lanes(__m256 lo, __m256 hi) {
  __m256 t = _mm256_shuffle_ps(lo, hi, _MM_SHUFFLE(2, 0, 2, 0));
  return _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(t), _MM_SHUFFLE(3, 1, 2, 0)));
}

static SG_ALWAYS_INLINE SG256 __m256 sg2_odd_lanes(__m256 lo, __m256 hi) {
  __m256 t = _mm256_shuffle_ps(lo, hi, _MM_SHUFFLE(3, 1, 3, 1));
  return _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(t), _MM_SHUFFLE(3, 1, 2, 0)));
}

/* In-register transpose of an 8 x 8 block: r[j] becomes column j (the A
 * packer's panels, the small-map depthwise kernel's pixel vectors).  Written
 * out: as loops GCC kept the vectors on the stack. */
static SG_ALWAYS_INLINE SG256 void sg_tr8(__m256 r[8]) {
  __m256 t0 = _mm256_unpacklo_ps(r[0], r[1]), t1 = _mm256_unpackhi_ps(r[0], r[1]);
  __m256 t2 = _mm256_unpacklo_ps(r[2], r[3]), t3 = _mm256_unpackhi_ps(r[2], r[3]);
  __m256 t4 = _mm256_unpacklo_ps(r[4], r[5]), t5 = _mm256_unpackhi_ps(r[4], r[5]);
  __m256 t6 = _mm256_unpacklo_ps(r[6], r[7]), t7 = _mm256_unpackhi_ps(r[6], r[7]);
  __m256 s0 = _mm256_shuffle_ps(t0, t2, _MM_SHUFFLE(1, 0, 1, 0));
  __m256 s1 = _mm256_shuffle_ps(t0, t2, _MM_SHUFFLE(3, 2, 3, 2));
  __m256 s2 = _mm256_shuffle_ps(t1, t3, _MM_SHUFFLE(1, 0, 1, 0));
  __m256 s3 = _mm256_shuffle_ps(t1, t3, _MM_SHUFFLE(3, 2, 3, 2));
  __m256 s4 = _mm256_shuffle_ps(t4, t6, _MM_SHUFFLE(1, 0, 1, 0));
  __m256 s5 = _mm256_shuffle_ps(t4, t6, _MM_SHUFFLE(3, 2, 3, 2));
  __m256 s6 = _mm256_shuffle_ps(t5, t7, _MM_SHUFFLE(1, 0, 1, 0));
  __m256 s7 = _mm256_shuffle_ps(t5, t7, _MM_SHUFFLE(3, 2, 3, 2));
  r[0] = _mm256_permute2f128_ps(s0, s4, 0x20);
  r[1] = _mm256_permute2f128_ps(s1, s5, 0x20);
  r[2] = _mm256_permute2f128_ps(s2, s6, 0x20);
  r[3] = _mm256_permute2f128_ps(s3, s7, 0x20);
  r[4] = _mm256_permute2f128_ps(s0, s4, 0x31);
  r[5] = _mm256_permute2f128_ps(s1, s5, 0x31);
  r[6] = _mm256_permute2f128_ps(s2, s6, 0x31);
  r[7] = _mm256_permute2f128_ps(s3, s7, 0x31);
}

/* sg_clamp kind >= 0 applied (max first: a NaN passes, as in sg2_act). */
static SG_ALWAYS_INLINE SG256 __m256 sg2_clamp(int kind, __m256 v, __m256 lo, __m256 hi) {
  if (kind > 0)
    v = _mm256_max_ps(lo, v);
  if (kind > 1)
    v = _mm256_min_ps(hi, v);
  return v;
}

static SG_ALWAYS_INLINE SG256 __m256 sg2_act(const sg_act *a, __m256 v) {
  const __m256 zero = _mm256_setzero_ps();
  switch (a->act) {
  case NN_SGEMM_ACT_RELU:
    return _mm256_max_ps(zero, v);
  case NN_SGEMM_ACT_CLIP:
    v = _mm256_max_ps(_mm256_set1_ps(a->lo), v);
    return _mm256_min_ps(_mm256_set1_ps(a->hi), v);
  case NN_SGEMM_ACT_LEAKY:
    return _mm256_blendv_ps(v, _mm256_mul_ps(v, _mm256_set1_ps(a->slope)),
                            _mm256_cmp_ps(v, zero, _CMP_LT_OQ));
  case NN_SGEMM_ACT_HSWISH: {
    __m256 t = _mm256_fmadd_ps(v, _mm256_set1_ps(1.0f / 6.0f), _mm256_set1_ps(0.5f));
    t = _mm256_max_ps(zero, t);
    t = _mm256_min_ps(_mm256_set1_ps(1.0f), t);
    return _mm256_mul_ps(v, t);
  }
  case NN_SGEMM_ACT_SIGMOID:
    return sg2_sigmoid(v);
  case NN_SGEMM_ACT_SILU:
    /* v / (1 + exp(-v)): one rounding and one multiply less than
     * v * sigmoid(v) (a 1x1 conv + SiLU of EfficientNet 5% faster) */
    return _mm256_div_ps(v, _mm256_add_ps(_mm256_set1_ps(1.0f),
                                          sg2_exp(_mm256_sub_ps(_mm256_setzero_ps(), v))));
  case NN_SGEMM_ACT_GELU:
    return sg2_gelu(v);
  default:
    return v;
  }
}

static SG_ALWAYS_INLINE SG512 __m512 sg5_exp(__m512 x) {
  x = _mm512_min_ps(_mm512_set1_ps(88.7228f), x);
  x = _mm512_max_ps(_mm512_set1_ps(-88.3762626647949f), x);
  __m512 fx = _mm512_fmadd_ps(x, _mm512_set1_ps(1.44269504088896341f), _mm512_set1_ps(0.5f));
  fx = _mm512_roundscale_ps(fx, _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC);
  x = _mm512_fnmadd_ps(fx, _mm512_set1_ps(0.693359375f), x);
  x = _mm512_fnmadd_ps(fx, _mm512_set1_ps(-2.12194440e-4f), x);
  __m512 z = _mm512_mul_ps(x, x);
  __m512 y = _mm512_set1_ps(1.9875691500E-4f);
  y = _mm512_fmadd_ps(y, x, _mm512_set1_ps(1.3981999507E-3f));
  y = _mm512_fmadd_ps(y, x, _mm512_set1_ps(8.3334519073E-3f));
  y = _mm512_fmadd_ps(y, x, _mm512_set1_ps(4.1665795894E-2f));
  y = _mm512_fmadd_ps(y, x, _mm512_set1_ps(1.6666665459E-1f));
  y = _mm512_fmadd_ps(y, x, _mm512_set1_ps(5.0000001201E-1f));
  y = _mm512_fmadd_ps(y, z, _mm512_add_ps(x, _mm512_set1_ps(1.0f)));
  __m512i e = _mm512_add_epi32(_mm512_cvttps_epi32(fx), _mm512_set1_epi32(127));
  return _mm512_mul_ps(y, _mm512_castsi512_ps(_mm512_slli_epi32(e, 23)));
}

static SG_ALWAYS_INLINE SG512 __m512 sg5_sigmoid(__m512 v) {
  const __m512 one = _mm512_set1_ps(1.0f);
  return _mm512_div_ps(one, _mm512_add_ps(one, sg5_exp(_mm512_sub_ps(_mm512_setzero_ps(), v))));
}

static SG_ALWAYS_INLINE SG512 __m512 sg5_with_sign(__m512 r, __m512 x) {
  const __m512i sign = _mm512_set1_epi32((int)0x80000000u);
  return _mm512_castsi512_ps(_mm512_or_si512(_mm512_castps_si512(r),
                                             _mm512_and_si512(sign, _mm512_castps_si512(x))));
}

/* As sg2_erf, 16 lanes. */
static SG_ALWAYS_INLINE SG512 __m512 sg5_erf(__m512 x) {
#define set1 _mm512_set1_ps
  const __m512 one = _mm512_set1_ps(1.0f);
  __m512 ax = _mm512_abs_ps(x), t = _mm512_mul_ps(ax, ax);
  __m512 small = _mm512_mul_ps(ax, SG_ERF_P(_mm512_fmadd_ps, t));
  __m512 r = _mm512_sub_ps(one, sg5_exp(_mm512_sub_ps(SG_ERF_Q(_mm512_fmadd_ps, ax), t)));
  r = _mm512_mask_mov_ps(r, _mm512_cmp_ps_mask(ax, set1(SG_ERF_ONE), _CMP_GE_OQ), one);
  r = _mm512_mask_mov_ps(r, _mm512_cmp_ps_mask(ax, set1(SG_ERF_SPLIT), _CMP_LE_OQ), small);
  return sg5_with_sign(r, x);
#undef set1
}

static SG_ALWAYS_INLINE SG512 __m512 sg5_gelu(__m512 v) {
  __m512 e = sg5_erf(_mm512_mul_ps(v, _mm512_set1_ps(0.70710678118654752f)));
  return _mm512_mul_ps(_mm512_mul_ps(_mm512_set1_ps(0.5f), v),
                       _mm512_add_ps(_mm512_set1_ps(1.0f), e));
}

/* As sg2_clamp, 16 lanes. */
static SG_ALWAYS_INLINE SG512 __m512 sg5_clamp(int kind, __m512 v, __m512 lo, __m512 hi) {
  if (kind > 0)
    v = _mm512_max_ps(lo, v);
  if (kind > 1)
    v = _mm512_min_ps(hi, v);
  return v;
}

static SG_ALWAYS_INLINE SG512 __m512 sg5_act(const sg_act *a, __m512 v) {
  const __m512 zero = _mm512_setzero_ps();
  switch (a->act) {
  case NN_SGEMM_ACT_RELU:
    return _mm512_max_ps(zero, v);
  case NN_SGEMM_ACT_CLIP:
    v = _mm512_max_ps(_mm512_set1_ps(a->lo), v);
    return _mm512_min_ps(_mm512_set1_ps(a->hi), v);
  case NN_SGEMM_ACT_LEAKY:
    return _mm512_mask_mul_ps(v, _mm512_cmp_ps_mask(v, zero, _CMP_LT_OQ), v,
                              _mm512_set1_ps(a->slope));
  case NN_SGEMM_ACT_HSWISH: {
    __m512 t = _mm512_fmadd_ps(v, _mm512_set1_ps(1.0f / 6.0f), _mm512_set1_ps(0.5f));
    t = _mm512_max_ps(zero, t);
    t = _mm512_min_ps(_mm512_set1_ps(1.0f), t);
    return _mm512_mul_ps(v, t);
  }
  case NN_SGEMM_ACT_SIGMOID:
    return sg5_sigmoid(v);
  case NN_SGEMM_ACT_SILU:   /* as sg2_act's */
    return _mm512_div_ps(v, _mm512_add_ps(_mm512_set1_ps(1.0f),
                                          sg5_exp(_mm512_sub_ps(_mm512_setzero_ps(), v))));
  case NN_SGEMM_ACT_GELU:
    return sg5_gelu(v);
  default:
    return v;
  }
}

/* The stride-2 AVX-512 kernels (pool.c's 3x3 pools, dwconv.c's 3x3
 * depthwise, conv_direct.c's phase planes) read 16 columns from c of a row
 * of n, masked to those inside it, and split pairs of vectors into their
 * even and odd lanes with permutes. */
static inline __mmask16 sg5_cols_mask(int64_t n, int64_t c) {
  int64_t lo = c < 0 ? -c : 0, hi = n - c < 16 ? n - c : 16;
  return hi > lo ? (__mmask16)(((1u << hi) - 1u) & ~((1u << lo) - 1u)) : (__mmask16)0;
}
/* permutex2var indices of lanes 0, 2, ..., 30 of a pair (add 1: the odd);
 * a macro, usable in functions of any AVX-512 target */
#define SG5_EVEN_IDX \
  _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30)
#endif /* SG_X86 */

#endif

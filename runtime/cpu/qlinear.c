/* qlinear.c - CPU kernels of ONNX Runtime's QOperator contrib ops (domain
 * com.microsoft; checks and geometry: ops/qlinear.h).  An int8 model from
 * its quantizer is expected to give ONNX Runtime's bytes, so each kernel
 * does the arithmetic ONNX Runtime's CPU kernels (MLAS) do on x86-64 with
 * AVX2 and FMA, operation for operation, in float32 where they use float32:
 *
 *   QLinearAdd   rA = sA / sC, rB = sB / sC, F = zC - fma(rA, zA, rB * zB),
 *                C = sat(rint(fma(a, rA, fma(b, rB, F))))  (MlasQLinearAdd's
 *                AVX2 kernel, where the compiler fused F's and the scalar
 *                operand's multiply-add; with A the scalar of each span the
 *                roles of A and B swap, see qlbin_add_loop)
 *   QLinearMul   C = sat(rint(float((a - zA)(b - zB)) * (sA * sB / sC) + zC))
 *   QLinearGlobalAveragePool
 *                the int32 sum minus zX * image size, times
 *                sX / (sY * image size), clamped, rounded, plus zY
 *   QLinearAveragePool
 *                window sums of sX * (x - zX) in float in window order,
 *                divided by the count, then rint(y / sY + zY) saturated; a
 *                window of the whole unpadded image as the global pool
 *   QLinearConcat, QLinearSigmoid, QLinearLeakyRelu
 *                256-entry tables: sX * (x - zX), the function, then
 *                MlasQuantizeLinear (divide by sY, clamp, round, add zY);
 *                Concat copies an input whose scale and zero point are Y's
 *   QLinearSoftmax
 *                exp table over x - max (double exp, float entries),
 *                float row sums, ONNX Runtime's own requantization
 *
 * rint is round half to even throughout (the MXCSR default that
 * _mm_cvtps_epi32 and nearbyintf use).  fmaf is exact on every machine:
 * the FMA instruction on the AVX2 path, libm's emulation elsewhere.
 *
 * Tables whose parameters are constants are built once, in prepare, into
 * priv; otherwise each run builds them on the stack (256 bytes; no heap
 * allocation in run). */
#include "cpu/kernel_util.h"
#include "cpu/sgemm.h"
#include "ops/qlinear.h"

#if defined(__x86_64__) || defined(__i386__)
#define QL_FMA_TARGET __attribute__((target("avx2,fma")))
#define QL_HAVE_FMA_PATH 1
#include <immintrin.h>
#else
#define QL_FMA_TARGET
#define QL_HAVE_FMA_PATH 0
#endif

/* Elements per unit of work on the session's workers. */
#define QL_CHUNK 16384

/* ---- shared helpers ---------------------------------------------------------------- */

typedef struct ql_range {
  int32_t lo, hi;
} ql_range;

static ql_range ql_range_of(nn_dtype dt) {
  return dt == NN_DTYPE_INT8 ? (ql_range){-128, 127} : (ql_range){0, 255};
}

static inline int32_t ql_ld(const void *p, bool s8, int64_t i) {
  return s8 ? ((const int8_t *)p)[i] : ((const uint8_t *)p)[i];
}

static inline void ql_st(void *p, bool s8, int64_t i, int32_t v) {
  if (s8)
    ((int8_t *)p)[i] = (int8_t)v;
  else
    ((uint8_t *)p)[i] = (uint8_t)v;
}

/* The int32 whose two's complement bits are u (C leaves the cast of a
 * uint32 above INT32_MAX implementation-defined). */
static inline int32_t ql_wrap32(uint32_t u) {
  return u <= (uint32_t)INT32_MAX ? (int32_t)u : -(int32_t)(~u) - 1;
}

static float ql_scale(const nn_value *s) { return ((const float *)s->data)[0]; }

static int32_t ql_zp(const nn_value *z) {
  return z ? ql_ld(z->data, z->dtype == NN_DTYPE_INT8, 0) : 0;
}

/* Whether a parameter input is fixed for the plan (absent counts). */
static bool ql_known(const nn_value *v) { return !v || (v->known && v->data); }

/* _mm_cvtps_epi32 (round half to even; NaN and values out of int32 range
 * give INT32_MIN) followed by the packs' saturation to [lo, hi].  Beyond
 * 2^22 a float is an integer or saturates anyway, so the rounding trick
 * (add and subtract 1.5 * 2^23) only runs where it is exact. */
static inline int32_t ql_cvt_sat(float v, ql_range r) {
  if (v > -4194304.0f && v < 4194304.0f) {
    int32_t i = (int32_t)((v + 12582912.0f) - 12582912.0f);
    return i < r.lo ? r.lo : i > r.hi ? r.hi : i;
  }
  if (v >= 4194304.0f && v < 2147483648.0f)
    return r.hi;
  return r.lo; /* below -2^22, or INT32_MIN: NaN, beyond +-2^31 */
}

/* MLAS's clamp-first requantization (MlasQuantizeLinear,
 * MlasRequantizeOutput): v clamped to [lo - zp, hi - zp] (NaN to the lower
 * bound, as MAXPS returns its second operand), rounded, plus zp. */
static inline int32_t ql_clamp_round(float v, int32_t zp, ql_range r) {
  float lo = (float)(r.lo - zp), hi = (float)(r.hi - zp);
  v = v >= lo ? v : lo;
  v = v <= hi ? v : hi;
  return (int32_t)((v + 12582912.0f) - 12582912.0f) + zp;
}

/* dequantized[i] = s * (x - zp) for the 256 values x of the type, indexed
 * by the byte: the first step of every table (QlinearBuildLookupTable's
 * float product). */
static void ql_dequant_table(float *t, bool s8, float s, int32_t zp) {
  for (int i = 0; i < 256; i++) {
    int32_t x = s8 && i >= 128 ? i - 256 : i;
    t[i] = s * (float)(x - zp);
  }
}

/* ---- QLinearAdd / QLinearMul ----------------------------------------------------------- */

/* The broadcast geometry with adjacent dims of the same pattern merged and
 * size-1 dims dropped: the innermost dim is a run where A and B each step
 * by 1 or stay (0). */
typedef struct qlbin_priv {
  int rank;
  int64_t dims[NN_MAX_RANK], astr[NN_MAX_RANK], bstr[NN_MAX_RANK];
  int64_t rows, inner, nch; /* rows of the innermost dim, chunks per row */
  bool swap, mul, s8;
} qlbin_priv;

static nn_status qlbin_prepare(nn_ctx *c, nn_node *n, bool mul) {
  nn_qlbin_geom g;
  nn_status st = nn_qlbin_geom_init(c, n, &g);
  if (st != NN_OK)
    return st;
  qlbin_priv *p = nn_malloc(sizeof *p);
  if (!p)
    return nn_fail(c, NN_ERR_NOMEM, "out of memory");
  memset(p, 0, sizeof *p);
  for (int i = 0; i < g.rank; i++) {
    if (g.dims[i] == 1)
      continue;
    int j = p->rank - 1;
    if (j >= 0 && p->astr[j] == g.astr[i] * g.dims[i] && p->bstr[j] == g.bstr[i] * g.dims[i]) {
      p->dims[j] *= g.dims[i];
      p->astr[j] = g.astr[i];
      p->bstr[j] = g.bstr[i];
    } else {
      p->dims[p->rank] = g.dims[i];
      p->astr[p->rank] = g.astr[i];
      p->bstr[p->rank] = g.bstr[i];
      p->rank++;
    }
  }
  if (p->rank == 0) { /* one element */
    p->rank = 1;
    p->dims[0] = 1;
  }
  p->inner = p->dims[p->rank - 1];
  p->rows = n->y[0]->numel / (p->inner > 0 ? p->inner : 1);
  p->nch = (p->inner + QL_CHUNK - 1) / QL_CHUNK;
  p->swap = g.a_spans_scalar;
  p->mul = mul;
  p->s8 = n->x[0]->dtype == NN_DTYPE_INT8;
  n->priv = p;
  return NN_OK;
}

static nn_status qladd_prepare(nn_ctx *c, nn_node *n) { return qlbin_prepare(c, n, false); }
static nn_status qlmul_prepare(nn_ctx *c, nn_node *n) { return qlbin_prepare(c, n, true); }

/* One run of n elements: a and b step by sa and sb (0 or 1). */
typedef struct qlbin_args {
  const void *a, *b;
  void *y;
  int64_t sa, sb, n;
  bool s8;
  ql_range r;
  /* add: the operand taken as the span is x0 (see qlbin_add_loop); mul: ratio */
  float r0, r1, fixed, ratio;
  int32_t za, zb, zc;
  bool swap;
} qlbin_args;

/* MlasQLinearAdd on AVX2 (qladd_avx2.cpp), per element: the span operand
 * x0 enters last, v = fma(x0, r0, fma(x1, r1, F)) with F = zC - fma(r0, z0,
 * r1 * z1): the kernel's own FMAs plus the two its compiler fused (F, and
 * the scalar operand's product into F).  ONNX Runtime passes A as x0 unless
 * A is the scalar of the span; then B is x0 (qlbin_geom's a_spans_scalar),
 * which rounds differently.  Exact, so both loops below agree. */
static inline __attribute__((always_inline)) void qlbin_add_loop(const qlbin_args *q) {
  const float r0 = q->r0, r1 = q->r1, F = q->fixed;
  for (int64_t i = 0; i < q->n; i++) {
    float a = (float)ql_ld(q->a, q->s8, i * q->sa), b = (float)ql_ld(q->b, q->s8, i * q->sb);
    float x0 = q->swap ? b : a, x1 = q->swap ? a : b;
    ql_st(q->y, q->s8, i, ql_cvt_sat(fmaf(x0, r0, fmaf(x1, r1, F)), q->r));
  }
}

static void qlbin_add_portable(const qlbin_args *q) { qlbin_add_loop(q); }

#if QL_HAVE_FMA_PATH
/* Eight elements of a span as floats: stepping (s = 1) or one value (s = 0). */
QL_FMA_TARGET static inline __m256 qlbin_ld8(const uint8_t *p, int64_t s, bool s8, __m256 one) {
  if (!s)
    return one;
  __m128i v = _mm_loadl_epi64((const __m128i *)p);
  return _mm256_cvtepi32_ps(s8 ? _mm256_cvtepi8_epi32(v) : _mm256_cvtepu8_epi32(v));
}

/* Both operands spans (the residual Add): sixteen a step with the type fixed. */
QL_FMA_TARGET static inline __attribute__((always_inline)) int64_t
qlbin_add_spans(const qlbin_args *q, const bool s8) {
  const __m256 r0 = _mm256_set1_ps(q->r0), r1 = _mm256_set1_ps(q->r1), F = _mm256_set1_ps(q->fixed);
  const uint8_t *x0 = q->swap ? q->b : q->a, *x1 = q->swap ? q->a : q->b;
  uint8_t *y = q->y;
  int64_t i = 0;
  for (; i + 16 <= q->n; i += 16) {
    const __m128i v0 = _mm_loadu_si128((const __m128i *)(x0 + i));
    const __m128i v1 = _mm_loadu_si128((const __m128i *)(x1 + i));
    __m128i h[2];
    for (int k = 0; k < 2; k++) {
      const __m128i a = k ? _mm_srli_si128(v0, 8) : v0, b = k ? _mm_srli_si128(v1, 8) : v1;
      const __m256 f0 = _mm256_cvtepi32_ps(s8 ? _mm256_cvtepi8_epi32(a) : _mm256_cvtepu8_epi32(a));
      const __m256 f1 = _mm256_cvtepi32_ps(s8 ? _mm256_cvtepi8_epi32(b) : _mm256_cvtepu8_epi32(b));
      const __m256i v = _mm256_cvtps_epi32(_mm256_fmadd_ps(f0, r0, _mm256_fmadd_ps(f1, r1, F)));
      h[k] = _mm_packs_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
    }
    _mm_storeu_si128((__m128i *)(y + i), s8 ? _mm_packs_epi16(h[0], h[1]) : _mm_packus_epi16(h[0], h[1]));
  }
  return i;
}

/* Sixteen a step over spans of any step (0 or 1 each); how far it got. */
QL_FMA_TARGET static int64_t qlbin_add_any(const qlbin_args *q) {
  const __m256 r0 = _mm256_set1_ps(q->r0), r1 = _mm256_set1_ps(q->r1), F = _mm256_set1_ps(q->fixed);
  const uint8_t *a = q->a, *b = q->b;
  uint8_t *y = q->y;
  const bool s8 = q->s8;
  const int64_t sa = q->sa, sb = q->sb;
  const __m256 a1 = _mm256_set1_ps((float)ql_ld(a, s8, 0)), b1 = _mm256_set1_ps((float)ql_ld(b, s8, 0));
  int64_t i = 0;
  for (; i + 16 <= q->n; i += 16) {
    __m128i h[2];
    for (int k = 0; k < 2; k++) {
      const int64_t at = i + 8 * k;
      __m256 fa = qlbin_ld8(a + at * sa, sa, s8, a1), fb = qlbin_ld8(b + at * sb, sb, s8, b1);
      __m256 x0 = q->swap ? fb : fa, x1 = q->swap ? fa : fb;
      __m256i v = _mm256_cvtps_epi32(_mm256_fmadd_ps(x0, r0, _mm256_fmadd_ps(x1, r1, F)));
      h[k] = _mm_packs_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
    }
    __m128i o = s8 ? _mm_packs_epi16(h[0], h[1]) : _mm_packus_epi16(h[0], h[1]);
    _mm_storeu_si128((__m128i *)(y + i), o);
  }
  return i;
}

/* qlbin_add_loop sixteen at a time, as MLAS's AVX2 kernel does it: the two
 * FMAs, _mm256_cvtps_epi32 (half to even; out of range or NaN gives
 * INT32_MIN) and the saturating packs to 16 then 8 bits, which is
 * ql_cvt_sat value for value.  The tail stays with the scalar loop. */
QL_FMA_TARGET static void qlbin_add_fma(const qlbin_args *q) {
  const int64_t i = q->sa == 1 && q->sb == 1 ? (q->s8 ? qlbin_add_spans(q, true) : qlbin_add_spans(q, false))
                                              : qlbin_add_any(q);
  if (i < q->n) {
    qlbin_args t = *q;
    t.a = (const uint8_t *)q->a + i * q->sa;
    t.b = (const uint8_t *)q->b + i * q->sb;
    t.y = (uint8_t *)q->y + i;
    t.n = q->n - i;
    qlbin_add_loop(&t);
  }
}
#else
static void qlbin_add_fma(const qlbin_args *q) { qlbin_add_loop(q); }
#endif

/* MlasQLinearMul (SSE2, qlmul.cpp): the exact int32 product of the
 * centred operands as float, times the ratio, plus zC: two roundings (this
 * file is C11, where the compiler contracts nothing into an FMA). */
static void qlbin_mul(const qlbin_args *q) {
  const float ratio = q->ratio, zc = (float)q->zc;
  for (int64_t i = 0; i < q->n; i++) {
    int32_t a = ql_ld(q->a, q->s8, i * q->sa) - q->za, b = ql_ld(q->b, q->s8, i * q->sb) - q->zb;
    float v = (float)(a * b) * ratio;
    v = v + zc;
    ql_st(q->y, q->s8, i, ql_cvt_sat(v, q->r));
  }
}

typedef struct qlbin_job {
  const qlbin_priv *p;
  qlbin_args base;
  bool fma;
} qlbin_job;

static void qlbin_units(void *arg, int64_t u0, int64_t u1) {
  const qlbin_job *j = arg;
  const qlbin_priv *p = j->p;
  for (int64_t u = u0; u < u1; u++) {
    int64_t row = u / p->nch, i0 = (u % p->nch) * QL_CHUNK;
    /* the row's offsets in A and B: its index over the outer dims */
    int64_t oa = 0, ob = 0, rem = row;
    for (int d = p->rank - 2; d >= 0; d--) {
      int64_t k = rem % p->dims[d];
      rem /= p->dims[d];
      oa += k * p->astr[d];
      ob += k * p->bstr[d];
    }
    qlbin_args q = j->base;
    q.sa = p->astr[p->rank - 1];
    q.sb = p->bstr[p->rank - 1];
    q.a = (const uint8_t *)q.a + oa + i0 * q.sa; /* 8-bit elements: offsets are bytes */
    q.b = (const uint8_t *)q.b + ob + i0 * q.sb;
    q.y = (uint8_t *)q.y + row * p->inner + i0;
    q.n = p->inner - i0 < QL_CHUNK ? p->inner - i0 : QL_CHUNK;
    if (p->mul)
      qlbin_mul(&q);
    else if (j->fma)
      qlbin_add_fma(&q);
    else
      qlbin_add_portable(&q);
  }
}

static nn_status qlbin_run(nn_ctx *c, nn_node *n) {
  const qlbin_priv *p = n->priv;
  const float sa = ql_scale(n->x[1]), sb = ql_scale(n->x[4]), sc = ql_scale(n->x[6]);
  const int32_t za = ql_zp(ku_in(n, 2)), zb = ql_zp(n->x[5]), zc = ql_zp(ku_in(n, 7));
  qlbin_job j = {.p = p, .fma = QL_HAVE_FMA_PATH && nn_cpu_isa_get() >= NN_CPU_AVX2};
  qlbin_args *q = &j.base;
  q->a = n->x[0]->data;
  q->b = n->x[3]->data;
  q->y = n->y[0]->data;
  q->s8 = p->s8;
  q->r = ql_range_of(n->y[0]->dtype);
  q->za = za, q->zb = zb, q->zc = zc;
  q->swap = p->swap;
  if (p->mul) {
    q->ratio = sa * sb / sc;
  } else {
    const float ra = sa / sc, rb = sb / sc;
    /* x0 is the operand the kernel takes as a span: A, or B when swapped */
    const float r0 = p->swap ? rb : ra, r1 = p->swap ? ra : rb;
    const int32_t z0 = p->swap ? zb : za, z1 = p->swap ? za : zb;
    q->r0 = r0, q->r1 = r1;
    q->fixed = (float)zc - fmaf(r0, (float)z0, r1 * (float)z1);
  }
  if (n->y[0]->numel > 0)
    nn_parallel_for(c, p->rows * p->nch, 1, qlbin_units, &j);
  return NN_OK;
}

/* ---- the pools ------------------------------------------------------------------------- */

typedef struct qlpool_priv {
  nn_qlpool_geom g;
  bool s8;
} qlpool_priv;

static nn_status qlpool_prepare(nn_ctx *c, nn_node *n, bool global) {
  qlpool_priv p;
  nn_status st = nn_qlpool_geom_init(c, n, global, &p.g);
  if (st != NN_OK)
    return st;
  p.s8 = n->x[0]->dtype == NN_DTYPE_INT8;
  qlpool_priv *pp = nn_malloc(sizeof *pp);
  if (!pp)
    return nn_fail(c, NN_ERR_NOMEM, "out of memory");
  *pp = p;
  n->priv = pp;
  return NN_OK;
}

static nn_status qlgap_prepare(nn_ctx *c, nn_node *n) { return qlpool_prepare(c, n, true); }
static nn_status qlap_prepare(nn_ctx *c, nn_node *n) { return qlpool_prepare(c, n, false); }

typedef struct qlpool_job {
  const qlpool_priv *p;
  const void *x;
  void *y;
  ql_range r;
  int32_t zx, zy;
  float scale;       /* global: sX / (sY * image) */
  float ys;          /* window: sY */
  const float *deq;  /* window: sX * (x - zX) by byte */
} qlpool_job;

/* The global pool's integer arithmetic (MlasQLinearGlobalAveragePoolNchw /
 * Nhwc): the int32 sum plus -zX * image (wrapping as the vector adds do),
 * as float times the scale, then MlasRequantizeOutput's clamp-first
 * rounding.  Unit u: one (n, c) plane, strided by `step` elements. */
static int32_t qlgap_one(const qlpool_job *j, const void *x, int64_t count, int64_t step) {
  const qlpool_priv *p = j->p;
  int64_t sum = 0, i = 0;
#if QL_HAVE_FMA_PATH && defined(__x86_64__)
  if (step == 1) {   /* a plane: 16 bytes a step (psadbw); int8 as uint8 less 128 each */
    const __m128i flip = _mm_set1_epi8(p->s8 ? (char)0x80 : 0), z = _mm_setzero_si128();
    __m128i s = z;
    for (; i + 16 <= count; i += 16)
      s = _mm_add_epi64(s, _mm_sad_epu8(_mm_xor_si128(_mm_loadu_si128((const __m128i *)((const uint8_t *)x + i)), flip), z));
    sum = _mm_cvtsi128_si64(s) + _mm_cvtsi128_si64(_mm_unpackhi_epi64(s, s)) - (p->s8 ? 128 * i : 0);
  }
#endif
  if (p->s8)
    for (; i < count; i++)
      sum += ((const int8_t *)x)[i * step];
  else
    for (; i < count; i++)
      sum += ((const uint8_t *)x)[i * step];
  uint32_t acc = (uint32_t)sum + (uint32_t)(-j->zx) * (uint32_t)count;
  return ql_clamp_round((float)ql_wrap32(acc) * j->scale, j->zy, j->r);
}

static void qlgap_units(void *arg, int64_t u0, int64_t u1) {
  const qlpool_job *j = arg;
  const qlpool_priv *p = j->p;
  const int64_t img = p->g.g.in_sz, C = p->g.C;
  for (int64_t u = u0; u < u1; u++) {
    int64_t b = u / C, ch = u % C;
    const char *x = j->x;
    if (p->g.channels_last)
      x += (b * img * C + ch);
    else
      x += u * img;
    ql_st(j->y, p->s8, u, qlgap_one(j, x, img, p->g.channels_last ? C : 1));
  }
}

/* One output element of the window pool: the window's taps in ONNX
 * Runtime's order (first spatial dim outermost), summed in float, divided
 * by the count, then quantize_value: rint(y / sY + zY) saturated. */
static int32_t qlap_window(const qlpool_job *j, const void *plane, int64_t cstep, const int64_t *o) {
  const nn_conv_geom *g = &j->p->g.g;
  int64_t lo[NN_CONV_SP], hi[NN_CONV_SP];
  for (int d = 0; d < NN_CONV_SP; d++)
    nn_conv_geom_taps(o[d], g->s[d], g->pb[d], 1, g->k[d], g->in[d], &lo[d], &hi[d]);
  float sum = 0.0f;
  const bool s8 = j->p->s8;
  for (int64_t t0 = lo[0]; t0 < hi[0]; t0++) {
    int64_t i0 = o[0] * g->s[0] - g->pb[0] + t0;
    for (int64_t t1 = lo[1]; t1 < hi[1]; t1++) {
      int64_t i1 = i0 * g->in[1] + o[1] * g->s[1] - g->pb[1] + t1;
      for (int64_t t2 = lo[2]; t2 < hi[2]; t2++) {
        int64_t i = i1 * g->in[2] + o[2] * g->s[2] - g->pb[2] + t2;
        sum += j->deq[(uint8_t)ql_ld(plane, s8, i * cstep)];
      }
    }
  }
  int64_t count = j->p->g.count_include_pad
                      ? g->k_sz
                      : (hi[0] - lo[0]) * (hi[1] - lo[1]) * (hi[2] - lo[2]);
  float y = sum / (float)count;
  return ql_cvt_sat(y / j->ys + (float)j->zy, j->r);
}

/* NCHW unit: one (n, c) plane; channels last: one (n, output pixel), all
 * channels (their sums kept apart: each its own window walk). */
static void qlap_units(void *arg, int64_t u0, int64_t u1) {
  const qlpool_job *j = arg;
  const qlpool_priv *p = j->p;
  const nn_conv_geom *g = &p->g.g;
  const int64_t C = p->g.C;
  for (int64_t u = u0; u < u1; u++) {
    if (!p->g.channels_last) {
      const char *plane = (const char *)j->x + u * g->in_sz;
      int64_t o[NN_CONV_SP];
      for (o[0] = 0; o[0] < g->out[0]; o[0]++)
        for (o[1] = 0; o[1] < g->out[1]; o[1]++)
          for (o[2] = 0; o[2] < g->out[2]; o[2]++) {
            int64_t yi = u * g->out_sz + (o[0] * g->out[1] + o[1]) * g->out[2] + o[2];
            ql_st(j->y, p->s8, yi, qlap_window(j, plane, 1, o));
          }
    } else {
      int64_t b = u / g->out_sz, pix = u % g->out_sz;
      int64_t o[NN_CONV_SP] = {pix / (g->out[1] * g->out[2]), pix / g->out[2] % g->out[1],
                               pix % g->out[2]};
      for (int64_t ch = 0; ch < C; ch++) {
        const char *plane = (const char *)j->x + b * g->in_sz * C + ch;
        ql_st(j->y, p->s8, u * C + ch, qlap_window(j, plane, C, o));
      }
    }
  }
}

static nn_status qlpool_run(nn_ctx *c, nn_node *n) {
  const qlpool_priv *p = n->priv;
  const float sx = ql_scale(n->x[1]), sy = ql_scale(n->x[3]);
  qlpool_job j = {.p = p, .x = n->x[0]->data, .y = n->y[0]->data,
                  .r = ql_range_of(n->x[0]->dtype), .zx = ql_zp(ku_in(n, 2)),
                  .zy = ql_zp(ku_in(n, 4)), .ys = sy};
  if (n->y[0]->numel == 0)
    return NN_OK;
  if (p->g.as_global) {
    /* CheckQLinearGlobalAveragePoolScaleAndSize's product: float, as is */
    j.scale = sx / (sy * (float)p->g.g.in_sz);
    const int64_t img = p->g.g.in_sz > 0 ? p->g.g.in_sz : 1;
    nn_parallel_for(c, p->g.N * p->g.C, img < QL_CHUNK ? QL_CHUNK / img : 1, qlgap_units, &j);
    return NN_OK;
  }
  float deq[256];
  ql_dequant_table(deq, p->s8, sx, j.zx);
  j.deq = deq;
  nn_parallel_for(c, p->g.channels_last ? p->g.N * p->g.g.out_sz : p->g.N * p->g.C, 1, qlap_units,
                  &j);
  return NN_OK;
}

/* ---- the lookup tables ------------------------------------------------------------------ */

/* MlasComputeLogistic on x86-64 with FMA (LogisticKernelFma3): Eigen's
 * rational approximation, clamped to [-18, 18], its polynomials by FMA,
 * the result floored at 0. */
static float ql_logistic(float x) {
  x = x < -18.0f ? -18.0f : x;
  x = x > 18.0f ? 18.0f : x;
  const float x2 = x * x;
  float p = fmaf(x2, 4.37031012579801e-11f, 1.15627324459942e-07f);
  p = fmaf(x2, p, 6.08574864600143e-05f);
  p = fmaf(x2, p, 8.51377133304701e-03f);
  p = fmaf(x2, p, 2.48287947061529e-01f);
  float q = fmaf(x2, 6.10247389755681e-13f, 5.76102136993427e-09f);
  q = fmaf(x2, q, 6.29106785017040e-06f);
  q = fmaf(x2, q, 1.70198817374094e-03f);
  q = fmaf(x2, q, 1.16817656904453e-01f);
  q = fmaf(x2, q, 9.93151921023180e-01f);
  p = x * p;
  float r = p / q + 0.5f;
  return r >= 0.0f ? r : 0.0f;  /* MAXPS(0, r): NaN stays */
}

enum { QL_FN_IDENTITY, QL_FN_SIGMOID, QL_FN_LEAKY };

/* table[x] for every byte x: dequantize, the function, MlasQuantizeLinear. */
static void ql_build_table(uint8_t *table, bool s8, float sx, int32_t zx, float sy, int32_t zy,
                           int fn, float alpha) {
  float v[256];
  ql_dequant_table(v, s8, sx, zx);
  ql_range r = s8 ? (ql_range){-128, 127} : (ql_range){0, 255};
  for (int i = 0; i < 256; i++) {
    float f = v[i];
    if (fn == QL_FN_SIGMOID)
      f = ql_logistic(f);
    else if (fn == QL_FN_LEAKY)
      f = f >= 0.0f ? f : alpha * f;
    int32_t q = ql_clamp_round(f / sy, zy, r);
    table[i] = (uint8_t)(s8 ? (uint8_t)(int8_t)q : (uint8_t)q);
  }
}

typedef struct qllut_priv {
  uint8_t table[256];
  bool fixed;
  int fn;
  float alpha;
} qllut_priv;

static nn_status qllut_prepare(nn_ctx *c, nn_node *n, int fn) {
  qllut_priv *p = nn_malloc(sizeof *p);
  if (!p)
    return nn_fail(c, NN_ERR_NOMEM, "out of memory");
  memset(p, 0, sizeof *p);
  p->fn = fn;
  p->alpha = nn_attr_float(n, "alpha", 0.01f);
  p->fixed = ql_known(n->x[1]) && ql_known(ku_in(n, 2)) && ql_known(n->x[3]) &&
             ql_known(ku_in(n, 4));
  if (p->fixed)
    ql_build_table(p->table, n->x[0]->dtype == NN_DTYPE_INT8, ql_scale(n->x[1]), ql_zp(ku_in(n, 2)),
                   ql_scale(n->x[3]), ql_zp(ku_in(n, 4)), fn, p->alpha);
  n->priv = p;
  return NN_OK;
}

static nn_status qlsigmoid_prepare(nn_ctx *c, nn_node *n) { return qllut_prepare(c, n, QL_FN_SIGMOID); }
static nn_status qlleaky_prepare(nn_ctx *c, nn_node *n) { return qllut_prepare(c, n, QL_FN_LEAKY); }

typedef struct qllut_job {
  const uint8_t *table, *x;
  uint8_t *y;
  int64_t n;
} qllut_job;

static void qllut_units(void *arg, int64_t u0, int64_t u1) {
  const qllut_job *j = arg;
  int64_t e0 = u0 * QL_CHUNK, e1 = u1 * QL_CHUNK < j->n ? u1 * QL_CHUNK : j->n;
  for (int64_t i = e0; i < e1; i++)
    j->y[i] = j->table[j->x[i]];
}

static nn_status qllut_run(nn_ctx *c, nn_node *n) {
  const qllut_priv *p = n->priv;
  uint8_t table[256];
  const uint8_t *t = p->table;
  if (!p->fixed) {
    ql_build_table(table, n->x[0]->dtype == NN_DTYPE_INT8, ql_scale(n->x[1]), ql_zp(ku_in(n, 2)),
                   ql_scale(n->x[3]), ql_zp(ku_in(n, 4)), p->fn, p->alpha);
    t = table;
  }
  qllut_job j = {t, n->x[0]->data, n->y[0]->data, n->x[0]->numel};
  if (j.n > 0)
    nn_parallel_for(c, (j.n + QL_CHUNK - 1) / QL_CHUNK, 1, qllut_units, &j);
  return NN_OK;
}

/* ---- QLinearConcat ------------------------------------------------------------------------ */

/* Per input: copied (its scale and zero point are Y's: has_same_scale /
 * has_same_zero_point compare the values) or mapped through its table, in
 * priv when its parameters and Y's are constants. */
enum { QLC_DYNAMIC = 0, QLC_COPY = 1, QLC_TABLE = 2 };

typedef struct qlconcat_priv {
  nn_qlconcat_geom g;
  bool s8;
  /* then count kinds (uint8_t), padded, then count tables of 256 bytes */
} qlconcat_priv;

#define QLC_HEAD nn_align_up(sizeof(qlconcat_priv), 16)

static uint8_t *qlc_kinds(const qlconcat_priv *p) { return (uint8_t *)p + QLC_HEAD; }
static uint8_t *qlc_tables(const qlconcat_priv *p) {
  return (uint8_t *)p + QLC_HEAD + nn_align_up((size_t)p->g.count, 16);
}

/* Whether input k copies, from the current parameter values. */
static bool qlc_same(const nn_node *n, int k) {
  return ql_scale(n->x[3 + 3 * k]) == ql_scale(n->x[0]) &&
         ql_zp(n->x[4 + 3 * k]) == ql_zp(n->x[1]);
}

static nn_status qlconcat_prepare(nn_ctx *c, nn_node *n) {
  nn_qlconcat_geom g;
  nn_status st = nn_qlconcat_geom_init(c, n, &g);
  if (st != NN_OK)
    return st;
  size_t bytes = QLC_HEAD + nn_align_up((size_t)g.count, 16) + (size_t)g.count * 256;
  qlconcat_priv *p = nn_malloc(bytes);
  if (!p)
    return nn_fail(c, NN_ERR_NOMEM, "out of memory");
  memset(p, 0, bytes);
  p->g = g;
  p->s8 = n->x[1]->dtype == NN_DTYPE_INT8;
  bool y_known = ql_known(n->x[0]) && ql_known(n->x[1]);
  for (int k = 0; k < g.count; k++) {
    if (!y_known || !ql_known(n->x[3 + 3 * k]) || !ql_known(n->x[4 + 3 * k]))
      continue;
    if (qlc_same(n, k)) {
      qlc_kinds(p)[k] = QLC_COPY;
    } else {
      qlc_kinds(p)[k] = QLC_TABLE;
      ql_build_table(qlc_tables(p) + (size_t)k * 256, p->s8, ql_scale(n->x[3 + 3 * k]),
                     ql_zp(n->x[4 + 3 * k]), ql_scale(n->x[0]), ql_zp(n->x[1]), QL_FN_IDENTITY,
                     0.0f);
    }
  }
  n->priv = p;
  return NN_OK;
}

typedef struct qlconcat_job {
  const uint8_t *x, *table; /* table NULL: copy */
  uint8_t *y;
  int64_t pitch, out_pitch;
} qlconcat_job;

static void qlconcat_rows(void *arg, int64_t r0, int64_t r1) {
  const qlconcat_job *j = arg;
  for (int64_t r = r0; r < r1; r++) {
    const uint8_t *x = j->x + r * j->pitch;
    uint8_t *y = j->y + r * j->out_pitch;
    if (!j->table)
      memcpy(y, x, (size_t)j->pitch);
    else
      for (int64_t i = 0; i < j->pitch; i++)
        y[i] = j->table[x[i]];
  }
}

static nn_status qlconcat_run(nn_ctx *c, nn_node *n) {
  const qlconcat_priv *p = n->priv;
  const nn_qlconcat_geom *g = &p->g;
  int64_t off = 0;
  uint8_t table[256];
  for (int k = 0; k < g->count; k++) {
    const nn_value *x = n->x[2 + 3 * k];
    int64_t pitch = g->outer > 0 ? x->numel / g->outer : 0;
    qlconcat_job j = {x->data, NULL, (uint8_t *)n->y[0]->data + off, pitch, g->out_pitch};
    int kind = qlc_kinds(p)[k];
    if (kind == QLC_TABLE) {
      j.table = qlc_tables(p) + (size_t)k * 256;
    } else if (kind == QLC_DYNAMIC && !qlc_same(n, k)) {
      ql_build_table(table, p->s8, ql_scale(n->x[3 + 3 * k]), ql_zp(n->x[4 + 3 * k]),
                     ql_scale(n->x[0]), ql_zp(n->x[1]), QL_FN_IDENTITY, 0.0f);
      j.table = table;
    }
    if (pitch > 0)
      nn_parallel_for(c, g->outer, QL_CHUNK / pitch + 1, qlconcat_rows, &j);
    off += pitch;
  }
  return NN_OK;
}

/* ---- QLinearSoftmax ------------------------------------------------------------------------ */

/* ONNX Runtime's QLinearSoftmax (qlinear_softmax.cc, float table): entry i
 * = exp((i - 255 + shift) * sX) in double, stored as float, shift =
 * max(0, ln(FLT_MAX / D) - 5) / sX keeping a row's sum finite; element x of
 * a row with maximum m reads entry 255 - (m - x).  Its requantization:
 * q = rint(e * floor(1 / sY) / sum) + zY, uint8 through uint32 (above 255:
 * 255), int8 through int32 (above 127: 127), as its casts do on x86-64. */
typedef struct qlsoftmax_priv {
  nn_qlsoftmax_geom g;
  bool s8, fixed;
  float table[256];
} qlsoftmax_priv;

static void qlsoftmax_table(float *t, float sx, int64_t D) {
  double shift = log((double)(FLT_MAX / (float)D));
  shift = (shift - 5.0 > 0.0 ? shift - 5.0 : 0.0) / (double)sx;
  for (int i = 0; i < 256; i++)
    t[i] = (float)exp(((double)i - 255.0 + shift) * (double)sx);
}

static nn_status qlsoftmax_prepare(nn_ctx *c, nn_node *n) {
  nn_qlsoftmax_geom g;
  nn_status st = nn_qlsoftmax_geom_init(c, n, &g);
  if (st != NN_OK)
    return st;
  qlsoftmax_priv *p = nn_malloc(sizeof *p);
  if (!p)
    return nn_fail(c, NN_ERR_NOMEM, "out of memory");
  memset(p, 0, sizeof *p);
  p->g = g;
  p->s8 = n->x[0]->dtype == NN_DTYPE_INT8;
  p->fixed = ql_known(n->x[1]) && g.D > 0;
  if (p->fixed)
    qlsoftmax_table(p->table, ql_scale(n->x[1]), g.D);
  n->priv = p;
  return NN_OK;
}

typedef struct qlsoftmax_job {
  const qlsoftmax_priv *p;
  const float *table;
  const void *x;
  void *y;
  float ys;
  int32_t zy;
} qlsoftmax_job;

/* float -> uint32 as x86-64 code does it (through a 64-bit truncation,
 * whose out-of-range value is INT64_MIN), without C's undefined cases. */
static uint32_t ql_f2u32(float v) {
  if (!(v > -9223372036854775808.0f && v < 9223372036854775808.0f))
    return 0u;
  return (uint32_t)(uint64_t)(int64_t)v;
}

/* float -> int32 truncation as cvttss2si: out of range or NaN: INT32_MIN. */
static uint32_t ql_f2i32_bits(float v) {
  if (!(v >= -2147483648.0f && v < 2147483648.0f))
    return 0x80000000u;
  return (uint32_t)(int32_t)v;
}

static void qlsoftmax_rows(void *arg, int64_t r0, int64_t r1) {
  const qlsoftmax_job *j = arg;
  const nn_qlsoftmax_geom *g = &j->p->g;
  const bool s8 = j->p->s8;
  for (int64_t r = r0; r < r1; r++) {
    int64_t base = (r / g->inner) * g->D * g->inner + r % g->inner, st = g->inner;
    int32_t m = ql_ld(j->x, s8, base);
    for (int64_t i = 1; i < g->D; i++) {
      int32_t v = ql_ld(j->x, s8, base + i * st);
      m = v > m ? v : m;
    }
    float sum = 0.0f;
    for (int64_t i = 0; i < g->D; i++)
      sum += j->table[255 - (m - ql_ld(j->x, s8, base + i * st))];
    if (sum == 0.0f)
      continue; /* ONNX Runtime leaves such a row unwritten: never with finite scales */
    for (int64_t i = 0; i < g->D; i++) {
      float e = j->table[255 - (m - ql_ld(j->x, s8, base + i * st))];
      float v = nearbyintf((e * j->ys) / sum);
      int64_t yi = base + i * st;
      if (!s8) {
        uint32_t q = ql_f2u32(v) + (uint32_t)j->zy;
        ((uint8_t *)j->y)[yi] = (uint8_t)(q > 255u ? 255u : q);
      } else {
        uint32_t q = ql_f2i32_bits(v) + (uint32_t)j->zy; /* int32 addition, wrapping */
        ((uint8_t *)j->y)[yi] = ql_wrap32(q) > 127 ? 0x7fu : (uint8_t)(q & 0xffu);
      }
    }
  }
}

static nn_status qlsoftmax_run(nn_ctx *c, nn_node *n) {
  const qlsoftmax_priv *p = n->priv;
  float table[256];
  const float *t = p->table;
  if (n->x[0]->numel == 0)
    return NN_OK;
  if (!p->fixed) {
    qlsoftmax_table(table, ql_scale(n->x[1]), p->g.D);
    t = table;
  }
  qlsoftmax_job j = {p, t, n->x[0]->data, n->y[0]->data, floorf(1.0f / ql_scale(n->x[3])),
                     ql_zp(ku_in(n, 4))};
  int64_t rows = p->g.outer * p->g.inner;
  nn_parallel_for(c, rows, QL_CHUNK / (p->g.D > 0 ? p->g.D : 1) + 1, qlsoftmax_rows, &j);
  return NN_OK;
}

const nn_kernel nn_kernels_qlinear[] = {
  {.name = "QLinearAdd", .domain = NN_QLINEAR_DOMAIN, .prepare = qladd_prepare, .run = qlbin_run},
  {.name = "QLinearMul", .domain = NN_QLINEAR_DOMAIN, .prepare = qlmul_prepare, .run = qlbin_run},
  {.name = "QLinearGlobalAveragePool", .domain = NN_QLINEAR_DOMAIN, .prepare = qlgap_prepare,
   .run = qlpool_run},
  {.name = "QLinearAveragePool", .domain = NN_QLINEAR_DOMAIN, .prepare = qlap_prepare,
   .run = qlpool_run},
  {.name = "QLinearConcat", .domain = NN_QLINEAR_DOMAIN, .prepare = qlconcat_prepare,
   .run = qlconcat_run},
  {.name = "QLinearSigmoid", .domain = NN_QLINEAR_DOMAIN, .prepare = qlsigmoid_prepare,
   .run = qllut_run},
  {.name = "QLinearLeakyRelu", .domain = NN_QLINEAR_DOMAIN, .prepare = qlleaky_prepare,
   .run = qllut_run},
  {.name = "QLinearSoftmax", .domain = NN_QLINEAR_DOMAIN, .prepare = qlsoftmax_prepare,
   .run = qlsoftmax_run},
  {0},
};

/* pool.c - AveragePool, MaxPool (with Indices), LpPool, their global forms,
 * and MaxUnpool.
 *
 * Windows use the geometry of ops/conv_geom.h (1-D/2-D/3-D normalized to 3-D).
 * One task per (batch, channel) plane.  For every output position the ranges
 * of kernel taps that fall inside the input are computed once, so the inner
 * loops carry no bounds checks; padding never contributes a value (it only
 * enters AveragePool's divisor with count_include_pad).  float32 has its own
 * instantiation; double, float16 and 8-bit integers go through a generic one
 * that reads and writes through the dtype (exact for max, double sums).
 */
#include <math.h>
#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif
#include <string.h>

#include "cpu/ops.h"
#include "cpu/sgemm.h"
#include "cpu/sgemm_simd.h"
#include "ops/pool.h"

typedef enum pool_kind {
  POOL_AVG = 0,
  POOL_MAX,
  POOL_LP,
} pool_kind;

typedef struct pool_priv {
  nn_conv_geom g;
  pool_kind kind;
  nn_dtype dt;
  bool include_pad;     /* AveragePool count_include_pad */
  bool col_major;       /* MaxPool storage_order = 1 */
  double p;             /* LpPool exponent */
  int64_t planes;       /* batch * channels */
  enum {
    POOL_FAST_NONE = 0, POOL_FAST_WINDOW, POOL_FAST_GLOBAL, POOL_FAST_3X3, POOL_FAST_3X3S2,
    POOL_FAST_2X2S2,    /* pool_2x2s2_avx2 on AVX2, else POOL_FAST_WINDOW's */
    POOL_FAST_MAX8,     /* 8-bit MaxPool, 1-D or 2-D: pool_max8_plane */
  } fast;               /* float32 paths, and MAX8 */
} pool_priv;

typedef struct pool_job {
  const pool_priv *p;
  const void *x;
  void *y;
  int64_t *ind;         /* MaxPool Indices, NULL when not requested */
} pool_job;

static inline double pool_ld(nn_dtype dt, const void *x, int64_t i) {
  switch (dt) {
  case NN_DTYPE_DOUBLE: return ((const double *)x)[i];
  case NN_DTYPE_FLOAT16: return nn_f16_to_f32(((const uint16_t *)x)[i]);
  case NN_DTYPE_BFLOAT16: return nn_bf16_to_f32(((const uint16_t *)x)[i]);
  case NN_DTYPE_INT8: return ((const int8_t *)x)[i];
  case NN_DTYPE_UINT8: return ((const uint8_t *)x)[i];
  default: return ((const float *)x)[i];
  }
}

static inline void pool_st(nn_dtype dt, void *y, int64_t i, double v) {
  switch (dt) {
  case NN_DTYPE_DOUBLE: ((double *)y)[i] = v; break;
  case NN_DTYPE_FLOAT16: ((uint16_t *)y)[i] = nn_f32_to_f16((float)v); break;
  case NN_DTYPE_BFLOAT16: ((uint16_t *)y)[i] = nn_f32_to_bf16((float)v); break;
  /* saturate: an all-padding MaxPool window yields -inf */
  case NN_DTYPE_INT8: ((int8_t *)y)[i] = (int8_t)(v < -128.0 ? -128.0 : v > 127.0 ? 127.0 : v); break;
  case NN_DTYPE_UINT8: ((uint8_t *)y)[i] = (uint8_t)(v < 0.0 ? 0.0 : v > 255.0 ? 255.0 : v); break;
  default: ((float *)y)[i] = (float)v; break;
  }
}

static inline double pool_lp_term(double v, double p) {
  v = fabs(v);
  return p == 1.0 ? v : p == 2.0 ? v * v : pow(v, p);
}

static inline double pool_lp_root(double s, double p) {
  return p == 1.0 ? s : p == 2.0 ? sqrt(s) : pow(s, 1.0 / p);
}

/* One plane: x is the input plane, y the output plane, ind the Indices plane
 * (or NULL), base the flattened offset of the input plane in the tensor.
 * VAL is the compare type of MaxPool, LD(i) reads input element i, ST(o, v)
 * writes output element o. */
#define POOL_PLANE(NAME, VAL, LD, ST)                                                       \
  static void NAME(const pool_priv *p, const void *xv, void *yv, int64_t *ind,             \
                   int64_t base) {                                                          \
    const nn_conv_geom *g = &p->g;                                                          \
    const int64_t ID = g->in[0], IH = g->in[1], IW = g->in[2];                              \
    const int64_t OD = g->out[0], OH = g->out[1], OW = g->out[2];                           \
    int64_t o = 0;                                                                          \
    for (int64_t od = 0; od < OD; od++) {                                                   \
      int64_t d0, d1, pd0, pd1;                                                             \
      nn_conv_geom_taps(od, g->s[0], g->pb[0], g->d[0], g->k[0], ID, &d0, &d1);             \
      nn_conv_geom_taps(od, g->s[0], 0, g->d[0], g->k[0], ID + g->pb[0] + g->pe[0], &pd0, &pd1); \
      for (int64_t oh = 0; oh < OH; oh++) {                                                 \
        int64_t h0, h1, ph0, ph1;                                                           \
        nn_conv_geom_taps(oh, g->s[1], g->pb[1], g->d[1], g->k[1], IH, &h0, &h1);           \
        nn_conv_geom_taps(oh, g->s[1], 0, g->d[1], g->k[1], IH + g->pb[1] + g->pe[1], &ph0, \
                          &ph1);                                                            \
        for (int64_t ow = 0; ow < OW; ow++, o++) {                                          \
          int64_t w0, w1;                                                                   \
          nn_conv_geom_taps(ow, g->s[2], g->pb[2], g->d[2], g->k[2], IW, &w0, &w1);         \
          const int64_t bd = od * g->s[0] - g->pb[0], bh = oh * g->s[1] - g->pb[1],         \
                        bw = ow * g->s[2] - g->pb[2];                                       \
          if (p->kind == POOL_MAX) {                                                        \
            VAL m = 0;                                                                      \
            int64_t mi = -1;                                                                \
            for (int64_t kd = d0; kd < d1; kd++) {                                          \
              int64_t id = bd + kd * g->d[0];                                               \
              for (int64_t kh = h0; kh < h1; kh++) {                                        \
                int64_t rowi = (id * IH + bh + kh * g->d[1]) * IW + bw;                     \
                for (int64_t kw = w0; kw < w1; kw++) {                                      \
                  int64_t i = rowi + kw * g->d[2];                                          \
                  VAL v = LD(i);                                                            \
                  if (mi < 0 || v > m) {                                                    \
                    m = v;                                                                  \
                    mi = i;                                                                 \
                  }                                                                         \
                }                                                                           \
              }                                                                             \
            }                                                                               \
            if (mi < 0) { /* window entirely in the padding */                              \
              ST(o, -INFINITY);                                                             \
            } else {                                                                        \
              ST(o, m);                                                                     \
            }                                                                               \
            /* mi < 0: nothing read, and IW or IH may be 0 (an empty input    \
             * that padding turns into a non-empty output): no division */    \
            if (ind && mi < 0) {                                                            \
              ind[o] = -1;                                                                  \
            } else if (ind) {                                                               \
              int64_t iw = mi % IW, ih = (mi / IW) % IH, id = mi / (IW * IH);               \
              ind[o] = base + (p->col_major ? (iw * IH + ih) * ID + id : mi);               \
            }                                                                               \
          } else {                                                                          \
            double s = 0.0;                                                                 \
            for (int64_t kd = d0; kd < d1; kd++) {                                          \
              int64_t id = bd + kd * g->d[0];                                               \
              for (int64_t kh = h0; kh < h1; kh++) {                                        \
                int64_t rowi = (id * IH + bh + kh * g->d[1]) * IW + bw;                     \
                if (p->kind == POOL_AVG) {                                                  \
                  for (int64_t kw = w0; kw < w1; kw++)                                      \
                    s += LD(rowi + kw * g->d[2]);                                           \
                } else {                                                                    \
                  for (int64_t kw = w0; kw < w1; kw++)                                      \
                    s += pool_lp_term(LD(rowi + kw * g->d[2]), p->p);                       \
                }                                                                           \
              }                                                                             \
            }                                                                               \
            if (p->kind == POOL_LP) {                                                       \
              ST(o, pool_lp_root(s, p->p));                                                 \
            } else {                                                                        \
              int64_t cnt;                                                                  \
              if (p->include_pad) {                                                         \
                int64_t pw0, pw1;                                                           \
                nn_conv_geom_taps(ow, g->s[2], 0, g->d[2], g->k[2],                         \
                                  IW + g->pb[2] + g->pe[2], &pw0, &pw1);                    \
                cnt = (pd1 - pd0) * (ph1 - ph0) * (pw1 - pw0);                              \
              } else {                                                                      \
                cnt = (d1 - d0) * (h1 - h0) * (w1 - w0);                                    \
              }                                                                             \
              ST(o, cnt > 0 ? s / (double)cnt : NAN);                                       \
            }                                                                               \
          }                                                                                 \
        }                                                                                   \
      }                                                                                     \
    }                                                                                       \
  }

#define POOL_LD_F32(i) (((const float *)xv)[i])
#define POOL_ST_F32(o, v) (((float *)yv)[o] = (float)(v))
#define POOL_LD_ANY(i) pool_ld(p->dt, xv, i)
#define POOL_ST_ANY(o, v) pool_st(p->dt, yv, o, v)

POOL_PLANE(pool_plane_f32, float, POOL_LD_F32, POOL_ST_F32)
POOL_PLANE(pool_plane_any, double, POOL_LD_ANY, POOL_ST_ANY)

/* ---- float32 fast paths ---------------------------------------------------------
 * The generic plane above spends most of its time on per-output tap ranges
 * (three divisions each) and scalar double sums: MaxPool 2x2 was a fifth of
 * BlazeFace.  For float32 max / average windows in 1-D or 2-D without
 * Indices, each output row is computed vertical first: the window's input
 * rows are combined over the whole row into a padded buffer (-inf or 0 at
 * the borders), one contiguous pass per row, then a single horizontal pass
 * of KW taps at the stride gives the outputs; averages divide by the taps
 * inside (or, with count_include_pad, inside the padded extent).  No
 * per-output bounds, every loop vectorizes (instances for strides 1-2 and
 * windows 1-3, stride 1 and windows 5, 9, 13, in baseline and AVX2 code).  Rows whose window has no input
 * row and every other case take the generic code.  Results: max over the
 * same values (a NaN is kept only when met first, as in the generic code,
 * but the order of the taps differs); averages sum in float instead of
 * double (a few ulp). */

/* One output of a 2-D float32 max / average window, the generic way. */
static float pool_out_f32(const pool_priv *p, const float *x, int64_t oh, int64_t ow, int64_t h0,
                          int64_t h1, int64_t ph0, int64_t ph1) {
  const nn_conv_geom *g = &p->g;
  const int64_t IW = g->in[2];
  int64_t w0, w1;
  nn_conv_geom_taps(ow, g->s[2], g->pb[2], g->d[2], g->k[2], IW, &w0, &w1);
  const int64_t bh = oh * g->s[1] - g->pb[1], bw = ow * g->s[2] - g->pb[2];
  if (p->kind == POOL_MAX) {
    float m = 0.0f;
    bool any = false;
    for (int64_t kh = h0; kh < h1; kh++) {
      const float *xr = x + (bh + kh * g->d[1]) * IW + bw;
      for (int64_t kw = w0; kw < w1; kw++) {
        float v = xr[kw * g->d[2]];
        if (!any || v > m) {
          m = v;
          any = true;
        }
      }
    }
    return any ? m : -INFINITY;
  }
  float s = 0.0f;
  for (int64_t kh = h0; kh < h1; kh++) {
    const float *xr = x + (bh + kh * g->d[1]) * IW + bw;
    for (int64_t kw = w0; kw < w1; kw++)
      s += xr[kw * g->d[2]];
  }
  int64_t cnt;
  if (p->include_pad) {
    int64_t pw0, pw1;
    nn_conv_geom_taps(ow, g->s[2], 0, g->d[2], g->k[2], IW + g->pb[2] + g->pe[2], &pw0, &pw1);
    cnt = (ph1 - ph0) * (pw1 - pw0);
  } else {
    cnt = (h1 - h0) * (w1 - w0);
  }
  return cnt > 0 ? s / (float)cnt : NAN;
}

/* One input row's contribution to a row segment of outputs: for output t,
 * the KW taps x[t * S + kw] in order, starting from the first tap (first)
 * or from y[t], max (MX) or sum.  Instantiated with S, KW, first and MX
 * constant (strides 1 / 2, windows 2 / 3: every pool of the benchmark
 * models; stride 1, windows 5, 9, 13: YOLO's SPP / SPPF, where the generic
 * instance took 0.21 ms of a 128 x 20x20 5x5 pool, 7x ONNX Runtime), so the
 * taps unroll and the loop over t vectorizes; the generic instance takes
 * them at run time. */
static inline __attribute__((always_inline)) void pool_pass(float *restrict y,
                                                            const float *restrict x, int64_t n,
                                                            int64_t S, int64_t KW, bool first,
                                                            bool MX) {
  for (int64_t t = 0; t < n; t++) {
    const float *xs = x + t * S;
    float m = first ? xs[0] : y[t];
    for (int64_t kw = first ? 1 : 0; kw < KW; kw++) {
      float v = xs[kw];
      m = MX ? (v > m ? v : m) : m + v;
    }
    y[t] = m;
  }
}

/* Each instance twice: baseline, and for AVX2 (8 lanes instead of SSE's
 * 4; the same comparisons and additions in the same order, so the same
 * results), chosen at run time with the GEMM engine's dispatch. */
#if defined(__x86_64__) || defined(__i386__)
#define POOL_AVX2 __attribute__((target("avx2")))
#define POOL_HAVE_AVX2 1
#else
#define POOL_AVX2
#define POOL_HAVE_AVX2 0
#endif
#define POOL_PASS_FN(S_, KW_, F_, MX_)                                                     \
  static void pool_pass_##S_##_##KW_##_##F_##_##MX_(float *y, const float *x, int64_t n) { \
    pool_pass(y, x, n, S_, KW_, F_, MX_);                                                  \
  }                                                                                        \
  POOL_AVX2 static void pool_pass_avx2_##S_##_##KW_##_##F_##_##MX_(float *y, const float *x, \
                                                                   int64_t n) {           \
    pool_pass(y, x, n, S_, KW_, F_, MX_);                                                  \
  }
#define POOL_PASS_SET(S_, KW_) \
  POOL_PASS_FN(S_, KW_, 0, 0) POOL_PASS_FN(S_, KW_, 0, 1) POOL_PASS_FN(S_, KW_, 1, 0) POOL_PASS_FN(S_, KW_, 1, 1)
POOL_PASS_SET(1, 1)
POOL_PASS_SET(1, 2)
POOL_PASS_SET(1, 3)
POOL_PASS_SET(1, 5)
POOL_PASS_SET(1, 9)
POOL_PASS_SET(1, 13)
POOL_PASS_SET(2, 2)
POOL_PASS_SET(2, 3)

typedef void (*pool_pass_fn)(float *y, const float *x, int64_t n);

/* The instance for (S, KW, first, max), NULL when there is none. */
static pool_pass_fn pool_pass_for(int64_t S, int64_t KW, bool first, bool mx) {
  const bool avx2 = POOL_HAVE_AVX2 && nn_cpu_isa_get() >= NN_CPU_AVX2;
#define POOL_PICK(S_, KW_)                                                                  \
  if (S == S_ && KW == KW_ && avx2)                                                        \
    return first ? (mx ? pool_pass_avx2_##S_##_##KW_##_1_1 : pool_pass_avx2_##S_##_##KW_##_1_0) \
                 : (mx ? pool_pass_avx2_##S_##_##KW_##_0_1 : pool_pass_avx2_##S_##_##KW_##_0_0); \
  if (S == S_ && KW == KW_)                                                                \
    return first ? (mx ? pool_pass_##S_##_##KW_##_1_1 : pool_pass_##S_##_##KW_##_1_0)       \
                 : (mx ? pool_pass_##S_##_##KW_##_0_1 : pool_pass_##S_##_##KW_##_0_0);
  POOL_PICK(1, 1)
  POOL_PICK(1, 2)
  POOL_PICK(1, 3)
  POOL_PICK(1, 5)
  POOL_PICK(1, 9)
  POOL_PICK(1, 13)
  POOL_PICK(2, 2)
  POOL_PICK(2, 3)
#undef POOL_PICK
  return NULL;
}

/* Widest row of the fast path's buffers (on the stack: 32 KiB). */
#define POOL_ROW_MAX 4096

/* Whether the fast 2-D float32 path applies (checked at prepare). */
static bool pool_fast_ok(const pool_priv *p, bool indices) {
  const nn_conv_geom *g = &p->g;
  return p->dt == NN_DTYPE_FLOAT && !indices && (p->kind == POOL_MAX || p->kind == POOL_AVG) &&
         g->in[0] == 1 && g->out[0] == 1 && g->k[0] == 1 && g->d[2] == 1 && g->out[2] >= 1 &&
         (g->out[2] - 1) * g->s[2] + g->k[2] <= POOL_ROW_MAX;
}

/* Average pools (width dilation 1): per output column, the horizontal taps
 * its divisor counts, inside the input or, with count_include_pad, inside
 * the padded extent. */
static void pool_col_counts(const pool_priv *p, float *wcnt) {
  const nn_conv_geom *g = &p->g;
  const int64_t IW = g->in[2], SW = g->s[2], KW = g->k[2], PL = g->pb[2];
  for (int64_t ow = 0; ow < g->out[2]; ow++) {
    int64_t w0, w1;
    if (p->include_pad)
      nn_conv_geom_taps(ow, SW, 0, 1, KW, IW + PL + g->pe[2], &w0, &w1);
    else
      nn_conv_geom_taps(ow, SW, PL, 1, KW, IW, &w0, &w1);
    wcnt[ow] = (float)(w1 - w0);
  }
}

static void pool_plane_f32_fast(const pool_priv *p, const float *x, float *y) {
  const nn_conv_geom *g = &p->g;
  const int64_t IH = g->in[1], IW = g->in[2], OH = g->out[1], OW = g->out[2];
  const int64_t KW = g->k[2], SW = g->s[2], PL = g->pb[2];
  const bool mx = p->kind == POOL_MAX;
  /* row buffer: column c is input column c - PL, padding -inf (max: never
   * wins, an all-padding window stays -inf as in the generic code) or 0 */
  const int64_t W = (OW - 1) * SW + KW;
  const int64_t ca = PL < W ? PL : W, cb = PL + IW < W ? PL + IW : W;
  const float pad = mx ? -INFINITY : 0.0f;
  float rb[POOL_ROW_MAX];
  float wcnt[POOL_ROW_MAX];   /* average: horizontal taps counted per output column */
  for (int64_t c = 0; c < ca; c++)
    rb[c] = pad;
  for (int64_t c = cb > ca ? cb : ca; c < W; c++)
    rb[c] = pad;
  if (!mx)
    pool_col_counts(p, wcnt);
  pool_pass_fn hpass = pool_pass_for(SW, KW, true, mx);
  for (int64_t oh = 0; oh < OH; oh++) {
    int64_t h0, h1, ph0, ph1;
    nn_conv_geom_taps(oh, g->s[1], g->pb[1], g->d[1], g->k[1], IH, &h0, &h1);
    nn_conv_geom_taps(oh, g->s[1], 0, g->d[1], g->k[1], IH + g->pb[1] + g->pe[1], &ph0, &ph1);
    float *yr = y + oh * OW;
    if (h1 <= h0 || cb <= ca) {   /* no input in the window rows: the generic way */
      for (int64_t ow = 0; ow < OW; ow++)
        yr[ow] = pool_out_f32(p, x, oh, ow, h0, h1, ph0, ph1);
      continue;
    }
    /* vertical first: the window's rows combined over the whole row (one
     * contiguous pass per row), then one horizontal pass of KW taps */
    const int64_t bh = oh * g->s[1] - g->pb[1];
    for (int64_t kh = h0; kh < h1; kh++) {
      const float *xr = x + (bh + kh * g->d[1]) * IW + (ca - PL);
      pool_pass_fn f = pool_pass_for(1, 1, kh == h0, mx);
      f(rb + ca, xr, cb - ca);
    }
    if (hpass)
      hpass(yr, rb, OW);
    else
      pool_pass(yr, rb, OW, SW, KW, true, mx);
    if (!mx) {
      const float hc = (float)(p->include_pad ? ph1 - ph0 : h1 - h0);
      for (int64_t ow = 0; ow < OW; ow++) {
        float cnt = hc * wcnt[ow];
        yr[ow] = cnt > 0.0f ? yr[ow] / cnt : NAN;
      }
    }
  }
}

/* 3x3, stride 1, one pixel of padding on every side: the "same" pools of
 * the Inception blocks (AveragePool) and of their max branches.  On their
 * small maps (28x28 down to 7x7) the row-by-row path above spent more on
 * each row's set-up (taps, four calls, the division loop) than on its few
 * outputs: 10 cycles an output, 10x ONNX Runtime's NCHWc pools (Zen 5).
 * Here every pass runs over the whole plane as one flat array: the vertical
 * sums (rows r-1, r, r+1 are 2W floats apart), then the horizontal sums of
 * those, then the edge columns redone, then the scale.  Sums are in a
 * different order than the generic code (a few ulp); max is exact. */
#define POOL_3X3_MAX_FLOATS 8192

static bool pool_3x3_ok(const pool_priv *p, bool indices) {
  const nn_conv_geom *g = &p->g;
  return p->dt == NN_DTYPE_FLOAT && !indices && (p->kind == POOL_MAX || p->kind == POOL_AVG) &&
         g->in[0] == 1 && g->out[0] == 1 && g->k[0] == 1 && g->k[1] == 3 && g->k[2] == 3 &&
         g->s[1] == 1 && g->s[2] == 1 && g->d[1] == 1 && g->d[2] == 1 && g->pb[1] == 1 &&
         g->pe[1] == 1 && g->pb[2] == 1 && g->pe[2] == 1 && g->in[1] >= 2 && g->in[2] >= 2 &&
         g->out[1] == g->in[1] && g->out[2] == g->in[2] &&
         g->in[1] * g->in[2] <= POOL_3X3_MAX_FLOATS;
}

static inline __attribute__((always_inline)) float pool_op(float a, float b, bool mx) {
  return mx ? (b > a ? b : a) : a + b;
}

static inline __attribute__((always_inline)) void pool_3x3_plane(const float *restrict x,
                                                                 float *restrict y, int64_t H,
                                                                 int64_t W, bool mx,
                                                                 bool include_pad) {
  float v[POOL_3X3_MAX_FLOATS];
  const int64_t n = H * W;
  /* vertical: first and last rows have two taps, the others three */
  for (int64_t c = 0; c < W; c++) {
    v[c] = pool_op(x[c], x[W + c], mx);
    v[n - W + c] = pool_op(x[n - 2 * W + c], x[n - W + c], mx);
  }
  for (int64_t i = W; i < n - W; i++)
    v[i] = pool_op(pool_op(x[i - W], x[i], mx), x[i + W], mx);
  /* horizontal over the flat array, then the first and last column of
   * every row, whose flat neighbours belong to the rows beside them */
  for (int64_t i = 1; i < n - 1; i++)
    y[i] = pool_op(pool_op(v[i - 1], v[i], mx), v[i + 1], mx);
  for (int64_t r = 0; r < H; r++) {
    y[r * W] = pool_op(v[r * W], v[r * W + 1], mx);
    y[r * W + W - 1] = pool_op(v[r * W + W - 2], v[r * W + W - 1], mx);
  }
  if (mx)
    return;
  /* average: 9 taps inside; counting the padding, 9 everywhere */
  const float s9 = 1.0f / 9.0f;
  for (int64_t i = 0; i < n; i++)
    y[i] *= s9;
  if (include_pad)
    return;
  /* edges: rows and columns of two taps, corners of four (x 9 / count) */
  const float s6 = 9.0f / 6.0f, s4 = 9.0f / 4.0f;
  for (int64_t c = 1; c < W - 1; c++) {
    y[c] *= s6;
    y[n - W + c] *= s6;
  }
  for (int64_t r = 1; r < H - 1; r++) {
    y[r * W] *= s6;
    y[r * W + W - 1] *= s6;
  }
  y[0] *= s4;
  y[W - 1] *= s4;
  y[n - W] *= s4;
  y[n - 1] *= s4;
}

#define POOL_3X3_FN(NAME, ATTR, MX, INC)                                                    \
  ATTR static void NAME(const float *x, float *y, int64_t H, int64_t W) {                  \
    pool_3x3_plane(x, y, H, W, MX, INC);                                                   \
  }
POOL_3X3_FN(pool_3x3_max, , true, false)
POOL_3X3_FN(pool_3x3_avg, , false, false)
POOL_3X3_FN(pool_3x3_avg_inc, , false, true)
POOL_3X3_FN(pool_3x3_max_avx2, POOL_AVX2, true, false)
POOL_3X3_FN(pool_3x3_avg_avx2, POOL_AVX2, false, false)
POOL_3X3_FN(pool_3x3_avg_inc_avx2, POOL_AVX2, false, true)
#if POOL_HAVE_AVX2
/* and for AVX-512 (16 lanes): Inception's 3x3 average pool over 576
 * planes of 14x14 ran 5-7% faster than on AVX2 (Zen 5) */
#define POOL_AVX512 __attribute__((target("avx512f")))
POOL_3X3_FN(pool_3x3_max_avx512, POOL_AVX512, true, false)
POOL_3X3_FN(pool_3x3_avg_avx512, POOL_AVX512, false, false)
POOL_3X3_FN(pool_3x3_avg_inc_avx512, POOL_AVX512, false, true)
#endif

static void pool_plane_3x3(const pool_priv *p, const float *x, float *y) {
  const int64_t H = p->g.in[1], W = p->g.in[2];
  const bool avx2 = POOL_HAVE_AVX2 && nn_cpu_isa_get() >= NN_CPU_AVX2;
#if POOL_HAVE_AVX2
  if (nn_cpu_isa_get() >= NN_CPU_AVX512) {
    if (p->kind == POOL_MAX)
      pool_3x3_max_avx512(x, y, H, W);
    else if (p->include_pad)
      pool_3x3_avg_inc_avx512(x, y, H, W);
    else
      pool_3x3_avg_avx512(x, y, H, W);
    return;
  }
#endif
  if (p->kind == POOL_MAX)
    (avx2 ? pool_3x3_max_avx2 : pool_3x3_max)(x, y, H, W);
  else if (p->include_pad)
    (avx2 ? pool_3x3_avg_inc_avx2 : pool_3x3_avg_inc)(x, y, H, W);
  else
    (avx2 ? pool_3x3_avg_avx2 : pool_3x3_avg)(x, y, H, W);
}

/* 3x3 MaxPool, stride 2, padding 0 or 1 before (any after, ceil_mode too):
 * the downsampling pools of SqueezeNet, ResNet and Inception.  Per output
 * row: the max of its (up to) three input rows into a row buffer framed by
 * -inf, then the stride-2 max of three over that buffer: two vectorized
 * loops a row and no calls (the row path's set-up cost 2-3x ONNX Runtime on
 * SqueezeNet's 55x55 / 27x27 / 13x13 maps, Zen 5).  Taps missing at an edge
 * are -inf, which never wins: as in the generic code.  3x3 AveragePool,
 * stride 2 (ShuffleNet's) the same way, with taps missing at an edge 0 and
 * the row path's divisors (sums in its order, so the same results). */
static bool pool_3x3s2_ok(const pool_priv *p, bool indices) {
  const nn_conv_geom *g = &p->g;
  return p->dt == NN_DTYPE_FLOAT && !indices && (p->kind == POOL_MAX || p->kind == POOL_AVG) &&
         g->in[0] == 1 &&
         g->out[0] == 1 && g->k[0] == 1 && g->k[1] == 3 && g->k[2] == 3 && g->s[1] == 2 &&
         g->s[2] == 2 && g->d[1] == 1 && g->d[2] == 1 && g->pb[1] <= 1 && g->pb[2] <= 1 &&
         g->in[2] + 2 <= POOL_ROW_MAX && 2 * g->out[2] + 3 <= POOL_ROW_MAX;
}

static inline __attribute__((always_inline)) void pool_3x3s2_plane(const pool_priv *p,
                                                                   const float *restrict x,
                                                                   float *restrict y,
                                                                   const bool MX) {
  const nn_conv_geom *g = &p->g;
  const int64_t IH = g->in[1], IW = g->in[2], OH = g->out[1], OW = g->out[2];
  const int64_t pt = g->pb[1], pl = g->pb[2];
  float vb[POOL_ROW_MAX];
  float wcnt[POOL_ROW_MAX / 2];   /* average: the divisor's horizontal factor */
  const int64_t W = 2 * OW + 3 > IW + 2 ? 2 * OW + 3 : IW + 2;
  for (int64_t c = 0; c < W; c++)
    vb[c] = MX ? -INFINITY : 0.0f;   /* columns 1..IW are rewritten per row, the frame stays */
  if (!MX)
    pool_col_counts(p, wcnt);
  float *restrict v = vb + 1;
  const float *restrict vs = vb + 1 - pl;
  for (int64_t oh = 0; oh < OH; oh++) {
    int64_t r0 = 2 * oh - pt;
    int64_t lo = r0 > 0 ? r0 : 0, hi = r0 + 3 < IH ? r0 + 3 : IH;
    float *restrict yr = y + oh * OW;
    int64_t ph0 = 0, ph1 = 0;
    if (!MX)
      nn_conv_geom_taps(oh, 2, 0, 1, 3, IH + pt + g->pe[1], &ph0, &ph1);
    if (hi <= lo) {
      for (int64_t ow = 0; ow < OW; ow++)
        yr[ow] = MX ? -INFINITY : pool_out_f32(p, x, oh, ow, lo - r0, hi - r0, ph0, ph1);
      continue;
    }
    const float *restrict a = x + lo * IW;
    if (hi - lo == 3)
      for (int64_t c = 0; c < IW; c++)
        v[c] = pool_op(pool_op(a[c], a[IW + c], MX), a[2 * IW + c], MX);
    else if (hi - lo == 2)
      for (int64_t c = 0; c < IW; c++)
        v[c] = pool_op(a[c], a[IW + c], MX);
    else
      for (int64_t c = 0; c < IW; c++)
        v[c] = a[c];
    for (int64_t ow = 0; ow < OW; ow++)
      yr[ow] = pool_op(pool_op(vs[2 * ow], vs[2 * ow + 1], MX), vs[2 * ow + 2], MX);
    if (!MX) {   /* an empty window: 0 / 0, NaN as in the generic code */
      const float hc = (float)(p->include_pad ? ph1 - ph0 : hi - lo);
      for (int64_t ow = 0; ow < OW; ow++)
        yr[ow] = yr[ow] / (hc * wcnt[ow]);
    }
  }
}

static void pool_3x3s2_base(const pool_priv *p, const float *x, float *y) {
  pool_3x3s2_plane(p, x, y, true);
}
POOL_AVX2 static void pool_3x3s2_avx2(const pool_priv *p, const float *x, float *y) {
  pool_3x3s2_plane(p, x, y, true);
}
static void pool_3x3s2_avg_base(const pool_priv *p, const float *x, float *y) {
  pool_3x3s2_plane(p, x, y, false);
}
POOL_AVX2 static void pool_3x3s2_avg_avx2(const pool_priv *p, const float *x, float *y) {
  pool_3x3s2_plane(p, x, y, false);
}

#if POOL_HAVE_AVX2
/* Columns [c, c + 16) of the nr rows from a (c is -1 for the first vector
 * of a row padded on the left, and reaches past IW at its end), their
 * vertical maximum in pool_op's order; columns outside [0, IW) read as
 * -inf, the padding, without being touched. */
__attribute__((target("avx512f"))) static inline __attribute__((always_inline)) __m512
pool_s2_op(__m512 m, __m512 v, const bool MX) {
  return MX ? _mm512_max_ps(v, m) : _mm512_add_ps(m, v);
}

/* MX: the maximum, padding -inf; else the sum, padding 0, row by row in
 * the order of the generic code's vertical pass. */
__attribute__((target("avx512f"))) static inline __attribute__((always_inline)) __m512
pool_s2_col16(const float *a, int64_t IW, int nr, int64_t c, const bool MX) {
  if (c >= 0 && c + 16 <= IW) {   /* the row's inside: no mask */
    __m512 m = _mm512_loadu_ps(a + c);
    if (nr > 1)
      m = pool_s2_op(m, _mm512_loadu_ps(a + IW + c), MX);
    if (nr > 2)
      m = pool_s2_op(m, _mm512_loadu_ps(a + 2 * IW + c), MX);
    return m;
  }
  __mmask16 k = sg5_cols_mask(IW, c);
  const __m512 pad = _mm512_set1_ps(MX ? -INFINITY : 0.0f);
  /* the address of column c, which may lie before the row: masked off */
  const float *p = (const float *)((uintptr_t)a + (uintptr_t)(c * (int64_t)sizeof(float)));
  __m512 m = _mm512_mask_loadu_ps(pad, k, p);
  if (nr > 1)
    m = pool_s2_op(m, _mm512_mask_loadu_ps(pad, k, p + IW), MX);
  if (nr > 2)
    m = pool_s2_op(m, _mm512_mask_loadu_ps(pad, k, p + 2 * IW), MX);
  return m;
}

/* pool_3x3s2_plane 16 outputs at a time straight from the input rows: the
 * vertical maxima of the 33 columns they read in three vectors (the third
 * is the next 16 outputs' first), then the even, odd and next even columns
 * picked by a permute each.  The row buffer of the generic loop cost a
 * store and a reload per column: SqueezeNet's 256 x 27 x 27 pool ran 0.035
 * ms on AVX2 and 0.020 here, its 64 x 111 x 111 one 0.087 and 0.065 (Zen 5,
 * 1 thread).  The same comparisons in the same order as pool_op, so the
 * same results. */
__attribute__((target("avx512f"))) static inline __attribute__((always_inline)) void
pool_3x3s2_avx512_body(const pool_priv *p, const float *x, float *y, const bool MX) {
  const nn_conv_geom *g = &p->g;
  const int64_t IH = g->in[1], IW = g->in[2], OH = g->out[1], OW = g->out[2];
  const int64_t pt = g->pb[1], pl = g->pb[2];
  const __m512i ie = SG5_EVEN_IDX;
  const __m512i io = _mm512_add_epi32(ie, _mm512_set1_epi32(1));
  const __m512i is = _mm512_setr_epi32(1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16);
  /* average: the divisor's horizontal factor per output column, as in
   * pool_plane_f32_fast (OW <= POOL_ROW_MAX / 2: pool_3x3s2_ok) */
  float wcnt[POOL_ROW_MAX / 2 + 16];
  if (!MX)
    pool_col_counts(p, wcnt);
  for (int64_t oh = 0; oh < OH; oh++) {
    int64_t r0 = 2 * oh - pt;
    int64_t lo = r0 > 0 ? r0 : 0, hi = r0 + 3 < IH ? r0 + 3 : IH;
    float *yr = y + oh * OW;
    int64_t h0 = lo - r0, h1 = hi - r0, ph0 = 0, ph1 = 0;
    if (!MX)
      nn_conv_geom_taps(oh, 2, 0, 1, 3, IH + pt + g->pe[1], &ph0, &ph1);
    if (hi <= lo) {
      for (int64_t ow = 0; ow < OW; ow++)
        yr[ow] = MX ? -INFINITY : pool_out_f32(p, x, oh, ow, h0, h1, ph0, ph1);
      continue;
    }
    const __m512 hc = _mm512_set1_ps((float)(p->include_pad ? ph1 - ph0 : hi - lo));
    const float *a = x + lo * IW;
    const int nr = (int)(hi - lo);
    __m512 l0 = pool_s2_col16(a, IW, nr, -pl, MX);
    for (int64_t ow = 0; ow < OW; ow += 16) {
      int64_t c = 2 * ow - pl;
      __m512 l1 = pool_s2_col16(a, IW, nr, c + 16, MX), l2 = pool_s2_col16(a, IW, nr, c + 32, MX);
      __m512 e = _mm512_permutex2var_ps(l0, ie, l1), o = _mm512_permutex2var_ps(l0, io, l1);
      __m512 e2 = _mm512_permutex2var_ps(e, is, l2);   /* columns c + 2 + 2i */
      __m512 m = MX ? _mm512_max_ps(e2, _mm512_max_ps(o, e))
                    : _mm512_add_ps(_mm512_add_ps(e, o), e2);
      l0 = l2;
      __mmask16 k = OW - ow >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << (OW - ow)) - 1u);
      if (!MX)   /* an empty window: 0 / 0, NaN as in the generic code */
        m = _mm512_div_ps(m, _mm512_mul_ps(hc, _mm512_maskz_loadu_ps(k, wcnt + ow)));
      _mm512_mask_storeu_ps(yr + ow, k, m);
    }
  }
}

/* pool_3x3s2_plane 16 outputs at a time straight from the input rows: the
 * vertical maxima of the 33 columns they read in three vectors (the third
 * is the next 16 outputs' first), then the even, odd and next even columns
 * picked by a permute each.  The row buffer of the generic loop cost a
 * store and a reload per column: SqueezeNet's 256 x 27 x 27 pool ran 0.035
 * ms on AVX2 and 0.020 here, its 64 x 111 x 111 one 0.087 and 0.065 (Zen 5,
 * 1 thread).  The same comparisons in the same order as pool_op, so the
 * same results.  AveragePool the same way, sums in the order of
 * pool_plane_f32_fast and its divisors: ShuffleNet's 136 x 28 x 28 -> 14 x
 * 14 pool ran 0.074 ms there and 0.019 here, its 272 x 14 x 14 -> 7 x 7 one
 * 0.057 and 0.017 (ONNX Runtime's four 0.08 ms, ours 0.17 -> 0.05; Zen 5,
 * 1 thread). */
__attribute__((target("avx512f"))) static void pool_3x3s2_avx512(const pool_priv *p,
                                                                 const float *x, float *y) {
  pool_3x3s2_avx512_body(p, x, y, true);
}
__attribute__((target("avx512f"))) static void pool_3x3s2_avg_avx512(const pool_priv *p,
                                                                     const float *x, float *y) {
  pool_3x3s2_avx512_body(p, x, y, false);
}
#endif

/* Global average / max of one float32 plane: 8 independent partial results
 * so the loop vectorizes without reassociating a single sum. */
static float pool_global_f32(const pool_priv *p, const float *x, int64_t n) {
  if (n == 0)
    return p->kind == POOL_MAX ? -INFINITY : NAN;
  if (p->kind == POOL_MAX) {
    float m = x[0];
    for (int64_t i = 1; i < n; i++)
      m = x[i] > m ? x[i] : m;
    return m;
  }
  float acc[8] = {0};
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    for (int u = 0; u < 8; u++)
      acc[u] += x[i + u];
  float s = ((acc[0] + acc[4]) + (acc[1] + acc[5])) + ((acc[2] + acc[6]) + (acc[3] + acc[7]));
  for (; i < n; i++)
    s += x[i];
  return s / (float)n;
}

/* 2x2 windows, stride 2, no padding, every window inside the input
 * (BlazeFace's and VGG's max pools). */
static bool pool_2x2s2_ok(const pool_priv *p, bool indices) {
  const nn_conv_geom *g = &p->g;
  return pool_fast_ok(p, indices) && g->k[1] == 2 && g->k[2] == 2 && g->s[1] == 2 &&
         g->s[2] == 2 && g->d[1] == 1 && g->pb[1] == 0 && g->pb[2] == 0 && g->pe[1] == 0 &&
         g->pe[2] == 0 && 2 * g->out[1] <= g->in[1] && 2 * g->out[2] <= g->in[2];
}

#if POOL_HAVE_AVX2
/* pool_2x2s2_ok's pools 8 outputs at a time straight from the two input
 * rows: their vertical maxima (sums) in two vectors, then the even and odd
 * columns' combined.  The row buffer of pool_plane_f32_fast took three
 * passes a row: BlazeFace's 24 x 128 x 128 -> 64 x 64 pool ran 0.068 ms there
 * and 0.023 here (ONNX Runtime's NCHWc pool 0.043; AVX2, Zen 4, 1 thread).  The same
 * comparisons (sums) in the same order as pool_plane_f32_fast: vertical
 * first (row 1 against row 0), then the odd column against the even one. */
static SG_ALWAYS_INLINE SG256 __m256 pool2_op(__m256 m, __m256 v, const bool MX) {
  return MX ? _mm256_max_ps(v, m) : _mm256_add_ps(m, v);
}

static SG_ALWAYS_INLINE SG256 void pool_2x2s2_body(const pool_priv *p, const float *x, float *y,
                                                   const bool MX) {
  const int64_t IW = p->g.in[2], OH = p->g.out[1], OW = p->g.out[2];
  const __m256 quarter = _mm256_set1_ps(4.0f);
  for (int64_t oh = 0; oh < OH; oh++) {
    const float *a0 = x + 2 * oh * IW, *a1 = a0 + IW;
    float *yr = y + oh * OW;
    int64_t ow = 0;
    for (; ow + 8 <= OW; ow += 8) {
      __m256 lo = pool2_op(_mm256_loadu_ps(a0 + 2 * ow), _mm256_loadu_ps(a1 + 2 * ow), MX);
      __m256 hi = pool2_op(_mm256_loadu_ps(a0 + 2 * ow + 8), _mm256_loadu_ps(a1 + 2 * ow + 8), MX);
      __m256 m = pool2_op(sg2_even_lanes(lo, hi), sg2_odd_lanes(lo, hi), MX);
      _mm256_storeu_ps(yr + ow, MX ? m : _mm256_div_ps(m, quarter));
    }
    for (; ow < OW; ow++) {
      float e = pool_op(a0[2 * ow], a1[2 * ow], MX), o = pool_op(a0[2 * ow + 1], a1[2 * ow + 1], MX);
      float m = pool_op(e, o, MX);
      yr[ow] = MX ? m : m / 4.0f;
    }
  }
}

static SG256 void pool_2x2s2_avx2(const pool_priv *p, const float *x, float *y) {
  if (p->kind == POOL_MAX)
    pool_2x2s2_body(p, x, y, true);
  else
    pool_2x2s2_body(p, x, y, false);
}
#endif

typedef void (*pool_3x3s2_run)(const pool_priv *p, const float *x, float *y);
static pool_3x3s2_run pool_3x3s2_fn(const pool_priv *p) {
#if POOL_HAVE_AVX2
  nn_cpu_isa isa = nn_cpu_isa_get();
  if (p->kind == POOL_AVG)
    return isa >= NN_CPU_AVX512 ? pool_3x3s2_avg_avx512
           : isa >= NN_CPU_AVX2 ? pool_3x3s2_avg_avx2
                                : pool_3x3s2_avg_base;
  return isa >= NN_CPU_AVX512 ? pool_3x3s2_avx512
         : isa >= NN_CPU_AVX2 ? pool_3x3s2_avx2
                              : pool_3x3s2_base;
#else
  return p->kind == POOL_AVG ? pool_3x3s2_avg_base : pool_3x3s2_base;
#endif
}

/* ---- 8-bit MaxPool ---------------------------------------------------------------
 * An int8 model's MaxPool (ResNet's 3x3 stride 2 after its first conv) on
 * the generic loop (a double per element) took 9.7 ms at 64 x 112x112.  Per
 * output row: the window rows' maximum column by column, then the window
 * columns' maximum per output, both loops over bytes the compiler turns to
 * vectors; int8 runs as uint8 shifted by 128 (order kept).  Chunks of
 * output columns whose input columns fit POOL_MAX8_COLS. */
#define POOL_MAX8_COLS 2048

static bool pool_max8_ok(const pool_priv *p, bool indices) {
  const nn_conv_geom *g = &p->g;
  if (p->kind != POOL_MAX || indices || (p->dt != NN_DTYPE_UINT8 && p->dt != NN_DTYPE_INT8) ||
      g->nsp > 2 || g->in[0] != 1 || g->k[0] != 1 || g->s[0] != 1 || g->pb[0] != 0 ||
      g->out[0] != 1 || g->k[2] > POOL_MAX8_COLS / 2 || g->s[2] > POOL_MAX8_COLS / 4)
    return false;
  for (int i = 0; i < NN_CONV_SP; i++)
    if (g->d[i] != 1)
      return false;
  return true;
}

static void pool_max8_plane(const pool_priv *p, const uint8_t *x, uint8_t *y) {
  const nn_conv_geom *g = &p->g;
  const int64_t IH = g->in[1], IW = g->in[2], OH = g->out[1], OW = g->out[2];
  const int64_t KH = g->k[1], KW = g->k[2], SH = g->s[1], SW = g->s[2];
  const uint8_t fl = p->dt == NN_DTYPE_INT8 ? 0x80 : 0;
  const int64_t span = (POOL_MAX8_COLS - KW) / SW + 1;   /* output columns per chunk */
  /* vm: 32 bytes of slack, zeroed, for the stride-2 loads below */
  uint8_t vm[POOL_MAX8_COLS + 32], ym[POOL_MAX8_COLS];
  for (int64_t oh = 0; oh < OH; oh++) {
    int64_t h0 = oh * SH - g->pb[1], h1 = h0 + KH;
    h0 = h0 < 0 ? 0 : h0;
    h1 = h1 > IH ? IH : h1;
    for (int64_t o0 = 0; o0 < OW; o0 += span) {
      const int64_t on = OW - o0 < span ? OW - o0 : span;
      const int64_t c0 = o0 * SW - g->pb[2], cn = (on - 1) * SW + KW;
      /* the window rows' maximum over input columns c0 .. c0 + cn - 1 (0
       * outside the image: the neutral element of uint8) */
      int64_t v0 = c0 < 0 ? -c0 : 0, v1 = IW - c0 < cn ? IW - c0 : cn;
      memset(vm, 0, (size_t)cn + 32);
      for (int64_t h = h0; h < h1; h++) {
        const uint8_t *xr = x + h * IW + c0;
        for (int64_t t = v0; t < v1; t++) {
          uint8_t v = xr[t] ^ fl;
          vm[t] = v > vm[t] ? v : vm[t];
        }
      }
      memset(ym, 0, (size_t)on);
      int64_t t0 = 0;
#if SG_X86
      /* stride 2: tap k of 16 outputs is the even bytes of 32 from vm + k */
      if (SW == 2) {
        const __m128i ev = _mm_set1_epi16(0xff);
        for (; t0 + 16 <= on; t0 += 16) {
          __m128i m = _mm_setzero_si128();
          for (int64_t k = 0; k < KW; k++) {
            const uint8_t *v = vm + 2 * t0 + k;
            __m128i a = _mm_and_si128(_mm_loadu_si128((const __m128i *)v), ev);
            __m128i b = _mm_and_si128(_mm_loadu_si128((const __m128i *)(v + 16)), ev);
            m = _mm_max_epu8(m, _mm_packus_epi16(a, b));
          }
          _mm_storeu_si128((__m128i *)(ym + t0), m);
        }
      }
#endif
      for (int64_t k = 0; k < KW; k++)
        for (int64_t t = t0; t < on; t++) {
          uint8_t v = vm[t * SW + k];
          ym[t] = v > ym[t] ? v : ym[t];
        }
      uint8_t *yr = y + oh * OW + o0;
      for (int64_t t = 0; t < on; t++)
        yr[t] = ym[t] ^ fl;
    }
  }
}

static void pool_run_planes(void *arg, int64_t b, int64_t e) {
  const pool_job *jb = arg;
  const pool_priv *p = jb->p;
  size_t es = nn_dtype_size(p->dt);
  for (int64_t i = b; i < e; i++) {
    const char *x = (const char *)jb->x + (size_t)(i * p->g.in_sz) * es;
    char *y = (char *)jb->y + (size_t)(i * p->g.out_sz) * es;
    int64_t *ind = jb->ind ? jb->ind + i * p->g.out_sz : NULL;
    if (p->fast == POOL_FAST_GLOBAL)
      *(float *)y = pool_global_f32(p, (const float *)x, p->g.in_sz);
    else if (p->fast == POOL_FAST_MAX8)
      pool_max8_plane(p, (const uint8_t *)x, (uint8_t *)y);
#if POOL_HAVE_AVX2
    else if (p->fast == POOL_FAST_2X2S2 && nn_cpu_isa_get() >= NN_CPU_AVX2)
      pool_2x2s2_avx2(p, (const float *)x, (float *)y);
#endif
    else if (p->fast == POOL_FAST_WINDOW || p->fast == POOL_FAST_2X2S2)
      pool_plane_f32_fast(p, (const float *)x, (float *)y);
    else if (p->fast == POOL_FAST_3X3)
      pool_plane_3x3(p, (const float *)x, (float *)y);
    else if (p->fast == POOL_FAST_3X3S2)
      pool_3x3s2_fn(p)(p, (const float *)x, (float *)y);
    else if (p->dt == NN_DTYPE_FLOAT)
      pool_plane_f32(p, x, y, ind, i * p->g.in_sz);
    else
      pool_plane_any(p, x, y, ind, i * p->g.in_sz);
  }
}

static nn_status pool_run(nn_ctx *c, nn_node *n) {
  const pool_priv *p = n->priv;
  pool_job jb = {
    .p = p,
    .x = n->x[0]->data,
    .y = n->y[0]->data,
    .ind = n->n_out > 1 && n->y[1] ? n->y[1]->data : NULL,
  };
  int64_t work = p->g.out_sz * p->g.k_sz;
  int64_t grain = work > 0 ? 1 + (1 << 14) / work : 1;
  nn_parallel_for(c, p->planes, grain, pool_run_planes, &jb);
  return NN_OK;
}

/* The types pool_ld / pool_st read and write; the 8-bit ones for MaxPool
 * only (allow_int). */
static nn_status pool_check_dtype(nn_ctx *c, const nn_node *n, bool allow_int) {
  nn_dtype dt = n->x[0]->dtype;
  bool ok = dt == NN_DTYPE_FLOAT || dt == NN_DTYPE_DOUBLE || dt == NN_DTYPE_FLOAT16 ||
            dt == NN_DTYPE_BFLOAT16 ||
            (allow_int && (dt == NN_DTYPE_INT8 || dt == NN_DTYPE_UINT8));
  if (!ok)
    return nn_fail(c, NN_ERR_UNSUPPORTED, "input type %s is not supported", nn_dtype_name(dt));
  return NN_OK;
}

/* One window that is the whole plane, unpadded (Inception's 7x7 average
 * pool before its classifier): a global pool, one pass instead of the row
 * path's set-up per window row (0.06 ms against ONNX Runtime's 0.007). */
static bool pool_whole_ok(const pool_priv *p, bool indices) {
  const nn_conv_geom *g = &p->g;
  if (p->dt != NN_DTYPE_FLOAT || indices || (p->kind != POOL_MAX && p->kind != POOL_AVG))
    return false;
  for (int i = 0; i < NN_CONV_SP; i++)
    if (g->out[i] != 1 || g->k[i] != g->in[i] || g->pb[i] != 0 || g->pe[i] != 0 || g->d[i] != 1)
      return false;
  return true;
}

static nn_status pool_finish(nn_ctx *c, nn_node *n, const pool_priv *p) {
  const nn_value *x = n->x[0];
  pool_priv *q = nn_malloc(sizeof *q);
  if (!q)
    return nn_fail(c, NN_ERR_NOMEM, "out of memory");
  *q = *p;
  q->planes = x->dims[0] * x->dims[1];
  bool indices = n->n_out > 1 && n->y[1];
  q->fast = pool_whole_ok(q, indices)   ? POOL_FAST_GLOBAL
            : pool_3x3_ok(q, indices)   ? POOL_FAST_3X3
            : pool_3x3s2_ok(q, indices) ? POOL_FAST_3X3S2
            : pool_2x2s2_ok(q, indices) ? POOL_FAST_2X2S2
            : pool_fast_ok(q, indices)  ? POOL_FAST_WINDOW
            : pool_max8_ok(q, indices)  ? POOL_FAST_MAX8
                                        : POOL_FAST_NONE;
  n->priv = q;
  return NN_OK;
}

static nn_status pool_prepare_window(nn_ctx *c, nn_node *n, pool_kind kind) {
  nn_status st = pool_check_dtype(c, n, kind == POOL_MAX);
  if (st)
    return st;
  const nn_value *x = n->x[0];
  pool_priv p;
  memset(&p, 0, sizeof p);
  p.kind = kind;
  p.dt = x->dtype;
  nn_pool_params pp;
  if ((st = nn_pool_params_init(c, n, &pp)))
    return st;
  p.g = pp.g;
  p.include_pad = kind == POOL_AVG && pp.count_include_pad;
  p.col_major = kind == POOL_MAX && pp.storage_order;
  if (kind == POOL_LP && (st = nn_pool_lp_p(c, n, &p.p)))
    return st;
  return pool_finish(c, n, &p);
}

static nn_status pool_avg_prepare(nn_ctx *c, nn_node *n) { return pool_prepare_window(c, n, POOL_AVG); }
static nn_status pool_max_prepare(nn_ctx *c, nn_node *n) { return pool_prepare_window(c, n, POOL_MAX); }
static nn_status pool_lp_prepare(nn_ctx *c, nn_node *n) { return pool_prepare_window(c, n, POOL_LP); }

/* Global pools: all spatial dims folded into one window of the whole plane. */
static nn_status pool_prepare_global(nn_ctx *c, nn_node *n, pool_kind kind) {
  nn_status st = pool_check_dtype(c, n, kind == POOL_MAX);
  if (st)
    return st;
  const nn_value *x = n->x[0];
  pool_priv p;
  memset(&p, 0, sizeof p);
  p.kind = kind;
  p.dt = x->dtype;
  if (kind == POOL_LP && (st = nn_pool_lp_p(c, n, &p.p)))
    return st;
  int64_t plane = 1;
  for (int i = 2; i < x->rank; i++)
    plane *= x->dims[i];
  nn_conv_geom *g = &p.g;
  g->nsp = x->rank - 2;
  for (int i = 0; i < NN_CONV_SP; i++) {
    g->in[i] = g->out[i] = g->k[i] = g->s[i] = g->d[i] = 1;
    g->pb[i] = g->pe[i] = 0;
  }
  g->in[2] = g->k[2] = plane;
  g->in_sz = g->k_sz = plane;
  g->out_sz = 1;
  pool_priv *q = nn_malloc(sizeof *q);
  if (!q)
    return nn_fail(c, NN_ERR_NOMEM, "out of memory");
  *q = p;
  q->planes = x->dims[0] * x->dims[1];
  if (p.dt == NN_DTYPE_FLOAT && (kind == POOL_AVG || kind == POOL_MAX))
    q->fast = POOL_FAST_GLOBAL;
  n->priv = q;
  return NN_OK;
}

static nn_status pool_gavg_prepare(nn_ctx *c, nn_node *n) { return pool_prepare_global(c, n, POOL_AVG); }
static nn_status pool_gmax_prepare(nn_ctx *c, nn_node *n) { return pool_prepare_global(c, n, POOL_MAX); }
static nn_status pool_glp_prepare(nn_ctx *c, nn_node *n) { return pool_prepare_global(c, n, POOL_LP); }

/* ---- MaxUnpool ------------------------------------------------------------------
 * Scatters X to the flattened positions of Indices in a zeroed tensor of the
 * inferred shape (N, C, (in-1)*s - pads + k).  With an output_shape input the
 * pads are ignored and the inferred result lands in the leading corner of the
 * (not smaller) requested shape, as the ONNX reference does. */

typedef struct unpool_priv {
  int rank;
  int64_t inf[NN_MAX_RANK];     /* inferred shape */
  int64_t out[NN_MAX_RANK];     /* output shape */
  int64_t inf_numel;
} unpool_priv;

static nn_status unpool_prepare(nn_ctx *c, nn_node *n) {
  nn_unpool_params up;
  nn_status st = pool_check_dtype(c, n, false);
  if (st || (st = nn_unpool_params_init(c, n, &up)))
    return st;
  unpool_priv *q = nn_malloc(sizeof *q);
  if (!q)
    return nn_fail(c, NN_ERR_NOMEM, "out of memory");
  memset(q, 0, sizeof *q);
  q->rank = up.rank;
  memcpy(q->inf, up.inf, sizeof q->inf);
  memcpy(q->out, up.out, sizeof q->out);
  q->inf_numel = nn_dims_numel(q->rank, q->inf);
  n->priv = q;
  return NN_OK;
}

static nn_status unpool_run(nn_ctx *c, nn_node *n) {
  const unpool_priv *p = n->priv;
  const nn_value *x = n->x[0];
  const int64_t *ind = n->x[1]->data;
  nn_value *y = n->y[0];
  size_t es = nn_dtype_size(x->dtype);
  memset(y->data, 0, y->nbytes);
  for (int64_t i = 0; i < x->numel; i++) {
    int64_t t = ind[i];
    if (t < 0 || t >= p->inf_numel)
      return nn_fail(c, NN_ERR_RUNTIME, "index %lld at position %lld is outside [0, %lld)",
                     (long long)t, (long long)i, (long long)p->inf_numel);
    /* position in the inferred shape -> same coordinates in the output shape */
    int64_t o = 0, rem = t, mul = 1;
    for (int d = p->rank - 1; d >= 0; d--) {
      o += (rem % p->inf[d]) * mul;
      rem /= p->inf[d];
      mul *= p->out[d];
    }
    memcpy((char *)y->data + (size_t)o * es, (const char *)x->data + (size_t)i * es, es);
  }
  return NN_OK;
}

const nn_kernel nn_kernels_pool[] = {
  {.name = "AveragePool", .prepare = pool_avg_prepare, .run = pool_run},
  {.name = "MaxPool", .prepare = pool_max_prepare, .run = pool_run},
  {.name = "LpPool", .prepare = pool_lp_prepare, .run = pool_run},
  {.name = "GlobalAveragePool", .prepare = pool_gavg_prepare, .run = pool_run},
  {.name = "GlobalMaxPool", .prepare = pool_gmax_prepare, .run = pool_run},
  {.name = "GlobalLpPool", .prepare = pool_glp_prepare, .run = pool_run},
  {.name = "MaxUnpool", .prepare = unpool_prepare, .run = unpool_run},
  {0},
};

/* quant.c - CPU kernels of the linear quantizers: QuantizeLinear,
 * DequantizeLinear (10/13/19/21/23/25), DynamicQuantizeLinear (11) and
 * QLinearMatMul (10/21: float32 or, since 21, float16/bfloat16 scales).
 * The scale and zero-point layouts and the shapes are the op layer's
 * (ops/quant.h, ops/quant.c); prepare keeps them in priv with the output
 * type's range. */
#include "cpu/kernel_util.h"
#include "knobs.h"
#include "cpu/qconv_direct.h"
#include "cpu/sgemm.h"
#include "cpu/vmath.h"
#include "ops/quant.h"

/* Round half to even, as numpy's rint (the reference of the quantizers). */
static inline double quant_rint(double v) { return nearbyint(v); }

typedef struct quant_params {
  nn_quant_layout l;
  double qmin, qmax;
} quant_params;

static inline int64_t quant_index(const nn_quant_layout *p, int64_t e) {
  switch (p->kind) {
  case NN_QUANT_AXIS:
    return (e / p->inner) % p->A;
  case NN_QUANT_BLOCK: {
    int64_t i = e % p->inner, a = (e / p->inner) % p->A, o = e / (p->inner * p->A);
    return (o * p->SA + a / p->block) * p->inner + i;
  }
  default:
    return 0;
  }
}

static bool quant_int_type(nn_dtype dt, double *lo, double *hi) {
  switch (dt) {
  case NN_DTYPE_UINT8: *lo = 0, *hi = 255; return true;
  case NN_DTYPE_INT8: *lo = -128, *hi = 127; return true;
  case NN_DTYPE_UINT16: *lo = 0, *hi = 65535; return true;
  case NN_DTYPE_INT16: *lo = -32768, *hi = 32767; return true;
  case NN_DTYPE_INT32: *lo = INT32_MIN, *hi = INT32_MAX; return true;
  default: return false;
  }
}

static nn_status quant_store_priv(nn_ctx *c, nn_node *n, const quant_params *p) {
  quant_params *pp = nn_malloc(sizeof *pp);
  if (!pp)
    return nn_fail(c, NN_ERR_NOMEM, "out of memory");
  *pp = *p;
  n->priv = pp;
  return NN_OK;
}

static nn_status dequant_prepare(nn_ctx *c, nn_node *n) {
  quant_params p = {0};
  nn_status st = nn_quant_layout_init(c, n, &p.l);
  if (st != NN_OK)
    return st;
  return quant_store_priv(c, n, &p);
}

/* The 8-bit <-> float32 quantizers with one scale per tensor or per axis
 * element run as loops over (outer, axis, inner) with the scale and zero
 * point hoisted, the compiler's vectors and no per-element type switch or
 * libm call: 144 x 56x56 uint8 took 3.5 ms to quantize and 2.5 ms to
 * dequantize through the generic loops (an int8 model runs one pair per
 * QLinear island, a QDQ one around every op).  Same arithmetic as those. */
static bool quant_fast_layout(const quant_params *p, const nn_value *x, int64_t *outer, int64_t *A,
                              int64_t *inner) {
  if (p->l.kind == NN_QUANT_TENSOR) {
    *outer = 1, *A = 1, *inner = x->numel;
    return true;
  }
  if (p->l.kind != NN_QUANT_AXIS || p->l.outer * p->l.A * p->l.inner != x->numel)
    return false;
  *outer = p->l.outer, *A = p->l.A, *inner = p->l.inner;
  return true;
}

static bool is_q8(nn_dtype dt) { return dt == NN_DTYPE_UINT8 || dt == NN_DTYPE_INT8; }

/* Elements [e0, e0 + n) of axis element a (the scale's and zero point's). */
static void dequant_span(const nn_value *x, const nn_value *scale, const nn_value *zp, nn_value *y,
                         int64_t e0, int64_t n, int64_t a) {
  const float s = ((const float *)scale->data)[a];
  float *yd = (float *)y->data + e0;
  if (x->dtype == NN_DTYPE_UINT8) {
    const uint8_t *xs = (const uint8_t *)x->data + e0;
    const int32_t z = zp ? ((const uint8_t *)zp->data)[a] : 0;
    for (int64_t i = 0; i < n; i++)
      yd[i] = (float)((int32_t)xs[i] - z) * s;
  } else {
    const int8_t *xs = (const int8_t *)x->data + e0;
    const int32_t z = zp ? ((const int8_t *)zp->data)[a] : 0;
    for (int64_t i = 0; i < n; i++)
      yd[i] = (float)((int32_t)xs[i] - z) * s;
  }
}

/* n floats quantized to 8 bits: rint(x / s) + z clamped to [lo, hi],
 * vector blocks through vmath, the rest here, value for value the same:
 * rint of the float quotient as (q + 1.5 * 2^23) - 1.5 * 2^23, half to
 * even below 2^22, and beyond it (clamped there first) the 8-bit range
 * saturates either way; a NaN quotient counts as 0 (the result is z). */
static void quant_row(const float *xs, float s, float z, float lo, float hi, bool u8, void *y,
                      int64_t n) {
  const float magic = 12582912.0f, big = 4194304.0f;
  for (int64_t i = nn_vmath_quantize_f32(xs, s, z, lo, hi, u8, y, n); i < n; i++) {
    float qf = xs[i] / s;
    qf = qf > big ? big : qf < -big ? -big : qf;
    float r = (qf + magic) - magic;
    float q = r == r ? r + z : z;
    q = q < lo ? lo : q > hi ? hi : q;
    if (u8)
      ((uint8_t *)y)[i] = (uint8_t)(int32_t)q;
    else
      ((int8_t *)y)[i] = (int8_t)(int32_t)q;
  }
}

static void quant_span(const quant_params *p, const nn_value *x, const nn_value *scale,
                       const nn_value *zp, nn_value *y, int64_t e0, int64_t n, int64_t a) {
  const float z = zp ? (y->dtype == NN_DTYPE_UINT8 ? ((const uint8_t *)zp->data)[a]
                                                    : ((const int8_t *)zp->data)[a]) : 0;
  quant_row((const float *)x->data + e0, ((const float *)scale->data)[a], z, (float)p->qmin,
            (float)p->qmax, y->dtype == NN_DTYPE_UINT8, (unsigned char *)y->data + e0, n);
}

/* The workers' share: units of at most QUANT_CHUNK elements of one axis
 * element's run (the quantizers ran serially: a QDQ MobileNetV2 spent a
 * quarter of its time in them, on one core of two). */
#define QUANT_CHUNK 16384
typedef struct quant_job {
  const quant_params *p;
  const nn_value *x, *scale, *zp;
  nn_value *y;
  int64_t A, inner, nch;
  bool dq;
} quant_job;

static void quant_units(void *arg, int64_t u0, int64_t u1) {
  const quant_job *j = arg;
  for (int64_t u = u0; u < u1; u++) {
    int64_t r = u / j->nch, i0 = (u % j->nch) * QUANT_CHUNK;
    int64_t n = j->inner - i0 < QUANT_CHUNK ? j->inner - i0 : QUANT_CHUNK;
    if (j->dq)
      dequant_span(j->x, j->scale, j->zp, j->y, r * j->inner + i0, n, r % j->A);
    else
      quant_span(j->p, j->x, j->scale, j->zp, j->y, r * j->inner + i0, n, r % j->A);
  }
}

/* Whether the 8-bit <-> float32 pair with this layout runs quant_units;
 * if so, runs it. */
static bool quant_fast_run(nn_ctx *c, const quant_params *p, const nn_value *x,
                           const nn_value *scale, const nn_value *zp, nn_value *y, bool dq) {
  int64_t outer, A, inner;
  const nn_dtype qt = dq ? x->dtype : y->dtype;
  if (!is_q8(qt) || (dq ? y->dtype : x->dtype) != NN_DTYPE_FLOAT ||
      scale->dtype != NN_DTYPE_FLOAT || (zp && zp->dtype != qt) ||
      !quant_fast_layout(p, x, &outer, &A, &inner))
    return false;
  if (inner == 0 || outer * A == 0)
    return true;
  quant_job j = {p, x, scale, zp, y, A, inner, (inner + QUANT_CHUNK - 1) / QUANT_CHUNK, dq};
  nn_parallel_for(c, outer * A * j.nch, 1, quant_units, &j);
  return true;
}

static nn_status dequant_run(nn_ctx *c, nn_node *n) {
  const quant_params *p = n->priv;
  nn_value *x = n->x[0], *scale = n->x[1], *zp = ku_in(n, 2), *y = n->y[0];
  if (quant_fast_run(c, p, x, scale, zp, y, true))
    return NN_OK;
  for (int64_t e = 0; e < x->numel; e++) {
    int64_t k = quant_index(&p->l, e);
    /* float math as the reference: (x - zp) exactly, then one rounding */
    float v = (float)(ku_ldd(x->data, x->dtype, e) - (zp ? ku_ldd(zp->data, zp->dtype, k) : 0));
    ku_stf(y->data, y->dtype, e, v * ku_ldf(scale->data, scale->dtype, k));
  }
  return NN_OK;
}

static nn_status quant_prepare(nn_ctx *c, nn_node *n) {
  quant_params p = {0};
  nn_status st = nn_quant_layout_init(c, n, &p.l);
  if (st != NN_OK)
    return st;
  if (!quant_int_type(n->y[0]->dtype, &p.qmin, &p.qmax))
    return nn_fail(c, NN_ERR_UNSUPPORTED, "unsupported quantized type %s",
                   nn_dtype_name(n->y[0]->dtype));
  return quant_store_priv(c, n, &p);
}

static nn_status quant_run(nn_ctx *c, nn_node *n) {
  const quant_params *p = n->priv;
  nn_value *x = n->x[0], *scale = n->x[1], *zp = ku_in(n, 2), *y = n->y[0];
  if (quant_fast_run(c, p, x, scale, zp, y, false))
    return NN_OK;
  bool fl = x->dtype == NN_DTYPE_FLOAT && scale->dtype == NN_DTYPE_FLOAT;
  for (int64_t e = 0; e < x->numel; e++) {
    int64_t k = quant_index(&p->l, e);
    /* the division rounds in float as the reference, so ties land alike */
    double q = fl ? (double)(((const float *)x->data)[e] / ((const float *)scale->data)[k])
                  : ku_ldd(x->data, x->dtype, e) / ku_ldd(scale->data, scale->dtype, k);
    q = ku_clampd(quant_rint(q), -4e18, 4e18);
    if (zp)
      q += ku_ldd(zp->data, zp->dtype, k);
    ku_std(y->data, y->dtype, e, ku_clampd(q, p->qmin, p->qmax));
  }
  return NN_OK;
}

/* ---- DynamicQuantizeLinear: uint8 over [min(0, x), max(0, x)] ------------------- */

/* (The transformers ONNX Runtime's quantize_dynamic writes put one before
 * every MatMulInteger: a scalar loop here took a third of such a ViT's
 * time.)  NaNs are skipped by the range and quantize to the zero point. */
static nn_status dynq_run(nn_ctx *c, nn_node *n) {
  (void)c;
  nn_value *x = n->x[0], *y = n->y[0];
  float mn, mx;
  nn_vmath_range_f32(x->data, x->numel, &mn, &mx);
  /* an all-zero input has an empty range: scale 1 keeps everything finite */
  float scale = mx == mn ? 1.0f : (mx - mn) / 255.0f;
  float zpf = 0.0f - mn / scale;
  zpf = zpf < 0.0f ? 0.0f : zpf > 255.0f ? 255.0f : zpf;
  double zp = quant_rint(zpf);
  quant_row(x->data, scale, (float)zp, 0.0f, 255.0f, true, y->data, x->numel);
  if (ku_out(n, 1))
    *(float *)n->y[1]->data = scale;
  if (ku_out(n, 2))
    *(uint8_t *)n->y[2]->data = (uint8_t)zp;
  return NN_OK;
}

/* ---- QLinearMatMul: y = sat(rint((a - a_zp)(b - b_zp) * a_s * b_s / y_s) + y_zp) --
 * Exact int32 accumulation (int64 here, so no overflow for any K), one
 * rounding of the scaled sum; the geometry is ops/quant.h's. */

#define QLMM_HEAD nn_align_up(sizeof(qlmm_params), 64)
typedef struct qlmm_params {
  nn_qlmm_geom g;
  double qmin, qmax;
  bool fast;              /* 8-bit A and B: qlmm_run_float */
  bool b_const, b_ready;  /* B a constant: (b - b_zp) as floats and each row's
                             largest magnitude kept after the struct, made once */
  size_t fa, fb, fk, fy;  /* its workspace: A, B, B's row maxima, one product's sums
                             (floats), as many int64 sums, the engine's scratch */
  size_t gemm_ws;
  /* the direct integer kernel (cpu/qconv_direct.h) as a 1x1 convolution of
   * M pixels with K channels into N: 8-bit A with one zero point, constant
   * 8-bit B with column zero points 0 (128 for uint8), one y zero point;
   * B's packed block after the struct, n->ws: N multipliers, N biases, the
   * kernel's scratch */
  bool direct;
  size_t d_bytes, d_head;
} qlmm_params;

static inline int32_t qlmm_ld(const void *p, nn_dtype dt, int64_t i) {
  return dt == NN_DTYPE_INT8 ? ((const int8_t *)p)[i] : ((const uint8_t *)p)[i];
}

static bool qlmm_direct_ok(const nn_node *n, const nn_qlmm_geom *g) {
  const nn_value *b = n->x[3], *bzp = n->x[5];
  if (nn_knobs().no_direct || g->a_row || g->y_col || g->K % 4 || g->M < 1 ||
      !b->known || !b->data || !bzp->known || !bzp->data || g->brank > 0)
    return false;
  nn_qdc_shape s;
  nn_qdc_matrix_shape(g->M, g->K, g->N, &s);
  if (!nn_qdc_worth(&s))
    return false;
  const int32_t shift = b->dtype == NN_DTYPE_UINT8 ? 128 : 0;
  for (int64_t j = 0; j < (g->b_col ? g->N : 1); j++)
    if (qlmm_ld(bzp->data, bzp->dtype, j) != shift)
      return false;
  return true;
}

static nn_status qlmm_prepare(nn_ctx *c, nn_node *n) {
  qlmm_params p;
  memset(&p, 0, sizeof p);
  nn_status st = nn_qlmm_geom_init(c, n, &p.g);
  if (st != NN_OK)
    return st;
  if (!quant_int_type(n->y[0]->dtype, &p.qmin, &p.qmax))
    return nn_fail(c, NN_ERR_UNSUPPORTED, "unsupported output type");
  p.fast = is_q8(n->x[0]->dtype) && is_q8(n->x[3]->dtype);
  if (p.fast && qlmm_direct_ok(n, &p.g)) {
    nn_qdc_shape sh;
    nn_qdc_matrix_shape(p.g.M, p.g.K, p.g.N, &sh);
    p.direct = true;
    p.d_bytes = nn_align_up(nn_qdc_pack_size(&sh), 64);
    p.d_head = nn_align_up((size_t)p.g.N * (sizeof(float) + sizeof(int32_t)), 64);
    n->ws_bytes = p.d_head + nn_qdc_workspace(&sh);
    qlmm_params *pp = nn_malloc(QLMM_HEAD + p.d_bytes);
    if (!pp || !nn_qdc_pack_matrix(&sh, n->x[3]->data, n->x[3]->dtype == NN_DTYPE_UINT8,
                                   (char *)pp + QLMM_HEAD)) {
      nn_free(pp);
      return nn_fail(c, NN_ERR_NOMEM, "out of memory");
    }
    *pp = p;
    n->priv = pp;
    n->priv_const_bytes = p.d_bytes;   /* B repacked: counted as weights */
    return NN_OK;
  }
  if (p.fast) {
    p.fa = nn_align_up((size_t)(p.g.M * p.g.K), 16);
    p.fb = nn_align_up((size_t)(p.g.K * p.g.N), 16);
    p.fy = nn_align_up((size_t)(p.g.M * p.g.N), 16);
    p.fk = nn_align_up((size_t)p.g.K, 16);
    p.gemm_ws = nn_sgemm_workspace(p.g.M, p.g.N, p.g.K, c->threads > 1 ? c->threads : 1);
    n->ws_bytes = (p.fa + p.fb + p.fk + 3 * p.fy) * sizeof(float) + p.gemm_ws;
    p.b_const = p.g.batch == 1 && n->x[3]->known && n->x[3]->data && n->x[5]->known;
  }
  size_t extra = p.b_const ? (p.fb + p.fk) * sizeof(float) : 0;
  qlmm_params *pp = nn_malloc(QLMM_HEAD + extra);
  if (!pp)
    return nn_fail(c, NN_ERR_NOMEM, "out of memory");
  *pp = p;
  n->priv = pp;
  n->priv_const_bytes = extra;   /* a float copy of the weights: counted as weights */
  return NN_OK;
}

/* The multiplier a_s * b_s / y_s in the scales' own precision, as the
 * reference computes it (float16 scales round after each operation). */
static float qlmm_mult(const nn_node *n, int64_t ia, int64_t ib, int64_t iy) {
  const nn_value *as = n->x[1], *bs = n->x[4], *ys = n->x[6];
  float fa = ku_ldf(as->data, as->dtype, ia), fb = ku_ldf(bs->data, bs->dtype, ib);
  float fy = ku_ldf(ys->data, ys->dtype, iy);
  if (as->dtype == NN_DTYPE_FLOAT16 && bs->dtype == NN_DTYPE_FLOAT16 &&
      ys->dtype == NN_DTYPE_FLOAT16)
    return nn_f16_to_f32(nn_f32_to_f16(nn_f16_to_f32(nn_f32_to_f16(fa * fb)) / fy));
  return fa * fb / fy;
}

/* One output as ONNX Runtime's MLAS requantizes it: the int32 sum (wrapping)
 * times the multiplier in float32, clamped to the range less the zero point
 * (NaN to its low end), rounded half to even, plus the zero point.  The
 * ONNX reference keeps the product in double; ties such as 140.5000038 then
 * fall the other way.  Same as cpu/conv.c's QLinearConv. */
static double qlmm_requant(int64_t s, float mult, int32_t zp, double qmin, double qmax) {
  float v = (float)(int32_t)(uint32_t)(uint64_t)s * mult;
  const float lo = (float)(qmin - zp), hi = (float)(qmax - zp);
  v = v > lo ? v : lo;
  v = v < hi ? v : hi;
  return (double)nearbyintf(v) + zp;
}

/* Element offsets of product t's A and B (broadcast batch dims). */
static void qlmm_offsets(const nn_qlmm_geom *p, int64_t t, int64_t *oa, int64_t *ob) {
  int64_t a = 0, b = 0, rem = t;
  for (int d = p->brank - 1; d >= 0; d--) {
    int64_t i = rem % p->bdims[d];
    rem /= p->bdims[d];
    a += i * p->astr[d];
    b += i * p->bstr[d];
  }
  *oa = a * p->M * p->K;
  *ob = b * p->K * p->N;
}

/* 8-bit QLinearMatMul through the float engine, exactly (as conv.c's
 * qconv_run_float): (a - a_zp) and (b - b_zp) as floats, the depth cut into
 * chunks whose partial sums stay below 2^24 (bound: the largest |a - a_zp|
 * times each row k's largest |b - b_zp|), one product per chunk, the chunks
 * added in int64 as the reference sums; then its requantization.  The
 * scalar loop ran a 1 x 1280 x 1000 classifier in ~2.5 ms. */
static nn_status qlmm_run_float(nn_ctx *c, nn_node *n) {
  const qlmm_params *q = n->priv;
  const nn_qlmm_geom *p = &q->g;
  const nn_value *a = n->x[0], *azp = n->x[2], *b = n->x[3], *bzp = n->x[5], *yzp = n->x[7];
  nn_value *y = n->y[0];
  const int64_t M = p->M, K = p->K, N = p->N;
  float *fa = n->ws, *fb = fa + q->fa, *bmx = fb + q->fb, *fy = bmx + q->fk;
  int64_t *acc = (int64_t *)(void *)(fy + q->fy);   /* fy is a multiple of 16 floats */
  void *gws = fy + 3 * q->fy;
  bool b_done = false;
  if (q->b_const) {   /* priv is the node's own: written once, before any use */
    fb = (float *)((char *)q + QLMM_HEAD);
    bmx = fb + q->fb;
    b_done = q->b_ready;
    ((qlmm_params *)q)->b_ready = true;
  }
  for (int64_t t = 0; t < p->batch; t++) {
    int64_t oa, ob;
    qlmm_offsets(p, t, &oa, &ob);
    float amax = 0.0f;
    for (int64_t m = 0; m < M; m++) {
      int32_t za = qlmm_ld(azp->data, azp->dtype, p->a_row ? m : 0);
      for (int64_t k = 0; k < K; k++) {
        float v = (float)(qlmm_ld(a->data, a->dtype, oa + m * K + k) - za);
        fa[m * K + k] = v;
        amax = fabsf(v) > amax ? fabsf(v) : amax;
      }
    }
    for (int64_t k = 0; k < K && !b_done; k++) {
      float bm = 0.0f;
      for (int64_t j = 0; j < N; j++) {
        float v = (float)(qlmm_ld(b->data, b->dtype, ob + k * N + j) -
                          qlmm_ld(bzp->data, bzp->dtype, p->b_col ? j : 0));
        fb[k * N + j] = v;
        bm = fabsf(v) > bm ? fabsf(v) : bm;
      }
      bmx[k] = bm;
    }
    bool chunked = false;
    for (int64_t k0 = 0; k0 < K;) {
      /* rows of B while |a - a_zp| times the sum of their largest |b| stays exact */
      double bound = 0;
      int64_t k1 = k0;
      while (k1 < K) {
        if (k1 > k0 && bound + (double)amax * bmx[k1] >= 16777216.0)
          break;
        bound += (double)amax * bmx[k1++];
      }
      nn_status st = nn_sgemm_compute(c, 0, 0, M, N, k1 - k0, 1.0f, fa + k0, K, fb + k0 * N, N, 0.0f,
                                      fy, N, NULL, gws, q->gemm_ws);
      if (st)
        return nn_fail(c, st, "the product failed");
      if (k0 > 0 || k1 < K) {
        for (int64_t i = 0; i < M * N; i++)
          acc[i] = (k0 == 0 ? 0 : acc[i]) + (int64_t)fy[i];
        chunked = true;
      }
      k0 = k1;
    }
    for (int64_t m = 0; m < M; m++)
      for (int64_t j = 0; j < N; j++) {
        int64_t iy = p->y_col ? j : 0;
        int64_t s = chunked ? acc[m * N + j] : (int64_t)fy[m * N + j];
        double v = qlmm_requant(s, qlmm_mult(n, p->a_row ? m : 0, p->b_col ? j : 0, iy),
                                qlmm_ld(yzp->data, yzp->dtype, iy), q->qmin, q->qmax);
        ku_std(y->data, y->dtype, (t * M + m) * N + j, v);
      }
  }
  return NN_OK;
}

static nn_status qlmm_run_direct(nn_ctx *c, nn_node *n) {
  const qlmm_params *q = n->priv;
  const nn_qlmm_geom *p = &q->g;
  const nn_value *a = n->x[0], *azp = n->x[2], *yzp = n->x[7];
  const void *pk = (const char *)q + QLMM_HEAD;
  const bool s8 = a->dtype == NN_DTYPE_INT8;
  const int32_t zb = qlmm_ld(azp->data, azp->dtype, 0) + (s8 ? 128 : 0);
  float *mult = n->ws;
  int32_t *bias = (int32_t *)(mult + p->N);
  nn_qdc_offsets(pk, zb, bias);
  for (int64_t j = 0; j < p->N; j++)
    mult[j] = qlmm_mult(n, 0, p->b_col ? j : 0, 0);
  /* the rows of Y are the kernel's pixel-major layout: it writes them */
  nn_qdc_requant rq = {bias, mult, qlmm_ld(yzp->data, yzp->dtype, 0),
                       n->y[0]->dtype == NN_DTYPE_UINT8, NULL, p->N};
  for (int64_t t = 0; t < p->batch; t++) {
    rq.dst = (uint8_t *)n->y[0]->data + t * p->M * p->N;
    nn_status st = nn_qdc_compute_8(c, pk, (const uint8_t *)a->data + t * p->M * p->K, s8 ? 0x80 : 0,
                                    zb, &rq, NULL, NULL, (char *)n->ws + q->d_head,
                                    n->ws_bytes - q->d_head);
    if (st)
      return nn_fail(c, st, "the direct integer product refused its operands");
  }
  return NN_OK;
}

static nn_status qlmm_run(nn_ctx *c, nn_node *n) {
  const qlmm_params *q = n->priv;
  if (q->direct)
    return qlmm_run_direct(c, n);
  if (q->fast)
    return qlmm_run_float(c, n);
  const nn_qlmm_geom *p = &q->g;
  const nn_value *a = n->x[0], *azp = n->x[2], *b = n->x[3], *bzp = n->x[5], *yzp = n->x[7];
  nn_value *y = n->y[0];
  const int64_t M = p->M, K = p->K, N = p->N;
  for (int64_t t = 0; t < p->batch; t++) {
    int64_t oa, ob;
    qlmm_offsets(p, t, &oa, &ob);
    for (int64_t m = 0; m < M; m++) {
      int32_t za = qlmm_ld(azp->data, azp->dtype, p->a_row ? m : 0);
      for (int64_t j = 0; j < N; j++) {
        int32_t zb = qlmm_ld(bzp->data, bzp->dtype, p->b_col ? j : 0);
        int64_t acc = 0;
        for (int64_t k = 0; k < K; k++)
          acc += (int64_t)(qlmm_ld(a->data, a->dtype, oa + m * K + k) - za) *
                 (qlmm_ld(b->data, b->dtype, ob + k * N + j) - zb);
        int64_t iy = p->y_col ? j : 0;
        double v = qlmm_requant(acc, qlmm_mult(n, p->a_row ? m : 0, p->b_col ? j : 0, iy),
                                qlmm_ld(yzp->data, yzp->dtype, iy), q->qmin, q->qmax);
        ku_std(y->data, y->dtype, (t * M + m) * N + j, v);
      }
    }
  }
  return NN_OK;
}

const nn_kernel nn_kernels_quant[] = {
  {.name = "DequantizeLinear", .prepare = dequant_prepare, .run = dequant_run},
  {.name = "QuantizeLinear", .prepare = quant_prepare, .run = quant_run},
  {.name = "DynamicQuantizeLinear", .run = dynq_run},
  {.name = "QLinearMatMul", .prepare = qlmm_prepare, .run = qlmm_run},
  {0},
};

/* norm.c - normalizations: BatchNormalization, InstanceNormalization,
 * LayerNormalization, GroupNormalization, RMSNormalization, LRN,
 * LpNormalization, MeanVarianceNormalization.
 *
 * All but LRN share one shape: statistics over a set of elements, then an
 * elementwise affine map.  Statistics are accumulated in double (two passes:
 * mean, then centred squares) whatever the tensor type, which is at least as
 * precise as every stash_type.  float32 tensors are read directly; double,
 * float16 and bfloat16 go through norm_ld / norm_st.  Each kernel reads every
 * element of its group before writing any output element of it, so output 0
 * may share the buffer of X (NN_OP_ELEMENTWISE).
 *
 * The op layer (ops/norm.c) checks X, the parameters and the attributes and
 * sets the outputs; every float type it admits runs here, so each prepare
 * only derives its kernel's walk.
 */
#include <math.h>
#include <string.h>

#include "cpu/ops.h"
#include "ops/act_kinds.h"
#include "ops/norm.h"

static inline double norm_ld(nn_dtype dt, const void *p, int64_t i) {
  switch (dt) {
  case NN_DTYPE_FLOAT: return ((const float *)p)[i];
  case NN_DTYPE_DOUBLE: return ((const double *)p)[i];
  case NN_DTYPE_FLOAT16: return nn_f16_to_f32(((const uint16_t *)p)[i]);
  case NN_DTYPE_BFLOAT16: return nn_bf16_to_f32(((const uint16_t *)p)[i]);
  default: return 0.0;
  }
}

static inline void norm_st(nn_dtype dt, void *p, int64_t i, double v) {
  switch (dt) {
  case NN_DTYPE_FLOAT: ((float *)p)[i] = (float)v; break;
  case NN_DTYPE_DOUBLE: ((double *)p)[i] = v; break;
  case NN_DTYPE_FLOAT16: ((uint16_t *)p)[i] = nn_f32_to_f16((float)v); break;
  case NN_DTYPE_BFLOAT16: ((uint16_t *)p)[i] = nn_f32_to_bf16((float)v); break;
  default: break;
  }
}

/* A read-only view of a tensor: data and dtype (data NULL = absent). */
typedef struct norm_view {
  const void *p;
  nn_dtype dt;
} norm_view;

static inline norm_view norm_view_of(const nn_node *n, int i) {
  norm_view v = {NULL, NN_DTYPE_FLOAT};
  if (i < n->n_in && n->x[i]) {
    v.p = n->x[i]->data;
    v.dt = n->x[i]->dtype;
  }
  return v;
}

static inline double norm_get(norm_view v, int64_t i, double absent) {
  if (!v.p)
    return absent;
  return v.dt == NN_DTYPE_FLOAT ? ((const float *)v.p)[i] : norm_ld(v.dt, v.p, i);
}

/* Sum of f[i] (sq = false) or of (f[i] - m)^2 (sq = true), i < n: 16 float
 * lanes (four vectors of the baseline's width, GCC's vector extension: the
 * compiler keeps a scalar loop over an array on the stack) over blocks of
 * NORM_BLOCK elements, each block's total added in double.  The serial
 * double loop this replaces was latency-bound (one add per 4 cycles:
 * LayerNormalization took 7% of a ViT); a lane sums at most NORM_BLOCK / 16
 * floats, so the float part adds a relative error of about 32 ulp at worst,
 * far inside what every stash_type allows. */
#define NORM_BLOCK 512

typedef float norm_v4 __attribute__((vector_size(16)));

static inline norm_v4 norm_ld4(const float *f) {
  norm_v4 v;
  memcpy(&v, f, sizeof v);
  return v;
}

static double norm_sum_f32(const float *f, int64_t n, bool sq, double m) {
  double s = 0.0;
  const float mf = (float)m;
  const norm_v4 mv = {mf, mf, mf, mf};
  for (int64_t b = 0; b < n; b += NORM_BLOCK) {
    int64_t e = n - b < NORM_BLOCK ? n : b + NORM_BLOCK, i = b;
    norm_v4 a0 = {0}, a1 = {0}, a2 = {0}, a3 = {0};
    if (sq)
      for (; i + 16 <= e; i += 16) {
        norm_v4 d0 = norm_ld4(f + i) - mv, d1 = norm_ld4(f + i + 4) - mv;
        norm_v4 d2 = norm_ld4(f + i + 8) - mv, d3 = norm_ld4(f + i + 12) - mv;
        a0 += d0 * d0;
        a1 += d1 * d1;
        a2 += d2 * d2;
        a3 += d3 * d3;
      }
    else
      for (; i + 16 <= e; i += 16) {
        a0 += norm_ld4(f + i);
        a1 += norm_ld4(f + i + 4);
        a2 += norm_ld4(f + i + 8);
        a3 += norm_ld4(f + i + 12);
      }
    double t = 0.0;
    for (; i < e; i++) {
      double v = sq ? f[i] - m : f[i];
      t += sq ? v * v : v;
    }
    norm_v4 a = (a0 + a1) + (a2 + a3);
    s += t + ((double)a[0] + (double)a[1]) + ((double)a[2] + (double)a[3]);
  }
  return s;
}

/* y[i] = (x[i] - m) * iv * s[i] + (b ? b[i] : 0), i < n.  y may be x (the
 * planner runs normalizations in place): a vector of x is loaded before the
 * same vector of y is stored, which the auto-vectorizer's overlap check
 * cannot prove, so it left this loop scalar. */
static void norm_affine_rows_f32(const float *x, float *y, int64_t n, float m, float iv,
                                 const float *s, const float *b) {
  const norm_v4 mv = {m, m, m, m}, iv4 = {iv, iv, iv, iv};
  int64_t i = 0;
  for (; i + 4 <= n; i += 4) {
    norm_v4 v = (norm_ld4(x + i) - mv) * iv4 * norm_ld4(s + i);
    if (b)
      v += norm_ld4(b + i);
    memcpy(y + i, &v, sizeof v);
  }
  for (; i < n; i++) {
    float v = (x[i] - m) * iv * s[i];
    y[i] = b ? v + b[i] : v;
  }
}

/* Mean and (population) variance of the n elements from x[off]. */
static void norm_stats(nn_dtype dt, const void *x, int64_t off, int64_t n, double *mean,
                       double *var) {
  double s = 0.0, q = 0.0, m;
  if (dt == NN_DTYPE_FLOAT) {
    const float *f = (const float *)x + off;
    s = norm_sum_f32(f, n, false, 0.0);
    m = n > 0 ? s / (double)n : 0.0;
    q = norm_sum_f32(f, n, true, m);
  } else {
    for (int64_t i = 0; i < n; i++)
      s += norm_ld(dt, x, off + i);
    m = n > 0 ? s / (double)n : 0.0;
    for (int64_t i = 0; i < n; i++) {
      double d = norm_ld(dt, x, off + i) - m;
      q += d * d;
    }
  }
  *mean = m;
  *var = n > 0 ? q / (double)n : 0.0;
}

/* y[off + i] = x[off + i] * a + b for i < n. */
static void norm_affine(nn_dtype dt, const void *x, void *y, int64_t off, int64_t n, double a,
                        double b) {
  if (dt == NN_DTYPE_FLOAT) {
    const float *xf = (const float *)x + off;
    float *yf = (float *)y + off;
    const float af = (float)a, bf = (float)b;
    const norm_v4 a4 = {af, af, af, af}, b4 = {bf, bf, bf, bf};
    int64_t i = 0;
    for (; i + 4 <= n; i += 4) {   /* in place too: see norm_affine_rows_f32 */
      norm_v4 v = norm_ld4(xf + i) * a4 + b4;
      memcpy(yf + i, &v, sizeof v);
    }
    for (; i < n; i++)
      yf[i] = xf[i] * af + bf;
  } else {
    for (int64_t i = 0; i < n; i++)
      norm_st(dt, y, off + i, norm_ld(dt, x, off + i) * a + b);
  }
}

static nn_status norm_set_priv(nn_ctx *c, nn_node *n, const void *p, size_t size) {
  void *q = nn_malloc(size);
  if (!q)
    return nn_fail(c, NN_ERR_NOMEM, "out of memory");
  memcpy(q, p, size);
  n->priv = q;
  return NN_OK;
}

/* ---- BatchNormalization ------------------------------------------------------
 * Per channel c: y = (x - mean) / sqrt(var + eps) * scale + B.  Before opset 9
 * spatial = 0 means one set of parameters per (C, D1, ...) element.  With
 * training_mode (opset 14+) mean/var come from the batch and the running
 * statistics are returned as outputs 1 and 2. */

typedef struct bn_priv {
  int64_t N, C, inner;
  double eps, momentum;
  bool training;
} bn_priv;

static nn_status bn_prepare(nn_ctx *c, nn_node *n) {
  const nn_value *x = n->x[0];
  bn_priv p;
  memset(&p, 0, sizeof p);
  p.N = x->dims[0];
  p.C = x->dims[1];
  p.inner = 1;
  for (int i = 2; i < x->rank; i++)
    p.inner *= x->dims[i];
  nn_bn_params bp;
  nn_status st = nn_bn_params_init(c, n, &bp);
  if (st)
    return st;
  if (bp.per_element) {
    p.C *= p.inner;
    p.inner = 1;
  }
  p.eps = bp.eps;
  p.momentum = bp.momentum;
  p.training = bp.training; /* opset 14+ only */
  if (p.training)
    n->ws_bytes = (size_t)p.C * 2 * sizeof(double);
  return norm_set_priv(c, n, &p, sizeof p);
}

typedef struct bn_job {
  const bn_priv *p;
  const nn_node *n;
  const double *stats;   /* training: batch mean and var per channel */
} bn_job;

static void bn_run_planes(void *arg, int64_t b, int64_t e) {
  const bn_job *jb = arg;
  const bn_priv *p = jb->p;
  const nn_node *n = jb->n;
  norm_view sc = norm_view_of(n, 1), bi = norm_view_of(n, 2);
  norm_view mu = norm_view_of(n, 3), va = norm_view_of(n, 4);
  nn_dtype dt = n->x[0]->dtype;
  for (int64_t t = b; t < e; t++) {
    int64_t ch = t % p->C;
    double m = jb->stats ? jb->stats[ch] : norm_get(mu, ch, 0.0);
    double v = jb->stats ? jb->stats[p->C + ch] : norm_get(va, ch, 1.0);
    double a = norm_get(sc, ch, 1.0) / sqrt(v + p->eps);
    double o = norm_get(bi, ch, 0.0) - m * a;
    if (n->act.kind == NN_ACT_NONE) {
      norm_affine(dt, n->x[0]->data, n->y[0]->data, t * p->inner, p->inner, a, o);
      continue;
    }
    /* a fused Relu / Clip (plan.c, NN_FUSE_NORM_ACT; float32 only): in the
     * same pass, as the Relu / Clip kernels compute it (NaN kept) */
    const float *xf = (const float *)n->x[0]->data + t * p->inner;
    float *yf = (float *)n->y[0]->data + t * p->inner;
    const float af = (float)a, of = (float)o;
    const float lo = n->act.kind == NN_ACT_RELU ? 0.0f : n->act.a;
    const float hi = n->act.kind == NN_ACT_RELU ? INFINITY : n->act.b;
    const int64_t inner = p->inner;   /* a local: the stores could alias p */
    for (int64_t i = 0; i < inner; i++) {
      float y = xf[i] * af + of;
      y = y < lo ? lo : y;
      yf[i] = y > hi ? hi : y;
    }
  }
}

static nn_status bn_run(nn_ctx *c, nn_node *n) {
  const bn_priv *p = n->priv;
  bn_job jb = {.p = p, .n = n, .stats = NULL};
  if (p->training) {
    double *stats = n->ws;
    const nn_value *x = n->x[0];
    int64_t cnt = p->N * p->inner;
    for (int64_t ch = 0; ch < p->C; ch++) {
      double s = 0.0, q = 0.0;
      for (int64_t b = 0; b < p->N; b++)
        for (int64_t i = 0; i < p->inner; i++)
          s += norm_ld(x->dtype, x->data, (b * p->C + ch) * p->inner + i);
      double m = cnt > 0 ? s / (double)cnt : 0.0;
      for (int64_t b = 0; b < p->N; b++)
        for (int64_t i = 0; i < p->inner; i++) {
          double d = norm_ld(x->dtype, x->data, (b * p->C + ch) * p->inner + i) - m;
          q += d * d;
        }
      stats[ch] = m;
      stats[p->C + ch] = cnt > 0 ? q / (double)cnt : 0.0;
    }
    for (int i = 1; i < n->n_out && i < 3; i++) {
      nn_value *y = n->y[i];
      if (!y)
        continue;
      norm_view run = norm_view_of(n, 2 + i);
      for (int64_t ch = 0; ch < p->C; ch++)
        norm_st(y->dtype, y->data, ch,
                norm_get(run, ch, 0.0) * p->momentum +
                    stats[(i - 1) * p->C + ch] * (1.0 - p->momentum));
    }
    jb.stats = stats;
  }
  nn_parallel_for(c, p->N * p->C, 1 + (1 << 14) / (p->inner + 1), bn_run_planes, &jb);
  return NN_OK;
}

/* ---- row normalizations: Instance / Group / Layer / RMS ----------------------
 * The tensor is split into `rows` contiguous groups of `len` elements; each
 * row gets its own statistics.  The affine parameters are indexed by a
 * per-element position computed from the row and the offset in it. */

typedef enum rownorm_kind {
  ROWNORM_INSTANCE = 0,   /* rows = N*C, params per channel (row % C) */
  ROWNORM_GROUP,          /* rows = N*G, params per channel or per group */
  ROWNORM_LAYER,          /* rows = outer, params broadcast over the row */
  ROWNORM_RMS,            /* as LAYER, no centring, no bias */
} rownorm_kind;

typedef struct rownorm_priv {
  rownorm_kind kind;
  int64_t rows, len;
  int64_t C, groups, inner;      /* instance / group geometry */
  bool per_group;                /* GroupNormalization-18: scale/bias per group */
  double eps;
  /* LAYER / RMS: how scale and bias map onto a row (0 = same length as the
   * row, 1 = scalar, 2 = broadcast through strides over ndims) */
  int bmode[2];
  int nrank;
  int64_t ndims[NN_MAX_RANK];
  int64_t bstrides[2][NN_MAX_RANK];
} rownorm_priv;

/* Index of the scale (which = 0) or bias (1) element for offset j of a row. */
static inline int64_t rownorm_pidx(const rownorm_priv *p, int which, int64_t j) {
  if (p->bmode[which] == 0)
    return j;
  if (p->bmode[which] == 1)
    return 0;
  int64_t idx = 0;
  for (int d = p->nrank - 1; d >= 0; d--) {
    idx += (j % p->ndims[d]) * p->bstrides[which][d];
    j /= p->ndims[d];
  }
  return idx;
}

typedef struct rownorm_job {
  const rownorm_priv *p;
  const nn_node *n;
} rownorm_job;

static void rownorm_rows(void *arg, int64_t b, int64_t e) {
  const rownorm_job *jb = arg;
  const rownorm_priv *p = jb->p;
  const nn_node *n = jb->n;
  const nn_value *xv = n->x[0];
  nn_value *yv = n->y[0];
  nn_dtype dt = xv->dtype;
  norm_view sc = norm_view_of(n, 1);
  norm_view bi = p->kind == ROWNORM_RMS ? (norm_view){NULL, NN_DTYPE_FLOAT} : norm_view_of(n, 2);
  nn_value *ymean = n->n_out > 1 ? n->y[1] : NULL;
  nn_value *yinv = n->n_out > 2 ? n->y[2] : NULL;
  for (int64_t r = b; r < e; r++) {
    int64_t off = r * p->len;
    double mean, var;
    if (p->kind == ROWNORM_RMS) {
      double q = 0.0;
      if (dt == NN_DTYPE_FLOAT)
        q = norm_sum_f32((const float *)xv->data + off, p->len, true, 0.0);
      else
        for (int64_t i = 0; i < p->len; i++) {
          double v = norm_ld(dt, xv->data, off + i);
          q += v * v;
        }
      mean = 0.0;
      var = p->len > 0 ? q / (double)p->len : 0.0;
    } else {
      norm_stats(dt, xv->data, off, p->len, &mean, &var);
    }
    double inv = 1.0 / sqrt(var + p->eps);
    if (ymean && p->kind == ROWNORM_LAYER)
      norm_st(ymean->dtype, ymean->data, r, mean);
    if (yinv && p->kind == ROWNORM_LAYER)
      norm_st(yinv->dtype, yinv->data, r, inv);
    if (p->kind == ROWNORM_INSTANCE || p->kind == ROWNORM_GROUP) {
      /* parameters are constant over runs of `inner` elements (a channel) */
      int64_t ch0 = p->kind == ROWNORM_INSTANCE ? r % p->C : (r % p->groups) * (p->C / p->groups);
      for (int64_t s = 0; s * p->inner < p->len; s++) {
        int64_t ch = ch0 + s;
        int64_t pi = p->per_group ? r % p->groups : ch;
        double a = norm_get(sc, pi, 1.0) * inv;
        double o = norm_get(bi, pi, 0.0) - mean * a;
        norm_affine(dt, xv->data, yv->data, off + s * p->inner, p->inner, a, o);
      }
    } else if (dt == NN_DTYPE_FLOAT && p->bmode[0] == 0 && sc.dt == NN_DTYPE_FLOAT &&
               (!bi.p || (p->bmode[1] == 0 && bi.dt == NN_DTYPE_FLOAT))) {
      const float *xf = (const float *)xv->data + off;
      float *yf = (float *)yv->data + off;
      const float *sf = sc.p, *bf = bi.p;
      norm_affine_rows_f32(xf, yf, p->len, (float)mean, (float)inv, sf, bf);
    } else {
      for (int64_t i = 0; i < p->len; i++) {
        double v = (norm_ld(dt, xv->data, off + i) - mean) * inv;
        v = v * norm_get(sc, rownorm_pidx(p, 0, i), 1.0) + norm_get(bi, rownorm_pidx(p, 1, i), 0.0);
        norm_st(dt, yv->data, off + i, v);
      }
    }
  }
}

static nn_status rownorm_run(nn_ctx *c, nn_node *n) {
  const rownorm_priv *p = n->priv;
  rownorm_job jb = {p, n};
  nn_parallel_for(c, p->rows, 1 + (1 << 14) / (p->len + 1), rownorm_rows, &jb);
  return NN_OK;
}

static nn_status instnorm_prepare(nn_ctx *c, nn_node *n) {
  const nn_value *x = n->x[0];
  rownorm_priv p;
  memset(&p, 0, sizeof p);
  p.kind = ROWNORM_INSTANCE;
  p.C = x->dims[1];
  p.inner = 1;
  for (int i = 2; i < x->rank; i++)
    p.inner *= x->dims[i];
  p.rows = x->dims[0] * p.C;
  p.len = p.inner;
  nn_status st = nn_norm_epsilon(c, n, &p.eps);
  if (st)
    return st;
  return norm_set_priv(c, n, &p, sizeof p);
}

static nn_status groupnorm_prepare(nn_ctx *c, nn_node *n) {
  const nn_value *x = n->x[0];
  rownorm_priv p;
  memset(&p, 0, sizeof p);
  p.kind = ROWNORM_GROUP;
  p.C = x->dims[1];
  nn_groupnorm_params gp;
  nn_status st = nn_groupnorm_params_init(c, n, p.C, &gp);
  if (st)
    return st;
  p.groups = gp.groups;
  p.inner = 1;
  for (int i = 2; i < x->rank; i++)
    p.inner *= x->dims[i];
  p.rows = x->dims[0] * p.groups;
  p.len = p.C / p.groups * p.inner;
  p.per_group = gp.per_group;
  if ((st = nn_norm_epsilon(c, n, &p.eps)))
    return st;
  return norm_set_priv(c, n, &p, sizeof p);
}

/* How the scale (which = 0) or bias (1) of Layer and RMS normalization maps
 * onto a row; ops/norm.c checked that it broadcasts to the normalized
 * shape. */
static void rownorm_bcast(const nn_node *n, int i, rownorm_priv *p, int which) {
  const nn_value *v = i < n->n_in ? n->x[i] : NULL;
  if (!v)
    return;
  /* leading 1s beyond the normalized rank carry no information */
  int r = v->rank, lead = 0;
  while (r - lead > p->nrank && v->dims[lead] == 1)
    lead++;
  r -= lead;
  const int64_t *dims = v->dims + lead;
  bool same = v->numel == p->len;
  for (int d = 0; d < r; d++)
    if (dims[d] != p->ndims[p->nrank - r + d])
      same = false;
  if (same)
    p->bmode[which] = 0;
  else if (v->numel == 1)
    p->bmode[which] = 1;
  else {
    p->bmode[which] = 2;
    nn_broadcast_strides(r, dims, p->nrank, p->ndims, p->bstrides[which]);
  }
}

static nn_status rownorm_axis_prepare(nn_ctx *c, nn_node *n, rownorm_kind kind) {
  const nn_value *x = n->x[0];
  rownorm_priv p;
  memset(&p, 0, sizeof p);
  p.kind = kind;
  int axis;
  nn_status st = nn_rownorm_axis(c, n, x->rank, &axis);
  if (st)
    return st;
  p.rows = 1;
  for (int i = 0; i < axis; i++)
    p.rows *= x->dims[i];
  p.len = 1;
  p.nrank = x->rank - axis;
  for (int i = axis; i < x->rank; i++) {
    p.len *= x->dims[i];
    p.ndims[i - axis] = x->dims[i];
  }
  if ((st = nn_norm_epsilon(c, n, &p.eps)))
    return st;
  rownorm_bcast(n, 1, &p, 0);
  if (kind == ROWNORM_LAYER)
    rownorm_bcast(n, 2, &p, 1);
  return norm_set_priv(c, n, &p, sizeof p);
}

static nn_status layernorm_prepare(nn_ctx *c, nn_node *n) {
  return rownorm_axis_prepare(c, n, ROWNORM_LAYER);
}

static nn_status rmsnorm_prepare(nn_ctx *c, nn_node *n) {
  return rownorm_axis_prepare(c, n, ROWNORM_RMS);
}

/* ---- LpNormalization: x / ||x||_p along one axis ------------------------------ */

typedef struct lpnorm_priv {
  int64_t outer, len, inner;
  int p;
} lpnorm_priv;

static nn_status lpnorm_prepare(nn_ctx *c, nn_node *n) {
  const nn_value *x = n->x[0];
  nn_lpnorm_params lp;
  nn_status st = nn_lpnorm_params_init(c, n, x->rank, &lp);
  if (st)
    return st;
  lpnorm_priv p;
  p.p = lp.p;
  p.outer = p.inner = 1;
  for (int i = 0; i < lp.axis; i++)
    p.outer *= x->dims[i];
  for (int i = lp.axis + 1; i < x->rank; i++)
    p.inner *= x->dims[i];
  p.len = x->dims[lp.axis];
  return norm_set_priv(c, n, &p, sizeof p);
}

static nn_status lpnorm_run(nn_ctx *c, nn_node *n) {
  (void)c;
  const lpnorm_priv *p = n->priv;
  const nn_value *x = n->x[0];
  nn_value *y = n->y[0];
  for (int64_t o = 0; o < p->outer; o++)
    for (int64_t i = 0; i < p->inner; i++) {
      int64_t base = o * p->len * p->inner + i;
      double s = 0.0;
      for (int64_t k = 0; k < p->len; k++) {
        double v = norm_ld(x->dtype, x->data, base + k * p->inner);
        s += p->p == 1 ? fabs(v) : v * v;
      }
      double nrm = p->p == 1 ? s : sqrt(s);
      for (int64_t k = 0; k < p->len; k++) {
        int64_t idx = base + k * p->inner;
        /* an all-zero slice stays zero (ONNX reference), not NaN */
        norm_st(y->dtype, y->data, idx, nrm == 0.0 ? 0.0 : norm_ld(x->dtype, x->data, idx) / nrm);
      }
    }
  return NN_OK;
}

/* ---- MeanVarianceNormalization: (x - mean) / (std + 1e-9) over `axes` ---------
 * Elements are grouped by their coordinates on the kept axes; the sums live in
 * the workspace (two doubles per group). */

typedef struct mvn_priv {
  int rank;
  int64_t dims[NN_MAX_RANK];
  bool reduced[NN_MAX_RANK];
  int64_t groups, per_group;
} mvn_priv;

static nn_status mvn_prepare(nn_ctx *c, nn_node *n) {
  const nn_value *x = n->x[0];
  mvn_priv p;
  memset(&p, 0, sizeof p);
  p.rank = x->rank;
  memcpy(p.dims, x->dims, sizeof p.dims);
  nn_status st = nn_mvn_axes(c, n, x->rank, p.reduced);
  if (st)
    return st;
  p.groups = p.per_group = 1;
  for (int i = 0; i < x->rank; i++) {
    if (p.reduced[i])
      p.per_group *= x->dims[i];
    else
      p.groups *= x->dims[i];
  }
  n->ws_bytes = (size_t)p.groups * 2 * sizeof(double);
  return norm_set_priv(c, n, &p, sizeof p);
}

/* Group of the element at flat index i: its coordinates on the kept axes. */
static inline int64_t mvn_group(const mvn_priv *p, int64_t i) {
  int64_t g = 0, mul = 1;
  for (int d = p->rank - 1; d >= 0; d--) {
    int64_t coord = i % p->dims[d];
    i /= p->dims[d];
    if (!p->reduced[d]) {
      g += coord * mul;
      mul *= p->dims[d];
    }
  }
  return g;
}

static nn_status mvn_run(nn_ctx *c, nn_node *n) {
  (void)c;
  const mvn_priv *p = n->priv;
  const nn_value *x = n->x[0];
  nn_value *y = n->y[0];
  double *mean = n->ws, *sq = mean + p->groups;
  for (int64_t g = 0; g < p->groups; g++)
    mean[g] = sq[g] = 0.0;
  for (int64_t i = 0; i < x->numel; i++)
    mean[mvn_group(p, i)] += norm_ld(x->dtype, x->data, i);
  for (int64_t g = 0; g < p->groups; g++)
    mean[g] /= (double)p->per_group;
  for (int64_t i = 0; i < x->numel; i++) {
    int64_t g = mvn_group(p, i);
    double d = norm_ld(x->dtype, x->data, i) - mean[g];
    sq[g] += d * d;
  }
  for (int64_t g = 0; g < p->groups; g++)
    sq[g] = sqrt(sq[g] / (double)p->per_group) + 1e-9;
  for (int64_t i = 0; i < x->numel; i++) {
    int64_t g = mvn_group(p, i);
    norm_st(y->dtype, y->data, i, (norm_ld(x->dtype, x->data, i) - mean[g]) / sq[g]);
  }
  return NN_OK;
}

/* ---- LRN: across channels, y = x / (bias + alpha/size * sum x^2)^beta ---------
 * The output plane doubles as the accumulator of the squared sum. */

typedef struct lrn_priv {
  int64_t N, C, inner;
  nn_lrn_params l;        /* the op layer's: window c - lo .. c + hi, constants */
} lrn_priv;

static nn_status lrn_prepare(nn_ctx *c, nn_node *n) {
  const nn_value *x = n->x[0];
  lrn_priv p;
  nn_status st = nn_lrn_params_init(c, n, &p.l);
  if (st)
    return st;
  p.N = x->dims[0];
  p.C = x->dims[1];
  p.inner = 1;
  for (int i = 2; i < x->rank; i++)
    p.inner *= x->dims[i];
  return norm_set_priv(c, n, &p, sizeof p);
}

typedef struct lrn_job {
  const lrn_priv *p;
  const nn_node *n;
} lrn_job;

static void lrn_planes(void *arg, int64_t b, int64_t e) {
  const lrn_job *jb = arg;
  const lrn_priv *p = jb->p;
  const nn_value *xv = jb->n->x[0];
  nn_value *yv = jb->n->y[0];
  const double k = p->l.alpha / (double)p->l.size;
  for (int64_t t = b; t < e; t++) {
    int64_t bi = t / p->C, ch = t % p->C;
    int64_t c0 = ch - p->l.lo < 0 ? 0 : ch - p->l.lo;
    int64_t c1 = ch + p->l.hi >= p->C ? p->C - 1 : ch + p->l.hi;
    int64_t off = t * p->inner;
    if (xv->dtype == NN_DTYPE_FLOAT) {
      const float *x = xv->data;
      float *y = (float *)yv->data + off;
      for (int64_t i = 0; i < p->inner; i++)
        y[i] = 0.0f;
      for (int64_t cc = c0; cc <= c1; cc++) {
        const float *xc = x + (bi * p->C + cc) * p->inner;
        for (int64_t i = 0; i < p->inner; i++)
          y[i] += xc[i] * xc[i];
      }
      const float *xs = x + off;
      float kf = (float)k, bf = (float)p->l.bias;
      if (p->l.beta == 0.75) {
        for (int64_t i = 0; i < p->inner; i++) {
          float r = 1.0f / sqrtf(bf + kf * y[i]);
          y[i] = xs[i] * r * sqrtf(r);
        }
      } else if (p->l.beta == 0.5) {
        for (int64_t i = 0; i < p->inner; i++)
          y[i] = xs[i] / sqrtf(bf + kf * y[i]);
      } else {
        float nb = (float)-p->l.beta;
        for (int64_t i = 0; i < p->inner; i++)
          y[i] = xs[i] * powf(bf + kf * y[i], nb);
      }
    } else {
      for (int64_t i = 0; i < p->inner; i++) {
        double s = 0.0;
        for (int64_t cc = c0; cc <= c1; cc++) {
          double v = norm_ld(xv->dtype, xv->data, (bi * p->C + cc) * p->inner + i);
          s += v * v;
        }
        double v = norm_ld(xv->dtype, xv->data, off + i);
        norm_st(yv->dtype, yv->data, off + i, v * pow(p->l.bias + k * s, -p->l.beta));
      }
    }
  }
}

static nn_status lrn_run(nn_ctx *c, nn_node *n) {
  const lrn_priv *p = n->priv;
  lrn_job jb = {p, n};
  nn_parallel_for(c, p->N * p->C, 1 + (1 << 14) / (p->inner * p->l.size + 1), lrn_planes, &jb);
  return NN_OK;
}

const nn_kernel nn_kernels_norm[] = {
  {.name = "BatchNormalization", .prepare = bn_prepare, .run = bn_run},
  {.name = "InstanceNormalization", .prepare = instnorm_prepare, .run = rownorm_run},
  {.name = "LayerNormalization", .prepare = layernorm_prepare, .run = rownorm_run},
  {.name = "GroupNormalization", .prepare = groupnorm_prepare, .run = rownorm_run},
  {.name = "RMSNormalization", .prepare = rmsnorm_prepare, .run = rownorm_run},
  {.name = "LRN", .prepare = lrn_prepare, .run = lrn_run},
  {.name = "LpNormalization", .prepare = lpnorm_prepare, .run = lpnorm_run},
  {.name = "MeanVarianceNormalization", .prepare = mvn_prepare, .run = mvn_run},
  {0},
};

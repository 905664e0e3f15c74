/* quant.c - CPU kernels of the linear quantizers: QuantizeLinear,
 * DequantizeLinear (10/13/19/21/23/25), DynamicQuantizeLinear (11) and
 * QLinearMatMul (10/21: float32 or, since 21, float16/bfloat16 scales).
 *
 * Scale and zero point come per tensor (one element), per axis (1-D of the
 * axis length) or blocked (the input's rank, the axis dim divided into
 * blocks of block_size).  With the input viewed as (outer, A, inner) around
 * the axis, element (o, a, i) uses parameter 0, a, or (o, a / bs, i). */
#include "cpu/kernel_util.h"

/* Round half to even, as numpy's rint (the reference of the quantizers). */
static inline double quant_rint(double v) { return nearbyint(v); }

enum { QUANT_TENSOR, QUANT_AXIS, QUANT_BLOCK };

typedef struct quant_params {
  int kind;
  int64_t outer, A, inner, block, SA;
  double qmin, qmax;
} quant_params;

static inline int64_t quant_index(const quant_params *p, int64_t e) {
  switch (p->kind) {
  case QUANT_AXIS:
    return (e / p->inner) % p->A;
  case QUANT_BLOCK: {
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

/* Classify the scale's shape against x and fill the (outer, A, inner) view. */
static nn_status quant_layout(nn_ctx *c, const nn_node *n, const nn_value *x,
                              const nn_value *scale, const nn_value *zp, quant_params *p) {
  memset(p, 0, sizeof *p);
  int64_t block = n->version >= 21 ? nn_attr_int(n, "block_size", 0) : 0;
  if (block < 0)
    return nn_fail(c, NN_ERR_INVALID_MODEL, "negative block_size");
  /* one element is per-tensor whatever its rank (models pair a scalar scale
   * with a (1) zero point) */
  if (scale->numel == 1) {
    if (zp && zp->numel != 1)
      return nn_fail(c, NN_ERR_SHAPE, "zero point and scale sizes differ");
    p->kind = QUANT_TENSOR;
    return NN_OK;
  }
  if (zp && (zp->rank != scale->rank ||
             memcmp(zp->dims, scale->dims, sizeof(int64_t) * (size_t)scale->rank)))
    return nn_fail(c, NN_ERR_SHAPE, "zero point and scale shapes differ");
  int ax;
  if (!nn_norm_axis(nn_attr_int(n, "axis", 1), x->rank, &ax))
    return nn_fail(c, NN_ERR_INVALID_MODEL, "axis out of range for rank %d", x->rank);
  p->outer = nn_dims_numel(ax, x->dims);
  p->A = x->dims[ax];
  p->inner = nn_dims_numel(x->rank - ax - 1, x->dims + ax + 1);
  if (block == 0) {
    if (scale->rank != 1 || scale->dims[0] != p->A)
      return nn_fail(c, NN_ERR_SHAPE, "per-axis scale must be 1-D of length %lld",
                     (long long)p->A);
    p->kind = QUANT_AXIS;
    return NN_OK;
  }
  if (scale->rank != x->rank)
    return nn_fail(c, NN_ERR_SHAPE, "blocked scale must have the input's rank");
  for (int i = 0; i < x->rank; i++) {
    int64_t want = i == ax ? (x->dims[i] + block - 1) / block : x->dims[i];
    if (scale->dims[i] != want)
      return nn_fail(c, NN_ERR_SHAPE, "blocked scale dim %d is %lld, expected %lld", i,
                     (long long)scale->dims[i], (long long)want);
  }
  p->kind = QUANT_BLOCK;
  p->block = block;
  p->SA = scale->dims[ax];
  return NN_OK;
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
  nn_value *x = n->x[0], *scale = ku_in(n, 1), *zp = ku_in(n, 2);
  if (!scale)
    return nn_fail(c, NN_ERR_INVALID_MODEL, "x_scale is required");
  double lo, hi;
  if (!quant_int_type(x->dtype, &lo, &hi))
    return nn_fail(c, NN_ERR_UNSUPPORTED, "unsupported quantized type %s", nn_dtype_name(x->dtype));
  if (!ku_is_real(scale->dtype) || scale->dtype == NN_DTYPE_DOUBLE)
    return nn_fail(c, NN_ERR_UNSUPPORTED, "unsupported scale type %s",
                   nn_dtype_name(scale->dtype));
  if (zp && zp->dtype != x->dtype)
    return nn_fail(c, NN_ERR_DTYPE, "x_zero_point type differs from x");
  if (n->version < 19 && scale->dtype != NN_DTYPE_FLOAT)
    return nn_fail(c, NN_ERR_DTYPE, "x_scale must be float before opset 19");
  nn_dtype out = scale->dtype;
  int64_t od = n->version >= 23 ? nn_attr_int(n, "output_dtype", 0) : 0;
  if (od != 0) {
    if (od != NN_DTYPE_FLOAT && od != NN_DTYPE_FLOAT16 && od != NN_DTYPE_BFLOAT16)
      return nn_fail(c, NN_ERR_UNSUPPORTED, "unsupported output_dtype %lld", (long long)od);
    out = (nn_dtype)od;
  }
  quant_params p;
  nn_status st = quant_layout(c, n, x, scale, zp, &p);
  if (st != NN_OK)
    return st;
  if ((st = nn_set_output(c, n->y[0], out, x->rank, x->dims)) != NN_OK)
    return st;
  return quant_store_priv(c, n, &p);
}

static nn_status dequant_run(nn_ctx *c, nn_node *n) {
  (void)c;
  const quant_params *p = n->priv;
  nn_value *x = n->x[0], *scale = n->x[1], *zp = ku_in(n, 2), *y = n->y[0];
  for (int64_t e = 0; e < x->numel; e++) {
    int64_t k = quant_index(p, e);
    /* float math as the reference: (x - zp) exactly, then one rounding */
    float v = (float)(ku_ldd(x->data, x->dtype, e) - (zp ? ku_ldd(zp->data, zp->dtype, k) : 0));
    ku_stf(y->data, y->dtype, e, v * ku_ldf(scale->data, scale->dtype, k));
  }
  return NN_OK;
}

static nn_status quant_prepare(nn_ctx *c, nn_node *n) {
  nn_value *x = n->x[0], *scale = ku_in(n, 1), *zp = ku_in(n, 2);
  if (!scale)
    return nn_fail(c, NN_ERR_INVALID_MODEL, "y_scale is required");
  if (!ku_is_real(x->dtype) && x->dtype != NN_DTYPE_INT32)
    return nn_fail(c, NN_ERR_UNSUPPORTED, "unsupported input type %s", nn_dtype_name(x->dtype));
  if (!ku_is_real(scale->dtype) && scale->dtype != NN_DTYPE_INT32)
    return nn_fail(c, NN_ERR_UNSUPPORTED, "unsupported scale type %s",
                   nn_dtype_name(scale->dtype));
  int64_t od = n->version >= 21 ? nn_attr_int(n, "output_dtype", 0) : 0;
  nn_dtype out = zp ? zp->dtype : od ? (nn_dtype)od : NN_DTYPE_UINT8;
  if (zp && od && od != (int64_t)zp->dtype)
    return nn_fail(c, NN_ERR_DTYPE, "output_dtype %lld differs from the zero point's type %s",
                   (long long)od, nn_dtype_name(zp->dtype));
  quant_params p;
  nn_status st = quant_layout(c, n, x, scale, zp, &p);
  if (st != NN_OK)
    return st;
  if (!quant_int_type(out, &p.qmin, &p.qmax) || out == NN_DTYPE_INT32)
    return nn_fail(c, NN_ERR_UNSUPPORTED, "unsupported quantized type %s", nn_dtype_name(out));
  int64_t prec = n->version >= 23 ? nn_attr_int(n, "precision", 0) : 0;
  if (prec != 0 && prec != NN_DTYPE_FLOAT && prec != NN_DTYPE_FLOAT16 &&
      prec != NN_DTYPE_BFLOAT16 && prec != NN_DTYPE_DOUBLE)
    return nn_fail(c, NN_ERR_UNSUPPORTED, "unsupported precision %lld", (long long)prec);
  if ((st = nn_set_output(c, n->y[0], out, x->rank, x->dims)) != NN_OK)
    return st;
  return quant_store_priv(c, n, &p);
}

static nn_status quant_run(nn_ctx *c, nn_node *n) {
  (void)c;
  const quant_params *p = n->priv;
  nn_value *x = n->x[0], *scale = n->x[1], *zp = ku_in(n, 2), *y = n->y[0];
  bool fl = x->dtype == NN_DTYPE_FLOAT && scale->dtype == NN_DTYPE_FLOAT;
  for (int64_t e = 0; e < x->numel; e++) {
    int64_t k = quant_index(p, e);
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

static nn_status dynq_prepare(nn_ctx *c, nn_node *n) {
  nn_value *x = n->x[0];
  if (x->dtype != NN_DTYPE_FLOAT)
    return nn_fail(c, NN_ERR_UNSUPPORTED, "unsupported input type %s", nn_dtype_name(x->dtype));
  nn_status st = nn_set_output(c, n->y[0], NN_DTYPE_UINT8, x->rank, x->dims);
  if (st == NN_OK && ku_out(n, 1))
    st = nn_set_output(c, n->y[1], NN_DTYPE_FLOAT, 0, NULL);
  if (st == NN_OK && ku_out(n, 2))
    st = nn_set_output(c, n->y[2], NN_DTYPE_UINT8, 0, NULL);
  return st;
}

static nn_status dynq_run(nn_ctx *c, nn_node *n) {
  (void)c;
  nn_value *x = n->x[0], *y = n->y[0];
  const float *xv = x->data;
  float mx = 0.0f, mn = 0.0f;
  for (int64_t i = 0; i < x->numel; i++) {
    if (xv[i] > mx)
      mx = xv[i];
    if (xv[i] < mn)
      mn = xv[i];
  }
  /* an all-zero input has an empty range: scale 1 keeps everything finite */
  float scale = mx == mn ? 1.0f : (mx - mn) / 255.0f;
  float zpf = 0.0f - mn / scale;
  zpf = zpf < 0.0f ? 0.0f : zpf > 255.0f ? 255.0f : zpf;
  double zp = quant_rint(zpf);
  uint8_t *yv = y->data;
  for (int64_t i = 0; i < x->numel; i++) {
    double q = quant_rint((double)(xv[i] / scale)) + zp;
    yv[i] = (uint8_t)ku_clampd(q, 0, 255);
  }
  if (ku_out(n, 1))
    *(float *)n->y[1]->data = scale;
  if (ku_out(n, 2))
    *(uint8_t *)n->y[2]->data = (uint8_t)zp;
  return NN_OK;
}

/* ---- QLinearMatMul: y = sat(rint((a - a_zp)(b - b_zp) * a_s * b_s / y_s) + y_zp) --
 * numpy matmul broadcasting of the batch dims (1-D operands promoted and the
 * promoted dim dropped); exact int32 accumulation (int64 here, so no
 * overflow for any K), one rounding of the scaled sum.  Scales and zero
 * points: per tensor (one element), a's per row (M elements), b's and y's
 * per column (N elements); other layouts are refused. */

typedef struct qlmm_params {
  int64_t M, K, N, batch;
  int brank;                   /* rank of the broadcast batch dims */
  int64_t bdims[NN_MAX_RANK], astr[NN_MAX_RANK], bstr[NN_MAX_RANK];
  bool a_row, b_col, y_col;    /* per-row / per-column parameters */
  double qmin, qmax;
} qlmm_params;

static bool qlmm_int8(nn_dtype dt) { return dt == NN_DTYPE_INT8 || dt == NN_DTYPE_UINT8; }

/* Check one scale/zero-point pair: n elements (1 or `along`). */
static nn_status qlmm_param(nn_ctx *c, const nn_node *n, int si, const nn_value *q, int64_t along,
                            bool *per) {
  const nn_value *s = n->x[si], *zp = n->x[si + 1];
  static const char *const names[] = {"", "a_scale", "", "", "b_scale", "", "y_scale"};
  if (!ku_is_real(s->dtype) || s->dtype == NN_DTYPE_DOUBLE ||
      (n->version < 21 && s->dtype != NN_DTYPE_FLOAT))
    return nn_fail(c, NN_ERR_UNSUPPORTED, "%s of type %s is not supported", names[si],
                   nn_dtype_name(s->dtype));
  if (zp->dtype != q->dtype)
    return nn_fail(c, NN_ERR_DTYPE, "the zero point of %s is %s, its tensor %s", names[si],
                   nn_dtype_name(zp->dtype), nn_dtype_name(q->dtype));
  if (zp->numel != s->numel)
    return nn_fail(c, NN_ERR_SHAPE, "%s and its zero point differ in size", names[si]);
  if (s->numel == 1)
    *per = false;
  else if (s->numel == along)
    *per = true;
  else
    return nn_fail(c, NN_ERR_UNSUPPORTED, "%s has %lld elements: only per tensor (1) or %lld is "
                   "supported", names[si], (long long)s->numel, (long long)along);
  return NN_OK;
}

static nn_status qlmm_prepare(nn_ctx *c, nn_node *n) {
  if (n->n_in != 8 || n->n_out != 1 || !n->y[0])
    return nn_fail(c, NN_ERR_INVALID_MODEL, "expects 8 inputs and 1 output");
  for (int i = 0; i < 8; i++)
    if (!n->x[i])
      return nn_fail(c, NN_ERR_INVALID_MODEL, "input %d is missing", i);
  const nn_value *a = n->x[0], *b = n->x[3], *yzp = n->x[7];
  if (!qlmm_int8(a->dtype) || !qlmm_int8(b->dtype) || !qlmm_int8(yzp->dtype))
    return nn_fail(c, NN_ERR_UNSUPPORTED, "a, b and y must be int8 or uint8 (got %s, %s, %s)",
                   nn_dtype_name(a->dtype), nn_dtype_name(b->dtype), nn_dtype_name(yzp->dtype));
  if (a->rank < 1 || b->rank < 1)
    return nn_fail(c, NN_ERR_SHAPE, "a and b must have rank >= 1");
  qlmm_params p = {0};
  int ra = a->rank, rb = b->rank;
  int64_t da[NN_MAX_RANK + 1], db[NN_MAX_RANK + 1];
  if (ra == 1) {
    da[0] = 1, da[1] = a->dims[0], ra = 2;
  } else {
    memcpy(da, a->dims, sizeof(int64_t) * (size_t)ra);
  }
  if (rb == 1) {
    db[0] = b->dims[0], db[1] = 1, rb = 2;
  } else {
    memcpy(db, b->dims, sizeof(int64_t) * (size_t)rb);
  }
  p.M = da[ra - 2], p.K = da[ra - 1], p.N = db[rb - 1];
  if (db[rb - 2] != p.K)
    return nn_fail(c, NN_ERR_SHAPE, "inner dimensions differ (%lld and %lld)", (long long)p.K,
                   (long long)db[rb - 2]);
  int br;
  int64_t bd[NN_MAX_RANK];
  if (nn_broadcast_shape(ra - 2, da, rb - 2, db, &br, bd) != NN_OK)
    return nn_fail(c, NN_ERR_SHAPE, "batch dimensions do not broadcast");
  p.brank = br;
  memcpy(p.bdims, bd, sizeof(int64_t) * (size_t)br);
  nn_broadcast_strides(ra - 2, da, br, bd, p.astr);
  nn_broadcast_strides(rb - 2, db, br, bd, p.bstr);
  p.batch = nn_dims_numel(br, bd);
  nn_status st;
  if ((st = qlmm_param(c, n, 1, a, p.M, &p.a_row)) != NN_OK ||
      (st = qlmm_param(c, n, 4, b, p.N, &p.b_col)) != NN_OK ||
      (st = qlmm_param(c, n, 6, yzp, p.N, &p.y_col)) != NN_OK)
    return st;
  if (!quant_int_type(yzp->dtype, &p.qmin, &p.qmax))
    return nn_fail(c, NN_ERR_UNSUPPORTED, "unsupported output type");
  int64_t yd[NN_MAX_RANK];
  int yr = br;
  memcpy(yd, bd, sizeof(int64_t) * (size_t)br);
  if (a->rank > 1)
    yd[yr++] = p.M;
  if (b->rank > 1)
    yd[yr++] = p.N;
  if (yr > NN_MAX_RANK)
    return nn_fail(c, NN_ERR_SHAPE, "output rank too large");
  if ((st = nn_set_output(c, n->y[0], yzp->dtype, yr, yd)) != NN_OK)
    return st;
  qlmm_params *pp = nn_malloc(sizeof *pp);
  if (!pp)
    return nn_fail(c, NN_ERR_NOMEM, "out of memory");
  *pp = p;
  n->priv = pp;
  return NN_OK;
}

static inline int32_t qlmm_ld(const void *p, nn_dtype dt, int64_t i) {
  return dt == NN_DTYPE_INT8 ? ((const int8_t *)p)[i] : ((const uint8_t *)p)[i];
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

static nn_status qlmm_run(nn_ctx *c, nn_node *n) {
  (void)c;
  const qlmm_params *p = n->priv;
  const nn_value *a = n->x[0], *azp = n->x[2], *b = n->x[3], *bzp = n->x[5], *yzp = n->x[7];
  nn_value *y = n->y[0];
  const int64_t M = p->M, K = p->K, N = p->N;
  for (int64_t t = 0; t < p->batch; t++) {
    int64_t oa = 0, ob = 0, rem = t;
    for (int d = p->brank - 1; d >= 0; d--) {
      int64_t i = rem % p->bdims[d];
      rem /= p->bdims[d];
      oa += i * p->astr[d];
      ob += i * p->bstr[d];
    }
    oa *= M * K;
    ob *= K * N;
    for (int64_t m = 0; m < M; m++) {
      int32_t za = qlmm_ld(azp->data, azp->dtype, p->a_row ? m : 0);
      for (int64_t j = 0; j < N; j++) {
        int32_t zb = qlmm_ld(bzp->data, bzp->dtype, p->b_col ? j : 0);
        int64_t acc = 0;
        for (int64_t k = 0; k < K; k++)
          acc += (int64_t)(qlmm_ld(a->data, a->dtype, oa + m * K + k) - za) *
                 (qlmm_ld(b->data, b->dtype, ob + k * N + j) - zb);
        int64_t iy = p->y_col ? j : 0;
        double v = quant_rint((double)acc * qlmm_mult(n, p->a_row ? m : 0, p->b_col ? j : 0, iy)) +
                   qlmm_ld(yzp->data, yzp->dtype, iy);
        ku_std(y->data, y->dtype, (t * M + m) * N + j, ku_clampd(v, p->qmin, p->qmax));
      }
    }
  }
  return NN_OK;
}

const nn_kernel nn_kernels_quant[] = {
  {.name = "DequantizeLinear", .prepare = dequant_prepare, .run = dequant_run},
  {.name = "QuantizeLinear", .prepare = quant_prepare, .run = quant_run},
  {.name = "DynamicQuantizeLinear", .prepare = dynq_prepare, .run = dynq_run},
  {.name = "QLinearMatMul", .prepare = qlmm_prepare, .run = qlmm_run},
  {0},
};

/* quant.c - the quant family in the op layer: its operators, their versions and
 * their shape and dtype inference (nn_ops_quant[], collected by ops/registry.c),
 * and the parameter layouts of quant.h. */
#include <string.h>

#include "ops/quant.h"

static const nn_value *input(const nn_node *n, int i) { return i < n->n_in ? n->x[i] : NULL; }

/* The integer types a quantized tensor may have (the ONNX ones this runtime
 * represents). */
static bool quant_int_type(nn_dtype dt) {
  return dt == NN_DTYPE_UINT8 || dt == NN_DTYPE_INT8 || dt == NN_DTYPE_UINT16 ||
         dt == NN_DTYPE_INT16 || dt == NN_DTYPE_INT32;
}

nn_status nn_quant_layout_init(nn_ctx *c, const nn_node *n, nn_quant_layout *p) {
  const nn_value *x = n->x[0], *scale = input(n, 1), *zp = input(n, 2);
  memset(p, 0, sizeof *p);
  int64_t block = n->version >= 21 ? nn_attr_int(n, "block_size", 0) : 0;
  if (block < 0)
    return nn_fail(c, NN_ERR_INVALID_MODEL, "negative block_size");
  /* one element is per-tensor whatever its rank (models pair a scalar scale
   * with a (1) zero point) */
  if (scale->numel == 1) {
    if (zp && zp->numel != 1)
      return nn_fail(c, NN_ERR_SHAPE, "zero point and scale sizes differ");
    p->kind = NN_QUANT_TENSOR;
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
    p->kind = NN_QUANT_AXIS;
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
  p->kind = NN_QUANT_BLOCK;
  p->block = block;
  p->SA = scale->dims[ax];
  return NN_OK;
}

static nn_status dequant_infer(nn_ctx *c, nn_node *n) {
  const nn_value *x = n->x[0], *scale = input(n, 1), *zp = input(n, 2);
  if (!scale)
    return nn_fail(c, NN_ERR_INVALID_MODEL, "x_scale is required");
  if (!quant_int_type(x->dtype))
    return nn_fail(c, NN_ERR_UNSUPPORTED, "unsupported quantized type %s", nn_dtype_name(x->dtype));
  if (!nn_dtype_is_float(scale->dtype) || scale->dtype == NN_DTYPE_DOUBLE)
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
  nn_quant_layout l;
  nn_status st = nn_quant_layout_init(c, n, &l);
  if (st != NN_OK)
    return st;
  return nn_set_output(c, n->y[0], out, x->rank, x->dims);
}

static nn_status quant_infer(nn_ctx *c, nn_node *n) {
  const nn_value *x = n->x[0], *scale = input(n, 1), *zp = input(n, 2);
  if (!scale)
    return nn_fail(c, NN_ERR_INVALID_MODEL, "y_scale is required");
  if (!nn_dtype_is_float(x->dtype) && x->dtype != NN_DTYPE_INT32)
    return nn_fail(c, NN_ERR_UNSUPPORTED, "unsupported input type %s", nn_dtype_name(x->dtype));
  if (!nn_dtype_is_float(scale->dtype) && scale->dtype != NN_DTYPE_INT32)
    return nn_fail(c, NN_ERR_UNSUPPORTED, "unsupported scale type %s",
                   nn_dtype_name(scale->dtype));
  int64_t od = n->version >= 21 ? nn_attr_int(n, "output_dtype", 0) : 0;
  nn_dtype out = zp ? zp->dtype : od ? (nn_dtype)od : NN_DTYPE_UINT8;
  if (zp && od && od != (int64_t)zp->dtype)
    return nn_fail(c, NN_ERR_DTYPE, "output_dtype %lld differs from the zero point's type %s",
                   (long long)od, nn_dtype_name(zp->dtype));
  nn_quant_layout l;
  nn_status st = nn_quant_layout_init(c, n, &l);
  if (st != NN_OK)
    return st;
  if (!quant_int_type(out) || out == NN_DTYPE_INT32)
    return nn_fail(c, NN_ERR_UNSUPPORTED, "unsupported quantized type %s", nn_dtype_name(out));
  int64_t prec = n->version >= 23 ? nn_attr_int(n, "precision", 0) : 0;
  if (prec != 0 && prec != NN_DTYPE_FLOAT && prec != NN_DTYPE_FLOAT16 &&
      prec != NN_DTYPE_BFLOAT16 && prec != NN_DTYPE_DOUBLE)
    return nn_fail(c, NN_ERR_UNSUPPORTED, "unsupported precision %lld", (long long)prec);
  return nn_set_output(c, n->y[0], out, x->rank, x->dims);
}

/* ---- DynamicQuantizeLinear: uint8 over [min(0, x), max(0, x)] ------------------- */

static nn_status dynq_infer(nn_ctx *c, nn_node *n) {
  const nn_value *x = n->x[0];
  if (x->dtype != NN_DTYPE_FLOAT)
    return nn_fail(c, NN_ERR_UNSUPPORTED, "unsupported input type %s", nn_dtype_name(x->dtype));
  nn_status st = nn_set_output(c, n->y[0], NN_DTYPE_UINT8, x->rank, x->dims);
  if (st == NN_OK && n->n_out > 1)
    st = nn_set_output(c, n->y[1], NN_DTYPE_FLOAT, 0, NULL);
  if (st == NN_OK && n->n_out > 2)
    st = nn_set_output(c, n->y[2], NN_DTYPE_UINT8, 0, NULL);
  return st;
}

/* ---- QLinearMatMul ------------------------------------------------------------ */

static bool qlmm_int8(nn_dtype dt) { return dt == NN_DTYPE_INT8 || dt == NN_DTYPE_UINT8; }

/* Check one scale/zero-point pair: n elements (1 or `along`). */
static nn_status qlmm_param(nn_ctx *c, const nn_node *n, int si, const nn_value *q, int64_t along,
                            bool *per) {
  const nn_value *s = n->x[si], *zp = n->x[si + 1];
  static const char *const names[] = {"", "a_scale", "", "", "b_scale", "", "y_scale"};
  if (!nn_dtype_is_float(s->dtype) || s->dtype == NN_DTYPE_DOUBLE ||
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

nn_status nn_qlmm_geom_init(nn_ctx *c, const nn_node *n, nn_qlmm_geom *p) {
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
  memset(p, 0, sizeof *p);
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
  p->M = da[ra - 2], p->K = da[ra - 1], p->N = db[rb - 1];
  if (db[rb - 2] != p->K)
    return nn_fail(c, NN_ERR_SHAPE, "inner dimensions differ (%lld and %lld)", (long long)p->K,
                   (long long)db[rb - 2]);
  if (nn_broadcast_shape(ra - 2, da, rb - 2, db, &p->brank, p->bdims) != NN_OK)
    return nn_fail(c, NN_ERR_SHAPE, "batch dimensions do not broadcast");
  nn_broadcast_strides(ra - 2, da, p->brank, p->bdims, p->astr);
  nn_broadcast_strides(rb - 2, db, p->brank, p->bdims, p->bstr);
  p->batch = nn_dims_numel(p->brank, p->bdims);
  nn_status st;
  if ((st = qlmm_param(c, n, 1, a, p->M, &p->a_row)) != NN_OK ||
      (st = qlmm_param(c, n, 4, b, p->N, &p->b_col)) != NN_OK ||
      (st = qlmm_param(c, n, 6, yzp, p->N, &p->y_col)) != NN_OK)
    return st;
  return NN_OK;
}

static nn_status qlmm_infer(nn_ctx *c, nn_node *n) {
  nn_qlmm_geom g;
  nn_status st = nn_qlmm_geom_init(c, n, &g);
  if (st != NN_OK)
    return st;
  /* the batch dims, then M and N unless that operand was 1-D */
  int64_t yd[NN_MAX_RANK];
  int yr = g.brank;
  memcpy(yd, g.bdims, sizeof(int64_t) * (size_t)g.brank);
  if (n->x[0]->rank > 1)
    yd[yr++] = g.M;
  if (n->x[3]->rank > 1)
    yd[yr++] = g.N;
  if (yr > NN_MAX_RANK)
    return nn_fail(c, NN_ERR_SHAPE, "output rank too large");
  return nn_set_output(c, n->y[0], n->x[7]->dtype, yr, yd);
}

/* The family's operators (ops/registry.c), each with its shape and dtype
 * inference; cpu/quant.c has the kernels. */
const nn_op_def nn_ops_quant[] = {
  {.name = "DequantizeLinear", .versions = {10, 13, 19, 21, 23, 25}, .infer = dequant_infer},
  {.name = "QuantizeLinear", .versions = {10, 13, 19, 21, 23, 25}, .infer = quant_infer},
  {.name = "DynamicQuantizeLinear", .versions = {11}, .infer = dynq_infer},
  {.name = "QLinearMatMul", .versions = {10, 21}, .infer = qlmm_infer},
  {0},
};

/* qlinear.c - the qlinear family in the op layer: ONNX Runtime's QOperator
 * contrib ops (domain com.microsoft, version 1), their input, type and
 * attribute checks, shape inference, and the geometry of qlinear.h. */
#include <stdio.h>
#include <string.h>

#include "ops/qlinear.h"

static const nn_value *input(const nn_node *n, int i) { return i < n->n_in ? n->x[i] : NULL; }

static bool is_q8(nn_dtype dt) { return dt == NN_DTYPE_UINT8 || dt == NN_DTYPE_INT8; }

/* ---- checks every op shares ----------------------------------------------------- */

typedef struct qlinear_attr {
  const char *name;
  nn_attr_type type;
} qlinear_attr;

/* The ONNX checker's attribute rule, which nn_op_check_schema applies to the
 * default domain only: an attribute the op does not define, or one of
 * another type, is refused rather than silently ignored (a `dilations` here
 * would otherwise change nothing).  `allowed` ends with a NULL name. */
static nn_status qlinear_check_attrs(nn_ctx *c, const nn_node *n, const qlinear_attr *allowed) {
  for (int i = 0; i < n->n_attrs; i++) {
    const nn_attr *a = &n->attrs[i];
    const qlinear_attr *s = allowed;
    while (s->name && strcmp(s->name, a->name) != 0)
      s++;
    if (!s->name)
      return nn_fail(c, NN_ERR_INVALID_MODEL, "attribute '%s' is not defined by the operator",
                     a->name);
    bool ok = a->type == s->type || a->type == NN_ATTR_UNDEFINED ||
              (s->type == NN_ATTR_FLOAT && a->type == NN_ATTR_INT);
    if (!ok)
      return nn_fail(c, NN_ERR_INVALID_MODEL, "attribute '%s' has the wrong type", a->name);
  }
  return NN_OK;
}

/* Inputs [0, n_in) within [lo, hi] given, the required ones not empty (bit k
 * of req: slot k), one output. */
static nn_status qlinear_check_io(nn_ctx *c, const nn_node *n, int lo, int hi, unsigned req) {
  if (n->n_in < lo || n->n_in > hi)
    return nn_fail(c, NN_ERR_INVALID_MODEL, "has %d inputs, the operator takes %d to %d", n->n_in,
                   lo, hi);
  for (int k = 0; k < n->n_in && k < 32; k++)
    if ((req >> k & 1u) && !n->x[k])
      return nn_fail(c, NN_ERR_INVALID_MODEL, "required input %d is missing", k);
  if (n->n_out != 1 || !n->y[0])
    return nn_fail(c, NN_ERR_INVALID_MODEL, "expects 1 output");
  return NN_OK;
}

/* An 8-bit data tensor. */
static nn_status qlinear_check_data(nn_ctx *c, const nn_value *x, const char *what) {
  if (!is_q8(x->dtype))
    return nn_fail(c, NN_ERR_UNSUPPORTED, "%s must be uint8 or int8, got %s", what,
                   nn_dtype_name(x->dtype));
  return NN_OK;
}

/* A per-tensor scale (input si: float32, one element) and its zero point
 * (input zi, optional unless zp_required: dt, one element).  The kernels
 * read both as scalars; per-axis parameters are not what these ops take. */
static nn_status qlinear_check_param(nn_ctx *c, const nn_node *n, int si, int zi, nn_dtype dt,
                                     bool zp_required, const char *what) {
  const nn_value *s = input(n, si), *z = input(n, zi);
  if (!s)
    return nn_fail(c, NN_ERR_INVALID_MODEL, "%s's scale is missing", what);
  if (s->dtype != NN_DTYPE_FLOAT)
    return nn_fail(c, NN_ERR_DTYPE, "%s's scale must be float32, got %s", what,
                   nn_dtype_name(s->dtype));
  if (s->numel != 1)
    return nn_fail(c, NN_ERR_SHAPE, "%s's scale must be a scalar (one element), has %lld", what,
                   (long long)s->numel);
  if (!z) {
    if (zp_required)
      return nn_fail(c, NN_ERR_INVALID_MODEL, "%s's zero point is missing", what);
    return NN_OK;
  }
  if (z->dtype != dt)
    return nn_fail(c, NN_ERR_DTYPE, "%s's zero point is %s, the tensor %s", what,
                   nn_dtype_name(z->dtype), nn_dtype_name(dt));
  if (z->numel != 1)
    return nn_fail(c, NN_ERR_SHAPE, "%s's zero point must be a scalar (one element), has %lld",
                   what, (long long)z->numel);
  return NN_OK;
}

/* ---- QLinearAdd / QLinearMul ------------------------------------------------------ */

static const qlinear_attr qlbin_attrs[] = {{NULL, 0}};

/* Whether ONNX Runtime's broadcaster (its Broadcaster over the two shapes,
 * innermost dims first) makes A the scalar of each span: at the innermost
 * dim where either shape is not 1 (or the innermost dim they share when all
 * are 1; A's last when B is a scalar), A's dim is 1. */
static bool qlbin_a_spans_scalar(const nn_value *a, const nn_value *b) {
  int ra = a->rank, rb = b->rank, rmin = ra < rb ? ra : rb;
  if (rmin == 0)
    return ra == 0 || a->dims[ra - 1] <= 1;
  for (int i = 0; i < rmin; i++) {
    int64_t da = a->dims[ra - 1 - i], db = b->dims[rb - 1 - i];
    int64_t largest = da > db ? da : db;
    if (largest == 1 && i + 1 < rmin)
      continue;
    return da <= 1;
  }
  return false;
}

nn_status nn_qlbin_geom_init(nn_ctx *c, const nn_node *n, nn_qlbin_geom *g) {
  nn_status st;
  memset(g, 0, sizeof *g);
  if ((st = qlinear_check_attrs(c, n, qlbin_attrs)) ||
      (st = qlinear_check_io(c, n, 7, 8, 0x5bu)))  /* A, A_scale, B, B_scale, C_scale */
    return st;
  const nn_value *a = n->x[0], *b = n->x[3];
  if ((st = qlinear_check_data(c, a, "A")) || (st = qlinear_check_data(c, b, "B")))
    return st;
  if (a->dtype != b->dtype)
    return nn_fail(c, NN_ERR_DTYPE, "A is %s and B %s: they must have the same type",
                   nn_dtype_name(a->dtype), nn_dtype_name(b->dtype));
  if ((st = qlinear_check_param(c, n, 1, 2, a->dtype, false, "A")) ||
      (st = qlinear_check_param(c, n, 4, 5, a->dtype, false, "B")) ||
      (st = qlinear_check_param(c, n, 6, 7, a->dtype, false, "C")))
    return st;
  if (nn_broadcast_shape(a->rank, a->dims, b->rank, b->dims, &g->rank, g->dims) != NN_OK)
    return nn_fail(c, NN_ERR_SHAPE, "A and B do not broadcast");
  nn_broadcast_strides(a->rank, a->dims, g->rank, g->dims, g->astr);
  nn_broadcast_strides(b->rank, b->dims, g->rank, g->dims, g->bstr);
  g->a_spans_scalar = qlbin_a_spans_scalar(a, b);
  return NN_OK;
}

static nn_status qlbin_infer(nn_ctx *c, nn_node *n) {
  nn_qlbin_geom g;
  nn_status st = nn_qlbin_geom_init(c, n, &g);
  if (st != NN_OK)
    return st;
  return nn_set_output(c, n->y[0], n->x[0]->dtype, g.rank, g.dims);
}

/* ---- the pools ---------------------------------------------------------------------- */

static const qlinear_attr qlgap_attrs[] = {{"channels_last", NN_ATTR_INT}, {NULL, 0}};
static const qlinear_attr qlap_attrs[] = {
  {"auto_pad", NN_ATTR_STRING}, {"ceil_mode", NN_ATTR_INT},     {"channels_last", NN_ATTR_INT},
  {"count_include_pad", NN_ATTR_INT}, {"kernel_shape", NN_ATTR_INTS}, {"pads", NN_ATTR_INTS},
  {"strides", NN_ATTR_INTS},  {NULL, 0}};

/* 0 or 1, else refused. */
static nn_status qlinear_flag(nn_ctx *c, const nn_node *n, const char *name, bool *out) {
  int64_t v = nn_attr_int(n, name, 0);
  if (v != 0 && v != 1)
    return nn_fail(c, NN_ERR_INVALID_MODEL, "%s = %lld (0 or 1)", name, (long long)v);
  *out = v == 1;
  return NN_OK;
}

nn_status nn_qlpool_geom_init(nn_ctx *c, const nn_node *n, bool global, nn_qlpool_geom *p) {
  nn_status st;
  memset(p, 0, sizeof *p);
  /* the global pool's zero points are required by its schema; ONNX Runtime
   * reads them unchecked: taken as optional here (0), like every other op's */
  if ((st = qlinear_check_attrs(c, n, global ? qlgap_attrs : qlap_attrs)) ||
      (st = qlinear_check_io(c, n, 4, 5, 0xbu)))  /* X, x_scale, y_scale */
    return st;
  const nn_value *x = n->x[0];
  if ((st = qlinear_check_data(c, x, "X")) ||
      (st = qlinear_check_param(c, n, 1, 2, x->dtype, false, "X")) ||
      (st = qlinear_check_param(c, n, 3, 4, x->dtype, false, "Y")) ||
      (st = qlinear_flag(c, n, "channels_last", &p->channels_last)))
    return st;
  if (x->rank < 3 || x->rank > 2 + NN_CONV_SP)
    return nn_fail(c, NN_ERR_SHAPE, "X has rank %d: (N, C, 1 to %d spatial dims) expected",
                   x->rank, NN_CONV_SP);
  int nsp = x->rank - 2;
  const int64_t *sp = x->dims + (p->channels_last ? 1 : 2);
  p->N = x->dims[0];
  p->C = p->channels_last ? x->dims[x->rank - 1] : x->dims[1];
  if (global) {
    /* a window the size of the image, nothing else read */
    memset(&p->g, 0, sizeof p->g);
    p->g.nsp = nsp;
    p->g.in_sz = p->g.k_sz = p->g.out_sz = 1;
    for (int i = 0; i < NN_CONV_SP; i++) {
      int j = i - (NN_CONV_SP - nsp);
      p->g.in[i] = p->g.k[i] = j >= 0 ? sp[j] : 1;
      p->g.out[i] = p->g.s[i] = p->g.d[i] = 1;
      p->g.in_sz *= p->g.in[i];
    }
    p->g.k_sz = p->g.in_sz;
    p->as_global = true;
    return NN_OK;
  }
  int cnt = 0;
  const int64_t *ks = nn_attr_ints(n, "kernel_shape", &cnt);
  if (!ks)
    return nn_fail(c, NN_ERR_INVALID_MODEL, "kernel_shape is required");
  if (cnt != nsp)
    return nn_fail(c, NN_ERR_INVALID_MODEL, "kernel_shape has %d values, X has %d spatial dims",
                   cnt, nsp);
  bool ceil_mode = false;
  if ((st = qlinear_flag(c, n, "ceil_mode", &ceil_mode)) ||
      (st = qlinear_flag(c, n, "count_include_pad", &p->count_include_pad)) ||
      (st = nn_conv_geom_init(c, n, nsp, sp, ks, false, ceil_mode, &p->g)))
    return st;
  /* ONNX Runtime refuses pads of a kernel's size or more: with them a
   * window can lie wholly in the padding and average nothing */
  bool zero_pads = true;
  for (int i = NN_CONV_SP - nsp; i < NN_CONV_SP; i++) {
    if (p->g.pb[i] >= p->g.k[i] || p->g.pe[i] >= p->g.k[i])
      return nn_fail(c, NN_ERR_INVALID_MODEL, "pads must be smaller than the kernel (%lld, %lld "
                     "with kernel %lld)", (long long)p->g.pb[i], (long long)p->g.pe[i],
                     (long long)p->g.k[i]);
    zero_pads = zero_pads && p->g.pb[i] == 0 && p->g.pe[i] == 0;
    if (p->g.k[i] != p->g.in[i])
      zero_pads = false;
  }
  p->as_global = zero_pads;
  return NN_OK;
}

/* Y: X's shape with the pooled spatial dims, X's type. */
static nn_status qlpool_set_output(nn_ctx *c, nn_node *n, const nn_qlpool_geom *p) {
  const nn_value *x = n->x[0];
  int nsp = x->rank - 2, off = p->channels_last ? 1 : 2;
  int64_t dims[NN_MAX_RANK];
  memcpy(dims, x->dims, sizeof(int64_t) * (size_t)x->rank);
  for (int i = 0; i < nsp; i++)
    dims[off + i] = p->g.out[NN_CONV_SP - nsp + i];
  return nn_set_output(c, n->y[0], x->dtype, x->rank, dims);
}

static nn_status qlgap_infer(nn_ctx *c, nn_node *n) {
  nn_qlpool_geom p;
  nn_status st = nn_qlpool_geom_init(c, n, true, &p);
  return st != NN_OK ? st : qlpool_set_output(c, n, &p);
}

static nn_status qlap_infer(nn_ctx *c, nn_node *n) {
  nn_qlpool_geom p;
  nn_status st = nn_qlpool_geom_init(c, n, false, &p);
  return st != NN_OK ? st : qlpool_set_output(c, n, &p);
}

/* ---- QLinearConcat ------------------------------------------------------------------ */

static const qlinear_attr qlconcat_attrs[] = {{"axis", NN_ATTR_INT}, {NULL, 0}};

nn_status nn_qlconcat_geom_init(nn_ctx *c, const nn_node *n, nn_qlconcat_geom *g) {
  nn_status st;
  memset(g, 0, sizeof *g);
  if ((st = qlinear_check_attrs(c, n, qlconcat_attrs)))
    return st;
  if (n->n_in < 5 || (n->n_in - 2) % 3 != 0)
    return nn_fail(c, NN_ERR_INVALID_MODEL, "has %d inputs: Y_scale, Y_zero_point, then "
                   "(tensor, scale, zero point) per input expected", n->n_in);
  if ((n->n_in - 2) / 3 > NN_QLCONCAT_MAX)
    return nn_fail(c, NN_ERR_UNSUPPORTED, "more than %d inputs", NN_QLCONCAT_MAX);
  if (n->n_out != 1 || !n->y[0])
    return nn_fail(c, NN_ERR_INVALID_MODEL, "expects 1 output");
  if (!nn_attr_get(n, "axis"))
    return nn_fail(c, NN_ERR_INVALID_MODEL, "axis is required");
  for (int k = 0; k < n->n_in; k++)
    if (!n->x[k])
      return nn_fail(c, NN_ERR_INVALID_MODEL, "input %d is missing", k);
  /* the output's type is its zero point's, which every input shares */
  const nn_value *yzp = n->x[1];
  if ((st = qlinear_check_data(c, yzp, "Y_zero_point")) ||
      (st = qlinear_check_param(c, n, 0, 1, yzp->dtype, true, "Y")))
    return st;
  const nn_value *x0 = n->x[2];
  g->count = (n->n_in - 2) / 3;
  if (x0->rank < 1)
    return nn_fail(c, NN_ERR_SHAPE, "inputs must have rank >= 1");
  if (!nn_norm_axis(nn_attr_int(n, "axis", 0), x0->rank, &g->axis))
    return nn_fail(c, NN_ERR_INVALID_MODEL, "axis out of range for rank %d", x0->rank);
  int64_t inner = nn_dims_numel(x0->rank - g->axis - 1, x0->dims + g->axis + 1);
  g->outer = nn_dims_numel(g->axis, x0->dims);
  for (int k = 0; k < g->count; k++) {
    const nn_value *x = n->x[2 + 3 * k];
    char what[32];
    snprintf(what, sizeof what, "input %d", k);
    if (x->dtype != yzp->dtype)
      return nn_fail(c, NN_ERR_DTYPE, "input %d is %s, Y %s: they must have the same type", k,
                     nn_dtype_name(x->dtype), nn_dtype_name(yzp->dtype));
    if ((st = qlinear_check_param(c, n, 3 + 3 * k, 4 + 3 * k, yzp->dtype, true, what)))
      return st;
    if (x->rank != x0->rank)
      return nn_fail(c, NN_ERR_SHAPE, "input %d has rank %d, input 0 %d", k, x->rank, x0->rank);
    for (int d = 0; d < x->rank; d++)
      if (d != g->axis && x->dims[d] != x0->dims[d])
        return nn_fail(c, NN_ERR_SHAPE, "input %d's dim %d is %lld, input 0's %lld", k, d,
                       (long long)x->dims[d], (long long)x0->dims[d]);
    g->out_pitch += x->dims[g->axis] * inner;
  }
  return NN_OK;
}

static nn_status qlconcat_infer(nn_ctx *c, nn_node *n) {
  nn_qlconcat_geom g;
  nn_status st = nn_qlconcat_geom_init(c, n, &g);
  if (st != NN_OK)
    return st;
  const nn_value *x0 = n->x[2];
  int64_t dims[NN_MAX_RANK];
  memcpy(dims, x0->dims, sizeof(int64_t) * (size_t)x0->rank);
  dims[g.axis] = 0;
  for (int k = 0; k < g.count; k++)
    dims[g.axis] += n->x[2 + 3 * k]->dims[g.axis];
  return nn_set_output(c, n->y[0], n->x[1]->dtype, x0->rank, dims);
}

/* ---- the lookup-table ops: QLinearSigmoid, QLinearLeakyRelu ---------------------------- */

static const qlinear_attr qlsigmoid_attrs[] = {{NULL, 0}};
static const qlinear_attr qlleaky_attrs[] = {{"alpha", NN_ATTR_FLOAT}, {NULL, 0}};

/* X, X_scale, X_zero_point?, Y_scale, Y_zero_point? -> Y of X's shape and type. */
static nn_status qllut_check(nn_ctx *c, const nn_node *n, const qlinear_attr *attrs) {
  nn_status st;
  if ((st = qlinear_check_attrs(c, n, attrs)) || (st = qlinear_check_io(c, n, 4, 5, 0xbu)))
    return st;
  const nn_value *x = n->x[0];
  if ((st = qlinear_check_data(c, x, "X")) ||
      (st = qlinear_check_param(c, n, 1, 2, x->dtype, false, "X")) ||
      (st = qlinear_check_param(c, n, 3, 4, x->dtype, false, "Y")))
    return st;
  return NN_OK;
}

static nn_status qlsigmoid_infer(nn_ctx *c, nn_node *n) {
  nn_status st = qllut_check(c, n, qlsigmoid_attrs);
  return st != NN_OK ? st : nn_set_output(c, n->y[0], n->x[0]->dtype, n->x[0]->rank, n->x[0]->dims);
}

static nn_status qlleaky_infer(nn_ctx *c, nn_node *n) {
  nn_status st = qllut_check(c, n, qlleaky_attrs);
  return st != NN_OK ? st : nn_set_output(c, n->y[0], n->x[0]->dtype, n->x[0]->rank, n->x[0]->dims);
}

/* ---- QLinearSoftmax ------------------------------------------------------------------ */

static const qlinear_attr qlsoftmax_attrs[] = {{"axis", NN_ATTR_INT}, {"opset", NN_ATTR_INT},
                                               {NULL, 0}};

nn_status nn_qlsoftmax_geom_init(nn_ctx *c, const nn_node *n, nn_qlsoftmax_geom *g) {
  nn_status st;
  memset(g, 0, sizeof *g);
  if ((st = qlinear_check_attrs(c, n, qlsoftmax_attrs)) ||
      (st = qlinear_check_io(c, n, 4, 5, 0xbu)))
    return st;
  const nn_value *x = n->x[0];
  /* X's zero point is checked but never read: the softmax of x - zp is
   * that of x, and ONNX Runtime's table starts from the row's maximum */
  if ((st = qlinear_check_data(c, x, "X")) ||
      (st = qlinear_check_param(c, n, 1, 2, x->dtype, false, "X")) ||
      (st = qlinear_check_param(c, n, 3, 4, x->dtype, false, "Y")))
    return st;
  if (!nn_attr_get(n, "opset"))
    return nn_fail(c, NN_ERR_INVALID_MODEL, "attribute opset is required");
  int64_t opset = nn_attr_int(n, "opset", 13);
  if (x->rank < 1)
    return nn_fail(c, NN_ERR_SHAPE, "X must have rank >= 1");
  /* axis defaults to -1 whatever the opset: ONNX Runtime's schema gives it
   * that default, so its kernel's own opset < 13 default (1) never applies */
  int axis;
  if (!nn_norm_axis(nn_attr_int(n, "axis", -1), x->rank, &axis))
    return nn_fail(c, NN_ERR_INVALID_MODEL, "axis out of range for rank %d", x->rank);
  g->outer = nn_dims_numel(axis, x->dims);
  if (opset < 13) {
    g->D = nn_dims_numel(x->rank - axis, x->dims + axis);
    g->inner = 1;
  } else {
    g->D = x->dims[axis];
    g->inner = nn_dims_numel(x->rank - axis - 1, x->dims + axis + 1);
  }
  return NN_OK;
}

static nn_status qlsoftmax_infer(nn_ctx *c, nn_node *n) {
  nn_qlsoftmax_geom g;
  nn_status st = nn_qlsoftmax_geom_init(c, n, &g);
  return st != NN_OK ? st : nn_set_output(c, n->y[0], n->x[0]->dtype, n->x[0]->rank, n->x[0]->dims);
}

/* The family's operators (ops/registry.c); cpu/qlinear.c has the kernels. */
const nn_op_def nn_ops_qlinear[] = {
  {.name = "QLinearAdd", .domain = NN_QLINEAR_DOMAIN, .versions = {1},
   .flags = NN_OP_ELEMENTWISE, .infer = qlbin_infer},
  {.name = "QLinearMul", .domain = NN_QLINEAR_DOMAIN, .versions = {1},
   .flags = NN_OP_ELEMENTWISE, .infer = qlbin_infer},
  {.name = "QLinearGlobalAveragePool", .domain = NN_QLINEAR_DOMAIN, .versions = {1},
   .infer = qlgap_infer},
  {.name = "QLinearAveragePool", .domain = NN_QLINEAR_DOMAIN, .versions = {1},
   .infer = qlap_infer},
  {.name = "QLinearConcat", .domain = NN_QLINEAR_DOMAIN, .versions = {1}, .infer = qlconcat_infer},
  {.name = "QLinearSigmoid", .domain = NN_QLINEAR_DOMAIN, .versions = {1},
   .flags = NN_OP_ELEMENTWISE, .infer = qlsigmoid_infer},
  {.name = "QLinearLeakyRelu", .domain = NN_QLINEAR_DOMAIN, .versions = {1},
   .flags = NN_OP_ELEMENTWISE, .infer = qlleaky_infer},
  {.name = "QLinearSoftmax", .domain = NN_QLINEAR_DOMAIN, .versions = {1},
   .infer = qlsoftmax_infer},
  {0},
};

/* reduce.c - reductions (nn_ops_reduce[], collected by ops/registry.c): the
 * Reduce* family's axes, ArgMax / ArgMin's axis, TopK's axis and K,
 * CumSum / CumProd's axis (reduce.h) and their shape and dtype inference. */
#include <string.h>

#include "ops/reduce.h"

int nn_reduce_axes_input_version(const char *op_type) {
  return strcmp(op_type, "ReduceSum") == 0 ? 13 : 18;
}

/* Marks axis v; a repeated or out-of-range axis is refused. */
static nn_status mark_axis(nn_ctx *c, int64_t v, nn_reduce_axes *p, int *naxes) {
  int a;
  if (!nn_norm_axis(v, p->rank, &a))
    return nn_fail(c, NN_ERR_INVALID_MODEL, "axis %lld out of range for rank %d", (long long)v,
                   p->rank);
  if (p->reduce[a])
    return nn_fail(c, NN_ERR_INVALID_MODEL, "axis %lld repeated", (long long)v);
  p->reduce[a] = true;
  (*naxes)++;
  return NN_OK;
}

/* The shape left when the axes in `reduce` go (or become 1 with keepdims). */
static int reduced_shape(const nn_value *x, const bool *reduce, bool keepdims, int64_t *out) {
  int r = 0;
  for (int i = 0; i < x->rank; i++) {
    if (!reduce[i])
      out[r++] = x->dims[i];
    else if (keepdims)
      out[r++] = 1;
  }
  return r;
}

nn_status nn_reduce_axes_init(nn_ctx *c, const nn_node *n, nn_reduce_axes *p) {
  const nn_value *x = n->n_in > 0 ? n->x[0] : NULL;
  if (!x)
    return nn_fail(c, NN_ERR_INVALID_MODEL, "input 0 is missing");
  memset(p, 0, sizeof *p);
  p->rank = x->rank;
  p->keepdims = nn_attr_int(n, "keepdims", 1) != 0;
  int naxes = 0;
  nn_status st;
  bool noop_empty = false;
  if (n->version >= nn_reduce_axes_input_version(n->op_type)) {
    noop_empty = nn_attr_int(n, "noop_with_empty_axes", 0) != 0;
    const nn_value *axv = n->n_in > 1 ? n->x[1] : NULL;
    if (axv) {
      if (!axv->data)
        return nn_fail(c, NN_ERR_UNSUPPORTED, "axes must be known before the run");
      if (!nn_dtype_is_int(axv->dtype) || axv->rank > 1)
        return nn_fail(c, NN_ERR_INVALID_MODEL, "axes must be a 1-D integer tensor");
      if (axv->numel > NN_MAX_RANK)
        return nn_fail(c, NN_ERR_INVALID_MODEL, "%lld axes for a rank-%d input",
                       (long long)axv->numel, p->rank);
      for (int64_t i = 0; i < axv->numel; i++)
        if ((st = mark_axis(c, nn_value_get_int(axv, i), p, &naxes)) != NN_OK)
          return st;
    }
  } else {
    int cnt = 0;
    const int64_t *ax = nn_attr_ints(n, "axes", &cnt);
    for (int i = 0; ax && i < cnt; i++)
      if ((st = mark_axis(c, ax[i], p, &naxes)) != NN_OK)
        return st;
  }
  if (naxes == 0) {
    if (noop_empty) {
      p->noop = true;
      p->out_rank = p->rank;
      memcpy(p->out, x->dims, sizeof p->out);
      return NN_OK;
    }
    for (int i = 0; i < p->rank; i++)
      p->reduce[i] = true;
  }
  p->out_rank = reduced_shape(x, p->reduce, p->keepdims, p->out);
  return NN_OK;
}

nn_status nn_arg_params_init(nn_ctx *c, const nn_node *n, nn_arg_params *p) {
  const nn_value *x = n->n_in > 0 ? n->x[0] : NULL;
  if (!x)
    return nn_fail(c, NN_ERR_INVALID_MODEL, "input 0 is missing");
  memset(p, 0, sizeof *p);
  if (x->rank < 1)
    return nn_fail(c, NN_ERR_SHAPE, "input must have rank >= 1");
  int64_t axis = nn_attr_int(n, "axis", 0);
  if (!nn_norm_axis(axis, x->rank, &p->axis))
    return nn_fail(c, NN_ERR_INVALID_MODEL, "axis %lld out of range for rank %d", (long long)axis,
                   x->rank);
  p->last = nn_attr_int(n, "select_last_index", 0) != 0;
  p->keepdims = nn_attr_int(n, "keepdims", 1) != 0;
  bool reduce[NN_MAX_RANK] = {false};
  reduce[p->axis] = true;
  p->out_rank = reduced_shape(x, reduce, p->keepdims, p->out);
  return NN_OK;
}

nn_status nn_topk_params_init(nn_ctx *c, const nn_node *n, nn_topk_params *p) {
  const nn_value *x = n->n_in > 0 ? n->x[0] : NULL;
  if (!x)
    return nn_fail(c, NN_ERR_INVALID_MODEL, "input 0 is missing");
  memset(p, 0, sizeof *p);
  if (x->rank < 1)
    return nn_fail(c, NN_ERR_SHAPE, "input must have rank >= 1");
  int64_t axis = nn_attr_int(n, "axis", -1);
  if (!nn_norm_axis(axis, x->rank, &p->axis))
    return nn_fail(c, NN_ERR_INVALID_MODEL, "axis %lld out of range for rank %d",
                   (long long)axis, x->rank);
  if (n->version >= 10) {
    const nn_value *kv = n->n_in > 1 ? n->x[1] : NULL;
    if (!kv)
      return nn_fail(c, NN_ERR_INVALID_MODEL, "input K is missing");
    if (!kv->data)
      return nn_fail(c, NN_ERR_UNSUPPORTED, "K must be known before the run");
    if (!nn_dtype_is_int(kv->dtype) || kv->numel != 1)
      return nn_fail(c, NN_ERR_INVALID_MODEL, "K must be a single integer");
    p->k = nn_value_get_int(kv, 0);
  } else {
    if (!nn_attr_get(n, "k"))
      return nn_fail(c, NN_ERR_INVALID_MODEL, "attribute k is missing");
    p->k = nn_attr_int(n, "k", 0);
  }
  int64_t len = x->dims[p->axis];
  if (p->k < 0 || p->k > len)
    return nn_fail(c, NN_ERR_INVALID_MODEL, "K=%lld is outside [0, %lld]", (long long)p->k,
                   (long long)len);
  int64_t largest = nn_attr_int(n, "largest", 1);
  if (largest != 0 && largest != 1)
    return nn_fail(c, NN_ERR_UNSUPPORTED, "largest=%lld is not 0 or 1", (long long)largest);
  p->largest = largest == 1;
  return NN_OK;
}

nn_status nn_cum_axis(nn_ctx *c, const nn_node *n, int *axis) {
  const nn_value *av = n->x[1], *x = n->x[0];
  if (!nn_dtype_is_int(av->dtype) || av->numel != 1 || av->rank > 1)
    return nn_fail(c, NN_ERR_INVALID_MODEL, "axis must be a single integer");
  int64_t a = nn_value_get_int(av, 0);
  if (!nn_norm_axis(a, x->rank, axis))
    return nn_fail(c, NN_ERR_INVALID_MODEL, "axis %lld out of range for rank %d",
                   (long long)a, x->rank);
  return NN_OK;
}

/* ---- shape and dtype inference ---------------------------------------------- */

static bool red_numeric(nn_dtype dt) {
  return nn_dtype_is_float(dt) || nn_dtype_is_int(dt);
}

/* Reduce*: Y of X's dtype with the reduced shape (X's with a no-op); bool
 * only for ReduceMax / ReduceMin (opset 20). */
static nn_status reduce_infer(nn_ctx *c, nn_node *n) {
  if (n->n_in < 1 || !n->x[0] || n->n_out < 1 || !n->y[0])
    return nn_fail(c, NN_ERR_INVALID_MODEL, "%s needs input data and output reduced",
                   n->op->name);
  const nn_value *x = n->x[0];
  nn_dtype dt = x->dtype;
  const bool minmax = !strcmp(n->op->name, "ReduceMax") || !strcmp(n->op->name, "ReduceMin");
  if (!red_numeric(dt) && !(dt == NN_DTYPE_BOOL && minmax))
    return nn_fail(c, NN_ERR_UNSUPPORTED, "%s on %s is not supported", n->op->name,
                   nn_dtype_name(dt));
  nn_reduce_axes ra;
  nn_status st = nn_reduce_axes_init(c, n, &ra);
  if (st != NN_OK)
    return st;
  return nn_set_output(c, n->y[0], dt, ra.out_rank, ra.out);
}

/* ArgMax / ArgMin: int64 indices, the axis gone (or 1 with keepdims). */
static nn_status arg_infer(nn_ctx *c, nn_node *n) {
  if (n->n_in < 1 || !n->x[0] || n->n_out < 1 || !n->y[0])
    return nn_fail(c, NN_ERR_INVALID_MODEL, "needs input data and output reduced");
  const nn_value *x = n->x[0];
  if (!red_numeric(x->dtype))
    return nn_fail(c, NN_ERR_UNSUPPORTED, "%s on %s is not supported", n->op_type,
                   nn_dtype_name(x->dtype));
  nn_arg_params ap;
  nn_status st = nn_arg_params_init(c, n, &ap);
  if (st != NN_OK)
    return st;
  st = nn_set_output(c, n->y[0], NN_DTYPE_INT64, ap.out_rank, ap.out);
  if (st != NN_OK)
    return st;
  if (x->dims[ap.axis] == 0 && n->y[0]->numel > 0)
    return nn_fail(c, NN_ERR_SHAPE, "cannot take %s over an empty axis", n->op_type);
  return NN_OK;
}

/* TopK: Values (X's dtype) and int64 Indices, X's shape with K on the axis. */
static nn_status topk_infer(nn_ctx *c, nn_node *n) {
  if (n->n_in < 1 || !n->x[0] || n->n_out < 2)
    return nn_fail(c, NN_ERR_INVALID_MODEL, "TopK needs input X and outputs Values, Indices");
  const nn_value *x = n->x[0];
  if (!red_numeric(x->dtype))
    return nn_fail(c, NN_ERR_UNSUPPORTED, "TopK on %s is not supported",
                   nn_dtype_name(x->dtype));
  nn_topk_params tp;
  nn_status st = nn_topk_params_init(c, n, &tp);
  if (st != NN_OK)
    return st;
  int64_t yd[NN_MAX_RANK];
  memcpy(yd, x->dims, sizeof(int64_t) * (size_t)x->rank);
  yd[tp.axis] = tp.k;
  if (n->y[0] && (st = nn_set_output(c, n->y[0], x->dtype, x->rank, yd)) != NN_OK)
    return st;
  if (n->y[1] && (st = nn_set_output(c, n->y[1], NN_DTYPE_INT64, x->rank, yd)) != NN_OK)
    return st;
  return NN_OK;
}

static bool cum_dtype_ok(nn_dtype dt) {
  switch (dt) {
  case NN_DTYPE_FLOAT: case NN_DTYPE_DOUBLE: case NN_DTYPE_FLOAT16: case NN_DTYPE_BFLOAT16:
  case NN_DTYPE_INT32: case NN_DTYPE_INT64: case NN_DTYPE_UINT32: case NN_DTYPE_UINT64:
    return true;
  default:
    return false;
  }
}

/* CumSum / CumProd: Y is X's shape and dtype.  The axis is an input; it is
 * usually a constant and then checked here, otherwise at run. */
static nn_status cum_infer(nn_ctx *c, nn_node *n) {
  if (n->n_in < 2 || !n->x[0] || !n->x[1] || n->n_out < 1 || !n->y[0])
    return nn_fail(c, NN_ERR_INVALID_MODEL, "needs inputs x, axis and output y");
  const nn_value *x = n->x[0];
  if (!cum_dtype_ok(x->dtype))
    return nn_fail(c, NN_ERR_UNSUPPORTED, "%s on %s is not supported", n->op_type,
                   nn_dtype_name(x->dtype));
  if (x->rank < 1)
    return nn_fail(c, NN_ERR_SHAPE, "input must have rank >= 1");
  if (n->x[1]->known && n->x[1]->data) {
    int axis;
    nn_status st = nn_cum_axis(c, n, &axis);
    if (st != NN_OK)
      return st;
  } else if (!nn_dtype_is_int(n->x[1]->dtype)) {
    return nn_fail(c, NN_ERR_INVALID_MODEL, "axis must be an integer");
  }
  return nn_set_output(c, n->y[0], x->dtype, x->rank, x->dims);
}

/* The family's operators (ops/registry.c), each with its inference. */
#define RED_OP(NAME, ...)                                                                  \
  {.name = NAME, .versions = {__VA_ARGS__}, .shape_inputs = 1u << 1, .infer = reduce_infer}

const nn_op_def nn_ops_reduce[] = {
  /* ReduceSum took axes as an input at 13, the others at 18; ReduceMax/Min-20
   * only added bool.  Negative axes (11) are accepted everywhere. */
  RED_OP("ReduceSum", 1, 13),
  RED_OP("ReduceMean", 1, 18),
  RED_OP("ReduceMax", 1, 18),
  RED_OP("ReduceMin", 1, 18),
  RED_OP("ReduceProd", 1, 18),
  RED_OP("ReduceL1", 1, 18),
  RED_OP("ReduceL2", 1, 18),
  RED_OP("ReduceLogSum", 1, 18),
  RED_OP("ReduceLogSumExp", 1, 18),
  RED_OP("ReduceSumSquare", 1, 18),
  /* select_last_index (12) defaults to the older behaviour */
  {.name = "ArgMax", .versions = {1}, .infer = arg_infer},
  {.name = "ArgMin", .versions = {1}, .infer = arg_infer},
  /* 1: k attribute; 10: K input; 11: largest/sorted, negative axis */
  {.name = "TopK", .versions = {1, 10, 11}, .shape_inputs = 1u << 1, .infer = topk_infer},
  {.name = "CumSum", .versions = {11}, .infer = cum_infer},
  {.name = "CumProd", .versions = {26}, .infer = cum_infer},
  {0},
};

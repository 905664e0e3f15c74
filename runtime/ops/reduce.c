/* reduce.c - the Reduce* family's axes, ArgMax / ArgMin's axis (reduce.h). */
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

/* The family's operators (ops/registry.c); infer = NULL: the CPU kernel's
 * prepare still infers the shapes. */
#define RED_OP(NAME, ...) {.name = NAME, .versions = {__VA_ARGS__}, .shape_inputs = 1u << 1}

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
  {.name = "ArgMax", .versions = {1}},
  {.name = "ArgMin", .versions = {1}},
  /* 1: k attribute; 10: K input; 11: largest/sorted, negative axis */
  {.name = "TopK", .versions = {1, 10, 11}, .shape_inputs = 1u << 1},
  {.name = "CumSum", .versions = {11}},
  {.name = "CumProd", .versions = {26}},
  {0},
};

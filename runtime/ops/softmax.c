/* softmax.c - Softmax / LogSoftmax / Hardmax (nn_ops_softmax[], collected by
 * ops/registry.c): their geometry (see softmax.h) and their shape and dtype
 * inference. */
#include "ops/softmax.h"

nn_status nn_softmax_geom_init(nn_ctx *c, const nn_node *n, nn_softmax_geom *g) {
  const nn_value *x = n->x[0];
  bool coerce = n->version < 13;
  int64_t axis = nn_attr_int(n, "axis", coerce ? 1 : -1);
  g->outer = g->n = g->inner = 1;
  if (x->rank == 0) {
    if (axis != 0 && axis != -1)
      return nn_fail(c, NN_ERR_INVALID_MODEL, "axis %lld out of range for a scalar",
                     (long long)axis);
    return NN_OK;
  }
  if (coerce && axis == x->rank) {
    g->outer = x->numel;
    return NN_OK;
  }
  int a;
  if (!nn_norm_axis(axis, x->rank, &a))
    return nn_fail(c, NN_ERR_INVALID_MODEL, "axis %lld out of range for rank %d",
                   (long long)axis, x->rank);
  for (int i = 0; i < a; i++)
    g->outer *= x->dims[i];
  for (int i = a; i < x->rank; i++) {
    if (coerce || i == a)
      g->n *= x->dims[i];
    else
      g->inner *= x->dims[i];
  }
  return NN_OK;
}

/* Y is X's shape and dtype, a float type; the axis must be in range. */
static nn_status softmax_infer(nn_ctx *c, nn_node *n) {
  if (n->n_in < 1 || !n->x[0] || n->n_out < 1 || !n->y[0])
    return nn_fail(c, NN_ERR_INVALID_MODEL, "needs input and output");
  const nn_value *x = n->x[0];
  if (!nn_dtype_is_float(x->dtype))
    return nn_fail(c, NN_ERR_UNSUPPORTED, "%s on %s is not supported", n->op_type,
                   nn_dtype_name(x->dtype));
  nn_softmax_geom g;
  nn_status st = nn_softmax_geom_init(c, n, &g);
  if (st != NN_OK)
    return st;
  return nn_set_output(c, n->y[0], x->dtype, x->rank, x->dims);
}

/* The family's operators (ops/registry.c), one inference for the three. */
const nn_op_def nn_ops_softmax[] = {
  /* 1: 2-D coercion at axis (11 only allowed negative axes); 13: one axis */
  {.name = "Softmax", .versions = {1, 13}, .infer = softmax_infer},
  {.name = "LogSoftmax", .versions = {1, 13}, .infer = softmax_infer},
  {.name = "Hardmax", .versions = {1, 13}, .infer = softmax_infer},
  {0},
};

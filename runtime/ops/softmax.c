/* softmax.c - Softmax / LogSoftmax / Hardmax geometry (see softmax.h). */
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

/* The family's operators (ops/registry.c); infer = NULL: the CPU kernel's
 * prepare still infers the shapes. */
const nn_op_def nn_ops_softmax[] = {
  /* 1: 2-D coercion at axis (11 only allowed negative axes); 13: one axis */
  {.name = "Softmax", .versions = {1, 13}},
  {.name = "LogSoftmax", .versions = {1, 13}},
  {.name = "Hardmax", .versions = {1, 13}},
  {0},
};

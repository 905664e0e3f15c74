/* loss.c - the loss family in the op layer: its operators, their versions and
 * their shape and dtype inference (nn_ops_loss[], collected by ops/registry.c),
 * and the attributes of loss.h. */
#include "ops/inputs.h"
#include "ops/loss.h"

nn_status nn_loss_attrs_init(nn_ctx *c, const nn_node *n, nn_loss_attrs *a) {
  static const char *const reductions[] = {"none", "sum", "mean", NULL};
  nn_status st = nn_op_attr_choice(c, n, "reduction", "mean", reductions, &a->reduction);
  if (st != NN_OK)
    return st;
  a->has_ignore = nn_attr_get(n, "ignore_index") != NULL;
  a->ignore = nn_attr_int(n, "ignore_index", 0);
  return NN_OK;
}

/* The loss: per target element (reduction none) or a scalar; the softmax
 * variant's optional second output is the log-probabilities, the input's
 * shape. */
static nn_status loss_infer(nn_ctx *c, nn_node *n, bool softmax) {
  const nn_value *x = n->x[0], *t = n->n_in > 1 ? n->x[1] : NULL;
  const nn_value *w = n->n_in > 2 ? n->x[2] : NULL;
  if (!t)
    return nn_fail(c, NN_ERR_INVALID_MODEL, "target is required");
  if (!nn_dtype_is_float(x->dtype))
    return nn_fail(c, NN_ERR_UNSUPPORTED, "unsupported input type %s", nn_dtype_name(x->dtype));
  if (t->dtype != NN_DTYPE_INT64 && t->dtype != NN_DTYPE_INT32)
    return nn_fail(c, NN_ERR_UNSUPPORTED, "unsupported target type %s", nn_dtype_name(t->dtype));
  if (x->rank < 2)
    return nn_fail(c, NN_ERR_SHAPE, "input must be (N, C, ...), got rank %d", x->rank);
  if (t->rank != x->rank - 1 || t->dims[0] != x->dims[0])
    return nn_fail(c, NN_ERR_SHAPE, "target must be (N, d1, ...) matching the input");
  for (int i = 1; i < t->rank; i++)
    if (t->dims[i] != x->dims[i + 1])
      return nn_fail(c, NN_ERR_SHAPE, "target dim %d (%lld) differs from input dim %d (%lld)", i,
                     (long long)t->dims[i], i + 1, (long long)x->dims[i + 1]);
  if (w && (w->dtype != x->dtype || w->rank != 1 || w->dims[0] != x->dims[1]))
    return nn_fail(c, NN_ERR_SHAPE, "weight must be (C) of the input's type");
  nn_loss_attrs a;
  nn_status st = nn_loss_attrs_init(c, n, &a);
  if (st != NN_OK)
    return st;
  if (a.reduction == NN_LOSS_NONE)
    st = nn_set_output(c, n->y[0], x->dtype, t->rank, t->dims);
  else
    st = nn_set_output(c, n->y[0], x->dtype, 0, NULL);
  if (st == NN_OK && softmax && n->n_out > 1)
    st = nn_set_output(c, n->y[1], x->dtype, x->rank, x->dims);
  return st;
}

static nn_status nll_infer(nn_ctx *c, nn_node *n) { return loss_infer(c, n, false); }
static nn_status sce_infer(nn_ctx *c, nn_node *n) { return loss_infer(c, n, true); }

/* The family's operators (ops/registry.c), each with its shape and dtype
 * inference; cpu/loss.c has the kernels. */
const nn_op_def nn_ops_loss[] = {
  {.name = "NegativeLogLikelihoodLoss", .versions = {12}, .infer = nll_infer},
  {.name = "SoftmaxCrossEntropyLoss", .versions = {12}, .infer = sce_infer},
  {0},
};

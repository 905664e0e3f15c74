/* loss.c - CPU kernels of the training losses that inference graphs keep:
 * NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss (12; the revisions
 * 13 and 22 are type-only and need no entry).
 *
 * Both view the input as (N, C, D) with D the product of the trailing dims and
 * the target as (N, D).  Weighted mean divides by the sum of the weights of
 * the targets that are not ignored, as the ONNX definition does. */
#include "cpu/kernel_util.h"

enum { LOSS_NONE, LOSS_SUM, LOSS_MEAN };

typedef struct loss_params {
  int reduction;
  bool has_ignore;
  int64_t ignore;
  int64_t N, C, D;
} loss_params;

static nn_status loss_prepare(nn_ctx *c, nn_node *n, bool softmax) {
  static const char *const reductions[] = {"none", "sum", "mean", NULL};
  nn_value *x = n->x[0], *t = ku_in(n, 1), *w = ku_in(n, 2);
  if (!t)
    return nn_fail(c, NN_ERR_INVALID_MODEL, "target is required");
  if (!ku_is_real(x->dtype))
    return nn_fail(c, NN_ERR_UNSUPPORTED, "unsupported input type %s", nn_dtype_name(x->dtype));
  if (!ku_is_index(t->dtype))
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
  loss_params p;
  memset(&p, 0, sizeof p);
  nn_status st = ku_attr_choice(c, n, "reduction", "mean", reductions, &p.reduction);
  if (st != NN_OK)
    return st;
  const nn_attr *ii = nn_attr_get(n, "ignore_index");
  p.has_ignore = ii != NULL;
  p.ignore = nn_attr_int(n, "ignore_index", 0);
  p.N = x->dims[0];
  p.C = x->dims[1];
  p.D = nn_dims_numel(x->rank - 2, x->dims + 2);
  if (p.reduction == LOSS_NONE)
    st = nn_set_output(c, n->y[0], x->dtype, t->rank, t->dims);
  else
    st = nn_set_output(c, n->y[0], x->dtype, 0, NULL);
  if (st != NN_OK)
    return st;
  if (softmax && ku_out(n, 1) && (st = nn_set_output(c, n->y[1], x->dtype, x->rank, x->dims)))
    return st;
  loss_params *pp = nn_malloc(sizeof *pp);
  if (!pp)
    return nn_fail(c, NN_ERR_NOMEM, "out of memory");
  *pp = p;
  n->priv = pp;
  return NN_OK;
}

static nn_status loss_run(nn_ctx *c, nn_node *n, bool softmax) {
  const loss_params *p = n->priv;
  nn_value *x = n->x[0], *t = n->x[1], *w = ku_in(n, 2), *y = n->y[0];
  nn_value *lp = softmax ? ku_out(n, 1) : NULL;
  nn_dtype dt = x->dtype;
  double total = 0.0, wsum = 0.0;
  for (int64_t i = 0; i < p->N; i++) {
    for (int64_t d = 0; d < p->D; d++) {
      int64_t base = i * p->C * p->D + d;
      double mx = 0.0, lse = 0.0;
      if (softmax) {
        mx = -INFINITY;
        for (int64_t k = 0; k < p->C; k++) {
          double v = ku_ldd(x->data, dt, base + k * p->D);
          if (v > mx)
            mx = v;
        }
        double s = 0.0;
        for (int64_t k = 0; k < p->C; k++)
          s += exp(ku_ldd(x->data, dt, base + k * p->D) - mx);
        lse = log(s);
        if (lp)
          for (int64_t k = 0; k < p->C; k++)
            ku_std(lp->data, dt, base + k * p->D,
                     ku_ldd(x->data, dt, base + k * p->D) - mx - lse);
      }
      int64_t tgt = nn_value_get_int(t, i * p->D + d);
      double l = 0.0, wt = 0.0;
      if (!(p->has_ignore && tgt == p->ignore)) {
        if (tgt < 0 || tgt >= p->C)
          return nn_fail(c, NN_ERR_RUNTIME, "target %lld outside [0, %lld)", (long long)tgt,
                         (long long)p->C);
        double v = ku_ldd(x->data, dt, base + tgt * p->D);
        if (softmax)
          v = v - mx - lse;
        wt = w ? ku_ldd(w->data, dt, tgt) : 1.0;
        l = -v * wt;
      }
      if (p->reduction == LOSS_NONE)
        ku_std(y->data, dt, i * p->D + d, l);
      total += l;
      wsum += wt;
    }
  }
  if (p->reduction == LOSS_SUM)
    ku_std(y->data, dt, 0, total);
  else if (p->reduction == LOSS_MEAN)
    ku_std(y->data, dt, 0, total / wsum);
  return NN_OK;
}

static nn_status nll_prepare(nn_ctx *c, nn_node *n) { return loss_prepare(c, n, false); }
static nn_status nll_run(nn_ctx *c, nn_node *n) { return loss_run(c, n, false); }
static nn_status sce_prepare(nn_ctx *c, nn_node *n) { return loss_prepare(c, n, true); }
static nn_status sce_run(nn_ctx *c, nn_node *n) { return loss_run(c, n, true); }

const nn_kernel nn_kernels_loss[] = {
  {.name = "NegativeLogLikelihoodLoss", .prepare = nll_prepare, .run = nll_run},
  {.name = "SoftmaxCrossEntropyLoss", .prepare = sce_prepare, .run = sce_run},
  {0},
};

/* loss.c - CPU kernels of the training losses that inference graphs keep:
 * NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss (12; the revisions
 * 13 and 22 are type-only and need no entry).
 *
 * The shapes and attributes are the op layer's (ops/loss.h, ops/loss.c).
 * Weighted mean divides by the sum of the weights of the targets that are
 * not ignored, as the ONNX definition does. */
#include "cpu/kernel_util.h"
#include "ops/loss.h"

typedef struct loss_params {
  nn_loss_attrs a;
  int64_t N, C, D;
} loss_params;

static nn_status loss_prepare(nn_ctx *c, nn_node *n) {
  const nn_value *x = n->x[0];
  loss_params p;
  nn_status st = nn_loss_attrs_init(c, n, &p.a);
  if (st != NN_OK)
    return st;
  p.N = x->dims[0];
  p.C = x->dims[1];
  p.D = nn_dims_numel(x->rank - 2, x->dims + 2);
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
      if (!(p->a.has_ignore && tgt == p->a.ignore)) {
        if (tgt < 0 || tgt >= p->C)
          return nn_fail(c, NN_ERR_RUNTIME, "target %lld outside [0, %lld)", (long long)tgt,
                         (long long)p->C);
        double v = ku_ldd(x->data, dt, base + tgt * p->D);
        if (softmax)
          v = v - mx - lse;
        wt = w ? ku_ldd(w->data, dt, tgt) : 1.0;
        l = -v * wt;
      }
      if (p->a.reduction == NN_LOSS_NONE)
        ku_std(y->data, dt, i * p->D + d, l);
      total += l;
      wsum += wt;
    }
  }
  if (p->a.reduction == NN_LOSS_SUM)
    ku_std(y->data, dt, 0, total);
  else if (p->a.reduction == NN_LOSS_MEAN)
    ku_std(y->data, dt, 0, total / wsum);
  return NN_OK;
}

static nn_status nll_run(nn_ctx *c, nn_node *n) { return loss_run(c, n, false); }
static nn_status sce_run(nn_ctx *c, nn_node *n) { return loss_run(c, n, true); }

const nn_kernel nn_kernels_loss[] = {
  {.name = "NegativeLogLikelihoodLoss", .prepare = loss_prepare, .run = nll_run},
  {.name = "SoftmaxCrossEntropyLoss", .prepare = loss_prepare, .run = sce_run},
  {0},
};

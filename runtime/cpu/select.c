/* select.c - CPU kernels of Unique (11) and NonZero (9/13): ops whose output
 * shape is the data itself.
 *
 * Their input is a shape input, so its value is known at prepare (a graph
 * input is snapshotted and the session re-plans when it changes); the op
 * layer's inference computes the result size (ops/select.h), run recomputes
 * the result into the planned outputs and refuses a size that no longer
 * matches. */
#include "cpu/kernel_util.h"
#include "ops/select.h"

/* ---- Unique -------------------------------------------------------------------- */

typedef struct uniq_priv {
  nn_unique_params p;
  int64_t U;            /* unique slices, planned at prepare */
} uniq_priv;

static nn_status uniq_prepare(nn_ctx *c, nn_node *n) {
  uniq_priv *pp = nn_malloc(sizeof *pp);
  if (!pp)
    return nn_fail(c, NN_ERR_NOMEM, "out of memory");
  n->priv = pp;
  nn_status st = nn_unique_params_init(c, n, &pp->p);
  if (st != NN_OK)
    return st;
  pp->U = n->y[0]->dims[pp->p.axis >= 0 ? pp->p.axis : 0];
  /* infer bounded it: the selection's work arrays */
  n->ws_bytes = (size_t)pp->p.K * 4 * sizeof(int64_t);
  return NN_OK;
}

static nn_status uniq_run(nn_ctx *c, nn_node *n) {
  const uniq_priv *pp = n->priv;
  int64_t U = nn_unique_compute(&pp->p, n->x[0], n->ws, NULL);
  if (U != pp->U)
    return nn_fail(c, NN_ERR_RUNTIME, "%lld unique values but the plan holds %lld: the input "
                   "changed since prepare", (long long)U, (long long)pp->U);
  nn_unique_compute(&pp->p, n->x[0], n->ws, n);
  return NN_OK;
}

/* ---- NonZero ---------------------------------------------------------------------- */

static nn_status nz_run(nn_ctx *c, nn_node *n) {
  nn_value *x = n->x[0], *y = n->y[0];
  int64_t cnt = y->dims[1], rank = y->dims[0], k = 0;
  if (nn_nonzero_count(x) != cnt)
    return nn_fail(c, NN_ERR_RUNTIME, "the input changed since prepare");
  int64_t *out = y->data;
  for (int64_t i = 0; i < x->numel; i++) {
    if (ku_ldd(x->data, x->dtype, i) == 0.0)
      continue;
    int64_t rem = i;
    for (int64_t a = rank - 1; a >= 0; a--) {
      int64_t d = x->rank > 0 ? x->dims[a] : 1;
      out[a * cnt + k] = rem % d;
      rem /= d;
    }
    k++;
  }
  return NN_OK;
}

const nn_kernel nn_kernels_select[] = {
  {.name = "Unique", .prepare = uniq_prepare, .run = uniq_run},
  {.name = "NonZero", .run = nz_run},
  {0},
};

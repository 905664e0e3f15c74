/* nms.c - CPU kernel of NonMaxSuppression (10/11), the box selection of
 * object detectors.
 *
 * The number of selected boxes depends on the data, so every input is a
 * shape input: the planner hands their values to the op layer's inference
 * (a graph input's value is snapshotted and the session re-plans when it
 * changes; a value computed by another node at run time is refused), which
 * runs the selection (ops/nms.h) to size the output; run repeats it into the
 * output and refuses a result whose size no longer matches the plan. */
#include "cpu/ops.h"
#include "ops/nms.h"

typedef struct nms_params {
  int64_t count; /* selected boxes planned at prepare */
} nms_params;

static nn_status nms_prepare(nn_ctx *c, nn_node *n) {
  /* infer checked that the scratch size does not overflow */
  nn_nms_scratch_bytes(n->x[0]->dims[1], &n->ws_bytes);
  nms_params *pp = nn_malloc(sizeof *pp);
  if (!pp)
    return nn_fail(c, NN_ERR_NOMEM, "out of memory");
  pp->count = n->y[0]->dims[0];
  n->priv = pp;
  return NN_OK;
}

static nn_status nms_run(nn_ctx *c, nn_node *n) {
  const nms_params *p = n->priv;
  int64_t S = n->x[0]->dims[1];
  int64_t got = nn_nms_select(n, n->ws, nn_nms_scratch_sel(n->ws, S), n->y[0]->data, p->count);
  if (got != p->count)
    return nn_fail(c, NN_ERR_RUNTIME, "selected %lld boxes but the plan holds %lld: the inputs "
                   "changed since prepare", (long long)got, (long long)p->count);
  return NN_OK;
}

const nn_kernel nn_kernels_nms[] = {
  {.name = "NonMaxSuppression", .prepare = nms_prepare, .run = nms_run},
  {0},
};

/* pool.c - the pool family in the op layer: its operators, their versions and
 * their shape and dtype inference (nn_ops_pool[], collected by ops/registry.c),
 * and LpPool's exponent and MaxUnpool's shapes (pool.h). */
#include <string.h>

#include "ops/pool.h"

/* ---- parameters (pool.h) ------------------------------------------------------ */

nn_status nn_pool_lp_p(nn_ctx *c, const nn_node *n, double *p) {
  const nn_attr *a = nn_attr_get(n, "p");
  *p = 2.0;
  if (a && a->type == NN_ATTR_INT)
    *p = (double)a->i;
  else if (a && a->type == NN_ATTR_FLOAT)
    *p = a->f;
  if (!(*p > 0.0) || *p > 1e6)
    return nn_fail(c, NN_ERR_INVALID_MODEL, "p = %g is invalid", *p);
  return NN_OK;
}

nn_status nn_unpool_params_init(nn_ctx *c, const nn_node *n, nn_unpool_params *p) {
  memset(p, 0, sizeof *p);
  const nn_value *x = n->x[0];
  const nn_value *ix = n->n_in > 1 ? n->x[1] : NULL;
  const nn_value *os = n->n_in > 2 ? n->x[2] : NULL;
  if (!ix)
    return nn_fail(c, NN_ERR_INVALID_MODEL, "needs input I");
  if (ix->dtype != NN_DTYPE_INT64)
    return nn_fail(c, NN_ERR_DTYPE, "I must be int64, is %s", nn_dtype_name(ix->dtype));
  if (ix->rank != x->rank || memcmp(ix->dims, x->dims, sizeof(int64_t) * (size_t)x->rank) != 0)
    return nn_fail(c, NN_ERR_SHAPE, "I must have the shape of X");
  int nsp = x->rank - 2;
  if (nsp < 1)
    return nn_fail(c, NN_ERR_SHAPE, "X needs spatial dimensions");
  int cnt = 0;
  const int64_t *ks = nn_attr_ints(n, "kernel_shape", &cnt);
  if (!ks || cnt != nsp)
    return nn_fail(c, NN_ERR_INVALID_MODEL, "kernel_shape must have %d values", nsp);
  int64_t s[NN_MAX_RANK], pads[2 * NN_MAX_RANK];
  for (int i = 0; i < nsp; i++)
    s[i] = 1;
  memset(pads, 0, sizeof pads);
  nn_status st;
  if ((st = nn_conv_attr_ints(c, n, "strides", nsp, 1, s)) ||
      (st = nn_conv_attr_ints(c, n, "pads", 2 * nsp, 0, pads)))
    return st;
  p->rank = x->rank;
  p->inf[0] = p->out[0] = x->dims[0];
  p->inf[1] = p->out[1] = x->dims[1];
  for (int i = 0; i < nsp; i++) {
    if (ks[i] < 1 || ks[i] > NN_CONV_ATTR_MAX)
      return nn_fail(c, NN_ERR_INVALID_MODEL, "kernel_shape[%d] = %lld is invalid", i,
                     (long long)ks[i]);
    int64_t pb = os ? 0 : pads[i] + pads[nsp + i];
    int64_t v = (x->dims[2 + i] - 1) * s[i] - pb + ks[i];
    if (v < 0)
      return nn_fail(c, NN_ERR_SHAPE, "inferred output size %lld in dimension %d is negative",
                     (long long)v, i);
    p->inf[2 + i] = p->out[2 + i] = v;
  }
  if (os) {
    if (!os->data)
      return nn_fail(c, NN_ERR_UNSUPPORTED, "output_shape must be known at plan time");
    if (os->rank != 1 || os->numel != x->rank || nn_dtype_is_float(os->dtype))
      return nn_fail(c, NN_ERR_SHAPE, "output_shape must be %d integers", x->rank);
    for (int i = 0; i < x->rank; i++) {
      int64_t v = nn_value_get_int(os, i);
      if (v < p->inf[i] || (i < 2 && v != p->inf[i]))
        return nn_fail(c, NN_ERR_SHAPE,
                       "output_shape[%d] = %lld is smaller than the inferred %lld", i,
                       (long long)v, (long long)p->inf[i]);
      p->out[i] = v;
    }
  }
  return NN_OK;
}

/* ---- shape and dtype inference ------------------------------------------------ */

/* X (N, C, ...) and Y present. */
static nn_status pool_check_x(nn_ctx *c, const nn_node *n) {
  if (n->n_in < 1 || !n->x[0] || n->n_out < 1 || !n->y[0])
    return nn_fail(c, NN_ERR_INVALID_MODEL, "needs input X and output Y");
  if (n->x[0]->rank < 2)
    return nn_fail(c, NN_ERR_SHAPE, "input rank %d, needs at least 2 (N, C, ...)",
                   n->x[0]->rank);
  return NN_OK;
}

/* Y = (N, C, out...) of X's type; MaxPool's optional Indices the same
 * shape, int64. */
static nn_status pool_window_infer(nn_ctx *c, nn_node *n, bool is_max, bool is_lp) {
  nn_status st = pool_check_x(c, n);
  nn_pool_params pp;
  double p;
  if (st || (st = nn_pool_params_init(c, n, &pp)) || (is_lp && (st = nn_pool_lp_p(c, n, &p))))
    return st;
  const nn_value *x = n->x[0];
  int64_t dims[NN_MAX_RANK];
  dims[0] = x->dims[0];
  dims[1] = x->dims[1];
  int nsp = x->rank - 2;
  for (int i = 0; i < nsp; i++)
    dims[2 + i] = pp.g.out[NN_CONV_SP - nsp + i];
  if ((st = nn_set_output(c, n->y[0], x->dtype, x->rank, dims)))
    return st;
  if (n->n_out > 1 && n->y[1]) {
    if (!is_max)
      return nn_fail(c, NN_ERR_INVALID_MODEL, "only MaxPool has a second output");
    if ((st = nn_set_output(c, n->y[1], NN_DTYPE_INT64, x->rank, dims)))
      return st;
  }
  return NN_OK;
}

static nn_status pool_avg_infer(nn_ctx *c, nn_node *n) {
  return pool_window_infer(c, n, false, false);
}
static nn_status pool_max_infer(nn_ctx *c, nn_node *n) {
  return pool_window_infer(c, n, true, false);
}
static nn_status pool_lp_infer(nn_ctx *c, nn_node *n) {
  return pool_window_infer(c, n, false, true);
}

/* Global pools: Y = (N, C, 1, ...) of X's type. */
static nn_status pool_global_infer(nn_ctx *c, nn_node *n, bool is_lp) {
  nn_status st = pool_check_x(c, n);
  double p;
  if (st || (is_lp && (st = nn_pool_lp_p(c, n, &p))))
    return st;
  const nn_value *x = n->x[0];
  int64_t dims[NN_MAX_RANK];
  dims[0] = x->dims[0];
  dims[1] = x->dims[1];
  for (int i = 2; i < x->rank; i++)
    dims[i] = 1;
  return nn_set_output(c, n->y[0], x->dtype, x->rank, dims);
}

static nn_status pool_global_am_infer(nn_ctx *c, nn_node *n) {
  return pool_global_infer(c, n, false);
}
static nn_status pool_global_lp_infer(nn_ctx *c, nn_node *n) {
  return pool_global_infer(c, n, true);
}

static nn_status unpool_infer(nn_ctx *c, nn_node *n) {
  nn_status st = pool_check_x(c, n);
  nn_unpool_params p;
  if (st || (st = nn_unpool_params_init(c, n, &p)))
    return st;
  return nn_set_output(c, n->y[0], n->x[0]->dtype, p.rank, p.out);
}

/* The family's operators (ops/registry.c), each with its shape and dtype
 * inference; the kernels' prepare (cpu/pool.c) refuses the types they do
 * not compute and picks their paths. */
const nn_op_def nn_ops_pool[] = {
  {.name = "AveragePool", .versions = {1, 7, 10, 11, 19}, .infer = pool_avg_infer},
  {.name = "MaxPool", .versions = {1, 8, 10, 11, 12}, .infer = pool_max_infer},
  {.name = "LpPool", .versions = {1, 2, 11, 18}, .infer = pool_lp_infer},
  {.name = "GlobalAveragePool", .versions = {1}, .infer = pool_global_am_infer},
  {.name = "GlobalMaxPool", .versions = {1}, .infer = pool_global_am_infer},
  {.name = "GlobalLpPool", .versions = {1, 2}, .infer = pool_global_lp_infer},
  {.name = "MaxUnpool", .versions = {9, 11}, .shape_inputs = 1u << 2, .infer = unpool_infer},
  {0},
};

/* vk_reduce.c - the Reduce* ops on the Vulkan backend: their
 * supports/record and the reduce kernel (shader reduce), which global
 * pooling (vk_pool.c) uses too; ArgMax/ArgMin (shader reduce_arg).  The CPU
 * side is cpu/reduce.c. */
#include "ops/reduce.h"
#include "vk_op_util.h"
#include "vulkan/nn_vk_spirv.h"

/* ---- ops -------------------------------------------------------------------------- */

typedef struct reduce_map {
  const char *name;
  int kind;
} reduce_map;

/* (the axes: ops/reduce.h) */
static const reduce_map k_reduce[] = {
    {"ReduceSum", NN_VK_RED_SUM},          {"ReduceMean", NN_VK_RED_MEAN},
    {"ReduceMax", NN_VK_RED_MAX},          {"ReduceMin", NN_VK_RED_MIN},
    {"ReduceProd", NN_VK_RED_PROD},        {"ReduceL1", NN_VK_RED_L1},
    {"ReduceL2", NN_VK_RED_L2},            {"ReduceLogSum", NN_VK_RED_LOG_SUM},
    {"ReduceLogSumExp", NN_VK_RED_LOG_SUM_EXP}, {"ReduceSumSquare", NN_VK_RED_SUM_SQUARE},
};

/* The reduced axes must form one contiguous run once unit dims are
 * ignored: x is then [outer, r, inner].  *noop: a plain copy. */
static bool reduce_shape(const nn_node *n, int *kind, int64_t *outer, int64_t *r, int64_t *inner,
                         bool *noop) {
  const reduce_map *m = NULL;
  for (size_t i = 0; i < sizeof k_reduce / sizeof k_reduce[0]; i++)
    if (op_is(n, k_reduce[i].name))
      m = &k_reduce[i];
  if (!m)
    return false;
  const nn_value *x = n->x[0];
  int rank = x->rank;
  if (n->n_in > 1 && n->x[1] && !known_value(n->x[1]))
    return false;
  nn_ctx c = {0};
  nn_reduce_axes ra;
  if (nn_reduce_axes_init(&c, n, &ra) != NN_OK)
    return false;
  const bool *red = ra.reduce;
  *noop = ra.noop;
  int first = -1, last = -1;
  for (int i = 0; i < rank; i++) {
    if (!red[i] || x->dims[i] == 1)
      continue;
    if (first < 0)
      first = i;
    last = i;
  }
  for (int i = first; first >= 0 && i <= last; i++)
    if (!red[i] && x->dims[i] != 1)
      return false;
  *kind = m->kind;
  if (first < 0) {
    *outer = x->numel;
    *r = 1;
    *inner = 1;
  } else {
    *outer = prod(x->dims, 0, first);
    *r = prod(x->dims, first, last + 1);
    *inner = prod(x->dims, last + 1, rank);
  }
  return true;
}

static bool reduce_supports(const nn_vk_ctx *ctx, const nn_node *n) {
  int kind;
  int64_t o, rr, i;
  bool noop;
  if (!f32_io(ctx, n, 1) || !reduce_shape(n, &kind, &o, &rr, &i, &noop))
    return false;
  return n->x[0]->numel > 0;
}

static nn_status reduce_record(nn_vk_rec *r, const nn_node *n, nn_error *err) {
  int kind;
  int64_t outer, rr, inner;
  bool noop;
  reduce_shape(n, &kind, &outer, &rr, &inner, &noop);
  nn_vk_tensor tx, ty;
  TRY(in_t(r, n, 0, &tx, err));
  TRY(out_t(r, n, 0, &ty, err));
  if (noop) {
    if (same_view(&tx, &ty))
      return NN_OK;
    tx.size = ty.size = n->y[0]->nbytes;
    return nn_vk_exec_copy(nn_vk_rec_exec(r), &tx, &ty, err);
  }
  return nn_vk_k_reduce(nn_vk_rec_exec(r), kind, outer, rr, inner, &tx, &ty, err);
}

/* ---- ArgMax / ArgMin ------------------------------------------------------------------ */

static bool arg_supports(const nn_vk_ctx *ctx, const nn_node *n) {
  if (n->n_in != 1 || n->n_out != 1 || !typed_ok(ctx, n->x[0]) || !n->y[0] ||
      n->y[0]->dtype != NN_DTYPE_INT64 || !fits(ctx, n->y[0]) || n->x[0]->rank < 1 ||
      n->x[0]->dtype == NN_DTYPE_BOOL)
    return false;
  const nn_value *x = n->x[0];
  nn_ctx c = {0};
  nn_arg_params ap;
  return nn_arg_params_init(&c, n, &ap) == NN_OK &&
         (x->dims[ap.axis] > 0 || n->y[0]->numel == 0);
}

static nn_status arg_record(nn_vk_rec *r, const nn_node *n, nn_error *err) {
  const nn_value *x = n->x[0];
  nn_ctx c = {0};
  nn_arg_params ap;
  nn_arg_params_init(&c, n, &ap); /* checked by arg_supports */
  int axis = ap.axis;
  nn_vk_tensor tx, ty;
  TRY(in_t(r, n, 0, &tx, err));
  TRY(out_t(r, n, 0, &ty, err));
  return nn_vk_k_argminmax(nn_vk_rec_exec(r), vk_et(x->dtype), op_is(n, "ArgMax"), ap.last,
                           prod(x->dims, 0, axis), x->dims[axis], prod(x->dims, axis + 1, x->rank),
                           &tx, &ty, err);
}

/* ---- kernels ---------------------------------------------------------------------- */

nn_status nn_vk_k_reduce(nn_vk_exec *e, int kind, int64_t outer, int64_t r, int64_t inner,
                         const nn_vk_tensor *x, const nn_vk_tensor *y, nn_error *err) {
  if (kind < 0 || kind >= NN_VK_RED_COUNT || outer < 0 || r < 1 || inner < 0)
    return nn_error_set(err, NN_ERR_INVALID_ARG, "vulkan reduce: bad parameters");
  int64_t ny = outer * inner, nx = ny * r;
  if (ny == 0)
    return NN_OK;
  nn_status st;
  if ((st = need(x, (uint64_t)nx, "reduce x", err)) || (st = need(y, (uint64_t)ny, "reduce y", err)))
    return st;
  /* Long rows, or too few outputs to fill the device one per invocation:
   * a workgroup per output. */
  bool wide = r >= 256 || (ny < 1024 && r >= 32);
  nn_vk_dispatch d;
  nn_vk_dispatch_init(&d, NN_VK_SHADER_REDUCE);
  d.n_spec = 3;
  d.spec[0] = local_red(e);
  d.spec[1] = (uint32_t)kind;
  d.spec[2] = wide ? 0 : 1;
  push_u(&d, 0, (uint64_t)outer);
  push_u(&d, 1, (uint64_t)r);
  push_u(&d, 2, (uint64_t)inner);
  push_u(&d, 3, bind_n(e, &d, 0, x, (uint64_t)nx, false));
  push_u(&d, 4, bind_n(e, &d, 1, y, (uint64_t)ny, true));
  push_u(&d, 5, (uint64_t)ny);
  d.groups[0] = wide ? groups_for((uint64_t)ny, 1) : groups_for((uint64_t)ny, local_red(e));
  return nn_vk_exec_dispatch(e, &d, err);
}

nn_status nn_vk_k_argminmax(nn_vk_exec *e, int et, bool is_max, bool last, int64_t outer,
                            int64_t len, int64_t inner, const nn_vk_tensor *x,
                            const nn_vk_tensor *y, nn_error *err) {
  if (et < 0 || et >= NN_VK_ET_COUNT || outer < 0 || len < 0 || inner < 0)
    return nn_error_set(err, NN_ERR_INVALID_ARG, "vulkan argminmax: bad parameters");
  int64_t n = outer * inner;
  if (n == 0)
    return NN_OK;
  if (len < 1)
    return nn_error_set(err, NN_ERR_INVALID_ARG, "vulkan argminmax: empty axis");
  uint64_t es = vk_et_size(et), nx = (uint64_t)(outer * len * inner);
  nn_status st;
  if ((st = need_typed(x, nx, es, "argminmax x", err)) ||
      (st = need_typed(y, (uint64_t)n, 8, "argminmax y", err)))
    return st;
  nn_vk_dispatch d;
  nn_vk_dispatch_init(&d, NN_VK_SHADER_REDUCE_ARG);
  d.n_spec = 4;
  d.spec[0] = local_1d(e);
  d.spec[1] = (uint32_t)et;
  d.spec[2] = is_max ? 1 : 0;
  d.spec[3] = last ? 1 : 0;
  push_u(&d, 0, (uint64_t)n);
  push_u(&d, 1, (uint64_t)len);
  push_u(&d, 2, (uint64_t)inner);
  push_u(&d, 3, bind_bytes(e, &d, 0, x, nx * es, false));
  push_u(&d, 4, bind_bytes(e, &d, 1, y, (uint64_t)n * 8, true));
  d.groups[0] = groups_for((uint64_t)n, local_1d(e));
  return nn_vk_exec_dispatch(e, &d, err);
}

/* ---- the table -------------------------------------------------------------------- */

const nn_vk_op nn_vk_ops_reduce[] = {
    {"ReduceSum", reduce_supports, reduce_record},
    {"ReduceMean", reduce_supports, reduce_record},
    {"ReduceMax", reduce_supports, reduce_record},
    {"ReduceMin", reduce_supports, reduce_record},
    {"ReduceProd", reduce_supports, reduce_record},
    {"ReduceL1", reduce_supports, reduce_record},
    {"ReduceL2", reduce_supports, reduce_record},
    {"ReduceLogSum", reduce_supports, reduce_record},
    {"ReduceLogSumExp", reduce_supports, reduce_record},
    {"ReduceSumSquare", reduce_supports, reduce_record},
    {"ArgMax", arg_supports, arg_record},
    {"ArgMin", arg_supports, arg_record},
    {0},
};

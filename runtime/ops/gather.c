/* gather.c - the gather family in the op layer: its operators, their versions and
 * their shape and dtype inference (nn_ops_gather[], collected by ops/registry.c). */
#include <string.h>

#include "ops/gather.h"
#include "ops/inputs.h"

static nn_status check_index_type(nn_ctx *c, const nn_value *idx) {
  if (idx->dtype != NN_DTYPE_INT64 && idx->dtype != NN_DTYPE_INT32)
    return nn_fail(c, NN_ERR_DTYPE, "indices must be int32 or int64, got %s",
                   nn_dtype_name(idx->dtype));
  return NN_OK;
}

/* ---- Gather ----------------------------------------------------------------- */

static nn_status gather_infer(nn_ctx *c, nn_node *n) {
  nn_value *x = n->x[0], *idx = nn_op_in(n, 1);
  nn_status st = nn_op_held(c, x);
  if (st != NN_OK)
    return st;
  if (!idx)
    return nn_fail(c, NN_ERR_INVALID_MODEL, "indices are missing");
  if ((st = check_index_type(c, idx)) != NN_OK)
    return st;
  int r = x->rank, q = idx->rank, axis;
  if (r < 1)
    return nn_fail(c, NN_ERR_SHAPE, "data must have rank >= 1");
  int64_t a = nn_attr_int(n, "axis", 0);
  if (!nn_norm_axis(a, r, &axis))
    return nn_fail(c, NN_ERR_INVALID_MODEL, "axis %lld is out of range for rank %d", (long long)a, r);
  int ro = r - 1 + q;
  if (ro > NN_MAX_RANK)
    return nn_fail(c, NN_ERR_LIMIT, "output rank %d exceeds %d", ro, NN_MAX_RANK);
  int64_t od[NN_MAX_RANK];
  int k = 0;
  for (int d = 0; d < axis; d++)
    od[k++] = x->dims[d];
  for (int d = 0; d < q; d++)
    od[k++] = idx->dims[d];
  for (int d = axis + 1; d < r; d++)
    od[k++] = x->dims[d];
  return nn_set_output(c, n->y[0], x->dtype, ro, od);
}

/* ---- GatherElements ----------------------------------------------------------- */

static nn_status gel_infer(nn_ctx *c, nn_node *n) {
  nn_value *x = n->x[0], *idx = nn_op_in(n, 1);
  nn_status st = nn_op_held(c, x);
  if (st != NN_OK)
    return st;
  if (!idx)
    return nn_fail(c, NN_ERR_INVALID_MODEL, "indices are missing");
  if ((st = check_index_type(c, idx)) != NN_OK)
    return st;
  int r = x->rank, axis;
  if (r < 1 || idx->rank != r)
    return nn_fail(c, NN_ERR_SHAPE, "indices must have the rank of data (%d), got %d", r, idx->rank);
  int64_t a = nn_attr_int(n, "axis", 0);
  if (!nn_norm_axis(a, r, &axis))
    return nn_fail(c, NN_ERR_INVALID_MODEL, "axis %lld is out of range for rank %d", (long long)a, r);
  for (int d = 0; d < r; d++)
    if (d != axis && idx->dims[d] > x->dims[d])
      return nn_fail(c, NN_ERR_SHAPE, "indices dim %d (%lld) exceeds data dim (%lld)", d,
                     (long long)idx->dims[d], (long long)x->dims[d]);
  return nn_set_output(c, n->y[0], x->dtype, r, idx->dims);
}

/* ---- GatherND -------------------------------------------------------------------- */

static nn_status gnd_infer(nn_ctx *c, nn_node *n) {
  nn_value *x = n->x[0], *idx = nn_op_in(n, 1);
  nn_status st = nn_op_held(c, x);
  if (st != NN_OK)
    return st;
  if (!idx)
    return nn_fail(c, NN_ERR_INVALID_MODEL, "indices are missing");
  if (idx->dtype != NN_DTYPE_INT64 && idx->dtype != NN_DTYPE_INT32)
    return nn_fail(c, NN_ERR_DTYPE, "indices must be int64 or int32");
  int r = x->rank, q = idx->rank;
  int64_t b = n->version >= 12 ? nn_attr_int(n, "batch_dims", 0) : 0;
  if (r < 1 || q < 1)
    return nn_fail(c, NN_ERR_SHAPE, "data and indices must have rank >= 1");
  if (b < 0 || b >= q || b >= r)
    return nn_fail(c, NN_ERR_INVALID_MODEL, "batch_dims %lld is out of range", (long long)b);
  int64_t k = idx->dims[q - 1];
  if (k < 1 || k > r - b)
    return nn_fail(c, NN_ERR_SHAPE, "index tuples of length %lld do not fit data of rank %d",
                   (long long)k, r);
  for (int d = 0; d < b; d++)
    if (idx->dims[d] != x->dims[d])
      return nn_fail(c, NN_ERR_SHAPE, "batch dim %d differs between data and indices", d);
  int ro = q - 1 + r - (int)b - (int)k;
  if (ro > NN_MAX_RANK)
    return nn_fail(c, NN_ERR_LIMIT, "output rank %d exceeds %d", ro, NN_MAX_RANK);
  int64_t od[NN_MAX_RANK];
  int o = 0;
  for (int d = 0; d < q - 1; d++)
    od[o++] = idx->dims[d];
  for (int d = (int)(b + k); d < r; d++)
    od[o++] = x->dims[d];
  return nn_set_output(c, n->y[0], x->dtype, ro, od);
}

/* ---- scatter reductions ------------------------------------------------------------ */

nn_status nn_scatter_reduction(nn_ctx *c, const nn_node *n, int *red) {
  *red = NN_SCATTER_NONE;
  if (n->version < 16)
    return NN_OK;
  const char *s = nn_attr_string(n, "reduction", "none");
  if (strcmp(s, "none") == 0)
    *red = NN_SCATTER_NONE;
  else if (strcmp(s, "add") == 0)
    *red = NN_SCATTER_ADD;
  else if (strcmp(s, "mul") == 0)
    *red = NN_SCATTER_MUL;
  else if (n->version >= 18 && strcmp(s, "max") == 0)
    *red = NN_SCATTER_MAX;
  else if (n->version >= 18 && strcmp(s, "min") == 0)
    *red = NN_SCATTER_MIN;
  else
    return nn_fail(c, NN_ERR_UNSUPPORTED, "reduction '%s' is not supported", s);
  return NN_OK;
}

/* What ScatterElements and ScatterND ask of their inputs alike: data of a
 * dtype the runtime holds, indices of an index type, updates of data's
 * dtype. */
static nn_status scatter_inputs(nn_ctx *c, const nn_value *x, const nn_value *idx,
                                const nn_value *upd) {
  nn_status st = nn_op_held(c, x);
  if (st != NN_OK)
    return st;
  if (!idx || !upd)
    return nn_fail(c, NN_ERR_INVALID_MODEL, "indices and updates are required");
  if ((st = check_index_type(c, idx)) != NN_OK)
    return st;
  if (upd->dtype != x->dtype)
    return nn_fail(c, NN_ERR_DTYPE, "updates are %s, data is %s", nn_dtype_name(upd->dtype),
                   nn_dtype_name(x->dtype));
  return NN_OK;
}

/* ---- ScatterElements / Scatter ----------------------------------------------------- */

static nn_status scel_infer(nn_ctx *c, nn_node *n) {
  nn_value *x = n->x[0], *idx = nn_op_in(n, 1), *upd = nn_op_in(n, 2);
  nn_status st = scatter_inputs(c, x, idx, upd);
  if (st != NN_OK)
    return st;
  int r = x->rank, axis;
  if (r < 1 || idx->rank != r || upd->rank != r)
    return nn_fail(c, NN_ERR_SHAPE, "data, indices and updates must have the same rank");
  for (int d = 0; d < r; d++)
    if (idx->dims[d] != upd->dims[d])
      return nn_fail(c, NN_ERR_SHAPE, "indices and updates differ in shape");
  int64_t a = nn_attr_int(n, "axis", 0);
  if (!nn_norm_axis(a, r, &axis))
    return nn_fail(c, NN_ERR_INVALID_MODEL, "axis %lld is out of range for rank %d", (long long)a, r);
  for (int d = 0; d < r; d++)
    if (d != axis && idx->dims[d] > x->dims[d])
      return nn_fail(c, NN_ERR_SHAPE, "indices dim %d (%lld) exceeds data dim (%lld)", d,
                     (long long)idx->dims[d], (long long)x->dims[d]);
  int red;
  if ((st = nn_scatter_reduction(c, n, &red)) != NN_OK)
    return st;
  return nn_set_output(c, n->y[0], x->dtype, r, x->dims);
}

/* ---- ScatterND ------------------------------------------------------------------------ */

static nn_status snd_infer(nn_ctx *c, nn_node *n) {
  nn_value *x = n->x[0], *idx = nn_op_in(n, 1), *upd = nn_op_in(n, 2);
  nn_status st = scatter_inputs(c, x, idx, upd);
  if (st != NN_OK)
    return st;
  int r = x->rank, q = idx->rank;
  if (r < 1 || q < 1)
    return nn_fail(c, NN_ERR_SHAPE, "data and indices must have rank >= 1");
  int64_t k = idx->dims[q - 1];
  if (k < 1 || k > r)
    return nn_fail(c, NN_ERR_SHAPE, "index tuples of length %lld do not fit data of rank %d",
                   (long long)k, r);
  /* updates: indices.shape[:-1] + data.shape[k:] */
  int ur = q - 1 + r - (int)k;
  bool ok = upd->rank == ur;
  for (int d = 0; ok && d < q - 1; d++)
    ok = upd->dims[d] == idx->dims[d];
  for (int d = (int)k; ok && d < r; d++)
    ok = upd->dims[q - 1 + d - k] == x->dims[d];
  if (!ok)
    return nn_fail(c, NN_ERR_SHAPE, "updates shape does not match indices and data");
  int red;
  if ((st = nn_scatter_reduction(c, n, &red)) != NN_OK)
    return st;
  return nn_set_output(c, n->y[0], x->dtype, r, x->dims);
}

/* ---- OneHot ------------------------------------------------------------------------------ */

static nn_status onehot_infer(nn_ctx *c, nn_node *n) {
  nn_value *idx = n->x[0], *dv = nn_op_in(n, 1), *vals = nn_op_in(n, 2);
  if (!dv || !vals)
    return nn_fail(c, NN_ERR_INVALID_MODEL, "depth and values are required");
  if (!dv->data)
    return nn_fail(c, NN_ERR_UNSUPPORTED, "input 'depth' must be known when the model is prepared");
  if (dv->numel != 1)
    return nn_fail(c, NN_ERR_SHAPE, "depth must hold one value");
  if (vals->numel != 2)
    return nn_fail(c, NN_ERR_SHAPE, "values must hold two elements [off, on]");
  if (!nn_dtype_is_int(idx->dtype) && !nn_dtype_is_float(idx->dtype))
    return nn_fail(c, NN_ERR_DTYPE, "indices of type %s are not supported", nn_dtype_name(idx->dtype));
  nn_status st = nn_op_held(c, vals);
  if (st != NN_OK)
    return st;
  double dd = nn_value_get_double(dv, 0);
  if (!(dd >= 1) || dd > 9.0e18)
    return nn_fail(c, NN_ERR_INVALID_MODEL, "depth %g must be a positive count", dd);
  int64_t depth = (int64_t)dd;
  int q = idx->rank, axis;
  if (q + 1 > NN_MAX_RANK)
    return nn_fail(c, NN_ERR_LIMIT, "output rank %d exceeds %d", q + 1, NN_MAX_RANK);
  int64_t a = nn_attr_int(n, "axis", -1);
  if (!nn_norm_axis(a, q + 1, &axis))
    return nn_fail(c, NN_ERR_INVALID_MODEL, "axis %lld is out of range for rank %d", (long long)a, q + 1);
  /* the output is indices' shape with depth inserted at axis */
  int64_t od[NN_MAX_RANK];
  for (int d = 0, k = 0; d < q + 1; d++)
    od[d] = d == axis ? depth : idx->dims[k++];
  return nn_set_output(c, n->y[0], vals->dtype, q + 1, od);
}

/* ---- TensorScatter (24): present = past with update written at
 * write_indices[b] + s along `axis` (default -2) of every batch b, in mode
 * linear (the window must fit: an index past the end is an error) or
 * circular (positions wrap modulo the cache length).  write_indices is
 * optional (zeros) and must be [batch] with 0 <= index < cache length. */
static nn_status tsc_infer(nn_ctx *c, nn_node *n) {
  if (n->n_in < 2 || n->n_in > 3 || !n->x[0] || !n->x[1] || n->n_out != 1 || !n->y[0])
    return nn_fail(c, NN_ERR_INVALID_MODEL, "expects past_cache, update [, write_indices] and one "
                   "output");
  const nn_value *past = n->x[0], *upd = n->x[1], *wi = n->n_in > 2 ? n->x[2] : NULL;
  if (upd->dtype != past->dtype)
    return nn_fail(c, NN_ERR_DTYPE, "update is %s, past_cache %s", nn_dtype_name(upd->dtype),
                   nn_dtype_name(past->dtype));
  nn_status st = nn_op_held(c, past);
  if (st != NN_OK)
    return st;
  int r = past->rank, ax;
  if (r < 2 || upd->rank != r)
    return nn_fail(c, NN_ERR_SHAPE, "past_cache and update must have the same rank >= 2");
  if (!nn_norm_axis(nn_attr_int(n, "axis", -2), r, &ax) || ax == 0)
    return nn_fail(c, NN_ERR_INVALID_MODEL, "axis must be in [1, %d) or negative, not the batch "
                   "axis", r);
  for (int i = 0; i < r; i++)
    if (i != ax && upd->dims[i] != past->dims[i])
      return nn_fail(c, NN_ERR_SHAPE, "update dim %d is %lld, past_cache's %lld", i,
                     (long long)upd->dims[i], (long long)past->dims[i]);
  if (upd->dims[ax] > past->dims[ax])
    return nn_fail(c, NN_ERR_SHAPE, "update has %lld positions on axis %d, the cache %lld",
                   (long long)upd->dims[ax], ax, (long long)past->dims[ax]);
  if (wi && (!(wi->dtype == NN_DTYPE_INT64 || wi->dtype == NN_DTYPE_INT32) || wi->rank != 1 ||
             wi->dims[0] != past->dims[0]))
    return nn_fail(c, NN_ERR_SHAPE, "write_indices must be int32/int64 of shape [%lld]",
                   (long long)past->dims[0]);
  const char *mode = nn_attr_string(n, "mode", "linear");
  if (strcmp(mode, "linear") != 0 && strcmp(mode, "circular") != 0)
    return nn_fail(c, NN_ERR_UNSUPPORTED, "mode '%s' (expected linear or circular)", mode);
  return nn_set_output(c, n->y[0], past->dtype, r, past->dims);
}

/* The family's operators (ops/registry.c), each with its shape and dtype
 * inference; indices are checked against their axis by the kernels, when
 * their values are there. */
const nn_op_def nn_ops_gather[] = {
  {.name = "Gather", .versions = {1, 11}, .infer = gather_infer},
  {.name = "GatherElements", .versions = {11}, .infer = gel_infer},
  {.name = "GatherND", .versions = {11, 12}, .infer = gnd_infer},
  {.name = "ScatterElements", .versions = {11, 16, 18}, .infer = scel_infer},
  {.name = "Scatter", .versions = {9}, .infer = scel_infer},
  {.name = "ScatterND", .versions = {11, 16, 18}, .infer = snd_infer},
  {.name = "OneHot", .versions = {9, 11}, .shape_inputs = 1u << 1, .infer = onehot_infer},
  {.name = "TensorScatter", .versions = {24}, .infer = tsc_infer},
  {0},
};

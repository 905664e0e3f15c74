/* norm.c - the normalizations (nn_ops_norm[], collected by ops/registry.c):
 * their attributes (norm.h) and their shape and dtype inference. */
#include <math.h>
#include <string.h>

#include "ops/norm.h"

nn_status nn_norm_epsilon(nn_ctx *c, const nn_node *n, double *eps) {
  *eps = nn_attr_float(n, "epsilon", 1e-5f);
  if (!(*eps >= 0.0) || isinf(*eps))
    return nn_fail(c, NN_ERR_INVALID_MODEL, "epsilon %g is invalid", *eps);
  return NN_OK;
}

nn_status nn_bn_params_init(nn_ctx *c, const nn_node *n, nn_bn_params *p) {
  memset(p, 0, sizeof *p);
  nn_status st = nn_norm_epsilon(c, n, &p->eps);
  if (st != NN_OK)
    return st;
  p->momentum = nn_attr_float(n, "momentum", 0.9f);
  p->per_element = n->version < 9 && nn_attr_int(n, "spatial", 1) == 0;
  if (n->version >= 14) {
    int64_t tm = nn_attr_int(n, "training_mode", 0);
    if (tm != 0 && tm != 1)
      return nn_fail(c, NN_ERR_UNSUPPORTED, "training_mode = %lld is not supported", (long long)tm);
    p->training = tm == 1;
  } else if (n->version < 7) {
    p->not_test = nn_attr_int(n, "is_test", 0) == 0;
  }
  return NN_OK;
}

nn_status nn_lrn_params_init(nn_ctx *c, const nn_node *n, nn_lrn_params *p) {
  p->size = nn_attr_int(n, "size", 0);
  if (p->size < 1 || p->size > (1 << 20))
    return nn_fail(c, NN_ERR_INVALID_MODEL, "size %lld is invalid", (long long)p->size);
  p->alpha = nn_attr_float(n, "alpha", 1e-4f);
  p->beta = nn_attr_float(n, "beta", 0.75f);
  p->bias = nn_attr_float(n, "bias", 1.0f);
  if (!isfinite(p->alpha) || !isfinite(p->beta) || !isfinite(p->bias))
    return nn_fail(c, NN_ERR_INVALID_MODEL, "alpha, beta and bias must be finite");
  p->lo = (p->size - 1) / 2;
  p->hi = p->size / 2; /* ceil((size - 1) / 2) */
  return NN_OK;
}

nn_status nn_rownorm_axis(nn_ctx *c, const nn_node *n, int rank, int *axis) {
  int64_t a = nn_attr_int(n, "axis", -1);
  if (!nn_norm_axis(a, rank, axis))
    return nn_fail(c, NN_ERR_INVALID_MODEL, "axis %lld is out of range for rank %d", (long long)a,
                   rank);
  return NN_OK;
}

nn_status nn_norm_stash_type(nn_ctx *c, const nn_node *n, nn_dtype *dt) {
  int64_t s = nn_attr_int(n, "stash_type", 1);
  if (s != NN_DTYPE_FLOAT && s != NN_DTYPE_DOUBLE && s != NN_DTYPE_FLOAT16 &&
      s != NN_DTYPE_BFLOAT16)
    return nn_fail(c, NN_ERR_UNSUPPORTED, "stash_type %lld is not supported", (long long)s);
  *dt = (nn_dtype)s;
  return NN_OK;
}

nn_status nn_groupnorm_params_init(nn_ctx *c, const nn_node *n, int64_t C,
                                   nn_groupnorm_params *p) {
  p->groups = nn_attr_int(n, "num_groups", 0);
  if (p->groups < 1)
    return nn_fail(c, NN_ERR_INVALID_MODEL, "num_groups %lld is invalid", (long long)p->groups);
  if (C % p->groups != 0)
    return nn_fail(c, NN_ERR_SHAPE, "num_groups %lld does not divide %lld channels",
                   (long long)p->groups, (long long)C);
  p->per_group = n->version < 21;
  return NN_OK;
}

nn_status nn_lpnorm_params_init(nn_ctx *c, const nn_node *n, int rank, nn_lpnorm_params *p) {
  if (!nn_norm_axis(nn_attr_int(n, "axis", -1), rank, &p->axis))
    return nn_fail(c, NN_ERR_INVALID_MODEL, "axis is out of range for rank %d", rank);
  int64_t pv = nn_attr_int(n, "p", 2);
  if (pv != 1 && pv != 2)
    return nn_fail(c, NN_ERR_UNSUPPORTED, "p = %lld is not supported (1 or 2)", (long long)pv);
  p->p = (int)pv;
  return NN_OK;
}

nn_status nn_mvn_axes(nn_ctx *c, const nn_node *n, int rank, bool reduced[NN_MAX_RANK]) {
  for (int i = 0; i < NN_MAX_RANK; i++)
    reduced[i] = false;
  int cnt = 0;
  const int64_t *axes = nn_attr_ints(n, "axes", &cnt);
  static const int64_t def_axes[] = {0, 2, 3};
  if (!axes) {
    axes = def_axes;
    cnt = 3;
  }
  for (int i = 0; i < cnt; i++) {
    int a;
    if (!nn_norm_axis(axes[i], rank, &a))
      return nn_fail(c, NN_ERR_INVALID_MODEL, "axis %lld is out of range for rank %d",
                     (long long)axes[i], rank);
    reduced[a] = true;
  }
  return NN_OK;
}

/* ---- shape and dtype inference ----------------------------------------------
 * Every normalization gives Y of X's shape and dtype, a float type; the
 * checks are on the parameters' presence, dtypes and sizes. */

static bool norm_is_real(nn_dtype dt) {
  return dt == NN_DTYPE_FLOAT || dt == NN_DTYPE_DOUBLE || dt == NN_DTYPE_FLOAT16 ||
         dt == NN_DTYPE_BFLOAT16;
}

static nn_status norm_check_x(nn_ctx *c, const nn_node *n, int min_rank) {
  if (n->n_in < 1 || !n->x[0] || n->n_out < 1 || !n->y[0])
    return nn_fail(c, NN_ERR_INVALID_MODEL, "needs input X and output Y");
  const nn_value *x = n->x[0];
  if (!norm_is_real(x->dtype))
    return nn_fail(c, NN_ERR_UNSUPPORTED, "input type %s is not supported",
                   nn_dtype_name(x->dtype));
  if (x->rank < min_rank)
    return nn_fail(c, NN_ERR_SHAPE, "input rank %d, needs at least %d", x->rank, min_rank);
  return NN_OK;
}

/* Input i must be present (unless optional), real-typed, with `count` elements. */
static nn_status norm_check_param(nn_ctx *c, const nn_node *n, int i, const char *name,
                                  int64_t count, bool optional) {
  const nn_value *v = i < n->n_in ? n->x[i] : NULL;
  if (!v) {
    if (optional)
      return NN_OK;
    return nn_fail(c, NN_ERR_INVALID_MODEL, "input %s is missing", name);
  }
  if (!norm_is_real(v->dtype))
    return nn_fail(c, NN_ERR_UNSUPPORTED, "%s type %s is not supported", name,
                   nn_dtype_name(v->dtype));
  if (v->numel != count)
    return nn_fail(c, NN_ERR_SHAPE, "%s has %lld elements, expected %lld", name,
                   (long long)v->numel, (long long)count);
  return NN_OK;
}

/* Y is X's shape and dtype. */
static nn_status norm_set_y(nn_ctx *c, nn_node *n) {
  const nn_value *x = n->x[0];
  return nn_set_output(c, n->y[0], x->dtype, x->rank, x->dims);
}

/* BatchNormalization: scale, B, mean and var have one element per channel
 * (per element of [C, D1, ...] with spatial = 0 before opset 9); with
 * training_mode (opset 14+) the running statistics are outputs 1 and 2, of
 * the shapes of input_mean and input_var. */
static nn_status bn_infer(nn_ctx *c, nn_node *n) {
  nn_status st = norm_check_x(c, n, 2);
  if (st)
    return st;
  const nn_value *x = n->x[0];
  nn_bn_params bp;
  if ((st = nn_bn_params_init(c, n, &bp)))
    return st;
  int64_t C = x->dims[1];
  if (bp.per_element)
    for (int i = 2; i < x->rank; i++)
      C *= x->dims[i];
  static const char *const names[] = {"scale", "B", "input_mean", "input_var"};
  for (int i = 1; i <= 4; i++)
    if ((st = norm_check_param(c, n, i, names[i - 1], C, false)))
      return st;
  if (n->version < 14)
    for (int i = 1; i < n->n_out; i++)
      if (n->y[i])
        return nn_fail(c, NN_ERR_UNSUPPORTED,
                       "training outputs before opset 14 are not supported");
  if ((st = norm_set_y(c, n)))
    return st;
  for (int i = 1; i < n->n_out && i < 3; i++) {
    if (!n->y[i])
      continue;
    if (!bp.training)
      return nn_fail(c, NN_ERR_INVALID_MODEL, "outputs running_mean/var need training_mode = 1");
    const nn_value *src = n->x[2 + i];   /* input_mean / input_var */
    if ((st = nn_set_output(c, n->y[i], src->dtype, src->rank, src->dims)))
      return st;
  }
  for (int i = 3; i < n->n_out; i++)
    if (n->y[i])
      return nn_fail(c, NN_ERR_UNSUPPORTED, "output %d is not supported", i);
  return NN_OK;
}

/* InstanceNormalization: scale and B per channel. */
static nn_status instnorm_infer(nn_ctx *c, nn_node *n) {
  nn_status st = norm_check_x(c, n, 2);
  if (st)
    return st;
  const int64_t C = n->x[0]->dims[1];
  double eps;
  if ((st = nn_norm_epsilon(c, n, &eps)) || (st = norm_check_param(c, n, 1, "scale", C, false)) ||
      (st = norm_check_param(c, n, 2, "B", C, false)))
    return st;
  return norm_set_y(c, n);
}

/* GroupNormalization: scale and bias per group (opsets < 21) or channel. */
static nn_status groupnorm_infer(nn_ctx *c, nn_node *n) {
  nn_status st = norm_check_x(c, n, 2);
  if (st)
    return st;
  const int64_t C = n->x[0]->dims[1];
  nn_groupnorm_params gp;
  if ((st = nn_groupnorm_params_init(c, n, C, &gp)))
    return st;
  double eps;
  nn_dtype stash;
  int64_t pc = gp.per_group ? gp.groups : C;
  if ((st = nn_norm_epsilon(c, n, &eps)) || (st = nn_norm_stash_type(c, n, &stash)) ||
      (st = norm_check_param(c, n, 1, "scale", pc, false)) ||
      (st = norm_check_param(c, n, 2, "bias", pc, false)))
    return st;
  return norm_set_y(c, n);
}

/* Scale / bias of Layer and RMS normalization: unidirectionally broadcast to
 * the normalized shape ndims (rank nrank). */
static nn_status rownorm_check_bcast(nn_ctx *c, const nn_node *n, int i, const char *name,
                                     int nrank, const int64_t *ndims) {
  const nn_value *v = i < n->n_in ? n->x[i] : NULL;
  if (!v)
    return NN_OK;
  if (!norm_is_real(v->dtype))
    return nn_fail(c, NN_ERR_UNSUPPORTED, "%s type %s is not supported", name,
                   nn_dtype_name(v->dtype));
  /* leading 1s beyond the normalized rank carry no information */
  int r = v->rank, lead = 0;
  while (r - lead > nrank && v->dims[lead] == 1)
    lead++;
  r -= lead;
  const int64_t *dims = v->dims + lead;
  if (r > nrank)
    return nn_fail(c, NN_ERR_SHAPE, "%s has rank %d, the normalized shape has rank %d", name,
                   v->rank, nrank);
  for (int d = 0; d < r; d++) {
    int64_t want = ndims[nrank - r + d];
    if (dims[d] != want && dims[d] != 1)
      return nn_fail(c, NN_ERR_SHAPE, "%s does not broadcast to the normalized shape", name);
  }
  return NN_OK;
}

/* LayerNormalization (layer) and RMSNormalization: statistics over the dims
 * from `axis` on; LayerNormalization may also return the mean and the
 * inverse standard deviation, of stash_type, with 1s from the axis on. */
static nn_status rownorm_axis_infer(nn_ctx *c, nn_node *n, bool layer) {
  nn_status st = norm_check_x(c, n, 1);
  if (st)
    return st;
  const nn_value *x = n->x[0];
  int axis;
  if ((st = nn_rownorm_axis(c, n, x->rank, &axis)))
    return st;
  double eps;
  nn_dtype stash;
  if ((st = nn_norm_epsilon(c, n, &eps)) || (st = nn_norm_stash_type(c, n, &stash)))
    return st;
  if (n->n_in < 2 || !n->x[1])
    return nn_fail(c, NN_ERR_INVALID_MODEL, "input Scale is missing");
  const int nrank = x->rank - axis;
  const int64_t *ndims = x->dims + axis;
  if ((st = rownorm_check_bcast(c, n, 1, "Scale", nrank, ndims)))
    return st;
  if (layer && (st = rownorm_check_bcast(c, n, 2, "B", nrank, ndims)))
    return st;
  if ((st = norm_set_y(c, n)))
    return st;
  if (layer) {
    int64_t sdims[NN_MAX_RANK];
    for (int i = 0; i < x->rank; i++)
      sdims[i] = i < axis ? x->dims[i] : 1;
    for (int i = 1; i < n->n_out && i < 3; i++)
      if (n->y[i] && (st = nn_set_output(c, n->y[i], stash, x->rank, sdims)))
        return st;
  }
  for (int i = layer ? 3 : 1; i < n->n_out; i++)
    if (n->y[i])
      return nn_fail(c, NN_ERR_INVALID_MODEL, "unexpected output %d", i);
  return NN_OK;
}

static nn_status layernorm_infer(nn_ctx *c, nn_node *n) {
  return rownorm_axis_infer(c, n, true);
}

static nn_status rmsnorm_infer(nn_ctx *c, nn_node *n) {
  return rownorm_axis_infer(c, n, false);
}

static nn_status lpnorm_infer(nn_ctx *c, nn_node *n) {
  nn_status st = norm_check_x(c, n, 1);
  if (st)
    return st;
  nn_lpnorm_params lp;
  if ((st = nn_lpnorm_params_init(c, n, n->x[0]->rank, &lp)))
    return st;
  return norm_set_y(c, n);
}

static nn_status mvn_infer(nn_ctx *c, nn_node *n) {
  nn_status st = norm_check_x(c, n, 1);
  if (st)
    return st;
  bool reduced[NN_MAX_RANK];
  if ((st = nn_mvn_axes(c, n, n->x[0]->rank, reduced)))
    return st;
  return norm_set_y(c, n);
}

/* LRN: across the channels of an [N, C, ...] input. */
static nn_status lrn_infer(nn_ctx *c, nn_node *n) {
  nn_status st = norm_check_x(c, n, 2);
  if (st)
    return st;
  nn_lrn_params lp;
  if ((st = nn_lrn_params_init(c, n, &lp)))
    return st;
  return norm_set_y(c, n);
}

/* The family's operators (ops/registry.c), each with its inference. */
const nn_op_def nn_ops_norm[] = {
  {.name = "BatchNormalization", .versions = {1, 6, 7, 9, 14, 15}, .flags = NN_OP_ELEMENTWISE,
   .infer = bn_infer},
  {.name = "InstanceNormalization", .versions = {1, 6}, .flags = NN_OP_ELEMENTWISE,
   .infer = instnorm_infer},
  {.name = "LayerNormalization", .versions = {17}, .flags = NN_OP_ELEMENTWISE,
   .infer = layernorm_infer},
  {.name = "GroupNormalization", .versions = {18, 21}, .flags = NN_OP_ELEMENTWISE,
   .infer = groupnorm_infer},
  {.name = "RMSNormalization", .versions = {23}, .flags = NN_OP_ELEMENTWISE,
   .infer = rmsnorm_infer},
  {.name = "LRN", .versions = {1, 13}, .infer = lrn_infer},
  {.name = "LpNormalization", .versions = {1}, .flags = NN_OP_ELEMENTWISE,
   .infer = lpnorm_infer},
  {.name = "MeanVarianceNormalization", .versions = {9, 13}, .flags = NN_OP_ELEMENTWISE,
   .infer = mvn_infer},
  {0},
};

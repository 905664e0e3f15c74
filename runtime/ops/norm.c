/* norm.c - the normalizations' attributes (norm.h). */
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

/* The family's operators (ops/registry.c); infer = NULL: the CPU kernel's
 * prepare still infers the shapes. */
const nn_op_def nn_ops_norm[] = {
  {.name = "BatchNormalization", .versions = {1, 6, 7, 9, 14, 15}, .flags = NN_OP_ELEMENTWISE},
  {.name = "InstanceNormalization", .versions = {1, 6}, .flags = NN_OP_ELEMENTWISE},
  {.name = "LayerNormalization", .versions = {17}, .flags = NN_OP_ELEMENTWISE},
  {.name = "GroupNormalization", .versions = {18, 21}, .flags = NN_OP_ELEMENTWISE},
  {.name = "RMSNormalization", .versions = {23}, .flags = NN_OP_ELEMENTWISE},
  {.name = "LRN", .versions = {1, 13}},
  {.name = "LpNormalization", .versions = {1}, .flags = NN_OP_ELEMENTWISE},
  {.name = "MeanVarianceNormalization", .versions = {9, 13}, .flags = NN_OP_ELEMENTWISE},
  {0},
};

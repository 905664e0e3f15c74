/* vk_norm.c - normalizations on the Vulkan backend: inference
 * BatchNormalization as a per-channel affine (shader affine) and LRN
 * (shader lrn).  The CPU side is cpu/norm.c. */
#include <math.h>

#include "vk_op_util.h"
#include "vulkan/nn_vk_spirv.h"

/* ---- ops -------------------------------------------------------------------------- */

static bool bn_supports(const nn_vk_ctx *ctx, const nn_node *n) {
  if (n->n_in < 5 || !f32_io(ctx, n, 1) || n->x[0]->rank < 2)
    return false;
  if (nn_attr_int(n, "training_mode", 0) != 0 || (n->version < 7 && nn_attr_int(n, "is_test", 0) == 0))
    return false;
  for (int k = 1; k < 5; k++)
    if (!known_value(n->x[k]) || !is_f32(n->x[k]) || n->x[k]->numel != n->x[0]->dims[1])
      return false;
  return true;
}

static nn_status bn_record(nn_vk_rec *r, const nn_node *n, nn_error *err) {
  const nn_value *x = n->x[0];
  int64_t C = x->dims[1];
  float eps = nn_attr_float(n, "epsilon", 1e-5f);
  const float *sc = n->x[1]->data, *b = n->x[2]->data, *mean = n->x[3]->data, *var = n->x[4]->data;
  /* y = (x - mean) / sqrt(var + eps) * scale + B = x * s + (B - mean * s) */
  float *sb = nn_malloc((size_t)C * 2 * sizeof *sb);
  if (!sb)
    return nn_error_set(err, NN_ERR_NOMEM, "out of memory");
  for (int64_t c = 0; c < C; c++) {
    float s = sc[c] / sqrtf(var[c] + eps);
    sb[c] = s;
    sb[C + c] = b[c] - mean[c] * s;
  }
  nn_vk_tensor tsb, tx, ty;
  nn_status st = nn_vk_rec_const(r, sb, (size_t)C * 2 * sizeof *sb, &tsb, err);
  nn_free(sb);
  if (st != NN_OK)
    return st;
  nn_vk_tensor ts = {tsb.buffer, tsb.offset, (VkDeviceSize)C * 4};
  nn_vk_tensor tb = {tsb.buffer, tsb.offset + (VkDeviceSize)C * 4, (VkDeviceSize)C * 4};
  TRY(in_t(r, n, 0, &tx, err));
  TRY(out_t(r, n, 0, &ty, err));
  nn_vk_act act;
  nn_vk_fused_act(n, &act);
  return nn_vk_k_affine(nn_vk_rec_exec(r), x->dims[0], C, prod(x->dims, 2, x->rank), act, &tx, &ts,
                        &tb, &ty, err);
}

static bool lrn_supports(const nn_vk_ctx *ctx, const nn_node *n) {
  return f32_io(ctx, n, 1) && n->x[0]->rank >= 2 && nn_attr_int(n, "size", 0) >= 1;
}

static nn_status lrn_record(nn_vk_rec *r, const nn_node *n, nn_error *err) {
  const nn_value *x = n->x[0];
  nn_vk_tensor tx, ty;
  TRY(in_t(r, n, 0, &tx, err));
  TRY(out_t(r, n, 0, &ty, err));
  return nn_vk_k_lrn(nn_vk_rec_exec(r), x->dims[0], x->dims[1], prod(x->dims, 2, x->rank),
                     (int)nn_attr_int(n, "size", 1), nn_attr_float(n, "alpha", 1e-4f),
                     nn_attr_float(n, "beta", 0.75f), nn_attr_float(n, "bias", 1.0f), &tx, &ty, err);
}

/* ---- kernels ---------------------------------------------------------------------- */

nn_status nn_vk_k_affine(nn_vk_exec *e, int64_t outer, int64_t C, int64_t inner, nn_vk_act act,
                         const nn_vk_tensor *x, const nn_vk_tensor *scale,
                         const nn_vk_tensor *bias, const nn_vk_tensor *y, nn_error *err) {
  if (outer < 0 || C < 1 || inner < 0)
    return nn_error_set(err, NN_ERR_INVALID_ARG, "vulkan affine: bad parameters");
  int64_t n = outer * C * inner;
  if (n == 0)
    return NN_OK;
  nn_status st;
  if ((st = need(x, (uint64_t)n, "affine x", err)) || (st = need(y, (uint64_t)n, "affine y", err)) ||
      (st = need(scale, (uint64_t)C, "affine scale", err)) ||
      (st = need(bias, (uint64_t)C, "affine bias", err)))
    return st;
  nn_vk_dispatch d;
  nn_vk_dispatch_init(&d, NN_VK_SHADER_NORM_AFFINE);
  d.n_spec = 2;
  d.spec[0] = local_1d(e);
  d.spec[1] = (uint32_t)act.kind;
  push_u(&d, 0, (uint64_t)n);
  push_u(&d, 1, (uint64_t)C);
  push_u(&d, 2, (uint64_t)inner);
  push_u(&d, 3, bind_n(e, &d, 0, x, (uint64_t)n, false));
  push_u(&d, 4, bind_n(e, &d, 1, scale, (uint64_t)C, false));
  push_u(&d, 5, bind_n(e, &d, 2, bias, (uint64_t)C, false));
  push_u(&d, 6, bind_n(e, &d, 3, y, (uint64_t)n, true));
  push_f(&d, 7, act.a);
  push_f(&d, 8, act.b);
  d.groups[0] = groups_for((uint64_t)n, local_1d(e));
  return nn_vk_exec_dispatch(e, &d, err);
}

nn_status nn_vk_k_lrn(nn_vk_exec *e, int64_t N, int64_t C, int64_t inner, int size, float alpha,
                      float beta, float bias, const nn_vk_tensor *x, const nn_vk_tensor *y,
                      nn_error *err) {
  if (N < 0 || C < 1 || inner < 0 || size < 1)
    return nn_error_set(err, NN_ERR_INVALID_ARG, "vulkan lrn: bad parameters");
  int64_t n = N * C * inner;
  if (n == 0)
    return NN_OK;
  nn_status st;
  if ((st = need(x, (uint64_t)n, "lrn x", err)) || (st = need(y, (uint64_t)n, "lrn y", err)))
    return st;
  nn_vk_dispatch d;
  nn_vk_dispatch_init(&d, NN_VK_SHADER_NORM_LRN);
  d.n_spec = 1;
  d.spec[0] = local_1d(e);
  push_u(&d, 0, (uint64_t)n);
  push_u(&d, 1, (uint64_t)C);
  push_u(&d, 2, (uint64_t)inner);
  push_u(&d, 3, (uint64_t)size);
  push_f(&d, 4, alpha);
  push_f(&d, 5, beta);
  push_f(&d, 6, bias);
  push_u(&d, 7, bind_n(e, &d, 0, x, (uint64_t)n, false));
  push_u(&d, 8, bind_n(e, &d, 1, y, (uint64_t)n, true));
  d.groups[0] = groups_for((uint64_t)n, local_1d(e));
  return nn_vk_exec_dispatch(e, &d, err);
}

/* ---- the table -------------------------------------------------------------------- */

const nn_vk_op nn_vk_ops_norm[] = {
    {"BatchNormalization", bn_supports, bn_record},
    {"LRN", lrn_supports, lrn_record},
    {0},
};

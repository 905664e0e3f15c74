/* vk_cast.c - Cast and CastLike on the Vulkan backend: a same-type Cast is a
 * byte copy (nn_vk_copy_through); a converting one between float32,
 * float16, bfloat16, double, bool and the 8/16/32/64-bit integers runs the
 * cast kernel (shader cast), bit-exact with the CPU's semantics (cpu/cast.c,
 * cpu/ew_conv.h).  Strings stay on the CPU. */
#include "vk_op_util.h"
#include "vulkan/nn_vk_spirv.h"

/* ---- ops -------------------------------------------------------------------------- */

static bool cast_supports(const nn_vk_ctx *ctx, const nn_node *n) {
  if (n->n_in < 1 || !n->x[0] || n->n_out != 1 || !n->y[0] || !fits(ctx, n->x[0]) ||
      !fits(ctx, n->y[0]))
    return false;
  const nn_value *x = n->x[0], *y = n->y[0];
  if (x->dtype == y->dtype)
    return x->dtype != NN_DTYPE_STRING;
  return vk_et(x->dtype) >= 0 && vk_et(y->dtype) >= 0 && x->numel == y->numel;
}

static nn_status cast_record(nn_vk_rec *r, const nn_node *n, nn_error *err) {
  const nn_value *x = n->x[0], *y = n->y[0];
  if (x->dtype == y->dtype)
    return nn_vk_copy_through(r, n, err);
  nn_vk_tensor tx, ty;
  TRY(in_t(r, n, 0, &tx, err));
  TRY(out_t(r, n, 0, &ty, err));
  return nn_vk_k_cast(nn_vk_rec_exec(r), vk_et(x->dtype), vk_et(y->dtype), y->numel, &tx, &ty,
                      err);
}

/* ---- kernels ---------------------------------------------------------------------- */

nn_status nn_vk_k_cast(nn_vk_exec *e, int eti, int eto, int64_t n, const nn_vk_tensor *x,
                       const nn_vk_tensor *y, nn_error *err) {
  if (eti < 0 || eti >= NN_VK_ET_COUNT || eto < 0 || eto >= NN_VK_ET_COUNT || n < 0)
    return nn_error_set(err, NN_ERR_UNSUPPORTED, "vulkan cast: type %d -> %d", eti, eto);
  if (n == 0)
    return NN_OK;
  uint64_t si = vk_et_size(eti), so = vk_et_size(eto);
  nn_status st;
  if ((st = need_typed(x, (uint64_t)n, si, "cast x", err)) ||
      (st = need_typed(y, (uint64_t)n, so, "cast y", err)))
    return st;
  nn_vk_dispatch d;
  nn_vk_dispatch_init(&d, NN_VK_SHADER_CAST);
  d.n_spec = 3;
  d.spec[0] = local_1d(e);
  d.spec[1] = (uint32_t)eti;
  d.spec[2] = (uint32_t)eto;
  push_u(&d, 0, (uint64_t)n);
  push_u(&d, 1, bind_bytes(e, &d, 0, x, (uint64_t)n * si, false));
  push_u(&d, 2, bind_bytes(e, &d, 1, y, (uint64_t)n * so, true));
  uint64_t per = so < 4 ? 4 / so : 1;
  d.groups[0] = groups_for(((uint64_t)n + per - 1) / per, local_1d(e));
  return nn_vk_exec_dispatch(e, &d, err);
}

/* ---- the table -------------------------------------------------------------------- */

const nn_vk_op nn_vk_ops_cast[] = {
    {"Cast", cast_supports, cast_record},
    {"CastLike", cast_supports, cast_record},
    {0},
};

/* vk_softmax.c - Softmax and LogSoftmax on the Vulkan backend:
 * supports/record and the softmax kernel (shader softmax).  The CPU side is
 * cpu/softmax.c. */
#include "vk_op_util.h"
#include "vulkan/nn_vk_spirv.h"
#include "ops/softmax.h"

/* ---- ops -------------------------------------------------------------------------- */

/* the op layer's walk (ops/softmax.h); a scalar stays on the CPU */
static bool softmax_shape(const nn_node *n, int64_t *outer, int64_t *r, int64_t *inner) {
  nn_ctx c = {0};
  nn_softmax_geom g;
  if (n->x[0]->rank == 0 || nn_softmax_geom_init(&c, n, &g) != NN_OK)
    return false;
  *outer = g.outer;
  *r = g.n;
  *inner = g.inner;
  return true;
}

static bool softmax_supports(const nn_vk_ctx *ctx, const nn_node *n) {
  int64_t o, rr, i;
  return f32_io(ctx, n, 1) && softmax_shape(n, &o, &rr, &i);
}

static nn_status softmax_record(nn_vk_rec *r, const nn_node *n, nn_error *err) {
  int64_t outer = 0, rr = 0, inner = 0;
  softmax_shape(n, &outer, &rr, &inner);
  nn_vk_tensor tx, ty;
  TRY(in_t(r, n, 0, &tx, err));
  TRY(out_t(r, n, 0, &ty, err));
  return nn_vk_k_softmax(nn_vk_rec_exec(r), op_is(n, "LogSoftmax"), outer, rr, inner, &tx, &ty,
                         err);
}

/* ---- kernels ---------------------------------------------------------------------- */

nn_status nn_vk_k_softmax(nn_vk_exec *e, bool log, int64_t outer, int64_t r, int64_t inner,
                          const nn_vk_tensor *x, const nn_vk_tensor *y, nn_error *err) {
  if (outer < 0 || r < 0 || inner < 0)
    return nn_error_set(err, NN_ERR_INVALID_ARG, "vulkan softmax: bad parameters");
  int64_t rows = outer * inner, n = rows * r;
  if (n == 0)
    return NN_OK;
  nn_status st;
  if ((st = need(x, (uint64_t)n, "softmax x", err)) || (st = need(y, (uint64_t)n, "softmax y", err)))
    return st;
  nn_vk_dispatch d;
  nn_vk_dispatch_init(&d, NN_VK_SHADER_SOFTMAX);
  d.n_spec = 2;
  d.spec[0] = local_red(e);
  d.spec[1] = log ? 1 : 0;
  push_u(&d, 0, (uint64_t)outer);
  push_u(&d, 1, (uint64_t)r);
  push_u(&d, 2, (uint64_t)inner);
  push_u(&d, 3, bind_n(e, &d, 0, x, (uint64_t)n, false));
  push_u(&d, 4, bind_n(e, &d, 1, y, (uint64_t)n, true));
  push_u(&d, 5, (uint64_t)rows);
  d.groups[0] = groups_for((uint64_t)rows, 1);
  return nn_vk_exec_dispatch(e, &d, err);
}

/* ---- the table -------------------------------------------------------------------- */

const nn_vk_op nn_vk_ops_softmax[] = {
    {"Softmax", softmax_supports, softmax_record},
    {"LogSoftmax", softmax_supports, softmax_record},
    {0},
};

/* vk_pool.c - pooling on the Vulkan backend: Max/AveragePool with the
 * pool2d kernel (shader pool2d), GlobalAverage/MaxPool as a reduction
 * (nn_vk_k_reduce, vk_reduce.c).  The CPU side is cpu/pool.c. */
#include "ops/conv_geom.h"
#include "vk_op_util.h"
#include "vulkan/nn_vk_spirv.h"

/* ---- ops -------------------------------------------------------------------------- */

/* The op layer's pooling parameters, for the 1-D and 2-D windows the
 * kernel takes. */
static bool pool_params(const nn_node *n, nn_pool_params *pp) {
  const nn_value *x = n->x[0];
  if (x->rank != 3 && x->rank != 4)
    return false;
  nn_ctx c = {0};
  return nn_pool_params_init(&c, n, pp) == NN_OK;
}

static bool pool_supports(const nn_vk_ctx *ctx, const nn_node *n) {
  nn_pool_params pp;
  if (!f32_io(ctx, n, 1) || !pool_params(n, &pp))
    return false;
  const nn_conv_geom g = pp.g;
  if (op_is(n, "MaxPool") && pp.storage_order && n->n_out > 1)
    return false;
  const nn_value *y = n->y[0];
  for (int i = 1; i < 3; i++)
    if (g.k[i] > 64 || g.s[i] > 64 || g.d[i] > 64)
      return false;
  return y->dims[y->rank - 1] == g.out[2] && (y->rank == 3 || y->dims[2] == g.out[1]);
}

static nn_status pool_record(nn_vk_rec *r, const nn_node *n, nn_error *err) {
  const nn_value *x = n->x[0];
  nn_pool_params pp;
  pool_params(n, &pp); /* checked by pool_supports */
  const nn_conv_geom g = pp.g;
  nn_vk_pool2d p = {
      .kind = op_is(n, "MaxPool") ? NN_VK_POOL_MAX : NN_VK_POOL_AVG,
      .NC = x->dims[0] * x->dims[1], .H = g.in[1], .W = g.in[2], .OH = g.out[1], .OW = g.out[2],
      .KH = (int)g.k[1], .KW = (int)g.k[2], .SH = (int)g.s[1], .SW = (int)g.s[2],
      .DH = (int)g.d[1], .DW = (int)g.d[2], .PT = (int)g.pb[1], .PL = (int)g.pb[2],
      .PB = (int)g.pe[1], .PR = (int)g.pe[2],
      .count_include_pad = pp.count_include_pad,
  };
  nn_vk_tensor tx, ty;
  TRY(in_t(r, n, 0, &tx, err));
  TRY(out_t(r, n, 0, &ty, err));
  return nn_vk_k_pool2d(nn_vk_rec_exec(r), &p, &tx, &ty, err);
}

static bool gpool_supports(const nn_vk_ctx *ctx, const nn_node *n) {
  return f32_io(ctx, n, 1) && n->x[0]->rank >= 3 && n->x[0]->numel > 0;
}

static nn_status gpool_record(nn_vk_rec *r, const nn_node *n, nn_error *err) {
  const nn_value *x = n->x[0];
  int kind = op_is(n, "GlobalMaxPool") ? NN_VK_RED_MAX : NN_VK_RED_MEAN;
  nn_vk_tensor tx, ty;
  TRY(in_t(r, n, 0, &tx, err));
  TRY(out_t(r, n, 0, &ty, err));
  return nn_vk_k_reduce(nn_vk_rec_exec(r), kind, x->dims[0] * x->dims[1], prod(x->dims, 2, x->rank),
                        1, &tx, &ty, err);
}

/* ---- kernels ---------------------------------------------------------------------- */

nn_status nn_vk_k_pool2d(nn_vk_exec *e, const nn_vk_pool2d *p, const nn_vk_tensor *x,
                         const nn_vk_tensor *y, nn_error *err) {
  if (p->KH <= 0 || p->KW <= 0 || p->SH <= 0 || p->SW <= 0 || p->DH <= 0 || p->DW <= 0 ||
      (p->kind != NN_VK_POOL_MAX && p->kind != NN_VK_POOL_AVG))
    return nn_error_set(err, NN_ERR_INVALID_ARG, "vulkan pool2d: bad parameters");
  int64_t nx = p->NC * p->H * p->W, ny = p->NC * p->OH * p->OW;
  if (ny == 0)
    return NN_OK;
  nn_status st;
  if ((st = need(x, (uint64_t)nx, "pool x", err)) || (st = need(y, (uint64_t)ny, "pool y", err)))
    return st;
  nn_vk_dispatch d;
  nn_vk_dispatch_init(&d, NN_VK_SHADER_POOL2D);
  d.n_spec = 8;
  d.spec[0] = local_1d(e);
  d.spec[1] = (uint32_t)p->kind;
  d.spec[2] = (uint32_t)p->KH;
  d.spec[3] = (uint32_t)p->KW;
  d.spec[4] = (uint32_t)p->SH;
  d.spec[5] = (uint32_t)p->SW;
  d.spec[6] = (uint32_t)p->DH;
  d.spec[7] = (uint32_t)p->DW;
  push_u(&d, 0, (uint64_t)ny);
  push_u(&d, 1, (uint64_t)p->H);
  push_u(&d, 2, (uint64_t)p->W);
  push_u(&d, 3, (uint64_t)p->OH);
  push_u(&d, 4, (uint64_t)p->OW);
  push_i(&d, 5, p->PT);
  push_i(&d, 6, p->PL);
  push_i(&d, 7, p->PB);
  push_i(&d, 8, p->PR);
  push_u(&d, 9, p->count_include_pad ? 1 : 0);
  push_u(&d, 10, bind_n(e, &d, 0, x, (uint64_t)nx, false));
  push_u(&d, 11, bind_n(e, &d, 1, y, (uint64_t)ny, true));
  d.groups[0] = groups_for((uint64_t)ny, local_1d(e));
  return nn_vk_exec_dispatch(e, &d, err);
}

/* ---- the table -------------------------------------------------------------------- */

const nn_vk_op nn_vk_ops_pool[] = {
    {"MaxPool", pool_supports, pool_record},
    {"AveragePool", pool_supports, pool_record},
    {"GlobalAveragePool", gpool_supports, gpool_record},
    {"GlobalMaxPool", gpool_supports, gpool_record},
    {0},
};

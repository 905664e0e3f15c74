/* vk_resize.c - Resize and Upsample on the Vulkan backend: supports/record
 * and the resize kernel (shader resize; nearest, bilinear and bicubic over
 * the last two dims).  The CPU side is cpu/resize.c; both read the node through
 * ops/resize.h. */
#include <string.h>

#include "ops/resize.h"
#include "vk_op_util.h"
#include "vulkan/nn_vk_spirv.h"

/* ---- ops -------------------------------------------------------------------------- */

/* The node's nn_resize_params (ops/resize.h, the reading the CPU kernel
 * uses too) as the shader's: NCHW with H and W resized by nearest or
 * bilinear interpolation; false for anything else, which stays on the CPU. */
static bool resize_params(const nn_node *n, nn_vk_resize *p) {
  const nn_value *x = n->x[0], *y = n->y[0];
  if (x->rank != 4 || y->rank != 4 || x->dims[0] != y->dims[0] || x->dims[1] != y->dims[1])
    return false;
  bool upsample = op_is(n, "Upsample");
  if (!upsample && n->version < 11)
    return false;   /* opset 10's Resize: rare, left to the CPU */
  nn_ctx c = {0};
  nn_resize_params rp;
  if (nn_resize_params_init(&c, n, &rp) != NN_OK)
    return false;
  /* a scales input is read as float32 by the shader path only */
  const nn_value *sc = upsample ? (n->version >= 9 && n->n_in > 1 ? n->x[1] : NULL)
                                : (n->n_in > 2 ? n->x[2] : NULL);
  if (sc && sc->numel > 0 && !is_f32(sc))
    return false;
  memset(p, 0, sizeof *p);
  if (rp.mode == NN_RESIZE_NEAREST)
    p->mode = NN_VK_RESIZE_NEAREST;
  else if (rp.mode == NN_RESIZE_LINEAR)
    p->mode = NN_VK_RESIZE_LINEAR;
  else if (rp.mode == NN_RESIZE_CUBIC)
    p->mode = NN_VK_RESIZE_CUBIC;
  else
    return false;
  p->cubic_a = (float)rp.cubic_a;
  p->exclude_outside = rp.exclude_outside;
  switch (rp.coord) {
  case NN_RESIZE_HALF_PIXEL: p->coord = NN_VK_COORD_HALF_PIXEL; break;
  case NN_RESIZE_ASYMMETRIC: p->coord = NN_VK_COORD_ASYMMETRIC; break;
  case NN_RESIZE_ALIGN_CORNERS: p->coord = NN_VK_COORD_ALIGN_CORNERS; break;
  case NN_RESIZE_PYTORCH_HALF_PIXEL: p->coord = NN_VK_COORD_PYTORCH_HALF_PIXEL; break;
  case NN_RESIZE_HALF_PIXEL_SYMMETRIC: p->coord = NN_VK_COORD_HALF_PIXEL_SYMMETRIC; break;
  default: return false;
  }
  switch (rp.nearest) {
  case NN_RESIZE_ROUND_PREFER_FLOOR: p->nearest = NN_VK_NEAREST_ROUND_PREFER_FLOOR; break;
  case NN_RESIZE_ROUND_PREFER_CEIL: p->nearest = NN_VK_NEAREST_ROUND_PREFER_CEIL; break;
  case NN_RESIZE_FLOOR: p->nearest = NN_VK_NEAREST_FLOOR; break;
  case NN_RESIZE_CEIL: p->nearest = NN_VK_NEAREST_CEIL; break;
  /* Upsample: rounds down.  The CPU's legacy rule rounds up when an axis
   * shrinks; a shrinking nearest Upsample therefore differs between the two
   * backends (as it always has). */
  case NN_RESIZE_NEAREST_LEGACY: p->nearest = NN_VK_NEAREST_FLOOR; break;
  default: return false;
  }
  /* axes and keep_aspect_ratio_policy only change the sizes and scales
   * (rp.out, rp.scale: what the CPU kernel uses too) */
  if (rp.antialias || (rp.exclude_outside && p->mode != NN_VK_RESIZE_CUBIC))
    return false;
  /* sizes over an empty batch or channel axis: left to the CPU */
  if (rp.from_sizes && (x->dims[0] == 0 || x->dims[1] == 0))
    return false;
  if (rp.scale[0] != 1.0 || rp.scale[1] != 1.0 || !(rp.scale[2] > 0) || !(rp.scale[3] > 0))
    return false;
  p->NC = x->dims[0] * x->dims[1];
  p->H = x->dims[2];
  p->W = x->dims[3];
  p->OH = y->dims[2];
  p->OW = y->dims[3];
  p->scale_h = (float)rp.scale[2];
  p->scale_w = (float)rp.scale[3];
  return p->H > 0 && p->W > 0;
}

static bool resize_supports(const nn_vk_ctx *ctx, const nn_node *n) {
  nn_vk_resize p;
  return n->n_in >= 1 && n->x[0] && is_f32(n->x[0]) && is_f32(n->y[0]) && fits(ctx, n->x[0]) &&
         fits(ctx, n->y[0]) && n->n_out == 1 && resize_params(n, &p);
}

static nn_status resize_record(nn_vk_rec *r, const nn_node *n, nn_error *err) {
  nn_vk_resize p;
  resize_params(n, &p);
  nn_vk_tensor tx, ty;
  TRY(in_t(r, n, 0, &tx, err));
  TRY(out_t(r, n, 0, &ty, err));
  return nn_vk_k_resize(nn_vk_rec_exec(r), &p, &tx, &ty, err);
}

/* ---- kernels ---------------------------------------------------------------------- */

nn_status nn_vk_k_resize(nn_vk_exec *e, const nn_vk_resize *p, const nn_vk_tensor *x,
                         const nn_vk_tensor *y, nn_error *err) {
  if (p->H < 1 || p->W < 1 || p->OH < 0 || p->OW < 0 || !(p->scale_h > 0) || !(p->scale_w > 0))
    return nn_error_set(err, NN_ERR_INVALID_ARG, "vulkan resize: bad parameters");
  int64_t nx = p->NC * p->H * p->W, ny = p->NC * p->OH * p->OW;
  if (ny == 0)
    return NN_OK;
  nn_status st;
  if ((st = need(x, (uint64_t)nx, "resize x", err)) || (st = need(y, (uint64_t)ny, "resize y", err)))
    return st;
  nn_vk_dispatch d;
  nn_vk_dispatch_init(&d, NN_VK_SHADER_RESIZE);
  d.n_spec = 5;
  d.spec[0] = local_1d(e);
  d.spec[1] = (uint32_t)p->mode;
  d.spec[2] = (uint32_t)p->coord;
  d.spec[3] = (uint32_t)p->nearest;
  d.spec[4] = p->exclude_outside ? 1 : 0;
  push_u(&d, 0, (uint64_t)ny);
  push_u(&d, 1, (uint64_t)p->H);
  push_u(&d, 2, (uint64_t)p->W);
  push_u(&d, 3, (uint64_t)p->OH);
  push_u(&d, 4, (uint64_t)p->OW);
  push_f(&d, 5, p->scale_h);
  push_f(&d, 6, p->scale_w);
  push_u(&d, 7, bind_n(e, &d, 0, x, (uint64_t)nx, false));
  push_u(&d, 8, bind_n(e, &d, 1, y, (uint64_t)ny, true));
  push_f(&d, 9, p->cubic_a);
  d.groups[0] = groups_for((uint64_t)ny, local_1d(e));
  return nn_vk_exec_dispatch(e, &d, err);
}

/* ---- the table -------------------------------------------------------------------- */

const nn_vk_op nn_vk_ops_resize[] = {
    {"Resize", resize_supports, resize_record},
    {"Upsample", resize_supports, resize_record},
    {0},
};

/* vk_transform.c - data movement ops on the Vulkan backend (Transpose,
 * Concat, Split, Slice, Expand, Tile, Pad, DepthToSpace, SpaceToDepth):
 * their supports/record and the strided copy (shader copy) and pad (shader
 * pad) kernels.  The CPU side is cpu/transform.c. */
#include <string.h>

#include "ops/transform.h"
#include "vk_op_util.h"
#include "vulkan/nn_vk_spirv.h"

/* ---- strided copies: Transpose, Concat, Split, Slice, Expand, Tile ---------------- */

/* Strided copies move 32-bit words; 64-bit elements are two words (an
 * extra innermost dim of 2); 1- and 2-byte elements only as contiguous runs. */
static bool copy_dtype_ok(const nn_value *v) {
  size_t es = nn_dtype_size(v->dtype);
  return v->dtype != NN_DTYPE_STRING && (es == 4 || es == 8);
}

static nn_status copy_elems(nn_vk_exec *e, size_t es, int rank, const int64_t *dims,
                            const int64_t *xs, int64_t x_off, const int64_t *ys, int64_t y_off,
                            const nn_vk_tensor *x, const nn_vk_tensor *y, nn_error *err) {
  if (es == 4)
    return nn_vk_k_copy(e, rank, dims, xs, x_off, ys, y_off, x, y, err);
  int64_t d2[NN_VK_MAX_RANK], xs2[NN_VK_MAX_RANK], ys2[NN_VK_MAX_RANK];
  for (int k = 0; k < rank; k++) {
    d2[k] = dims[k];
    xs2[k] = xs[k] * 2;
    ys2[k] = ys[k] * 2;
  }
  d2[rank] = 2;
  xs2[rank] = ys2[rank] = 1;
  return nn_vk_k_copy(e, rank + 1, d2, xs2, x_off * 2, ys2, y_off * 2, x, y, err);
}

static int copy_max_rank(const nn_value *v) {
  return nn_dtype_size(v->dtype) == 8 ? NN_VK_MAX_RANK - 1 : NN_VK_MAX_RANK;
}

static bool copy_io_ok(const nn_vk_ctx *ctx, const nn_node *n) {
  if (n->n_in < 1 || !n->x[0] || n->n_out < 1 || !n->y[0])
    return false;
  const nn_value *x = n->x[0], *y = n->y[0];
  return x->dtype == y->dtype && copy_dtype_ok(x) && fits(ctx, x) && fits(ctx, y) &&
         y->rank <= copy_max_rank(y) && x->rank <= copy_max_rank(x);
}

static bool transpose_supports(const nn_vk_ctx *ctx, const nn_node *n) {
  nn_ctx c = {0};
  int perm[NN_MAX_RANK];
  return copy_io_ok(ctx, n) && n->n_out == 1 &&
         nn_transpose_perm(&c, n, n->x[0]->rank, perm) == NN_OK;
}

static nn_status transpose_record(nn_vk_rec *r, const nn_node *n, nn_error *err) {
  const nn_value *x = n->x[0], *y = n->y[0];
  int rank = x->rank, perm[NN_MAX_RANK];
  nn_ctx c = {0};
  nn_transpose_perm(&c, n, rank, perm); /* checked by transpose_supports */
  int64_t xst[NN_MAX_RANK], xs[NN_MAX_RANK], ys[NN_MAX_RANK];
  dense_strides(rank, x->dims, xst);
  dense_strides(y->rank, y->dims, ys);
  for (int i = 0; i < rank; i++)
    xs[i] = xst[perm[i]];
  nn_vk_tensor tx, ty;
  TRY(in_t(r, n, 0, &tx, err));
  TRY(out_t(r, n, 0, &ty, err));
  return copy_elems(nn_vk_rec_exec(r), nn_dtype_size(x->dtype), rank, y->dims, xs, 0, ys, 0,
                    &tx, &ty, err);
}

static bool concat_supports(const nn_vk_ctx *ctx, const nn_node *n) {
  const nn_value *y = n->n_out > 0 ? n->y[0] : NULL;
  if (!y || !copy_dtype_ok(y) || !fits(ctx, y) || y->rank < 1)
    return false;
  for (int k = 0; k < n->n_in; k++)
    if (!n->x[k] || n->x[k]->dtype != y->dtype || !fits(ctx, n->x[k]))
      return false;
  nn_ctx c = {0};
  int axis;
  return nn_concat_axis(&c, n, y->rank, &axis) == NN_OK;
}

static nn_status concat_record(nn_vk_rec *r, const nn_node *n, nn_error *err) {
  const nn_value *y = n->y[0];
  int axis;
  nn_ctx c = {0};
  nn_concat_axis(&c, n, y->rank, &axis); /* checked by concat_supports */
  int64_t outer = prod(y->dims, 0, axis), inner = prod(y->dims, axis + 1, y->rank);
  int64_t at = 0;
  nn_vk_tensor ty;
  TRY(out_t(r, n, 0, &ty, err));
  size_t es = nn_dtype_size(y->dtype);
  for (int k = 0; k < n->n_in; k++) {
    const nn_value *x = n->x[k];
    int64_t len = x->rank > axis ? x->dims[axis] : 0;
    if (x->numel > 0) {
      nn_vk_tensor tx;
      TRY(in_t(r, n, k, &tx, err));
      int64_t dims[2] = {outer, len * inner}, xs[2] = {len * inner, 1};
      int64_t ys[2] = {y->dims[axis] * inner, 1};
      TRY(copy_elems(nn_vk_rec_exec(r), es, 2, dims, xs, 0, ys, at * inner, &tx, &ty, err));
    }
    at += len;
  }
  return NN_OK;
}

static bool split_supports(const nn_vk_ctx *ctx, const nn_node *n) {
  if (n->n_in < 1 || !n->x[0] || !copy_dtype_ok(n->x[0]) || !fits(ctx, n->x[0]) ||
      n->x[0]->rank < 1)
    return false;
  for (int k = 0; k < n->n_out; k++)
    if (!n->y[k] || n->y[k]->dtype != n->x[0]->dtype)
      return false;
  nn_ctx c = {0};
  int axis;
  return nn_split_axis(&c, n, n->x[0]->rank, &axis) == NN_OK;
}

static nn_status split_record(nn_vk_rec *r, const nn_node *n, nn_error *err) {
  const nn_value *x = n->x[0];
  int axis;
  nn_ctx c = {0};
  nn_split_axis(&c, n, x->rank, &axis); /* checked by split_supports */
  int64_t outer = prod(x->dims, 0, axis), inner = prod(x->dims, axis + 1, x->rank);
  nn_vk_tensor tx;
  TRY(in_t(r, n, 0, &tx, err));
  size_t es = nn_dtype_size(x->dtype);
  int64_t at = 0;
  for (int k = 0; k < n->n_out; k++) {
    const nn_value *y = n->y[k];
    int64_t len = y->dims[axis];
    if (y->numel > 0) {
      nn_vk_tensor ty;
      TRY(out_t(r, n, k, &ty, err));
      int64_t dims[2] = {outer, len * inner}, xs[2] = {x->dims[axis] * inner, 1};
      int64_t ys[2] = {len * inner, 1};
      TRY(copy_elems(nn_vk_rec_exec(r), es, 2, dims, xs, at * inner, ys, 0, &tx, &ty, err));
    }
    at += len;
  }
  return NN_OK;
}

static bool slice_supports(const nn_vk_ctx *ctx, const nn_node *n) {
  nn_ctx c = {0};
  nn_slice_params sp;
  /* starts / ends / axes / steps are read while recording */
  for (int k = 1; k <= 4; k++)
    if (k < n->n_in && n->x[k] && !known_value(n->x[k]))
      return false;
  return copy_io_ok(ctx, n) && n->y[0]->rank == n->x[0]->rank &&
         nn_slice_params_init(&c, n, &sp) == NN_OK;
}

static nn_status slice_record(nn_vk_rec *r, const nn_node *n, nn_error *err) {
  const nn_value *x = n->x[0], *y = n->y[0];
  int64_t xst[NN_MAX_RANK], xs[NN_MAX_RANK], ys[NN_MAX_RANK];
  nn_ctx c = {0};
  nn_slice_params sp;
  nn_slice_params_init(&c, n, &sp); /* checked by slice_supports */
  dense_strides(x->rank, x->dims, xst);
  dense_strides(y->rank, y->dims, ys);
  int64_t off = 0;
  for (int i = 0; i < x->rank; i++) {
    off += sp.first[i] * xst[i];
    xs[i] = sp.step[i] * xst[i];
  }
  if (y->numel == 0)
    return NN_OK;
  nn_vk_tensor tx, ty;
  TRY(in_t(r, n, 0, &tx, err));
  TRY(out_t(r, n, 0, &ty, err));
  return copy_elems(nn_vk_rec_exec(r), nn_dtype_size(x->dtype), y->rank, y->dims, xs, off, ys, 0,
                    &tx, &ty, err);
}

static bool expand_supports(const nn_vk_ctx *ctx, const nn_node *n) {
  return copy_io_ok(ctx, n) && n->x[0]->rank <= n->y[0]->rank;
}

static nn_status expand_record(nn_vk_rec *r, const nn_node *n, nn_error *err) {
  const nn_value *x = n->x[0], *y = n->y[0];
  int64_t xs[NN_MAX_RANK], ys[NN_MAX_RANK];
  nn_broadcast_strides(x->rank, x->dims, y->rank, y->dims, xs);
  dense_strides(y->rank, y->dims, ys);
  if (y->numel == 0)
    return NN_OK;
  nn_vk_tensor tx, ty;
  TRY(in_t(r, n, 0, &tx, err));
  TRY(out_t(r, n, 0, &ty, err));
  return copy_elems(nn_vk_rec_exec(r), nn_dtype_size(x->dtype), y->rank, y->dims, xs, 0, ys, 0,
                    &tx, &ty, err);
}

/* Tile: y[(r_i, c_i)...] = x[c_i...], a copy over 2*rank dims. */
static bool tile_supports(const nn_vk_ctx *ctx, const nn_node *n) {
  return copy_io_ok(ctx, n) && 2 * n->x[0]->rank <= copy_max_rank(n->x[0]) &&
         n->y[0]->rank == n->x[0]->rank;
}

static nn_status tile_record(nn_vk_rec *r, const nn_node *n, nn_error *err) {
  const nn_value *x = n->x[0], *y = n->y[0];
  int rank = x->rank;
  int64_t xst[NN_MAX_RANK], yst[NN_MAX_RANK];
  int64_t dims[NN_VK_MAX_RANK], xs[NN_VK_MAX_RANK], ys[NN_VK_MAX_RANK];
  dense_strides(rank, x->dims, xst);
  dense_strides(rank, y->dims, yst);
  for (int i = 0; i < rank; i++) {
    int64_t reps = x->dims[i] ? y->dims[i] / x->dims[i] : 0;
    dims[2 * i] = reps;
    xs[2 * i] = 0;
    ys[2 * i] = x->dims[i] * yst[i];
    dims[2 * i + 1] = x->dims[i];
    xs[2 * i + 1] = xst[i];
    ys[2 * i + 1] = yst[i];
  }
  if (y->numel == 0)
    return NN_OK;
  nn_vk_tensor tx, ty;
  TRY(in_t(r, n, 0, &tx, err));
  TRY(out_t(r, n, 0, &ty, err));
  return copy_elems(nn_vk_rec_exec(r), nn_dtype_size(x->dtype), 2 * rank, dims, xs, 0, ys, 0, &tx,
                    &ty, err);
}

/* ---- Pad ---------------------------------------------------------------------------- */

/* The op layer's pads, and the constant as the float bits the shader takes
 * (the attribute, or input 2 when known; pad_supports refuses the rest). */
static bool pad_params(const nn_node *n, int *mode, int64_t *begin, uint32_t *value) {
  nn_ctx c = {0};
  nn_pad_params pp;
  if (nn_pad_params_init(&c, n, &pp) != NN_OK)
    return false;
  for (int k = 1; k <= 3; k++)
    if (k < n->n_in && n->x[k] && !known_value(n->x[k]))
      return false;
  float fv = (float)pp.value;
  if (pp.value_input && n->x[2]->numel == 1)
    memcpy(&fv, n->x[2]->data, 4);
  *mode = pp.mode;
  memcpy(begin, pp.begin, sizeof pp.begin);
  memcpy(value, &fv, 4);
  return true;
}

static bool pad_supports(const nn_vk_ctx *ctx, const nn_node *n) {
  int mode;
  int64_t begin[NN_MAX_RANK];
  uint32_t value;
  if (!copy_io_ok(ctx, n) || nn_dtype_size(n->x[0]->dtype) != 4 || n->x[0]->rank < 1)
    return false;
  /* the constant is read as float bits; int32 constants differ */
  if (n->x[0]->dtype != NN_DTYPE_FLOAT)
    return false;
  if (!pad_params(n, &mode, begin, &value))
    return false;
  /* reflect/edge/wrap of an empty axis have nothing to copy from */
  if (mode != NN_VK_PAD_CONSTANT && n->x[0]->numel == 0)
    return false;
  return true;
}

static nn_status pad_record(nn_vk_rec *r, const nn_node *n, nn_error *err) {
  int mode;
  int64_t begin[NN_MAX_RANK];
  uint32_t value;
  pad_params(n, &mode, begin, &value);
  nn_vk_tensor tx, ty;
  if (n->y[0]->numel == 0)
    return NN_OK;
  TRY(out_t(r, n, 0, &ty, err));
  if (n->x[0]->numel == 0) {
    /* nothing to read: the pad kernel binds y in x's place */
    tx = ty;
  } else {
    TRY(in_t(r, n, 0, &tx, err));
  }
  return nn_vk_k_pad(nn_vk_rec_exec(r), mode, value, n->x[0]->rank, n->x[0]->dims, n->y[0]->dims,
                     begin, &tx, &ty, err);
}

/* ---- kernels ---------------------------------------------------------------------- */

nn_status nn_vk_k_copy(nn_vk_exec *e, int rank, const int64_t *dims, const int64_t *xs,
                       int64_t x_off, const int64_t *ys, int64_t y_off, const nn_vk_tensor *x,
                       const nn_vk_tensor *y, nn_error *err) {
  if (rank < 0 || rank > NN_VK_MAX_RANK || x_off < 0 || y_off < 0)
    return nn_error_set(err, NN_ERR_INVALID_ARG, "vulkan copy: bad parameters");
  int64_t n = 1;
  for (int k = 0; k < rank; k++) {
    if (dims[k] < 0 || ys[k] < 0)
      return nn_error_set(err, NN_ERR_INVALID_ARG, "vulkan copy: bad dims/strides");
    n *= dims[k];
  }
  if (n == 0)
    return NN_OK;
  int64_t cd[NN_VK_MAX_RANK], cx[NN_VK_MAX_RANK], cy[NN_VK_MAX_RANK];
  int r = nn_vk_collapse2(rank, dims, xs, ys, cd, cx, cy);
  /* x index range, with negative strides walking down from x_off */
  int64_t lo = x_off, hi = x_off, yhi = y_off;
  for (int k = 0; k < r; k++) {
    int64_t ext = (cd[k] - 1) * cx[k];
    if (ext < 0)
      lo += ext;
    else
      hi += ext;
    yhi += (cd[k] - 1) * cy[k];
  }
  if (lo < 0 || hi >= (int64_t)(x->size / 4) || yhi >= (int64_t)(y->size / 4))
    return nn_error_set(err, NN_ERR_INVALID_ARG, "vulkan copy: indices leave the views");
  if (x->offset % 4 || y->offset % 4)
    return nn_error_set(err, NN_ERR_INVALID_ARG, "vulkan copy: views not 4-aligned");
  /* Contiguous: a transfer command, no shader. */
  if (r == 1 && cx[0] == 1 && cy[0] == 1) {
    nn_vk_tensor src = {x->buffer, x->offset + (VkDeviceSize)x_off * 4, (VkDeviceSize)n * 4};
    nn_vk_tensor dst = {y->buffer, y->offset + (VkDeviceSize)y_off * 4, (VkDeviceSize)n * 4};
    return nn_vk_exec_copy(e, &src, &dst, err);
  }
  /* Bind only the touched ranges so independent copies into one concat
   * output do not look like they conflict. */
  nn_vk_tensor xv = {x->buffer, x->offset + (VkDeviceSize)lo * 4, (VkDeviceSize)(hi - lo + 1) * 4};
  nn_vk_tensor yv = {y->buffer, y->offset + (VkDeviceSize)y_off * 4,
                     (VkDeviceSize)(yhi - y_off + 1) * 4};
  nn_vk_dispatch d;
  nn_vk_dispatch_init(&d, NN_VK_SHADER_TRANSFORM_COPY);
  d.n_spec = 2;
  d.spec[0] = local_1d(e);
  d.spec[1] = (uint32_t)r;
  push_u(&d, 0, (uint64_t)n);
  push_u(&d, 1, nn_vk_dispatch_bind(e, &d, 0, &xv, false) + (uint64_t)(x_off - lo));
  push_u(&d, 2, nn_vk_dispatch_bind(e, &d, 1, &yv, true));
  for (int k = 0; k < r; k++) {
    push_u(&d, 3 + k, (uint64_t)cd[k]);
    push_i(&d, 3 + NN_VK_MAX_RANK + k, cx[k]);
    push_u(&d, 3 + 2 * NN_VK_MAX_RANK + k, (uint64_t)cy[k]);
  }
  d.groups[0] = groups_for((uint64_t)n, local_1d(e));
  return nn_vk_exec_dispatch(e, &d, err);
}

nn_status nn_vk_k_pad(nn_vk_exec *e, int mode, uint32_t value, int rank, const int64_t *in_dims,
                      const int64_t *out_dims, const int64_t *pads_begin, const nn_vk_tensor *x,
                      const nn_vk_tensor *y, nn_error *err) {
  if (rank < 1 || rank > NN_VK_MAX_RANK || mode < NN_VK_PAD_CONSTANT || mode > NN_VK_PAD_WRAP)
    return nn_error_set(err, NN_ERR_INVALID_ARG, "vulkan pad: bad parameters");
  int64_t nx = 1, ny = 1;
  for (int k = 0; k < rank; k++) {
    if (in_dims[k] < 0 || out_dims[k] < 0)
      return nn_error_set(err, NN_ERR_INVALID_ARG, "vulkan pad: bad dims");
    nx *= in_dims[k];
    ny *= out_dims[k];
  }
  if (ny == 0)
    return NN_OK;
  if (nx == 0 && mode != NN_VK_PAD_CONSTANT)
    return nn_error_set(err, NN_ERR_INVALID_ARG, "vulkan pad: empty input for mode %d", mode);
  nn_status st;
  if ((st = need(y, (uint64_t)ny, "pad y", err)) ||
      (nx > 0 && (st = need(x, (uint64_t)nx, "pad x", err))))
    return st;
  nn_vk_dispatch d;
  nn_vk_dispatch_init(&d, NN_VK_SHADER_TRANSFORM_PAD);
  d.n_spec = 3;
  d.spec[0] = local_1d(e);
  d.spec[1] = (uint32_t)mode;
  d.spec[2] = (uint32_t)rank;
  push_u(&d, 0, (uint64_t)ny);
  /* an empty input is never read: bind the output in its place */
  push_u(&d, 1, nx > 0 ? bind_n(e, &d, 0, x, (uint64_t)nx, false) : bind_n(e, &d, 0, y, 1, false));
  push_u(&d, 2, bind_n(e, &d, 1, y, (uint64_t)ny, true));
  push_u(&d, 3, value);
  for (int k = 0; k < rank; k++) {
    push_u(&d, 4 + k, (uint64_t)in_dims[k]);
    push_u(&d, 4 + NN_VK_MAX_RANK + k, (uint64_t)out_dims[k]);
    push_i(&d, 4 + 2 * NN_VK_MAX_RANK + k, pads_begin[k]);
  }
  d.groups[0] = groups_for((uint64_t)ny, local_1d(e));
  return nn_vk_exec_dispatch(e, &d, err);
}

/* ---- DepthToSpace / SpaceToDepth: a 6-D strided copy ----------------------------------- */

/* DepthToSpace / SpaceToDepth: the op layer's 6-D strided copy. */
static bool d2s_supports(const nn_vk_ctx *ctx, const nn_node *n) {
  nn_ctx c = {0};
  nn_d2s_params dp;
  return copy_io_ok(ctx, n) && n->n_out == 1 && n->y[0]->rank == 4 &&
         nn_d2s_params_init(&c, n, &dp) == NN_OK && prod(dp.d6, 0, 6) == n->y[0]->numel;
}

static nn_status d2s_record(nn_vk_rec *r, const nn_node *n, nn_error *err) {
  int64_t ys[6];
  nn_ctx c = {0};
  nn_d2s_params dp;
  nn_d2s_params_init(&c, n, &dp); /* checked by d2s_supports */
  dense_strides(6, dp.d6, ys);
  nn_vk_tensor tx, ty;
  TRY(in_t(r, n, 0, &tx, err));
  TRY(out_t(r, n, 0, &ty, err));
  return copy_elems(nn_vk_rec_exec(r), nn_dtype_size(n->x[0]->dtype), 6, dp.d6, dp.s6, 0, ys, 0,
                    &tx, &ty, err);
}

/* ---- the table -------------------------------------------------------------------- */

const nn_vk_op nn_vk_ops_transform[] = {
    {"Transpose", transpose_supports, transpose_record},
    {"Concat", concat_supports, concat_record},
    {"Split", split_supports, split_record},
    {"Slice", slice_supports, slice_record},
    {"Expand", expand_supports, expand_record},
    {"Tile", tile_supports, tile_record},
    {"Pad", pad_supports, pad_record},
    {"DepthToSpace", d2s_supports, d2s_record},
    {"SpaceToDepth", d2s_supports, d2s_record},
    {0},
};

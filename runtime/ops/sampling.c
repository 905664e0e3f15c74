/* sampling.c - the sampling family in the op layer: its operators, their versions and
 * their shape and dtype inference (nn_ops_sampling[], collected by ops/registry.c),
 * and the typed attributes of sampling.h. */
#include <string.h>

#include "ops/inputs.h"
#include "ops/sampling.h"

static const nn_value *input(const nn_node *n, int i) { return i < n->n_in ? n->x[i] : NULL; }

static bool is_index(nn_dtype dt) { return dt == NN_DTYPE_INT64 || dt == NN_DTYPE_INT32; }

/* ---- GridSample ---------------------------------------------------------------- */

nn_status nn_gridsample_attrs_init(nn_ctx *c, const nn_node *n, nn_gridsample_attrs *a) {
  static const char *const modes16[] = {"bilinear", "nearest", "bicubic", NULL};
  static const char *const modes20[] = {"linear", "nearest", "cubic", NULL};
  static const char *const pads[] = {"zeros", "border", "reflection", NULL};
  memset(a, 0, sizeof *a);
  nn_status st;
  if (n->version >= 20)
    st = nn_op_attr_choice(c, n, "mode", "linear", modes20, &a->mode);
  else
    st = nn_op_attr_choice(c, n, "mode", "bilinear", modes16, &a->mode);
  if (st != NN_OK)
    return st;
  if ((st = nn_op_attr_choice(c, n, "padding_mode", "zeros", pads, &a->pad)) != NN_OK)
    return st;
  int64_t ac = nn_attr_int(n, "align_corners", 0);
  if (ac != 0 && ac != 1)
    return nn_fail(c, NN_ERR_UNSUPPORTED, "unsupported align_corners %lld", (long long)ac);
  a->align = ac != 0;
  return NN_OK;
}

static nn_status gs_infer(nn_ctx *c, nn_node *n) {
  const nn_value *x = n->x[0], *g = input(n, 1);
  if (!g)
    return nn_fail(c, NN_ERR_INVALID_MODEL, "grid is required");
  if (!nn_dtype_is_float(g->dtype))
    return nn_fail(c, NN_ERR_UNSUPPORTED, "unsupported grid type %s", nn_dtype_name(g->dtype));
  nn_gridsample_attrs a;
  nn_status st = nn_gridsample_attrs_init(c, n, &a);
  if (st != NN_OK)
    return st;
  /* opset 16 samples 4-D inputs; 20 any rank from 3 */
  int r = x->rank - 2;
  if (r < 1 || (n->version < 20 && r != 2))
    return nn_fail(c, NN_ERR_UNSUPPORTED, "input rank %d not supported (%s)", x->rank,
                   n->version < 20 ? "4-D" : "3-D or more");
  if (a.mode == NN_GS_CUBIC && r != 2)
    return nn_fail(c, NN_ERR_UNSUPPORTED, "cubic mode supports 4-D input only");
  if (g->rank != x->rank || g->dims[0] != x->dims[0] || g->dims[g->rank - 1] != r)
    return nn_fail(c, NN_ERR_SHAPE, "grid must be (N, out..., %d)", r);
  int64_t od[NN_MAX_RANK];
  od[0] = x->dims[0];
  od[1] = x->dims[1];
  for (int i = 0; i < r; i++)
    od[2 + i] = g->dims[1 + i];
  return nn_set_output(c, n->y[0], x->dtype, x->rank, od);
}

/* ---- AffineGrid ------------------------------------------------------------------- */

static nn_status affine_infer(nn_ctx *c, nn_node *n) {
  const nn_value *th = n->x[0], *sz = input(n, 1);
  if (!sz || !sz->data)
    return nn_fail(c, NN_ERR_INVALID_MODEL, "size must be a known input");
  if (!nn_dtype_is_float(th->dtype))
    return nn_fail(c, NN_ERR_UNSUPPORTED, "unsupported type %s", nn_dtype_name(th->dtype));
  if (!is_index(sz->dtype) || sz->rank != 1 || (sz->dims[0] != 4 && sz->dims[0] != 5))
    return nn_fail(c, NN_ERR_SHAPE, "size must be int64 (4) or (5)");
  int r = (int)sz->dims[0] - 2;
  if (th->rank != 3 || th->dims[1] != r || th->dims[2] != r + 1)
    return nn_fail(c, NN_ERR_SHAPE, "theta must be (N, %d, %d)", r, r + 1);
  int64_t ac = nn_attr_int(n, "align_corners", 0);
  if (ac != 0 && ac != 1)
    return nn_fail(c, NN_ERR_UNSUPPORTED, "unsupported align_corners %lld", (long long)ac);
  int64_t od[5];
  od[0] = nn_value_get_int(sz, 0);
  if (od[0] != th->dims[0])
    return nn_fail(c, NN_ERR_SHAPE, "size[0] = %lld but theta has %lld batches",
                   (long long)od[0], (long long)th->dims[0]);
  for (int i = 0; i < r; i++) {
    od[1 + i] = nn_value_get_int(sz, 2 + i);
    if (od[1 + i] <= 0)
      return nn_fail(c, NN_ERR_SHAPE, "size[%d] = %lld must be positive", 2 + i,
                     (long long)od[1 + i]);
  }
  od[1 + r] = r;
  return nn_set_output(c, n->y[0], th->dtype, r + 2, od);
}

/* ---- Col2Im ------------------------------------------------------------------------- */

nn_status nn_col2im_geom_init(nn_ctx *c, const nn_node *n, nn_col2im_geom *p) {
  const nn_value *x = n->x[0], *is = input(n, 1), *bs = input(n, 2);
  if (!is || !bs || !is->data || !bs->data)
    return nn_fail(c, NN_ERR_INVALID_MODEL, "image_shape and block_shape must be known");
  if (x->rank != 3)
    return nn_fail(c, NN_ERR_SHAPE, "input must be (N, C*prod(block), L)");
  if (!is_index(is->dtype) || !is_index(bs->dtype) || is->rank != 1 ||
      bs->rank != 1 || is->dims[0] != bs->dims[0] || is->dims[0] < 1 ||
      is->dims[0] > NN_MAX_RANK - 2)
    return nn_fail(c, NN_ERR_SHAPE, "image_shape and block_shape must be int 1-D of equal length");
  memset(p, 0, sizeof *p);
  p->r = (int)is->dims[0];
  int nd, np, ns;
  const int64_t *dil = nn_attr_ints(n, "dilations", &nd);
  const int64_t *pad = nn_attr_ints(n, "pads", &np);
  const int64_t *str = nn_attr_ints(n, "strides", &ns);
  if ((dil && nd != p->r) || (pad && np != 2 * p->r) || (str && ns != p->r))
    return nn_fail(c, NN_ERR_INVALID_MODEL, "dilations/pads/strides lengths must match %d dims",
                   p->r);
  p->K = 1;
  p->L = 1;
  for (int i = 0; i < p->r; i++) {
    p->img[i] = nn_value_get_int(is, i);
    p->blk[i] = nn_value_get_int(bs, i);
    p->dil[i] = dil ? dil[i] : 1;
    p->str[i] = str ? str[i] : 1;
    p->pad[i] = pad ? pad[i] : 0;
    int64_t pe = pad ? pad[i + p->r] : 0;
    if (p->img[i] <= 0 || p->blk[i] <= 0 || p->dil[i] <= 0 || p->str[i] <= 0 || p->pad[i] < 0 ||
        pe < 0 || p->img[i] > INT32_MAX || p->blk[i] > INT32_MAX || p->dil[i] > INT32_MAX ||
        p->str[i] > INT32_MAX || p->pad[i] > INT32_MAX || pe > INT32_MAX)
      return nn_fail(c, NN_ERR_INVALID_MODEL, "invalid image/block/dilation/stride/pad at dim %d",
                     i);
    int64_t span = p->dil[i] * (p->blk[i] - 1) + 1;
    int64_t room = p->img[i] + p->pad[i] + pe - span;
    if (room < 0)
      return nn_fail(c, NN_ERR_SHAPE, "block larger than the padded image at dim %d", i);
    p->nb[i] = room / p->str[i] + 1;
    if (nn_mul_overflow_i64(p->K, p->blk[i], &p->K) || nn_mul_overflow_i64(p->L, p->nb[i], &p->L))
      return nn_fail(c, NN_ERR_LIMIT, "block or image too large");
  }
  if (x->dims[1] % p->K)
    return nn_fail(c, NN_ERR_SHAPE, "input dim 1 (%lld) is not a multiple of the block size %lld",
                   (long long)x->dims[1], (long long)p->K);
  if (x->dims[2] != p->L)
    return nn_fail(c, NN_ERR_SHAPE, "input dim 2 is %lld but the blocks number %lld",
                   (long long)x->dims[2], (long long)p->L);
  p->N = x->dims[0];
  p->C = x->dims[1] / p->K;
  return NN_OK;
}

static nn_status col2im_infer(nn_ctx *c, nn_node *n) {
  nn_col2im_geom g;
  nn_status st = nn_col2im_geom_init(c, n, &g);
  if (st != NN_OK)
    return st;
  int64_t od[NN_MAX_RANK];
  od[0] = g.N;
  od[1] = g.C;
  for (int i = 0; i < g.r; i++)
    od[2 + i] = g.img[i];
  return nn_set_output(c, n->y[0], n->x[0]->dtype, g.r + 2, od);
}

/* ---- RoiAlign ------------------------------------------------------------------------ */

nn_status nn_roialign_attrs_init(nn_ctx *c, const nn_node *n, nn_roialign_attrs *p) {
  static const char *const modes[] = {"avg", "max", NULL};
  static const char *const ctms[] = {"half_pixel", "output_half_pixel", NULL};
  memset(p, 0, sizeof *p);
  int mode, ctm = 1;
  nn_status st = nn_op_attr_choice(c, n, "mode", "avg", modes, &mode);
  if (st != NN_OK)
    return st;
  if (n->version >= 16 &&
      (st = nn_op_attr_choice(c, n, "coordinate_transformation_mode", "half_pixel", ctms, &ctm)))
    return st;
  p->max_mode = mode == 1;
  p->half_pixel = ctm == 0;
  p->oh = nn_attr_int(n, "output_height", 1);
  p->ow = nn_attr_int(n, "output_width", 1);
  p->sampling = nn_attr_int(n, "sampling_ratio", 0);
  p->scale = nn_attr_float(n, "spatial_scale", 1.0f);
  if (p->oh <= 0 || p->ow <= 0 || p->sampling < 0 || p->sampling > NN_ROI_MAX_GRID)
    return nn_fail(c, NN_ERR_INVALID_MODEL, "invalid output size or sampling_ratio");
  return NN_OK;
}

static nn_status roi_infer(nn_ctx *c, nn_node *n) {
  const nn_value *x = n->x[0], *rois = input(n, 1), *bi = input(n, 2);
  if (!rois || !bi)
    return nn_fail(c, NN_ERR_INVALID_MODEL, "rois and batch_indices are required");
  if (!nn_dtype_is_float(x->dtype))
    return nn_fail(c, NN_ERR_UNSUPPORTED, "unsupported type %s", nn_dtype_name(x->dtype));
  if (rois->dtype != x->dtype)
    return nn_fail(c, NN_ERR_DTYPE, "rois must have X's type");
  if (!is_index(bi->dtype))
    return nn_fail(c, NN_ERR_UNSUPPORTED, "unsupported batch_indices type %s",
                   nn_dtype_name(bi->dtype));
  if (x->rank != 4 || rois->rank != 2 || rois->dims[1] != 4 || bi->rank != 1 ||
      bi->dims[0] != rois->dims[0])
    return nn_fail(c, NN_ERR_SHAPE, "expects X (N, C, H, W), rois (R, 4), batch_indices (R)");
  nn_roialign_attrs a;
  nn_status st = nn_roialign_attrs_init(c, n, &a);
  if (st != NN_OK)
    return st;
  int64_t od[4] = {rois->dims[0], x->dims[1], a.oh, a.ow};
  return nn_set_output(c, n->y[0], x->dtype, 4, od);
}

/* The family's operators (ops/registry.c), each with its shape and dtype
 * inference; cpu/sampling.c has the kernels.  AffineGrid's size (input 1)
 * and Col2Im's image_shape and block_shape (inputs 1, 2) decide the output
 * shape: they are shape inputs. */
const nn_op_def nn_ops_sampling[] = {
  {.name = "GridSample", .versions = {16, 20}, .infer = gs_infer},
  {.name = "AffineGrid", .versions = {20}, .shape_inputs = 1u << 1, .infer = affine_infer},
  {.name = "Col2Im", .versions = {18}, .shape_inputs = (1u << 1) | (1u << 2),
   .infer = col2im_infer},
  {.name = "RoiAlign", .versions = {10, 16}, .infer = roi_infer},
  {0},
};

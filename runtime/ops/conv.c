/* conv.c - the conv family in the op layer: its operators, their versions and
 * their shape and dtype inference (nn_ops_conv[], collected by ops/registry.c),
 * and the channels / groups / window every backend reads (conv.h). */
#include <stdio.h>
#include <string.h>

#include "ops/conv.h"

/* ---- parameters (conv.h) ----------------------------------------------------- */

/* Common checks of X, W (input wi) and kernel_shape; fills the spatial sizes
 * and the kernel. */
static nn_status conv_check_inputs(nn_ctx *c, const nn_node *n, int wi, int *nsp, int64_t *in_sp,
                                   int64_t *kern) {
  if (n->n_in <= wi || !n->x[0] || !n->x[wi])
    return nn_fail(c, NN_ERR_INVALID_MODEL, "needs inputs X and W");
  if (n->n_out < 1 || !n->y[0])
    return nn_fail(c, NN_ERR_INVALID_MODEL, "needs output Y");
  const nn_value *x = n->x[0], *w = n->x[wi];
  if (x->rank < 3 || x->rank > 2 + NN_CONV_SP)
    return nn_fail(c, NN_ERR_UNSUPPORTED, "input rank %d (3 to %d supported)", x->rank,
                   2 + NN_CONV_SP);
  if (w->rank != x->rank)
    return nn_fail(c, NN_ERR_SHAPE, "W has rank %d, X has rank %d", w->rank, x->rank);
  *nsp = x->rank - 2;
  for (int i = 0; i < *nsp; i++) {
    in_sp[i] = x->dims[2 + i];
    kern[i] = w->dims[2 + i];
  }
  return nn_conv_kernel_shape(c, n, *nsp, kern);
}

nn_status nn_conv_params_init(nn_ctx *c, const nn_node *n, int wi, int bi, nn_conv_params *p) {
  memset(p, 0, sizeof *p);
  int nsp;
  int64_t in_sp[NN_CONV_SP], kern[NN_CONV_SP];
  nn_status st = conv_check_inputs(c, n, wi, &nsp, in_sp, kern);
  if (st)
    return st;
  const nn_value *x = n->x[0], *w = n->x[wi];
  const nn_value *b = bi >= 0 && n->n_in > bi ? n->x[bi] : NULL;
  p->batch = x->dims[0];
  p->C = x->dims[1];
  p->M = w->dims[0];
  if ((st = nn_conv_group(c, n, p->C, p->M, &p->group)))
    return st;
  p->Cg = p->C / p->group;
  p->Mg = p->M / p->group;
  if (w->dims[1] != p->Cg)
    return nn_fail(c, NN_ERR_SHAPE, "W has %lld input channels per group, X gives %lld",
                   (long long)w->dims[1], (long long)p->Cg);
  if (b && (b->rank != 1 || b->dims[0] != p->M))
    return nn_fail(c, NN_ERR_SHAPE, "B must have shape [%lld]", (long long)p->M);
  if ((st = nn_conv_geom_init(c, n, nsp, in_sp, kern, true, false, &p->g)))
    return st;
  for (int i = 0; i < NN_CONV_SP; i++)
    if (p->g.out[i] < 1 && p->g.in[i] > 0)
      return nn_fail(c, NN_ERR_SHAPE, "empty output in spatial dimension %d", i);
  return NN_OK;
}

nn_status nn_convt_params_init(nn_ctx *c, const nn_node *n, nn_conv_params *p) {
  memset(p, 0, sizeof *p);
  int nsp;
  int64_t in_sp[NN_CONV_SP], kern[NN_CONV_SP];
  nn_status st = conv_check_inputs(c, n, 1, &nsp, in_sp, kern);
  if (st)
    return st;
  const nn_value *x = n->x[0], *w = n->x[1];
  const nn_value *b = n->n_in > 2 ? n->x[2] : NULL;
  p->batch = x->dims[0];
  p->C = x->dims[1];
  if ((st = nn_conv_group(c, n, p->C, 0, &p->group)))
    return st;
  if (w->dims[0] != p->C)
    return nn_fail(c, NN_ERR_SHAPE, "W has %lld input channels, X has %lld",
                   (long long)w->dims[0], (long long)p->C);
  p->Cg = p->C / p->group;
  p->Mg = w->dims[1];
  p->M = p->Mg * p->group;
  if (b && (b->rank != 1 || b->dims[0] != p->M))
    return nn_fail(c, NN_ERR_SHAPE, "B must have shape [%lld]", (long long)p->M);
  return nn_convt_geom_init(c, n, nsp, in_sp, kern, &p->g);
}

nn_status nn_deform_params_init(nn_ctx *c, const nn_node *n, nn_conv_params *p,
                                int64_t *offset_group) {
  if (n->n_in < 3 || !n->x[0] || !n->x[1] || !n->x[2])
    return nn_fail(c, NN_ERR_INVALID_MODEL, "needs inputs X, W and offset");
  nn_status st = nn_conv_params_init(c, n, 1, 3, p);
  if (st)
    return st;
  int64_t og = nn_attr_int(n, "offset_group", 1);
  if (og < 1 || p->C % og != 0)
    return nn_fail(c, NN_ERR_INVALID_MODEL, "offset_group %lld does not divide %lld channels",
                   (long long)og, (long long)p->C);
  *offset_group = og;
  /* offset: (N, og * k_sz * 2, out...), an (y, x, ...) shift per tap;
   * mask: (N, og * k_sz, out...), a factor per tap */
  const int nsp = p->g.nsp, rank = 2 + nsp;
  const nn_value *mask = n->n_in > 4 ? n->x[4] : NULL;
  int64_t want[2 + NN_CONV_SP];
  want[0] = p->batch;
  for (int i = 0; i < nsp; i++)
    want[2 + i] = p->g.out[NN_CONV_SP - nsp + i];
  for (int pass = 0; pass < 2; pass++) {
    const nn_value *v = pass ? mask : n->x[2];
    if (!v)
      continue;
    want[1] = og * p->g.k_sz * (pass ? 1 : 2);
    if (v->rank == rank && memcmp(v->dims, want, sizeof(int64_t) * (size_t)rank) == 0)
      continue;
    char shape[2 + (2 + NN_CONV_SP) * 22] = "[";
    for (int i = 0; i < rank; i++)
      snprintf(shape + strlen(shape), sizeof shape - strlen(shape), "%s%lld", i ? ", " : "",
               (long long)want[i]);
    strcat(shape, "]");
    return nn_fail(c, NN_ERR_SHAPE, "%s must have shape %s", pass ? "mask" : "offset", shape);
  }
  return NN_OK;
}

/* ---- shape and dtype inference ------------------------------------------------ */

/* Inputs 1 .. count-1 that are present have input 0's type (T). */
static nn_status conv_same_dtype(nn_ctx *c, const nn_node *n, int count) {
  nn_dtype dt = n->x[0]->dtype;
  for (int i = 1; i < n->n_in && i < count; i++)
    if (n->x[i] && n->x[i]->dtype != dt)
      return nn_fail(c, NN_ERR_DTYPE, "input %d is %s, input 0 is %s", i,
                     nn_dtype_name(n->x[i]->dtype), nn_dtype_name(dt));
  return NN_OK;
}

/* Y = (N, M, out...) of type dt. */
static nn_status conv_set_y(nn_ctx *c, nn_node *n, const nn_conv_params *p, nn_dtype dt) {
  const int nsp = p->g.nsp;
  int64_t dims[2 + NN_CONV_SP];
  dims[0] = p->batch;
  dims[1] = p->M;
  for (int i = 0; i < nsp; i++)
    dims[2 + i] = p->g.out[NN_CONV_SP - nsp + i];
  return nn_set_output(c, n->y[0], dt, 2 + nsp, dims);
}

/* Conv: X, W and B of one type.  A Conv the planner fused (nn_node.pre,
 * res_slot: inputs past B) infers the same: x[0] keeps the shape it is
 * prepared with, the fused inputs are the kernel's to check. */
static nn_status conv_infer(nn_ctx *c, nn_node *n) {
  nn_conv_params p;
  nn_status st = nn_conv_params_init(c, n, 1, 2, &p);
  if (st == NN_OK)
    st = conv_same_dtype(c, n, 3);
  return st ? st : conv_set_y(c, n, &p, n->x[0]->dtype);
}

static nn_status convt_infer(nn_ctx *c, nn_node *n) {
  nn_conv_params p;
  nn_status st = nn_convt_params_init(c, n, &p);
  if (st == NN_OK)
    st = conv_same_dtype(c, n, 3);
  return st ? st : conv_set_y(c, n, &p, n->x[0]->dtype);
}

/* DeformConv: X, W, offset, B and mask of one type. */
static nn_status deform_infer(nn_ctx *c, nn_node *n) {
  nn_conv_params p;
  int64_t og;
  nn_status st = nn_deform_params_init(c, n, &p, &og);
  if (st == NN_OK)
    st = conv_same_dtype(c, n, 5);
  return st ? st : conv_set_y(c, n, &p, n->x[0]->dtype);
}

static const nn_value *qconv_get(const nn_node *n, int i) {
  return i >= 0 && i < n->n_in ? n->x[i] : NULL;
}

static bool qconv_is_q8(nn_dtype dt) { return dt == NN_DTYPE_UINT8 || dt == NN_DTYPE_INT8; }

/* x and w 8-bit; ConvInteger gives int32, QLinearConv y_zero_point's type
 * (x's without it).  Zero points and scales per tensor, w's also per output
 * channel; QLinearConv's bias int32. */
static nn_status qconv_infer(nn_ctx *c, nn_node *n, const nn_qconv_in *q) {
  const nn_value *x = qconv_get(n, q->x), *w = qconv_get(n, q->w);
  if (!x || !w)
    return nn_fail(c, NN_ERR_INVALID_MODEL, "needs inputs x and w");
  if (!qconv_is_q8(x->dtype) || !qconv_is_q8(w->dtype))
    return nn_fail(c, NN_ERR_UNSUPPORTED, "x %s / w %s: only uint8 and int8 are supported",
                   nn_dtype_name(x->dtype), nn_dtype_name(w->dtype));
  bool linear = q->y_scale >= 0;
  const nn_value *yzp = qconv_get(n, q->y_zp);
  nn_dtype ydt = !linear ? NN_DTYPE_INT32 : yzp ? yzp->dtype : x->dtype;
  if (linear && !qconv_is_q8(ydt))
    return nn_fail(c, NN_ERR_UNSUPPORTED, "output type %s is not supported", nn_dtype_name(ydt));
  nn_conv_params p;
  nn_status st = nn_conv_params_init(c, n, q->w, q->bias, &p);
  if (st)
    return st;
  /* zero points: x per tensor, w per tensor or per output channel */
  const nn_value *xzp = qconv_get(n, q->x_zp), *wzp = qconv_get(n, q->w_zp);
  if (xzp && (xzp->numel != 1 || xzp->dtype != x->dtype))
    return nn_fail(c, NN_ERR_UNSUPPORTED, "x_zero_point must be one %s", nn_dtype_name(x->dtype));
  if (wzp && ((wzp->numel != 1 && wzp->numel != p.M) || wzp->dtype != w->dtype))
    return nn_fail(c, NN_ERR_UNSUPPORTED, "w_zero_point must be one or %lld %s", (long long)p.M,
                   nn_dtype_name(w->dtype));
  if (linear) {
    const nn_value *xs = qconv_get(n, q->x_scale), *ws = qconv_get(n, q->w_scale);
    const nn_value *ys = qconv_get(n, q->y_scale), *b = qconv_get(n, q->bias);
    if (!xs || !ws || !ys)
      return nn_fail(c, NN_ERR_INVALID_MODEL, "needs x_scale, w_scale and y_scale");
    if (xs->dtype != NN_DTYPE_FLOAT || ws->dtype != NN_DTYPE_FLOAT || ys->dtype != NN_DTYPE_FLOAT)
      return nn_fail(c, NN_ERR_UNSUPPORTED, "scales must be float32");
    if (xs->numel != 1 || ys->numel != 1 || (ws->numel != 1 && ws->numel != p.M))
      return nn_fail(c, NN_ERR_UNSUPPORTED, "scales must be per tensor (w_scale: or per channel)");
    if (yzp && yzp->numel != 1)
      return nn_fail(c, NN_ERR_UNSUPPORTED, "y_zero_point must be one value");
    if (b && b->dtype != NN_DTYPE_INT32)
      return nn_fail(c, NN_ERR_DTYPE, "B must be int32");
  }
  return conv_set_y(c, n, &p, ydt);
}

static nn_status convint_infer(nn_ctx *c, nn_node *n) { return qconv_infer(c, n, &nn_qconv_integer); }
static nn_status qlinearconv_infer(nn_ctx *c, nn_node *n) {
  return qconv_infer(c, n, &nn_qconv_linear);
}

/* The family's operators (ops/registry.c), each with its shape and dtype
 * inference; the kernels' prepare (cpu/conv.c) picks their paths. */
const nn_op_def nn_ops_conv[] = {
  {.name = "Conv", .versions = {1, 11}, .infer = conv_infer},
  {.name = "ConvTranspose", .versions = {1, 11}, .infer = convt_infer},
  {.name = "DeformConv", .versions = {19}, .infer = deform_infer},
  {.name = "ConvInteger", .versions = {10}, .infer = convint_infer},
  {.name = "QLinearConv", .versions = {10}, .infer = qlinearconv_infer},
  {0},
};

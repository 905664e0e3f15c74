/* vk_conv.c - Conv and ConvTranspose on the Vulkan backend: supports/record
 * and the kernels conv2d (shaders conv2d: implicit GEMM tiled in shared
 * memory; conv2d_direct: depthwise and other narrow groups) and
 * conv_transpose (shader conv_transpose: a gather per output element, 1-D
 * to 3-D).  The CPU side is cpu/conv.c; the geometry (pads, auto_pad,
 * output_padding, output_shape, output size) is the op layer's nn_conv_geom
 * (ops/conv_geom.h), the same for both. */
#include "ops/conv_geom.h"
#include "vk_op_util.h"
#include "vulkan/nn_vk_spirv.h"

/* ---- ops -------------------------------------------------------------------------- */

static bool conv_geometry(const nn_node *n, nn_conv_geom *g) {
  const nn_value *x = n->x[0], *w = n->x[1];
  if (x->rank != 3 && x->rank != 4)
    return false;
  int nsp = x->rank - 2;
  nn_ctx c = {0};
  return nn_conv_geom_init(&c, n, nsp, x->dims + 2, w->dims + 2, true, false, g) == NN_OK;
}

static bool conv_supports(const nn_vk_ctx *ctx, const nn_node *n) {
  bool bias = n->n_in > 2 && n->x[2];
  if (n->n_in < 2 || !f32_io(ctx, n, 2) || (bias && (!is_f32(n->x[2]) || !fits(ctx, n->x[2]))))
    return false;
  const nn_value *x = n->x[0], *w = n->x[1], *y = n->y[0];
  if (w->rank != x->rank || y->rank != x->rank)
    return false;
  nn_ctx c = {0};
  int64_t group;
  if (nn_conv_group(&c, n, x->dims[1], w->dims[0], &group) != NN_OK ||
      w->dims[1] * group != x->dims[1])
    return false;
  nn_conv_geom g;
  nn_vk_act a;
  if (!conv_geometry(n, &g) || !nn_vk_fused_act(n, &a))
    return false;
  for (int i = 1; i < 3; i++)
    if (g.k[i] > 64 || g.s[i] > 64 || g.d[i] > 64 || g.pb[i] > INT32_MAX)
      return false;
  return y->dims[y->rank - 1] == g.out[2] && (x->rank == 3 || y->dims[2] == g.out[1]);
}

static nn_status conv_record(nn_vk_rec *r, const nn_node *n, nn_error *err) {
  const nn_value *x = n->x[0], *w = n->x[1], *y = n->y[0];
  nn_conv_geom g;
  conv_geometry(n, &g);
  nn_ctx c = {0};
  int64_t group;
  nn_conv_group(&c, n, x->dims[1], w->dims[0], &group); /* checked by conv_supports */
  nn_vk_conv2d p = {
      .N = x->dims[0], .C = x->dims[1], .H = g.in[1], .W = g.in[2], .M = w->dims[0],
      .OH = g.out[1], .OW = g.out[2], .KH = (int)g.k[1], .KW = (int)g.k[2], .SH = (int)g.s[1],
      .SW = (int)g.s[2], .DH = (int)g.d[1], .DW = (int)g.d[2], .PT = (int)g.pb[1],
      .PL = (int)g.pb[2], .group = (int)group,
  };
  nn_vk_fused_act(n, &p.act);
  (void)y;
  nn_vk_tensor tx, tw, tb, ty;
  bool bias = n->n_in > 2 && n->x[2];
  TRY(in_t(r, n, 0, &tx, err));
  TRY(in_t(r, n, 1, &tw, err));
  if (bias)
    TRY(in_t(r, n, 2, &tb, err));
  TRY(out_t(r, n, 0, &ty, err));
  return nn_vk_k_conv2d(nn_vk_rec_exec(r), &p, &tx, &tw, bias ? &tb : NULL, &ty, err);
}

/* ---- ConvTranspose ------------------------------------------------------------------ */

static bool convt_geometry(const nn_node *n, nn_conv_geom *g) {
  const nn_value *x = n->x[0], *w = n->x[1];
  if (x->rank < 3 || x->rank > 2 + NN_CONV_SP || w->rank != x->rank)
    return false;
  int nsp = x->rank - 2;
  nn_ctx c = {0};
  return nn_conv_kernel_shape(&c, n, nsp, w->dims + 2) == NN_OK &&
         nn_convt_geom_init(&c, n, nsp, x->dims + 2, w->dims + 2, g) == NN_OK;
}

static bool convt_supports(const nn_vk_ctx *ctx, const nn_node *n) {
  bool bias = n->n_in > 2 && n->x[2];
  if (n->n_in < 2 || !f32_io(ctx, n, 2) || (bias && (!is_f32(n->x[2]) || !fits(ctx, n->x[2]))))
    return false;
  const nn_value *x = n->x[0], *w = n->x[1], *y = n->y[0];
  nn_ctx c = {0};
  int64_t group;
  if (nn_conv_group(&c, n, x->dims[1], 0, &group) != NN_OK || x->numel == 0 ||
      x->rank != y->rank || w->dims[0] != x->dims[1] ||
      y->dims[0] != x->dims[0] || y->dims[1] != w->dims[1] * group ||
      (bias && n->x[2]->numel != y->dims[1]))
    return false;
  nn_conv_geom g;
  nn_vk_act a;
  if (!convt_geometry(n, &g) || !nn_vk_fused_act(n, &a))
    return false;
  int off = NN_CONV_SP - g.nsp;
  for (int i = 0; i < NN_CONV_SP; i++) {
    /* the kernel loops over taps (specialized) and indexes with 32 bits */
    if (g.k[i] > 64 || g.s[i] > 64 || g.d[i] > 64 || g.pb[i] > INT32_MAX / 4 ||
        g.out[i] + g.pb[i] > INT32_MAX / 4)
      return false;
    if (i >= off && y->dims[2 + i - off] != g.out[i])
      return false;
  }
  return true;
}

static nn_status convt_record(nn_vk_rec *r, const nn_node *n, nn_error *err) {
  const nn_value *x = n->x[0], *w = n->x[1];
  nn_conv_geom g;
  convt_geometry(n, &g);
  nn_ctx c = {0};
  int64_t group;
  nn_conv_group(&c, n, x->dims[1], 0, &group); /* checked by convt_supports */
  nn_vk_convt p = {.N = x->dims[0], .C = x->dims[1], .M = w->dims[1] * group, .group = (int)group};
  for (int i = 0; i < NN_CONV_SP; i++) {
    p.in[i] = g.in[i];
    p.out[i] = g.out[i];
    p.k[i] = (int)g.k[i];
    p.s[i] = (int)g.s[i];
    p.d[i] = (int)g.d[i];
    p.pb[i] = (int)g.pb[i];
  }
  nn_vk_fused_act(n, &p.act);
  nn_vk_tensor tx, tw, tb, ty;
  bool bias = n->n_in > 2 && n->x[2];
  TRY(in_t(r, n, 0, &tx, err));
  TRY(in_t(r, n, 1, &tw, err));
  if (bias)
    TRY(in_t(r, n, 2, &tb, err));
  TRY(out_t(r, n, 0, &ty, err));
  return nn_vk_k_convt(nn_vk_rec_exec(r), &p, &tx, &tw, bias ? &tb : NULL, &ty, err);
}

/* ---- kernels ---------------------------------------------------------------------- */

nn_status nn_vk_k_conv2d(nn_vk_exec *e, const nn_vk_conv2d *p, const nn_vk_tensor *x,
                         const nn_vk_tensor *w, const nn_vk_tensor *bias,
                         const nn_vk_tensor *y, nn_error *err) {
  if (p->group <= 0 || p->C % p->group || p->M % p->group || p->KH <= 0 || p->KW <= 0 ||
      p->SH <= 0 || p->SW <= 0 || p->DH <= 0 || p->DW <= 0 || p->N < 0 || p->OH < 0 ||
      p->OW < 0)
    return nn_error_set(err, NN_ERR_INVALID_ARG, "vulkan conv2d: bad parameters");
  int64_t G = p->group, Cg = p->C / G, Mg = p->M / G;
  int64_t nx = p->N * p->C * p->H * p->W, nw = p->M * Cg * p->KH * p->KW;
  int64_t ny = p->N * p->M * p->OH * p->OW;
  if (ny == 0)
    return NN_OK;
  nn_status st;
  if ((st = need(x, (uint64_t)nx, "conv x", err)) || (st = need(w, (uint64_t)nw, "conv w", err)) ||
      (st = need(y, (uint64_t)ny, "conv y", err)) ||
      (bias && (st = need(bias, (uint64_t)p->M, "conv bias", err))))
    return st;
  nn_vk_dispatch d;
  /* Few input channels per group (depthwise: 1) leave nothing for the
   * shared-memory tiles to reuse: direct kernel. */
  if (Cg * p->KH * p->KW < 8 || Cg == 1) {
    nn_vk_dispatch_init(&d, NN_VK_SHADER_CONV2D_DIRECT);
    d.n_spec = 9;
    d.spec[0] = local_1d(e);
    d.spec[1] = (uint32_t)p->act.kind;
    d.spec[2] = bias ? 1 : 0;
    d.spec[3] = (uint32_t)p->KH;
    d.spec[4] = (uint32_t)p->KW;
    d.spec[5] = (uint32_t)p->SH;
    d.spec[6] = (uint32_t)p->SW;
    d.spec[7] = (uint32_t)p->DH;
    d.spec[8] = (uint32_t)p->DW;
    push_u(&d, 0, (uint64_t)ny);
    push_u(&d, 1, (uint64_t)Cg);
    push_u(&d, 2, (uint64_t)p->H);
    push_u(&d, 3, (uint64_t)p->W);
    push_u(&d, 4, (uint64_t)p->M);
    push_u(&d, 5, (uint64_t)Mg);
    push_u(&d, 6, (uint64_t)p->OH);
    push_u(&d, 7, (uint64_t)p->OW);
    push_i(&d, 8, p->PT);
    push_i(&d, 9, p->PL);
    push_u(&d, 10, bind_n(e, &d, 0, x, (uint64_t)nx, false));
    push_u(&d, 11, bind_n(e, &d, 1, w, (uint64_t)nw, false));
    push_u(&d, 12, bias ? bind_n(e, &d, 2, bias, (uint64_t)p->M, false)
                        : bind_n(e, &d, 2, w, 1, false));
    push_u(&d, 13, bind_n(e, &d, 3, y, (uint64_t)ny, true));
    push_f(&d, 14, p->act.a);
    push_f(&d, 15, p->act.b);
    d.groups[0] = groups_for((uint64_t)ny, local_1d(e));
    return nn_vk_exec_dispatch(e, &d, err);
  }
  int64_t NP = p->OH * p->OW;
  if (p->N * G > NN_VK_MAX_GROUPS)
    return nn_error_set(err, NN_ERR_UNSUPPORTED, "vulkan conv2d: batch*group %lld too large",
                        (long long)(p->N * G));
  /* Tiles: 16x16 invocations, each TM x TN outputs; shrink the tile where
   * the layer is narrow so fewer invocations idle. */
  uint32_t TM = Mg >= 64 ? 4 : Mg >= 32 ? 2 : 1, TN = NP >= 64 ? 4 : NP >= 32 ? 2 : 1;
  uint32_t BM = 16 * TM, BN = 16 * TN, BK = 16;
  bool fast = p->KH == 1 && p->KW == 1 && p->SH == 1 && p->SW == 1 && p->PT == 0 &&
              p->PL == 0 && p->OH == p->H && p->OW == p->W;
  nn_vk_dispatch_init(&d, NN_VK_SHADER_CONV2D);
  d.n_spec = 12;
  d.spec[0] = TM;
  d.spec[1] = TN;
  d.spec[2] = BK;
  d.spec[3] = (uint32_t)p->act.kind;
  d.spec[4] = bias ? 1 : 0;
  d.spec[5] = (uint32_t)p->KH;
  d.spec[6] = (uint32_t)p->KW;
  d.spec[7] = (uint32_t)p->SH;
  d.spec[8] = (uint32_t)p->SW;
  d.spec[9] = (uint32_t)p->DH;
  d.spec[10] = (uint32_t)p->DW;
  d.spec[11] = fast ? 1 : 0;
  push_u(&d, 0, (uint64_t)Cg);
  push_u(&d, 1, (uint64_t)p->H);
  push_u(&d, 2, (uint64_t)p->W);
  push_u(&d, 3, (uint64_t)Mg);
  push_u(&d, 4, (uint64_t)p->OH);
  push_u(&d, 5, (uint64_t)p->OW);
  push_i(&d, 6, p->PT);
  push_i(&d, 7, p->PL);
  push_u(&d, 8, (uint64_t)G);
  push_u(&d, 9, bind_n(e, &d, 0, x, (uint64_t)nx, false));
  push_u(&d, 10, bind_n(e, &d, 1, w, (uint64_t)nw, false));
  push_u(&d, 11, bias ? bind_n(e, &d, 2, bias, (uint64_t)p->M, false)
                      : bind_n(e, &d, 2, w, 1, false));
  push_u(&d, 12, bind_n(e, &d, 3, y, (uint64_t)ny, true));
  push_f(&d, 13, p->act.a);
  push_f(&d, 14, p->act.b);
  d.groups[0] = (uint32_t)((NP + BN - 1) / BN);
  d.groups[1] = (uint32_t)((Mg + BM - 1) / BM);
  d.groups[2] = (uint32_t)(p->N * G);
  return nn_vk_exec_dispatch(e, &d, err);
}

nn_status nn_vk_k_convt(nn_vk_exec *e, const nn_vk_convt *p, const nn_vk_tensor *x,
                        const nn_vk_tensor *w, const nn_vk_tensor *bias, const nn_vk_tensor *y,
                        nn_error *err) {
  if (p->group <= 0 || p->C % p->group || p->M % p->group || p->N < 0)
    return nn_error_set(err, NN_ERR_INVALID_ARG, "vulkan convtranspose: bad parameters");
  int64_t isz = 1, osz = 1, ksz = 1;
  for (int i = 0; i < 3; i++) {
    if (p->k[i] <= 0 || p->s[i] <= 0 || p->d[i] <= 0 || p->pb[i] < 0 || p->in[i] < 0 ||
        p->out[i] < 0)
      return nn_error_set(err, NN_ERR_INVALID_ARG, "vulkan convtranspose: bad geometry");
    isz *= p->in[i];
    osz *= p->out[i];
    ksz *= p->k[i];
  }
  int64_t G = p->group, Cg = p->C / G, Mg = p->M / G;
  int64_t nx = p->N * p->C * isz, nw = p->C * Mg * ksz, ny = p->N * p->M * osz;
  if (ny == 0)
    return NN_OK;
  nn_status st;
  if ((st = need(x, (uint64_t)(nx ? nx : 1), "convtranspose x", err)) ||
      (st = need(w, (uint64_t)nw, "convtranspose w", err)) ||
      (st = need(y, (uint64_t)ny, "convtranspose y", err)) ||
      (bias && (st = need(bias, (uint64_t)p->M, "convtranspose bias", err))))
    return st;
  nn_vk_dispatch d;
  nn_vk_dispatch_init(&d, NN_VK_SHADER_CONV_TRANSPOSE);
  d.n_spec = 12;
  d.spec[0] = local_1d(e);
  d.spec[1] = (uint32_t)p->act.kind;
  d.spec[2] = bias ? 1 : 0;
  for (int i = 0; i < 3; i++) {
    d.spec[3 + i] = (uint32_t)p->k[i];
    d.spec[6 + i] = (uint32_t)p->s[i];
    d.spec[9 + i] = (uint32_t)p->d[i];
  }
  push_u(&d, 0, (uint64_t)ny);
  push_u(&d, 1, (uint64_t)Cg);
  for (int i = 0; i < 3; i++) {
    push_u(&d, 2 + i, (uint64_t)p->in[i]);
    push_u(&d, 7 + i, (uint64_t)p->out[i]);
    push_i(&d, 10 + i, p->pb[i]);
  }
  push_u(&d, 5, (uint64_t)p->M);
  push_u(&d, 6, (uint64_t)Mg);
  /* an empty input (C == 0 is refused; spatial 0 is not possible with
   * outputs) still binds a word */
  push_u(&d, 13, bind_n(e, &d, 0, x, (uint64_t)(nx ? nx : 1), false));
  push_u(&d, 14, bind_n(e, &d, 1, w, (uint64_t)nw, false));
  push_u(&d, 15, bias ? bind_n(e, &d, 2, bias, (uint64_t)p->M, false)
                      : bind_n(e, &d, 2, w, 1, false));
  push_u(&d, 16, bind_n(e, &d, 3, y, (uint64_t)ny, true));
  push_f(&d, 17, p->act.a);
  push_f(&d, 18, p->act.b);
  d.groups[0] = groups_for((uint64_t)ny, local_1d(e));
  return nn_vk_exec_dispatch(e, &d, err);
}

/* ---- the table -------------------------------------------------------------------- */

const nn_vk_op nn_vk_ops_conv[] = {
    {"Conv", conv_supports, conv_record},
    {"ConvTranspose", convt_supports, convt_record},
    {0},
};

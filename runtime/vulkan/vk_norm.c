/* vk_norm.c - normalizations on the Vulkan backend: inference
 * BatchNormalization as a per-channel affine (shader affine), LRN (shader
 * lrn), and the row normalizations Layer-, RMS-, Instance- and
 * GroupNormalization (shader norm_rows).  The CPU side is cpu/norm.c. */
#include <math.h>
#include <string.h>

#include "ops/activation.h"
#include "ops/norm.h"
#include "vk_op_util.h"
#include "vulkan/nn_vk_spirv.h"

/* ---- ops -------------------------------------------------------------------------- */

static bool bn_supports(const nn_vk_ctx *ctx, const nn_node *n) {
  if (n->n_in < 5 || !f32_io(ctx, n, 1) || n->x[0]->rank < 2)
    return false;
  nn_ctx c = {0};
  nn_bn_params bp;
  if (nn_bn_params_init(&c, n, &bp) != NN_OK || bp.training || bp.not_test || bp.per_element)
    return false;
  for (int k = 1; k < 5; k++)
    if (!known_value(n->x[k]) || !is_f32(n->x[k]) || n->x[k]->numel != n->x[0]->dims[1])
      return false;
  return true;
}

static nn_status bn_record(nn_vk_rec *r, const nn_node *n, nn_error *err) {
  const nn_value *x = n->x[0];
  int64_t C = x->dims[1];
  nn_ctx oc = {0};
  nn_bn_params bp;
  nn_bn_params_init(&oc, n, &bp); /* checked by bn_supports */
  float eps = (float)bp.eps;
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
  nn_ctx c = {0};
  nn_lrn_params lp;
  return f32_io(ctx, n, 1) && n->x[0]->rank >= 2 && nn_lrn_params_init(&c, n, &lp) == NN_OK;
}

static nn_status lrn_record(nn_vk_rec *r, const nn_node *n, nn_error *err) {
  const nn_value *x = n->x[0];
  nn_ctx c = {0};
  nn_lrn_params lp;
  nn_lrn_params_init(&c, n, &lp); /* checked by lrn_supports */
  nn_vk_tensor tx, ty;
  TRY(in_t(r, n, 0, &tx, err));
  TRY(out_t(r, n, 0, &ty, err));
  return nn_vk_k_lrn(nn_vk_rec_exec(r), x->dims[0], x->dims[1], prod(x->dims, 2, x->rank),
                     (int)lp.size, (float)lp.alpha, (float)lp.beta, (float)lp.bias, &tx, &ty, err);
}

/* ---- row normalizations: Layer, RMS, Instance, Group -------------------------------- */

/* Where the rows are and how the parameters map onto them. */
typedef struct rownorm_geom {
  nn_vk_rownorm k;
  /* Layer/RMS: a parameter broadcast over the normalized shape, expanded to
   * a full row at record time (known constants only) */
  bool expand[2];
  int axis;
} rownorm_geom;

static bool rownorm_eps(const nn_node *n, float *eps) {
  nn_ctx c = {0};
  double e;
  if (nn_norm_epsilon(&c, n, &e) != NN_OK)
    return false;
  *eps = (float)e;
  return true;
}

/* A Layer/RMS parameter (input i) against the normalized shape x->dims[axis:]:
 * mode 0 a full row, 1 a scalar, 2 a broadcast (expanded when known);
 * -1 refused. */
static int row_param_mode(const nn_vk_ctx *ctx, const nn_node *n, int i, int axis) {
  const nn_value *v = n->x[i], *x = n->x[0];
  if (!is_f32(v) || !fits(ctx, v))
    return -1;
  int nrank = x->rank - axis;
  int r = v->rank, lead = 0;
  while (r - lead > nrank && v->dims[lead] == 1)
    lead++;
  r -= lead;
  if (r > nrank)
    return -1;
  bool same = v->numel == prod(x->dims, axis, x->rank);
  for (int d = 0; d < r; d++) {
    int64_t want = x->dims[axis + nrank - r + d], got = v->dims[lead + d];
    if (got != want && got != 1)
      return -1;
    if (got != want)
      same = false;
  }
  if (same)
    return 0;
  if (v->numel == 1)
    return 1;
  return known_value(v) ? 2 : -1;
}

static bool rownorm_plan(const nn_vk_ctx *ctx, const nn_node *n, rownorm_geom *g) {
  memset(g, 0, sizeof *g);
  if (n->n_in < 2 || !n->x[0] || !n->x[1] || n->n_out < 1 || !is_f32(n->x[0]) ||
      !fits(ctx, n->x[0]) || !is_f32(n->y[0]) || !fits(ctx, n->y[0]) || n->x[0]->numel == 0)
    return false;
  const nn_value *x = n->x[0];
  nn_vk_rownorm *k = &g->k;
  /* the kernel has no activation epilogue */
  if (!rownorm_eps(n, &k->eps) || n->act.kind != NN_ACT_NONE)
    return false;
  bool layer = op_is(n, "LayerNormalization"), rms = op_is(n, "RMSNormalization");
  bool has_bias = n->n_in > 2 && n->x[2];
  if (has_bias && (rms || !is_f32(n->x[2]) || !fits(ctx, n->x[2])))
    return false;
  k->kind = rms ? NN_VK_ROWNORM_RMS : NN_VK_ROWNORM_LAYER;
  if (layer || rms) {
    nn_ctx c = {0};
    nn_dtype st;
    if (nn_rownorm_axis(&c, n, x->rank, &g->axis) != NN_OK ||
        nn_norm_stash_type(&c, n, &st) != NN_OK)
      return false;
    k->rows = prod(x->dims, 0, g->axis);
    k->len = prod(x->dims, g->axis, x->rank);
    k->RM = 1;
    k->JD = 1;
    for (int p = 0; p < (has_bias ? 2 : 1); p++) {
      int mode = row_param_mode(ctx, n, 1 + p, g->axis);
      if (mode < 0)
        return false;
      g->expand[p] = mode == 2;
      if (p == 0)
        k->js_s = mode != 1;
      else
        k->js_b = mode != 1;
    }
    k->n_scale = k->js_s ? k->len : 1;
    k->n_bias = has_bias ? (k->js_b ? k->len : 1) : 0;
    /* the saved statistics (LayerNormalization only), float32 [rows] */
    for (int i = 1; i < n->n_out; i++) {
      const nn_value *o = n->y[i];
      if (!o)
        continue;
      if (rms || i > 2 || st != NN_DTYPE_FLOAT || !is_f32(o) || o->numel != k->rows ||
          !fits(ctx, o))
        return false;
    }
  } else {
    if (x->rank < 3 || n->n_out != 1 || !has_bias)
      return false;
    int64_t C = x->dims[1], inner = prod(x->dims, 2, x->rank), G = C;
    bool per_group = false;
    if (op_is(n, "GroupNormalization")) {
      nn_ctx c = {0};
      nn_groupnorm_params gp;
      if (nn_groupnorm_params_init(&c, n, C, &gp) != NN_OK)
        return false;
      G = gp.groups;
      per_group = gp.per_group;
    }
    int64_t pc = per_group ? G : C;
    if (!is_f32(n->x[1]) || !fits(ctx, n->x[1]) || n->x[1]->numel != pc ||
        n->x[2]->numel != pc)
      return false;
    k->rows = x->dims[0] * G;
    k->len = C / G * inner;
    k->RM = G;
    if (per_group) {
      k->rs_s = k->rs_b = 1;
      k->JD = 1;
    } else {
      k->rs_s = k->rs_b = C / G;
      k->JD = inner;
      k->js_s = k->js_b = 1;
    }
    k->n_scale = k->n_bias = pc;
  }
  return k->len > 0 && fits_u32(k->len) && fits_u32(k->rows);
}

static bool rownorm_supports(const nn_vk_ctx *ctx, const nn_node *n) {
  rownorm_geom g;
  return rownorm_plan(ctx, n, &g);
}

/* A Layer/RMS parameter broadcast over the normalized shape, as a full row
 * of len floats on the device. */
static nn_status row_param_expand(nn_vk_rec *r, const nn_node *n, int i, int axis,
                                  nn_vk_tensor *t, nn_error *err) {
  const nn_value *v = n->x[i], *x = n->x[0];
  int nrank = x->rank - axis;
  int rk = v->rank, lead = 0;
  while (rk - lead > nrank && v->dims[lead] == 1)
    lead++;
  rk -= lead;
  int64_t len = prod(x->dims, axis, x->rank), st[NN_MAX_RANK];
  nn_broadcast_strides(rk, v->dims + lead, nrank, x->dims + axis, st);
  float *row = nn_malloc((size_t)len * sizeof *row);
  if (!row)
    return nn_error_set(err, NN_ERR_NOMEM, "out of memory");
  const float *src = v->data;
  for (int64_t j = 0; j < len; j++) {
    int64_t rem = j, idx = 0;
    for (int d = nrank - 1; d >= 0; d--) {
      int64_t dd = x->dims[axis + d];
      idx += (rem % dd) * st[d];
      rem /= dd;
    }
    row[j] = src[idx];
  }
  nn_status s = nn_vk_rec_const(r, row, (size_t)len * sizeof *row, t, err);
  nn_free(row);
  return s;
}

static nn_status rownorm_record(nn_vk_rec *r, const nn_node *n, nn_error *err) {
  rownorm_geom g;
  rownorm_plan(nn_vk_exec_ctx(nn_vk_rec_exec(r)), n, &g);
  nn_vk_tensor tx, ts, tb, ty, tm, ti;
  bool has_bias = n->n_in > 2 && n->x[2];
  TRY(in_t(r, n, 0, &tx, err));
  if (g.expand[0])
    TRY(row_param_expand(r, n, 1, g.axis, &ts, err));
  else
    TRY(in_t(r, n, 1, &ts, err));
  if (has_bias) {
    if (g.expand[1])
      TRY(row_param_expand(r, n, 2, g.axis, &tb, err));
    else
      TRY(in_t(r, n, 2, &tb, err));
  }
  TRY(out_t(r, n, 0, &ty, err));
  bool hm = n->n_out > 1 && n->y[1], hi = n->n_out > 2 && n->y[2];
  if (hm)
    TRY(out_t(r, n, 1, &tm, err));
  if (hi)
    TRY(out_t(r, n, 2, &ti, err));
  return nn_vk_k_rownorm(nn_vk_rec_exec(r), &g.k, &tx, &ts, has_bias ? &tb : NULL, &ty,
                         hm ? &tm : NULL, hi ? &ti : NULL, err);
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

nn_status nn_vk_k_rownorm(nn_vk_exec *e, const nn_vk_rownorm *p, const nn_vk_tensor *x,
                          const nn_vk_tensor *scale, const nn_vk_tensor *bias,
                          const nn_vk_tensor *y, const nn_vk_tensor *mean,
                          const nn_vk_tensor *inv, nn_error *err) {
  if (p->rows < 0 || p->len < 1 || p->RM < 1 || p->JD < 1 || p->n_scale < 1 ||
      (bias && p->n_bias < 1) || !(p->eps >= 0.0f) ||
      (p->kind != NN_VK_ROWNORM_LAYER && p->kind != NN_VK_ROWNORM_RMS))
    return nn_error_set(err, NN_ERR_INVALID_ARG, "vulkan rownorm: bad parameters");
  int64_t n = p->rows * p->len;
  if (n == 0)
    return NN_OK;
  nn_status st;
  if ((st = need(x, (uint64_t)n, "rownorm x", err)) || (st = need(y, (uint64_t)n, "rownorm y", err)) ||
      (st = need(scale, (uint64_t)p->n_scale, "rownorm scale", err)) ||
      (bias && (st = need(bias, (uint64_t)p->n_bias, "rownorm bias", err))) ||
      (mean && (st = need(mean, (uint64_t)p->rows, "rownorm mean", err))) ||
      (inv && (st = need(inv, (uint64_t)p->rows, "rownorm inv", err))))
    return st;
  /* short rows: an invocation per row; else a workgroup */
  bool per_inv = p->len <= 32;
  nn_vk_dispatch d;
  nn_vk_dispatch_init(&d, NN_VK_SHADER_NORM_ROWS);
  d.n_spec = 6;
  d.spec[0] = per_inv ? local_1d(e) : local_red(e);
  d.spec[1] = (uint32_t)p->kind;
  d.spec[2] = per_inv ? 1 : 0;
  d.spec[3] = bias ? 1 : 0;
  d.spec[4] = mean ? 1 : 0;
  d.spec[5] = inv ? 1 : 0;
  push_u(&d, 0, (uint64_t)p->rows);
  push_u(&d, 1, (uint64_t)p->len);
  push_f(&d, 2, p->eps);
  push_u(&d, 3, (uint64_t)p->RM);
  push_u(&d, 4, (uint64_t)p->JD);
  push_u(&d, 5, (uint64_t)p->rs_s);
  push_u(&d, 6, (uint64_t)p->js_s);
  push_u(&d, 7, (uint64_t)p->rs_b);
  push_u(&d, 8, (uint64_t)p->js_b);
  push_u(&d, 9, bind_n(e, &d, 0, x, (uint64_t)n, false));
  push_u(&d, 10, bind_n(e, &d, 1, scale, (uint64_t)p->n_scale, false));
  push_u(&d, 11, bias ? bind_n(e, &d, 2, bias, (uint64_t)p->n_bias, false)
                      : bind_n(e, &d, 2, scale, 1, false));
  push_u(&d, 12, bind_n(e, &d, 3, y, (uint64_t)n, true));
  /* absent statistics: a word of the scale, never written */
  push_u(&d, 13, mean ? bind_n(e, &d, 4, mean, (uint64_t)p->rows, true)
                      : bind_n(e, &d, 4, scale, 1, false));
  push_u(&d, 14, inv ? bind_n(e, &d, 5, inv, (uint64_t)p->rows, true)
                     : bind_n(e, &d, 5, scale, 1, false));
  d.groups[0] = per_inv ? groups_for((uint64_t)p->rows, local_1d(e))
                        : groups_for((uint64_t)p->rows, 1);
  return nn_vk_exec_dispatch(e, &d, err);
}

/* ---- the table -------------------------------------------------------------------- */

const nn_vk_op nn_vk_ops_norm[] = {
    {"BatchNormalization", bn_supports, bn_record},
    {"LRN", lrn_supports, lrn_record},
    {"LayerNormalization", rownorm_supports, rownorm_record},
    {"RMSNormalization", rownorm_supports, rownorm_record},
    {"InstanceNormalization", rownorm_supports, rownorm_record},
    {"GroupNormalization", rownorm_supports, rownorm_record},
    {0},
};

/* vk_gemm.c - Gemm and MatMul on the Vulkan backend: their supports/record
 * and the batched GEMM kernel (shaders gemm: tiled; gemv: one row or a
 * few).  The CPU side is cpu/gemm.c. */
#include <string.h>

#include "ops/gemm.h"
#include "vk_op_util.h"
#include "vulkan/nn_vk_spirv.h"

/* ---- ops -------------------------------------------------------------------------- */

static bool gemm_supports(const nn_vk_ctx *ctx, const nn_node *n) {
  bool has_c = n->n_in > 2 && n->x[2];
  if (n->n_in < 2 || !is_f32(n->x[0]) || !is_f32(n->x[1]) || !is_f32(n->y[0]) ||
      (has_c && !is_f32(n->x[2])))
    return false;
  if (!fits(ctx, n->x[0]) || !fits(ctx, n->y[0]) || (has_c && !fits(ctx, n->x[2])))
    return false;
  if (n->x[0]->rank != 2 || n->x[1]->rank != 2 || n->y[0]->rank != 2)
    return false;

  if (has_c && n->x[2]->rank > 2)
    return false;
  /* B beyond maxStorageBufferRange is split by output columns (M == 1) */
  if (!fits(ctx, n->x[1]) && n->y[0]->dims[0] != 1)
    return false;
  nn_ctx c = {0};
  nn_gemm_params gp;
  nn_vk_act a;
  if (nn_gemm_params_init(&c, n, &gp) != NN_OK ||
      (gp.c_no_broadcast && n->x[2]->numel != n->y[0]->numel))
    return false;
  return nn_vk_fused_act(n, &a);
}

static nn_status gemm_record(nn_vk_rec *r, const nn_node *n, nn_error *err) {
  const nn_value *a = n->x[0], *b = n->x[1];
  nn_ctx oc = {0};
  nn_gemm_params gp;
  nn_gemm_params_init(&oc, n, &gp); /* checked by gemm_supports */
  bool has_c = gp.has_c;
  nn_vk_gemm p = {.M = gp.M, .N = gp.N, .K = gp.K, .batch1 = 1, .batch2 = 1,
                  .alpha = gp.alpha, .beta = gp.beta};
  p.sam = gp.ta ? 1 : a->dims[1];
  p.sak = gp.ta ? a->dims[1] : 1;
  p.sbk = gp.tb ? 1 : b->dims[1];
  p.sbn = gp.tb ? b->dims[1] : 1;
  if (has_c) {
    /* C's strides over the M x N result, 0 along a broadcast axis */
    p.scm = gp.M == 1 ? 0 : gp.cs[0];
    p.scn = gp.N == 1 ? 0 : gp.cs[1];
  }
  nn_vk_fused_act(n, &p.act);
  nn_vk_tensor tA, tB, tC, tY;
  TRY(in_t(r, n, 0, &tA, err));
  TRY(in_t(r, n, 1, &tB, err));
  if (has_c)
    TRY(in_t(r, n, 2, &tC, err));
  TRY(out_t(r, n, 0, &tY, err));
  return nn_vk_k_gemm(nn_vk_rec_exec(r), &p, &tA, &tB, has_c ? &tC : NULL, &tY, err);
}

/* MatMul batch dims broadcast; collapsed they must fit the kernel's two
 * batch levels. */
static bool matmul_params(const nn_node *n, nn_vk_gemm *p) {
  const nn_value *a = n->x[0], *b = n->x[1];
  int ra = a->rank, rb = b->rank;
  if (ra < 1 || rb < 1)
    return false;
  int64_t M = ra >= 2 ? a->dims[ra - 2] : 1, K = a->dims[ra - 1];
  int64_t N = rb >= 2 ? b->dims[rb - 1] : 1;
  int64_t Kb = rb >= 2 ? b->dims[rb - 2] : b->dims[0];
  if (K != Kb)
    return false;
  int na = ra > 2 ? ra - 2 : 0, nb = rb > 2 ? rb - 2 : 0;
  int nbat = na > nb ? na : nb;
  int64_t bd[NN_MAX_RANK], sa[NN_MAX_RANK], sb[NN_MAX_RANK];
  if (nbat > 0 && nn_broadcast_shape(na, a->dims, nb, b->dims, &nbat, bd) != NN_OK)
    return false;
  if (nbat > 0) {
    int64_t ad[NN_MAX_RANK], bdd[NN_MAX_RANK];
    for (int i = 0; i < na; i++)
      ad[i] = a->dims[i];
    for (int i = 0; i < nb; i++)
      bdd[i] = b->dims[i];
    nn_broadcast_strides(na, ad, nbat, bd, sa);
    nn_broadcast_strides(nb, bdd, nbat, bd, sb);
    for (int i = 0; i < nbat; i++) {
      sa[i] *= M * K;
      sb[i] *= K * N;
    }
  }
  /* collapse batch dims: drop 1s, merge contiguous neighbours */
  int64_t cd[NN_MAX_RANK], ca[NN_MAX_RANK], cb[NN_MAX_RANK];
  int c = 0;
  for (int i = 0; i < nbat; i++) {
    if (bd[i] == 1)
      continue;
    if (c > 0 && ca[c - 1] == sa[i] * bd[i] && cb[c - 1] == sb[i] * bd[i]) {
      cd[c - 1] *= bd[i];
      ca[c - 1] = sa[i];
      cb[c - 1] = sb[i];
      continue;
    }
    cd[c] = bd[i];
    ca[c] = sa[i];
    cb[c] = sb[i];
    c++;
  }
  if (c > 2)
    return false;
  memset(p, 0, sizeof *p);
  p->M = M;
  p->N = N;
  p->K = K;
  p->sam = K;
  p->sak = 1;
  p->sbk = N;
  p->sbn = 1;
  p->batch1 = c >= 2 ? cd[0] : 1;
  p->batch2 = c >= 1 ? cd[c - 1] : 1;
  p->sa1 = c >= 2 ? ca[0] : 0;
  p->sb1 = c >= 2 ? cb[0] : 0;
  p->sa2 = c >= 1 ? ca[c - 1] : 0;
  p->sb2 = c >= 1 ? cb[c - 1] : 0;
  p->alpha = 1.0f;
  return true;
}

static bool matmul_supports(const nn_vk_ctx *ctx, const nn_node *n) {
  nn_vk_gemm p;
  nn_vk_act a;
  if (n->n_in != 2 || !f32_io(ctx, n, 1) || !is_f32(n->x[1]))
    return false;
  if (!matmul_params(n, &p) || !nn_vk_fused_act(n, &a))
    return false;
  return fits(ctx, n->x[1]) || (p.M == 1 && p.batch1 * p.batch2 == 1);
}

static nn_status matmul_record(nn_vk_rec *r, const nn_node *n, nn_error *err) {
  nn_vk_gemm p;
  matmul_params(n, &p);
  nn_vk_fused_act(n, &p.act);
  nn_vk_tensor tA, tB, tY;
  TRY(in_t(r, n, 0, &tA, err));
  TRY(in_t(r, n, 1, &tB, err));
  TRY(out_t(r, n, 0, &tY, err));
  return nn_vk_k_gemm(nn_vk_rec_exec(r), &p, &tA, &tB, NULL, &tY, err);
}

/* ---- kernels ---------------------------------------------------------------------- */

/* Push layout shared by gemm.comp and gemm_gemv.comp. */
enum {
  G_M, G_N, G_K, G_SAM, G_SAK, G_SBK, G_SBN, G_B2, G_SA1, G_SA2, G_SB1, G_SB2, G_SCM, G_SCN,
  G_OA, G_OB, G_OC, G_OY, G_ALPHA, G_BETA, G_ACTA, G_ACTB, G_TOTAL
};

/* One dispatch over output columns [n0, n0+nc) of every row. */
static nn_status gemm_part(nn_vk_exec *e, const nn_vk_gemm *p, int64_t n0, int64_t nc,
                           const nn_vk_tensor *a, uint64_t na, const nn_vk_tensor *b,
                           const nn_vk_tensor *c, uint64_t nc_elems, const nn_vk_tensor *y,
                           nn_error *err) {
  int64_t batch = p->batch1 * p->batch2;
  /* Both shaders step y rows by the N they are given; a column part of a
   * multi-row output would need the full row length. */
  if (nc != p->N && p->M * batch != 1)
    return nn_error_set(err, NN_ERR_UNSUPPORTED, "vulkan gemm: split output with several rows");
  /* B restricted to the columns of this part. */
  int64_t bdims[4] = {p->batch1, p->batch2, p->K, nc}, bstr[4] = {p->sb1, p->sb2, p->sbk, p->sbn};
  uint64_t nb = p->K ? span_elems(4, bdims, bstr) : 1; /* K == 0: a stand-in, never read */
  nn_vk_tensor bv = {b->buffer, b->offset + (VkDeviceSize)(n0 * p->sbn) * 4, nb * 4};
  bool gemv = p->M * batch <= 4 && p->sbk == 1 && p->K >= 64;
  nn_vk_dispatch d;
  nn_vk_dispatch_init(&d, gemv ? NN_VK_SHADER_GEMM_GEMV : NN_VK_SHADER_GEMM);
  /* 16x16 invocations, each TM x TN outputs (see gemm.comp) */
  uint32_t TM = p->M >= 64 ? 4 : p->M >= 32 ? 2 : 1, TN = nc >= 64 ? 4 : nc >= 32 ? 2 : 1;
  uint32_t BM = 16 * TM, BN = 16 * TN;
  if (gemv) {
    d.n_spec = 3;
    d.spec[0] = local_red(e);
    d.spec[1] = (uint32_t)p->act.kind;
    d.spec[2] = c ? 1 : 0;
  } else {
    d.n_spec = 5;
    d.spec[0] = TM;
    d.spec[1] = TN;
    d.spec[2] = 16;
    d.spec[3] = (uint32_t)p->act.kind;
    d.spec[4] = c ? 1 : 0;
  }
  push_u(&d, G_M, (uint64_t)p->M);
  push_u(&d, G_N, (uint64_t)nc);
  push_u(&d, G_K, (uint64_t)p->K);
  push_u(&d, G_SAM, (uint64_t)p->sam);
  push_u(&d, G_SAK, (uint64_t)p->sak);
  push_u(&d, G_SBK, (uint64_t)p->sbk);
  push_u(&d, G_SBN, (uint64_t)p->sbn);
  push_u(&d, G_B2, (uint64_t)p->batch2);
  push_u(&d, G_SA1, (uint64_t)p->sa1);
  push_u(&d, G_SA2, (uint64_t)p->sa2);
  push_u(&d, G_SB1, (uint64_t)p->sb1);
  push_u(&d, G_SB2, (uint64_t)p->sb2);
  push_u(&d, G_SCM, (uint64_t)p->scm);
  push_u(&d, G_SCN, (uint64_t)p->scn);
  push_u(&d, G_OA, bind_n(e, &d, 0, a, na, false));
  push_u(&d, G_OB, nn_vk_dispatch_bind(e, &d, 1, &bv, false));
  /* the C view starts at column n0 */
  push_u(&d, G_OC, c ? bind_n(e, &d, 2, c, nc_elems, false) + (uint64_t)(n0 * p->scn)
                     : bind_n(e, &d, 2, a, 1, false));
  push_u(&d, G_OY, bind_n(e, &d, 3, y, (uint64_t)(batch * p->M * p->N), true) + (uint64_t)n0);
  push_f(&d, G_ALPHA, p->alpha);
  push_f(&d, G_BETA, p->beta);
  push_f(&d, G_ACTA, p->act.a);
  push_f(&d, G_ACTB, p->act.b);
  if (gemv) {
    uint64_t total = (uint64_t)(batch * p->M * nc);
    push_u(&d, G_TOTAL, total);
    d.groups[0] = groups_for(total, 1);
  } else {
    d.groups[0] = (uint32_t)((nc + BN - 1) / BN);
    d.groups[1] = (uint32_t)((p->M + BM - 1) / BM);
    d.groups[2] = (uint32_t)batch;
  }
  return nn_vk_exec_dispatch(e, &d, err);
}

nn_status nn_vk_k_gemm(nn_vk_exec *e, const nn_vk_gemm *p, const nn_vk_tensor *a,
                       const nn_vk_tensor *b, const nn_vk_tensor *c, const nn_vk_tensor *y,
                       nn_error *err) {
  const int64_t vals[] = {p->M, p->N, p->K, p->sam, p->sak, p->sbk, p->sbn, p->batch1,
                          p->batch2, p->sa1, p->sa2, p->sb1, p->sb2, p->scm, p->scn};
  for (size_t i = 0; i < sizeof vals / sizeof vals[0]; i++)
    if (!fits_u32(vals[i]))
      return nn_error_set(err, NN_ERR_INVALID_ARG, "vulkan gemm: bad sizes/strides");
  if (p->batch1 < 1 || p->batch2 < 1)
    return nn_error_set(err, NN_ERR_INVALID_ARG, "vulkan gemm: bad batch");
  int64_t batch = p->batch1 * p->batch2;
  if (p->M == 0 || p->N == 0)
    return NN_OK;
  if (batch > NN_VK_MAX_GROUPS)
    return nn_error_set(err, NN_ERR_UNSUPPORTED, "vulkan gemm: batch %lld", (long long)batch);
  /* K == 0, an empty inner dimension: Y = beta*C (0 without C), then the
   * activation, as on the CPU.  A and B hold no element and a zero-byte view
   * is no valid descriptor range; the shaders read neither when K is 0, so
   * the output view stands in for both bindings. */
  if (p->K == 0) {
    a = y;
    b = y;
  }
  int64_t adims[4] = {p->batch1, p->batch2, p->M, p->K}, astr[4] = {p->sa1, p->sa2, p->sam, p->sak};
  int64_t bdims[4] = {p->batch1, p->batch2, p->K, p->N}, bstr[4] = {p->sb1, p->sb2, p->sbk, p->sbn};
  int64_t cdims[2] = {p->M, p->N}, cstr[2] = {p->scm, p->scn};
  uint64_t na = p->K ? span_elems(4, adims, astr) : 1, nb = p->K ? span_elems(4, bdims, bstr) : 1;
  uint64_t ncl = c ? span_elems(2, cdims, cstr) : 0;
  nn_status st;
  if ((st = need(a, na, "gemm a", err)) || (st = need(b, nb, "gemm b", err)) ||
      (st = need(y, (uint64_t)(batch * p->M * p->N), "gemm y", err)) ||
      (c && (st = need(c, ncl, "gemm c", err))))
    return st;
  /* A weight matrix beyond maxStorageBufferRange (VGG's 400 MB FC layer on
   * lavapipe's 128 MiB) is bound a band of output columns at a time. */
  uint64_t limit = nn_vk_exec_ctx(e)->props.limits.maxStorageBufferRange;
  int64_t parts = 1;
  if (nb * 4 > limit) {
    if (batch != 1 || p->M != 1 || p->sbn == 0)
      return nn_error_set(err, NN_ERR_UNSUPPORTED, "vulkan gemm: B exceeds maxStorageBufferRange");
    parts = (int64_t)((nb * 4 + limit / 2 - 1) / (limit / 2));
  }
  int64_t per = (p->N + parts - 1) / parts;
  for (int64_t n0 = 0; n0 < p->N && st == NN_OK; n0 += per) {
    int64_t nc = p->N - n0 < per ? p->N - n0 : per;
    st = gemm_part(e, p, n0, nc, a, na, b, c, ncl, y, err);
  }
  return st;
}

/* ---- the table -------------------------------------------------------------------- */

const nn_vk_op nn_vk_ops_gemm[] = {
    {"Gemm", gemm_supports, gemm_record},
    {"MatMul", matmul_supports, matmul_record},
    {0},
};

/* vk_kernels.c - one function per compute kernel: parameters -> push
 * constants, specialization constants, bindings and group counts.
 *
 * What goes where: shapes and offsets travel in push constants, so one
 * pipeline serves every layer with the same structure; what decides the
 * code (operation, activation, kernel geometry, rank, tile sizes) is a
 * specialization constant, so the driver compiles straight-line code for it.
 * A model thus needs a few dozen pipelines, not one per node.
 *
 * Push-constant words are written in the order the shader declares its
 * push block.  Specialization constant 0 is the local size of the 1-D
 * kernels; the tiled kernels (gemm, conv2d) run 16x16 invocations and
 * specialize the tile shape instead (TM x TN outputs per invocation).
 */
#include <string.h>

#include "vk_backend.h"
#include "vulkan/nn_vk_spirv.h"

#define MAX_GROUPS 65535u   /* maxComputeWorkGroupCount minimum */

/* Local sizes (specialization constant 0 of the 1-D kernels): 256 where
 * the device allows (the spec only guarantees 128 invocations), and 64 for
 * the shared-memory reductions, which need a power of two. */
static uint32_t local_1d(const nn_vk_exec *e) {
  const VkPhysicalDeviceLimits *l = &nn_vk_exec_ctx(e)->props.limits;
  uint32_t n = 256;
  if (l->maxComputeWorkGroupInvocations < n)
    n = l->maxComputeWorkGroupInvocations;
  if (l->maxComputeWorkGroupSize[0] < n)
    n = l->maxComputeWorkGroupSize[0];
  return n;
}

static uint32_t local_red(const nn_vk_exec *e) {
  (void)e;
  return 64;
}

static void push_u(nn_vk_dispatch *d, int i, uint64_t v) { d->push[i] = (uint32_t)v; }
static void push_i(nn_vk_dispatch *d, int i, int64_t v) {
  int32_t s = (int32_t)v;
  memcpy(&d->push[i], &s, 4);
}
static void push_f(nn_vk_dispatch *d, int i, float v) { memcpy(&d->push[i], &v, 4); }

static uint32_t groups_for(uint64_t items, uint32_t per_group) {
  uint64_t g = (items + per_group - 1) / per_group;
  return g > MAX_GROUPS ? MAX_GROUPS : (uint32_t)(g ? g : 1);
}

/* A float tensor view must hold `elems` elements and be indexable with
 * 32-bit indices in the shaders. */
static nn_status need(const nn_vk_tensor *t, uint64_t elems, const char *what, nn_error *err) {
  if (!t || t->buffer == VK_NULL_HANDLE)
    return nn_error_set(err, NN_ERR_INVALID_ARG, "vulkan kernel: %s: no buffer", what);
  if (t->offset % 4)
    return nn_error_set(err, NN_ERR_INVALID_ARG, "vulkan kernel: %s: offset not 4-aligned", what);
  if (elems > UINT32_MAX / 2)
    return nn_error_set(err, NN_ERR_UNSUPPORTED, "vulkan kernel: %s: %llu elements is too many",
                        what, (unsigned long long)elems);
  if (t->size < elems * 4)
    return nn_error_set(err, NN_ERR_INVALID_ARG,
                        "vulkan kernel: %s: view of %llu bytes, need %llu", what,
                        (unsigned long long)t->size, (unsigned long long)(elems * 4));
  return NN_OK;
}

/* Bind exactly `elems` floats of a view (the view may be larger). */
static uint32_t bind_n(const nn_vk_exec *e, nn_vk_dispatch *d, int slot, const nn_vk_tensor *t,
                       uint64_t elems, bool write) {
  nn_vk_tensor v = {t->buffer, t->offset, elems * 4};
  return nn_vk_dispatch_bind(e, d, slot, &v, write);
}

static bool fits_u32(int64_t v) { return v >= 0 && v <= (int64_t)UINT32_MAX; }

/* ---- unary ------------------------------------------------------------------ */

nn_status nn_vk_k_unary(nn_vk_exec *e, nn_vk_act act, int64_t n, const nn_vk_tensor *x,
                        const nn_vk_tensor *y, nn_error *err) {
  if (n <= 0)
    return NN_OK;
  nn_status st;
  if ((st = need(x, (uint64_t)n, "unary x", err)) || (st = need(y, (uint64_t)n, "unary y", err)))
    return st;
  nn_vk_dispatch d;
  nn_vk_dispatch_init(&d, NN_VK_SHADER_UNARY);
  d.n_spec = 2;
  d.spec[0] = local_1d(e);
  d.spec[1] = (uint32_t)act.kind;
  push_u(&d, 0, (uint64_t)n);
  push_u(&d, 1, bind_n(e, &d, 0, x, (uint64_t)n, false));
  push_u(&d, 2, bind_n(e, &d, 1, y, (uint64_t)n, true));
  push_f(&d, 3, act.a);
  push_f(&d, 4, act.b);
  d.groups[0] = groups_for((uint64_t)n, local_1d(e));
  return nn_vk_exec_dispatch(e, &d, err);
}

/* ---- binary ----------------------------------------------------------------- */

/* Drop unit dims and merge neighbours that are contiguous for both
 * operands: [N,C,H,W] + [1,C,1,1] becomes [N, C, H*W] with strides
 * (0,1,0) for the bias; fewer dims, fewer divisions per element. */
static int collapse2(int rank, const int64_t *dims, const int64_t *s1, const int64_t *s2,
                     int64_t *od, int64_t *o1, int64_t *o2) {
  int r = 0;
  for (int k = 0; k < rank; k++) {
    if (dims[k] == 1)
      continue;
    if (r > 0 && o1[r - 1] == s1[k] * dims[k] && o2[r - 1] == s2[k] * dims[k]) {
      od[r - 1] *= dims[k];
      o1[r - 1] = s1[k];
      o2[r - 1] = s2[k];
      continue;
    }
    od[r] = dims[k];
    o1[r] = s1[k];
    o2[r] = s2[k];
    r++;
  }
  if (r == 0) {
    od[0] = 1;
    o1[0] = o2[0] = 0;
    r = 1;
  }
  return r;
}

static uint64_t span_elems(int rank, const int64_t *dims, const int64_t *s) {
  uint64_t hi = 0;
  for (int k = 0; k < rank; k++)
    if (dims[k] > 0 && s[k] > 0)
      hi += (uint64_t)(dims[k] - 1) * (uint64_t)s[k];
  return hi + 1;
}

nn_status nn_vk_k_binary(nn_vk_exec *e, int op, nn_vk_act act, int rank, const int64_t *dims,
                         const int64_t *sa, const int64_t *sb, const nn_vk_tensor *a,
                         const nn_vk_tensor *b, const nn_vk_tensor *y, nn_error *err) {
  if (rank < 0 || rank > NN_VK_MAX_RANK || op < 0 || op >= NN_VK_BIN_COUNT)
    return nn_error_set(err, NN_ERR_UNSUPPORTED, "vulkan binary: rank %d / op %d", rank, op);
  int64_t n = 1;
  for (int k = 0; k < rank; k++) {
    if (dims[k] < 0 || !fits_u32(sa[k]) || !fits_u32(sb[k]))
      return nn_error_set(err, NN_ERR_INVALID_ARG, "vulkan binary: bad dims/strides");
    n *= dims[k];
  }
  if (n == 0)
    return NN_OK;
  int64_t cd[NN_VK_MAX_RANK], ca[NN_VK_MAX_RANK], cb[NN_VK_MAX_RANK];
  int r = collapse2(rank, dims, sa, sb, cd, ca, cb);
  uint64_t na = span_elems(r, cd, ca), nb = span_elems(r, cd, cb);
  nn_status st;
  if ((st = need(a, na, "binary a", err)) || (st = need(b, nb, "binary b", err)) ||
      (st = need(y, (uint64_t)n, "binary y", err)))
    return st;
  nn_vk_dispatch d;
  nn_vk_dispatch_init(&d, NN_VK_SHADER_BINARY);
  d.n_spec = 5;
  d.spec[0] = local_1d(e);
  d.spec[1] = (uint32_t)op;
  d.spec[2] = (uint32_t)act.kind;
  d.spec[3] = (uint32_t)r;
  d.spec[4] = (r == 1 && ca[0] == 1 && cb[0] == 1) ? 1 : 0;
  push_u(&d, 0, (uint64_t)n);
  push_u(&d, 1, bind_n(e, &d, 0, a, na, false));
  push_u(&d, 2, bind_n(e, &d, 1, b, nb, false));
  push_u(&d, 3, bind_n(e, &d, 2, y, (uint64_t)n, true));
  push_f(&d, 4, act.a);
  push_f(&d, 5, act.b);
  for (int k = 0; k < r; k++) {
    push_u(&d, 6 + k, (uint64_t)cd[k]);
    push_u(&d, 6 + NN_VK_MAX_RANK + k, (uint64_t)ca[k]);
    push_u(&d, 6 + 2 * NN_VK_MAX_RANK + k, (uint64_t)cb[k]);
  }
  d.groups[0] = groups_for((uint64_t)n, local_1d(e));
  return nn_vk_exec_dispatch(e, &d, err);
}

/* ---- conv2d ------------------------------------------------------------------ */

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
  if (p->N * G > MAX_GROUPS)
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

/* ---- gemm ------------------------------------------------------------------- */

/* Push layout shared by gemm.comp and gemv.comp. */
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
  nn_vk_dispatch_init(&d, gemv ? NN_VK_SHADER_GEMV : NN_VK_SHADER_GEMM);
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
  if (batch > MAX_GROUPS)
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

/* ---- pooling ---------------------------------------------------------------- */

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

/* ---- reduce / softmax --------------------------------------------------------- */

nn_status nn_vk_k_reduce(nn_vk_exec *e, int kind, int64_t outer, int64_t r, int64_t inner,
                         const nn_vk_tensor *x, const nn_vk_tensor *y, nn_error *err) {
  if (kind < 0 || kind >= NN_VK_RED_COUNT || outer < 0 || r < 1 || inner < 0)
    return nn_error_set(err, NN_ERR_INVALID_ARG, "vulkan reduce: bad parameters");
  int64_t ny = outer * inner, nx = ny * r;
  if (ny == 0)
    return NN_OK;
  nn_status st;
  if ((st = need(x, (uint64_t)nx, "reduce x", err)) || (st = need(y, (uint64_t)ny, "reduce y", err)))
    return st;
  /* Long rows, or too few outputs to fill the device one per invocation:
   * a workgroup per output. */
  bool wide = r >= 256 || (ny < 1024 && r >= 32);
  nn_vk_dispatch d;
  nn_vk_dispatch_init(&d, NN_VK_SHADER_REDUCE);
  d.n_spec = 3;
  d.spec[0] = local_red(e);
  d.spec[1] = (uint32_t)kind;
  d.spec[2] = wide ? 0 : 1;
  push_u(&d, 0, (uint64_t)outer);
  push_u(&d, 1, (uint64_t)r);
  push_u(&d, 2, (uint64_t)inner);
  push_u(&d, 3, bind_n(e, &d, 0, x, (uint64_t)nx, false));
  push_u(&d, 4, bind_n(e, &d, 1, y, (uint64_t)ny, true));
  push_u(&d, 5, (uint64_t)ny);
  d.groups[0] = wide ? groups_for((uint64_t)ny, 1) : groups_for((uint64_t)ny, local_red(e));
  return nn_vk_exec_dispatch(e, &d, err);
}

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

/* ---- copies ----------------------------------------------------------------- */

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
  int r = collapse2(rank, dims, xs, ys, cd, cx, cy);
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
  nn_vk_dispatch_init(&d, NN_VK_SHADER_COPY);
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
  nn_vk_dispatch_init(&d, NN_VK_SHADER_PAD);
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

/* ---- resize / affine / lrn ---------------------------------------------------- */

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
  d.n_spec = 4;
  d.spec[0] = local_1d(e);
  d.spec[1] = (uint32_t)p->mode;
  d.spec[2] = (uint32_t)p->coord;
  d.spec[3] = (uint32_t)p->nearest;
  push_u(&d, 0, (uint64_t)ny);
  push_u(&d, 1, (uint64_t)p->H);
  push_u(&d, 2, (uint64_t)p->W);
  push_u(&d, 3, (uint64_t)p->OH);
  push_u(&d, 4, (uint64_t)p->OW);
  push_f(&d, 5, p->scale_h);
  push_f(&d, 6, p->scale_w);
  push_u(&d, 7, bind_n(e, &d, 0, x, (uint64_t)nx, false));
  push_u(&d, 8, bind_n(e, &d, 1, y, (uint64_t)ny, true));
  d.groups[0] = groups_for((uint64_t)ny, local_1d(e));
  return nn_vk_exec_dispatch(e, &d, err);
}

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
  nn_vk_dispatch_init(&d, NN_VK_SHADER_AFFINE);
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
  nn_vk_dispatch_init(&d, NN_VK_SHADER_LRN);
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

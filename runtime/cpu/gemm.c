/* gemm.c - matrix products: MatMul, Gemm, MatMulInteger.
 *
 * float32 goes through the packed engine of cpu/sgemm.h (AVX-512 / AVX2 /
 * portable micro-kernels, threads inside): constant right-hand matrices are
 * packed once at prepare (see "float32 through the engine" below), a Gemm's
 * C that varies along one axis only becomes the epilogue's bias, and the
 * fused activation is applied in the same store.  double and the integer
 * types use a plain triple loop: they appear in conformance tests and odd
 * models, not in hot paths.  float16/bfloat16 are widened to float32 in the
 * node's workspace, multiplied by the engine and narrowed back.
 *
 * MatMul and Gemm may carry a fused activation, set by the planner's fusion
 * pass in nn_node.act (ops/activation.h); a float32 MatMul also the Adds
 * after it (NN_FUSE_MATMUL_ADD): a bias along the last axis in input 2, a
 * residual of the output's shape in input 3 (nn_node.res_slot). */
#include <math.h>
#include <string.h>

#include "cpu/ops.h"
#include "cpu/qconv_direct.h"
#include "cpu/sgemm.h"
#include "cpu/vmath.h"
#include "knobs.h"
#include "ops/activation.h"
#include "ops/gemm.h"

/* ---- fused activation ------------------------------------------------------
 * The node's nn_act (set by the planner's fusion, ops/activation.h): float32
 * applies it in the engine's epilogue, double with nn_act_apply_f64. */
static nn_status gemm_act_get(nn_ctx *c, const nn_node *n, nn_act *act) {
  nn_sgemm_epi e;
  *act = n->act;
  if (!nn_sgemm_epi_from_act(act, &e))
    return nn_fail(c, NN_ERR_UNSUPPORTED, "fused activation %d is not supported", act->kind);
  return NN_OK;
}

/* ---- dtype helpers ------------------------------------------------------------ */
static bool gemm_is_half(nn_dtype dt) {
  return dt == NN_DTYPE_FLOAT16 || dt == NN_DTYPE_BFLOAT16;
}

static void gemm_half_to_f32(nn_dtype dt, const uint16_t *src, float *dst, int64_t n) {
  if (dt == NN_DTYPE_FLOAT16)
    for (int64_t i = 0; i < n; i++)
      dst[i] = nn_f16_to_f32(src[i]);
  else
    for (int64_t i = 0; i < n; i++)
      dst[i] = nn_bf16_to_f32(src[i]);
}

static void gemm_f32_to_half(nn_dtype dt, const float *src, uint16_t *dst, int64_t n) {
  if (dt == NN_DTYPE_FLOAT16)
    for (int64_t i = 0; i < n; i++)
      dst[i] = nn_f32_to_f16(src[i]);
  else
    for (int64_t i = 0; i < n; i++)
      dst[i] = nn_f32_to_bf16(src[i]);
}

/* Element (i,k) of A is a[i*ars + k*acs], (k,j) of B is b[k*brs + j*bcs];
 * y = alpha*(A.B) + beta*y, with beta == 0 meaning y is write-only.  Integer
 * products wrap (computed in the unsigned type U) instead of overflowing
 * into undefined behaviour.  Integers only ever get alpha = 1 and beta 0 or 1
 * (prepare refuses the rest: a scaled integer product has no defined
 * rounding and its conversion back could overflow), so the double branches
 * serve the double type alone. */
#define GEMM_NAIVE(NAME, T, U)                                                          \
  static void NAME(int64_t M, int64_t N, int64_t K, double alpha, const T *a, int64_t ars, \
                   int64_t acs, const T *b, int64_t brs, int64_t bcs, double beta, T *y) { \
    for (int64_t i = 0; i < M; i++) {                                                   \
      for (int64_t j = 0; j < N; j++) {                                                 \
        U acc = 0;                                                                      \
        for (int64_t k = 0; k < K; k++)                                                 \
          acc += (U)a[i * ars + k * acs] * (U)b[k * brs + j * bcs];                     \
        T *o = &y[i * N + j];                                                           \
        if (alpha == 1.0 && beta == 0.0)                                                \
          *o = (T)acc;                                                                  \
        else if (alpha == 1.0 && beta == 1.0)                                           \
          *o = (T)(acc + (U)*o);                                                        \
        else if (beta == 0.0)                                                           \
          *o = (T)(alpha * (double)(T)acc);                                             \
        else                                                                            \
          *o = (T)(alpha * (double)(T)acc + beta * (double)*o);                         \
      }                                                                                 \
    }                                                                                   \
  }

GEMM_NAIVE(gemm_naive_f64, double, double)
GEMM_NAIVE(gemm_naive_i32, int32_t, uint32_t)
GEMM_NAIVE(gemm_naive_i64, int64_t, uint64_t)
GEMM_NAIVE(gemm_naive_u32, uint32_t, uint32_t)
GEMM_NAIVE(gemm_naive_u64, uint64_t, uint64_t)

/* Dispatch of the non-float32, non-half types; false when dt is none of them. */
static bool gemm_naive(nn_dtype dt, int64_t M, int64_t N, int64_t K, double alpha,
                       const void *a, int64_t ars, int64_t acs, const void *b, int64_t brs,
                       int64_t bcs, double beta, void *y) {
  switch (dt) {
  case NN_DTYPE_DOUBLE:
    gemm_naive_f64(M, N, K, alpha, a, ars, acs, b, brs, bcs, beta, y);
    return true;
  case NN_DTYPE_INT32:
    gemm_naive_i32(M, N, K, alpha, a, ars, acs, b, brs, bcs, beta, y);
    return true;
  case NN_DTYPE_INT64:
    gemm_naive_i64(M, N, K, alpha, a, ars, acs, b, brs, bcs, beta, y);
    return true;
  case NN_DTYPE_UINT32:
    gemm_naive_u32(M, N, K, alpha, a, ars, acs, b, brs, bcs, beta, y);
    return true;
  case NN_DTYPE_UINT64:
    gemm_naive_u64(M, N, K, alpha, a, ars, acs, b, brs, bcs, beta, y);
    return true;
  default:
    return false;
  }
}

static bool gemm_dtype_ok(nn_dtype dt) {
  switch (dt) {
  case NN_DTYPE_FLOAT: case NN_DTYPE_DOUBLE: case NN_DTYPE_FLOAT16: case NN_DTYPE_BFLOAT16:
  case NN_DTYPE_INT32: case NN_DTYPE_INT64: case NN_DTYPE_UINT32: case NN_DTYPE_UINT64:
    return true;
  default:
    return false;
  }
}

/* ---- batched shapes (MatMul, MatMulInteger) ----------------------------------
 * The op layer's nn_matmul_shape (ops/gemm.h), with what the kernels add. */
typedef struct mm_params {
  int64_t M, N, K;
  int64_t nb;                      /* number of output matrices */
  int brank;                       /* batch rank of the output */
  int64_t bdims[NN_MAX_RANK];
  int64_t sa[NN_MAX_RANK], sb[NN_MAX_RANK]; /* batch strides in matrices, 0 = broadcast */
  /* B is a single matrix shared by every batch: A's batches are then one
   * tall [nb*M, K] matrix and the product is one GEMM call */
  bool fold;
  /* MatMulInteger zero points: per-tensor or per-row (A) / per-column (B) */
  bool za_per_row, zb_per_col;
  /* MatMulInteger on the direct integer kernel (cpu/qconv_direct.h), as a
   * 1x1 convolution of A's nb * M rows (channels-last pixels of K
   * channels) into N: 8-bit A with one zero point (a run-time value too:
   * DynamicQuantizeLinear's), a constant 8-bit B with column zero points 0
   * (128 for uint8); B's packed block after the struct (MM_HEAD), n->ws:
   * N column offsets, then the kernel's scratch */
  bool qdirect;
  size_t q_head;
  nn_act act;                      /* the node's fused activation */
  /* float32 */
  bool per_worker;                 /* small products: one per worker, serial engine */
  int64_t nbm;                     /* B matrices pre-packed after the struct */
  size_t pack_bytes;               /* bytes per packed B matrix (0 = raw B) */
} mm_params;

#define MM_HEAD nn_align_up(sizeof(mm_params), 64)

/* p's shape fields from the op layer's (ops/gemm.h). */
static nn_status mm_shape(nn_ctx *c, const nn_value *a, const nn_value *b, mm_params *p) {
  nn_matmul_shape s;
  nn_status st = nn_matmul_shape_init(c, a, b, &s);
  if (st != NN_OK)
    return st;
  p->M = s.M;
  p->N = s.N;
  p->K = s.K;
  p->nb = s.nb;
  p->brank = s.brank;
  memcpy(p->bdims, s.bdims, sizeof p->bdims);
  memcpy(p->sa, s.sa, sizeof p->sa);
  memcpy(p->sb, s.sb, sizeof p->sb);
  /* B has no batch dims (rank <= 2) */
  p->fold = b->rank <= 2;
  return NN_OK;
}

/* Matrix offsets (in matrices) of A and B for output batch t. */
static void mm_batch_offsets(const mm_params *p, int64_t t, int64_t *oa, int64_t *ob) {
  int64_t a = 0, b = 0;
  for (int i = p->brank - 1; i >= 0; i--) {
    int64_t d = p->bdims[i];
    int64_t q = t % d;
    t /= d;
    a += q * p->sa[i];
    b += q * p->sb[i];
  }
  *oa = a;
  *ob = b;
}

/* ---- float32 through the engine --------------------------------------------------
 * Constant right-hand matrices (weights) are packed once at prepare into the
 * node's priv (nn_sgemm_pack_b), counted as weights (priv_const_bytes), when
 * the product has more than one row: packing B per call would cost a copy of
 * the weights per run.  With transB (weights stored N x K) a single row
 * (batch-1 fully connected layers) runs transposed, Y^T = W * x^T, where W
 * is the engine's left operand and x its single column: the engine reads
 * W's rows in place, each once (sg_gemv in cpu/sgemm.c), at the memory's
 * bandwidth.  Re-laid out as packed panels by the planner instead (an
 * earlier design, up to 8 MiB of weights), the layer ran slower: ResNet-50's
 * 2048 -> 1000 0.16 ms packed, 0.11 in place (AVX2, Zen 4).  Y^T of one row
 * has Y's layout, so nothing moves.  A single row without transB packs
 * nothing: a packed copy would double the weights' memory. */

static nn_sgemm_epi gemm_epi(const nn_act *a) {
  nn_sgemm_epi e;
  nn_sgemm_epi_from_act(a, &e);   /* the kind was checked at prepare (gemm_act_get) */
  return e;
}

static int gemm_threads(const nn_ctx *c) { return c->threads > 1 ? c->threads : 1; }

/* Products smaller than this many multiply-adds run one per worker when a
 * MatMul has several (attention heads): one engine call each would wake the
 * workers for too little work. */
#define MM_SMALL_MACS ((int64_t)1 << 20)

static nn_status gemm_engine_failed(nn_ctx *c, nn_status st) {
  return nn_fail(c, st, "GEMM engine refused the product (%s)", nn_status_str(st));
}

/* ---- MatMul ------------------------------------------------------------------- */
static nn_status matmul_prepare(nn_ctx *c, nn_node *n) {
  const nn_value *a = n->x[0], *b = n->x[1];
  if (!gemm_dtype_ok(a->dtype))
    return nn_fail(c, NN_ERR_UNSUPPORTED, "MatMul on %s is not supported",
                   nn_dtype_name(a->dtype));
  mm_params pr;
  memset(&pr, 0, sizeof pr);
  mm_params *p = &pr;
  nn_status st = mm_shape(c, a, b, p);
  if (st != NN_OK)
    return st;
  if ((st = gemm_act_get(c, n, &p->act)) != NN_OK)
    return st;
  if (p->act.kind != NN_ACT_NONE && !nn_dtype_is_float(a->dtype))
    return nn_fail(c, NN_ERR_UNSUPPORTED, "fused activation on %s is not supported",
                   nn_dtype_name(a->dtype));
  /* an Add the planner fused (NN_FUSE_MATMUL_ADD): float32 only */
  if (n->n_in > 2 && a->dtype != NN_DTYPE_FLOAT)
    return nn_fail(c, NN_ERR_UNSUPPORTED, "a fused bias or residual on %s is not supported",
                   nn_dtype_name(a->dtype));
  size_t ws = 0;
  if (a->dtype == NN_DTYPE_FLOAT) {
    int64_t rows = p->fold ? p->nb * p->M : p->M;
    int64_t nprod = p->fold ? 1 : p->nb;
    int64_t macs = 0;
    if (__builtin_mul_overflow(rows, p->N, &macs) || __builtin_mul_overflow(macs, p->K, &macs))
      macs = INT64_MAX;
    p->per_worker = nprod > 1 && macs < MM_SMALL_MACS && gemm_threads(c) > 1;
    ws = p->per_worker ? (size_t)gemm_threads(c) * nn_sgemm_workspace(rows, p->N, p->K, 1)
                       : nn_sgemm_workspace(rows, p->N, p->K, gemm_threads(c));
    int64_t kn = p->K * p->N;
    /* a constant B is packed once unless the node folds (A known too) or
     * the product is a single row */
    if (b->known && b->data && !a->known && rows > 1 && kn > 0) {
      p->nbm = b->numel / kn;
      p->pack_bytes = nn_align_up(nn_sgemm_pack_b_size(p->K, p->N), 64);
      size_t total;
      if (nn_mul_overflow_size((size_t)p->nbm, p->pack_bytes, &total))
        return nn_fail(c, NN_ERR_LIMIT, "packed weights overflow");
      n->priv_const_bytes = total;
    }
  } else if (gemm_is_half(a->dtype)) {
    /* one batch at a time, widened: A, B and Y as float32, then the engine's scratch */
    size_t bytes = 0;
    int64_t e = 0;
    if (__builtin_add_overflow(p->M * p->K, p->K * p->N, &e) ||
        __builtin_add_overflow(e, p->M * p->N, &e) ||
        nn_mul_overflow_size((size_t)e, sizeof(float), &bytes))
      return nn_fail(c, NN_ERR_LIMIT, "workspace size overflows");
    ws = nn_align_up(bytes, 64) + nn_sgemm_workspace(p->M, p->N, p->K, gemm_threads(c));
  }
  mm_params *q = nn_malloc(MM_HEAD + p->nbm * p->pack_bytes);
  if (!q)
    return nn_fail(c, NN_ERR_NOMEM, "out of memory");
  *q = *p;
  n->priv = q;
  n->ws_bytes = ws;
  for (int64_t i = 0; i < p->nbm; i++)
    nn_sgemm_pack_b(0, p->K, p->N, (const float *)b->data + i * p->K * p->N, p->N,
                    (char *)q + MM_HEAD + i * p->pack_bytes);
  return NN_OK;
}

typedef struct mm_job {
  const mm_params *p;
  const float *a, *b;
  float *y;
  nn_sgemm_epi epi;
  char *ws;
  size_t slot;      /* workspace bytes per worker */
  nn_status st;     /* first failure (per-worker products) */
} mm_job;

/* One product: output matrix t (all of them when folded). */
static nn_status matmul_one(nn_ctx *c, const mm_job *j, int64_t t, void *ws, size_t ws_bytes) {
  const mm_params *p = j->p;
  int64_t oa = 0, ob = 0;
  if (!p->fold)
    mm_batch_offsets(p, t, &oa, &ob);
  int64_t rows = p->fold ? p->nb * p->M : p->M;
  const float *a = j->a + oa * p->M * p->K;
  float *y = j->y + t * p->M * p->N;
  nn_sgemm_epi e = j->epi;
  if (e.res)
    e.res += t * p->M * p->N;   /* the residual has the output's layout */
  if (p->pack_bytes)
    return nn_sgemm_compute_pb(c, 0, rows, p->N, p->K, 1.0f, a, p->K,
                               (const char *)p + MM_HEAD + ob * p->pack_bytes, 0.0f, y, p->N,
                               &e, ws, ws_bytes);
  return nn_sgemm_compute(c, 0, 0, rows, p->N, p->K, 1.0f, a, p->K, j->b + ob * p->K * p->N,
                          p->N, 0.0f, y, p->N, &e, ws, ws_bytes);
}

static void matmul_worker_range(void *arg, int64_t begin, int64_t end) {
  mm_job *j = arg;
  char *ws = j->ws + (size_t)nn_parallel_worker() * j->slot;
  for (int64_t t = begin; t < end; t++) {
    nn_status st = matmul_one(NULL, j, t, ws, j->slot);
    if (st)
      j->st = st;   /* any failure will do: they all mean a bad plan */
  }
}

static nn_status matmul_run(nn_ctx *c, nn_node *n) {
  const mm_params *p = n->priv;
  const nn_value *a = n->x[0], *b = n->x[1];
  nn_value *y = n->y[0];
  if (y->numel == 0)
    return NN_OK;
  int64_t M = p->M, N = p->N, K = p->K;
  switch (a->dtype) {
  case NN_DTYPE_FLOAT: {
    mm_job j = {p, a->data, b->data, y->data, gemm_epi(&p->act), n->ws, 0, NN_OK};
    /* a bias along the last axis and a residual the planner fused
     * (NN_FUSE_MATMUL_ADD) */
    if (n->n_in > 2 && n->x[2]) {
      j.epi.bias = n->x[2]->data;
      j.epi.bias_kind = NN_SGEMM_BIAS_COL;
    }
    if (n->res_slot > 0 && n->res_slot < n->n_in && n->x[n->res_slot]) {
      j.epi.res = n->x[n->res_slot]->data;
      j.epi.ldres = N;
    }
    if (p->per_worker) {
      j.slot = n->ws_bytes / (size_t)nn_parallel_width(c);
      nn_parallel_for(c, p->nb, 1, matmul_worker_range, &j);
      return j.st ? gemm_engine_failed(c, j.st) : NN_OK;
    }
    int64_t nprod = p->fold ? 1 : p->nb;
    for (int64_t t = 0; t < nprod; t++) {
      nn_status st = matmul_one(c, &j, t, n->ws, n->ws_bytes);
      if (st)
        return gemm_engine_failed(c, st);
    }
    return NN_OK;
  }
  case NN_DTYPE_FLOAT16:
  case NN_DTYPE_BFLOAT16: {
    float *fa = n->ws, *fb = fa + M * K, *fy = fb + K * N;
    size_t fbytes = nn_align_up((size_t)(M * K + K * N + M * N) * sizeof(float), 64);
    char *gws = (char *)n->ws + fbytes;
    nn_sgemm_epi e = gemm_epi(&p->act);
    for (int64_t t = 0; t < p->nb; t++) {
      int64_t oa, ob;
      mm_batch_offsets(p, t, &oa, &ob);
      gemm_half_to_f32(a->dtype, (const uint16_t *)a->data + oa * M * K, fa, M * K);
      gemm_half_to_f32(a->dtype, (const uint16_t *)b->data + ob * K * N, fb, K * N);
      nn_status st = nn_sgemm_compute(c, 0, 0, M, N, K, 1.0f, fa, K, fb, N, 0.0f, fy, N, &e, gws,
                                      n->ws_bytes - fbytes);
      if (st)
        return gemm_engine_failed(c, st);
      gemm_f32_to_half(a->dtype, fy, (uint16_t *)y->data + t * M * N, M * N);
    }
    return NN_OK;
  }
  default: {
    size_t es = nn_dtype_size(a->dtype);
    for (int64_t t = 0; t < p->nb; t++) {
      int64_t oa, ob;
      mm_batch_offsets(p, t, &oa, &ob);
      const char *pa = (const char *)a->data + (size_t)(oa * M * K) * es;
      const char *pb = (const char *)b->data + (size_t)(ob * K * N) * es;
      char *py = (char *)y->data + (size_t)(t * M * N) * es;
      if (!gemm_naive(a->dtype, M, N, K, 1.0, pa, K, 1, pb, N, 1, 0.0, py))
        return nn_fail(c, NN_ERR_UNSUPPORTED, "MatMul on %s is not supported",
                       nn_dtype_name(a->dtype));
      if (a->dtype == NN_DTYPE_DOUBLE)
        nn_act_apply_f64(&p->act, (double *)py, M * N);
    }
    return NN_OK;
  }
  }
}

/* ---- Gemm ---------------------------------------------------------------------- */
typedef enum gemm_cmode {
  GEMM_C_NONE = 0,   /* no C, or beta == 0 */
  GEMM_C_FILL,       /* Y = C broadcast, then the product accumulates with beta */
  GEMM_C_BIAS_COL,   /* beta == 1, C varies along columns only: the epilogue's column bias */
  GEMM_C_BIAS_ROW,   /* beta == 1, C varies along rows only: the epilogue's row bias */
} gemm_cmode;

typedef struct gemm_params {
  nn_gemm_params g;    /* the op layer's: transposes, alpha, beta, M/N/K, C's strides */
  nn_act act;          /* the node's fused activation */
  gemm_cmode cmode;    /* float32 */
  bool swap;           /* float32, one row and transB: Y^T = B * A^T */
  size_t pack_bytes;   /* float32: op(B) pre-packed after the struct (0 = raw) */
} gemm_params;

#define GEMM_HEAD nn_align_up(sizeof(gemm_params), 64)

static nn_status gemm_prepare(nn_ctx *c, nn_node *n) {
  const nn_value *a = n->x[0], *b = n->x[1];
  if (!gemm_dtype_ok(a->dtype))
    return nn_fail(c, NN_ERR_UNSUPPORTED, "Gemm on %s is not supported",
                   nn_dtype_name(a->dtype));
  gemm_params pr;
  memset(&pr, 0, sizeof pr);
  gemm_params *p = &pr;
  nn_status st0 = nn_gemm_params_init(c, n, &p->g);
  if (st0 != NN_OK)
    return st0;
  if (nn_dtype_is_int(a->dtype) &&
      (p->g.alpha != 1.0f || (p->g.has_c && p->g.beta != 0.0f && p->g.beta != 1.0f)))
    return nn_fail(c, NN_ERR_UNSUPPORTED,
                   "Gemm on %s supports alpha=1 and beta=0|1 only (got alpha=%g beta=%g)",
                   nn_dtype_name(a->dtype), p->g.alpha, p->g.beta);
  nn_status st = gemm_act_get(c, n, &p->act);
  if (st != NN_OK)
    return st;
  if (p->act.kind != NN_ACT_NONE && !nn_dtype_is_float(a->dtype))
    return nn_fail(c, NN_ERR_UNSUPPORTED, "fused activation on %s is not supported",
                   nn_dtype_name(a->dtype));
  size_t ws = 0;
  if (a->dtype == NN_DTYPE_FLOAT) {
    if (p->g.has_c && p->g.beta != 0.0f) {
      /* a C that only varies along one axis is the epilogue's bias (strides
       * of 1-sized axes do not matter) */
      bool col_only = (p->g.cs[0] == 0 || p->g.M == 1) && (p->g.cs[1] == 1 || p->g.N == 1);
      bool row_only = (p->g.cs[1] == 0 || p->g.N == 1) && (p->g.cs[0] == 1 || p->g.M == 1);
      if (p->g.beta == 1.0f && col_only)
        p->cmode = GEMM_C_BIAS_COL;
      else if (p->g.beta == 1.0f && row_only)
        p->cmode = GEMM_C_BIAS_ROW;
      else
        p->cmode = GEMM_C_FILL;
    }
    p->swap = p->g.M == 1 && p->g.tb;
    if (p->swap)
      ws = nn_sgemm_workspace(p->g.N, 1, p->g.K, gemm_threads(c));
    else
      ws = nn_sgemm_workspace(p->g.M, p->g.N, p->g.K, gemm_threads(c));
    if (b->known && b->data && !a->known && p->g.M > 1 && p->g.K > 0 && p->g.N > 0) {
      p->pack_bytes = nn_align_up(nn_sgemm_pack_b_size(p->g.K, p->g.N), 64);
      n->priv_const_bytes = p->pack_bytes;
    }
  } else if (gemm_is_half(a->dtype)) {
    size_t bytes = 0;
    int64_t e = 0;
    if (__builtin_add_overflow(p->g.M * p->g.K, p->g.K * p->g.N, &e) ||
        __builtin_add_overflow(e, p->g.M * p->g.N, &e) ||
        nn_mul_overflow_size((size_t)e, sizeof(float), &bytes))
      return nn_fail(c, NN_ERR_LIMIT, "workspace size overflows");
    ws = nn_align_up(bytes, 64) + nn_sgemm_workspace(p->g.M, p->g.N, p->g.K, gemm_threads(c));
  }
  gemm_params *q = nn_malloc(GEMM_HEAD + p->pack_bytes);
  if (!q)
    return nn_fail(c, NN_ERR_NOMEM, "out of memory");
  *q = *p;
  n->priv = q;
  n->ws_bytes = ws;
  if (p->pack_bytes)
    nn_sgemm_pack_b(p->g.tb, p->g.K, p->g.N, b->data, p->g.tb ? p->g.K : p->g.N, (char *)q + GEMM_HEAD);
  return NN_OK;
}

/* Y = C broadcast, in the element type of size es. */
static void gemm_fill_c(const gemm_params *p, const void *cdata, void *ydata, size_t es) {
  const char *cc = cdata;
  char *yy = ydata;
  size_t row = (size_t)p->g.N * es;
  for (int64_t i = 0; i < p->g.M; i++) {
    const char *src = cc + (size_t)(i * p->g.cs[0]) * es;
    char *dst = yy + (size_t)i * row;
    if (p->g.cs[1]) {
      memcpy(dst, src, row);
    } else {
      for (int64_t j = 0; j < p->g.N; j++)
        memcpy(dst + (size_t)j * es, src, es);
    }
  }
}

static nn_status gemm_run_f32(nn_ctx *c, nn_node *n) {
  const gemm_params *p = n->priv;
  const float *a = n->x[0]->data, *b = n->x[1]->data;
  const nn_value *cv = p->g.has_c ? n->x[2] : NULL;
  float *y = n->y[0]->data;
  nn_sgemm_epi e = gemm_epi(&p->act);
  float beta = 0.0f;
  switch (p->cmode) {
  case GEMM_C_FILL:
    gemm_fill_c(p, cv->data, y, sizeof(float));
    beta = p->g.beta;
    break;
  case GEMM_C_BIAS_COL:
  case GEMM_C_BIAS_ROW:
    e.bias = cv->data;
    /* transposed, Y's columns are the product's rows */
    e.bias_kind = (p->cmode == GEMM_C_BIAS_COL) != p->swap ? NN_SGEMM_BIAS_COL : NN_SGEMM_BIAS_ROW;
    break;
  default:
    break;
  }
  int64_t lda = p->g.ta ? p->g.M : p->g.K, ldb = p->g.tb ? p->g.K : p->g.N;
  nn_status st;
  if (p->swap) /* Y^T (N x 1) = B (N x K) * op(A)^T (K x 1) */
    st = nn_sgemm_compute(c, 0, !p->g.ta, p->g.N, 1, p->g.K, p->g.alpha, b, ldb, a, p->g.ta ? 1 : lda,
                          beta, y, 1, &e, n->ws, n->ws_bytes);
  else if (p->pack_bytes)
    st = nn_sgemm_compute_pb(c, p->g.ta, p->g.M, p->g.N, p->g.K, p->g.alpha, a, lda,
                             (const char *)p + GEMM_HEAD, beta, y, p->g.N, &e, n->ws, n->ws_bytes);
  else
    st = nn_sgemm_compute(c, p->g.ta, p->g.tb, p->g.M, p->g.N, p->g.K, p->g.alpha, a, lda, b, ldb, beta, y,
                          p->g.N, &e, n->ws, n->ws_bytes);
  return st ? gemm_engine_failed(c, st) : NN_OK;
}

static nn_status gemm_run(nn_ctx *c, nn_node *n) {
  const gemm_params *p = n->priv;
  const nn_value *a = n->x[0], *b = n->x[1];
  const nn_value *cv = p->g.has_c ? n->x[2] : NULL;
  nn_value *y = n->y[0];
  if (y->numel == 0)
    return NN_OK;
  int64_t M = p->g.M, N = p->g.N, K = p->g.K;
  bool use_c = cv && p->g.beta != 0.0f;
  nn_dtype dt = a->dtype;
  if (dt == NN_DTYPE_FLOAT)
    return gemm_run_f32(c, n);
  if (gemm_is_half(dt)) {
    float *fa = n->ws, *fb = fa + M * K, *fy = fb + K * N;
    size_t fbytes = nn_align_up((size_t)(M * K + K * N + M * N) * sizeof(float), 64);
    gemm_half_to_f32(dt, a->data, fa, M * K);
    gemm_half_to_f32(dt, b->data, fb, K * N);
    if (use_c)
      for (int64_t i = 0; i < M; i++)
        for (int64_t jj = 0; jj < N; jj++) {
          uint16_t h = ((const uint16_t *)cv->data)[i * p->g.cs[0] + jj * p->g.cs[1]];
          fy[i * N + jj] = dt == NN_DTYPE_FLOAT16 ? nn_f16_to_f32(h) : nn_bf16_to_f32(h);
        }
    nn_sgemm_epi e = gemm_epi(&p->act);
    nn_status st = nn_sgemm_compute(c, p->g.ta, p->g.tb, M, N, K, p->g.alpha, fa, p->g.ta ? M : K, fb,
                                    p->g.tb ? K : N, use_c ? p->g.beta : 0.0f, fy, N, &e,
                                    (char *)n->ws + fbytes, n->ws_bytes - fbytes);
    if (st)
      return gemm_engine_failed(c, st);
    gemm_f32_to_half(dt, fy, y->data, M * N);
    return NN_OK;
  }
  if (use_c)
    gemm_fill_c(p, cv->data, y->data, nn_dtype_size(dt));
  int64_t ars = p->g.ta ? 1 : K, acs = p->g.ta ? M : 1;
  int64_t brs = p->g.tb ? 1 : N, bcs = p->g.tb ? K : 1;
  if (!gemm_naive(dt, M, N, K, p->g.alpha, a->data, ars, acs, b->data, brs, bcs,
                  use_c ? p->g.beta : 0.0, y->data))
    return nn_fail(c, NN_ERR_UNSUPPORTED, "Gemm on %s is not supported", nn_dtype_name(dt));
  if (dt == NN_DTYPE_DOUBLE)
    nn_act_apply_f64(&p->act, y->data, M * N);
  return NN_OK;
}

/* ---- MatMulInteger, MatMulIntegerToFloat ---------------------------------------
 * Two paths: with a constant 8-bit B whose column zero points are 0 (128
 * for uint8) the direct integer kernel (cpu/qconv_direct.h), A's nb * M
 * rows as channels-last pixels of K channels and N output channels, A's
 * zero point any value (a run-time one too: DynamicQuantizeLinear's);
 * anything else a portable loop over rows on the workers.
 * MatMulIntegerToFloat (com.microsoft; ops/gemm.c) scales each int32 sum
 * as its store goes: float(sum) * (a_scale * b_scale[j]) + bias[j], in
 * float32, multiply then add (no fma: the unfused Cast -> Mul -> Add). */

static inline int32_t mmi_get(nn_dtype dt, const void *p, int64_t i) {
  return dt == NN_DTYPE_UINT8 ? ((const uint8_t *)p)[i] : ((const int8_t *)p)[i];
}

/* The node's optional input i, NULL when omitted. */
static const nn_value *mmi_in(const nn_node *n, int i) { return i < n->n_in ? n->x[i] : NULL; }

/* Which of the two ops n is: its zero points' and float inputs' slots. */
typedef struct mmi_slots {
  int za, zb;           /* zero points */
  int as, bs, bias;     /* MatMulIntegerToFloat only; -1 for MatMulInteger */
} mmi_slots;

static mmi_slots mmi_slots_of(const nn_node *n) {
  if (n->domain[0])
    return (mmi_slots){4, 5, 2, 3, 6};
  return (mmi_slots){2, 3, -1, -1, -1};
}

/* A's batches are one tall matrix (B is shared: p->fold) */
static void mmi_direct_shape(const mm_params *p, nn_qdc_shape *s) {
  nn_qdc_matrix_shape(p->nb * p->M, p->K, p->N, s);
}

static bool mmi_direct_ok(const nn_node *n, const mm_params *p) {
  const mmi_slots sl = mmi_slots_of(n);
  const nn_value *a = n->x[0], *b = n->x[1], *za = mmi_in(n, sl.za), *zb = mmi_in(n, sl.zb);
  if (nn_knobs().no_direct || !p->fold || p->za_per_row || p->K % 4 || p->nb * p->M < 1 ||
      b->rank != 2 || !b->known || !b->data || (zb && (!zb->known || !zb->data)) ||
      (a->dtype != NN_DTYPE_UINT8 && a->dtype != NN_DTYPE_INT8) ||
      (b->dtype != NN_DTYPE_UINT8 && b->dtype != NN_DTYPE_INT8) || (za && za->dtype != a->dtype))
    return false;
  nn_qdc_shape s;
  mmi_direct_shape(p, &s);
  if (!nn_qdc_fits(&s) || !nn_qdc_worth(&s))
    return false;
  const int32_t shift = b->dtype == NN_DTYPE_UINT8 ? 128 : 0;
  for (int64_t j = 0; zb && j < zb->numel; j++)
    if (mmi_get(b->dtype, zb->data, j) != shift)
      return false;
  return !zb ? shift == 0 : true;
}

/* B packed for the direct kernel after the struct. */
static nn_status mmi_direct_prepare(nn_ctx *c, nn_node *n, const mm_params *p0) {
  nn_qdc_shape sh;
  mmi_direct_shape(p0, &sh);
  const size_t bytes = nn_align_up(nn_qdc_pack_size(&sh), 64);
  mm_params *p = nn_malloc(MM_HEAD + bytes);
  if (!p || !nn_qdc_pack_matrix(&sh, n->x[1]->data, n->x[1]->dtype == NN_DTYPE_UINT8,
                                (char *)p + MM_HEAD)) {
    nn_free(p);
    return nn_fail(c, NN_ERR_NOMEM, "out of memory");
  }
  *p = *p0;
  p->qdirect = true;
  nn_free(n->priv);
  n->priv = p;
  n->priv_const_bytes = bytes;   /* B repacked: counted as weights */
  n->ws_bytes = p->q_head + nn_qdc_workspace(&sh);
  return NN_OK;
}

/* A store's view: int32 Y, or float Y with each column's multiplier and
 * bias (NULL: none). */
typedef struct mmi_out {
  int32_t *yi;
  float *yf;
  const int32_t *off;   /* direct path: the zero point's term per column */
  const float *mult, *bias;
  int64_t N;
} mmi_out;

static inline void mmi_put_row(const mmi_out *o, int64_t row, int64_t m0, int64_t mr,
                               const int32_t *sums) {
  const int64_t at = row * o->N + m0;
  if (o->yf) {
    nn_vmath_scale_i32(sums, o->off ? o->off + m0 : NULL, o->mult + m0, o->bias ? o->bias + m0 : NULL,
                       o->yf + at, mr);
    return;
  }
  for (int64_t r = 0; r < mr; r++)
    o->yi[at + r] = (int32_t)((uint32_t)sums[r] + (uint32_t)(o->off ? o->off[m0 + r] : 0));
}

/* Rows p0 .. p0 + np - 1 of Y, columns m0 .. m0 + mr - 1 (the kernel's
 * pixel-major tile is Y's row-major layout). */
static void mmi_direct_store(void *user, int64_t m0, int64_t mr, int64_t p0, int64_t np,
                             const int32_t *cc, int64_t ldc) {
  const mmi_out *o = user;
  for (int64_t t = 0; t < np; t++)
    mmi_put_row(o, p0 + t, m0, mr, cc + t * ldc);
}

/* MatMulIntegerToFloat's column multipliers a_scale * b_scale[j] (float32,
 * as ONNX Runtime forms them) into mult; the others NULL. */
static void mmi_out_init(const nn_node *n, const mm_params *p, float *mult, mmi_out *o) {
  const mmi_slots sl = mmi_slots_of(n);
  *o = (mmi_out){.N = p->N};
  if (sl.as < 0) {
    o->yi = n->y[0]->data;
    return;
  }
  const nn_value *bs = n->x[sl.bs], *bias = mmi_in(n, sl.bias);
  const float as = *(const float *)n->x[sl.as]->data;
  for (int64_t j = 0; j < p->N; j++)
    mult[j] = as * ((const float *)bs->data)[bs->numel == 1 ? 0 : j];
  o->yf = n->y[0]->data;
  o->mult = mult;
  o->bias = bias ? bias->data : NULL;
}

static nn_status mmi_run_direct(nn_ctx *c, nn_node *n) {
  const mm_params *p = n->priv;
  const nn_value *a = n->x[0], *za = mmi_in(n, mmi_slots_of(n).za);
  const bool s8 = a->dtype == NN_DTYPE_INT8;
  const int32_t zb = (za ? mmi_get(a->dtype, za->data, 0) : 0) + (s8 ? 128 : 0);
  const void *pk = (const char *)p + MM_HEAD;
  int32_t *off = n->ws;
  nn_qdc_offsets(pk, zb, off);
  mmi_out o;
  mmi_out_init(n, p, (float *)(off + p->N), &o);
  o.off = off;
  nn_status st = nn_qdc_compute(c, pk, a->data, s8 ? 0x80 : 0, zb, mmi_direct_store, &o,
                                (char *)n->ws + p->q_head, n->ws_bytes - p->q_head);
  return st ? nn_fail(c, st, "the direct integer product refused its operands") : NN_OK;
}

static nn_status mmi_prepare(nn_ctx *c, nn_node *n) {
  const mmi_slots sl = mmi_slots_of(n);
  const nn_value *a = n->x[0], *b = n->x[1], *za = mmi_in(n, sl.za), *zb = mmi_in(n, sl.zb);
  mm_params *p = nn_calloc(1, sizeof *p);
  if (!p)
    return nn_fail(c, NN_ERR_NOMEM, "out of memory");
  n->priv = p;
  nn_status st = mm_shape(c, a, b, p);
  if (st != NN_OK)
    return st;
  /* ONNX also allows N-D zero points (per row of every batch): not here */
  if (za && za->numel != 1) {
    if (za->rank != 1 || za->dims[0] != p->M)
      return nn_fail(c, NN_ERR_UNSUPPORTED,
                     "a_zero_point must be a scalar or have M=%lld elements", (long long)p->M);
    p->za_per_row = true;
  }
  if (zb && zb->numel != 1) {
    if (zb->rank != 1 || zb->dims[0] != p->N)
      return nn_fail(c, NN_ERR_UNSUPPORTED,
                     "b_zero_point must be a scalar or have N=%lld elements", (long long)p->N);
    p->zb_per_col = true;
  }
  /* the workspace: per column its offset (direct) and multiplier (ToFloat) */
  p->q_head = nn_align_up((size_t)p->N * (sizeof(int32_t) + sizeof(float)), 64);
  if (mmi_direct_ok(n, p))
    return mmi_direct_prepare(c, n, p);
  n->ws_bytes = p->q_head;
  return NN_OK;
}

/* The portable path: row i of a batch as sum_k a'_ik * b_kj less zb_j *
 * sum_k a'_ik (a' = a - za), the inner loops over B's rows in its own type
 * so the compiler vectorizes them; the rows of every batch on the workers.
 * int32 sums wrap like the reference (unsigned here, to stay defined); a
 * float Y's row is summed in place (as many bytes) and then scaled. */
typedef struct mmi_job {
  const mm_params *p;
  const nn_value *a, *b, *za, *zb;
  mmi_out o;
} mmi_job;

static void mmi_rows(void *arg, int64_t r0, int64_t r1) {
  const mmi_job *j = arg;
  const mm_params *p = j->p;
  const int64_t M = p->M, N = p->N, K = p->K;
  for (int64_t r = r0; r < r1; r++) {
    const int64_t t = r / M, i = r % M;
    int64_t oa, ob;
    mm_batch_offsets(p, t, &oa, &ob);
    const char *pa = (const char *)j->a->data + (oa * M + i) * K;
    const char *pb = (const char *)j->b->data + ob * K * N;
    uint32_t *yr = j->o.yf ? (uint32_t *)(j->o.yf + r * N) : (uint32_t *)(j->o.yi + r * N);
    const int32_t zai = j->za ? mmi_get(j->a->dtype, j->za->data, p->za_per_row ? i : 0) : 0;
    memset(yr, 0, (size_t)N * sizeof *yr);
    uint32_t asum = 0;
    for (int64_t k = 0; k < K; k++) {
      const uint32_t av = (uint32_t)(mmi_get(j->a->dtype, pa, k) - zai);
      asum += av;
      if (j->b->dtype == NN_DTYPE_UINT8) {
        const uint8_t *br = (const uint8_t *)pb + k * N;
        for (int64_t c = 0; c < N; c++)
          yr[c] += av * (uint32_t)br[c];
      } else {
        const int8_t *br = (const int8_t *)pb + k * N;
        for (int64_t c = 0; c < N; c++)
          yr[c] += av * (uint32_t)(int32_t)br[c];
      }
    }
    for (int64_t c = 0; j->zb && c < N; c++)
      yr[c] -= asum * (uint32_t)mmi_get(j->b->dtype, j->zb->data, p->zb_per_col ? c : 0);
    if (j->o.yf)   /* the int32 sums in place, each read before its float is stored */
      for (int64_t c0 = 0; c0 < N; c0 += 64) {
        int32_t s[64];
        const int64_t w = N - c0 < 64 ? N - c0 : 64;
        memcpy(s, yr + c0, (size_t)w * sizeof *s);
        mmi_put_row(&j->o, r, c0, w, s);
      }
  }
}

static nn_status mmi_run(nn_ctx *c, nn_node *n) {
  const mm_params *p = n->priv;
  if (p->qdirect)
    return mmi_run_direct(c, n);
  const mmi_slots sl = mmi_slots_of(n);
  mmi_job j = {.p = p, .a = n->x[0], .b = n->x[1], .za = mmi_in(n, sl.za), .zb = mmi_in(n, sl.zb)};
  mmi_out_init(n, p, (float *)((int32_t *)n->ws + p->N), &j.o);
  const int64_t work = p->N * p->K > 0 ? p->N * p->K : 1;
  nn_parallel_for(c, p->nb * p->M, work >= 65536 ? 1 : 65536 / work, mmi_rows, &j);
  return NN_OK;
}

const nn_kernel nn_kernels_gemm[] = {
  {.name = "MatMul", .prepare = matmul_prepare, .run = matmul_run},
  {.name = "Gemm", .prepare = gemm_prepare, .run = gemm_run},
  {.name = "MatMulInteger", .prepare = mmi_prepare, .run = mmi_run},
  {.name = "MatMulIntegerToFloat", .domain = "com.microsoft", .prepare = mmi_prepare, .run = mmi_run},
  {0},
};

/* conv.c - Conv, ConvTranspose, DeformConv, ConvInteger, QLinearConv.
 *
 * Conv has three paths, chosen in prepare:
 *   1x1  kernel 1, stride 1, no padding: the input planes already are the
 *        GEMM's right-hand matrix, no im2col;
 *   dw   one input channel per group with few outputs per group (depthwise):
 *        a direct kernel, one pass per output row with all taps;
 *   gemm everything else: im2col of a tile of output positions into the
 *        workspace, then W_g (Mg x K) * col (K x tile) through conv_gemm().
 * ConvTranspose is the adjoint: col = W_g^T * X_g, then col2im accumulates.
 * DeformConv is the gemm path with a bilinear-sampling im2col.  ConvInteger
 * and QLinearConv accumulate exactly in int32 on their own (serial) path.
 *
 * Work is split into tasks (batch x group x column tile [x row block]); the
 * workspace holds one scratch slot per worker.  nn_parallel_for gives no
 * worker index, so it is called over slot numbers: a chunk [s0, s1) owns slot
 * s0's scratch and runs the tasks of slots s0..s1-1 one after another.
 *
 * float32 natively; float16 is staged through float32 copies in the workspace.
 * A fused activation (set by the graph's fusion pass as "_fused_*" attributes)
 * is applied in the epilogue together with the bias while the tile is hot.
 */
#include <math.h>
#include <string.h>

#include "cpu/conv_geom.h"
#include "cpu/math_gemm.h"
#include "cpu/ops.h"

/* ---- fused activation ------------------------------------------------------ */

typedef enum conv_act_kind {
  CONV_ACT_NONE = 0,
  CONV_ACT_RELU,
  CONV_ACT_CLIP,
  CONV_ACT_LEAKY,
  CONV_ACT_HSWISH,
  CONV_ACT_SIGMOID,
} conv_act_kind;

typedef struct conv_act {
  conv_act_kind kind;
  float alpha, lo, hi;
} conv_act;

static nn_status conv_act_parse(nn_ctx *c, const nn_node *n, conv_act *a) {
  const char *s = nn_attr_string(n, "_fused_act", "");
  a->kind = CONV_ACT_NONE;
  a->alpha = nn_attr_float(n, "_fused_alpha", 0.01f);
  a->lo = nn_attr_float(n, "_fused_min", -INFINITY);
  a->hi = nn_attr_float(n, "_fused_max", INFINITY);
  if (s[0] == '\0')
    return NN_OK;
  if (strcmp(s, "Relu") == 0)
    a->kind = CONV_ACT_RELU;
  else if (strcmp(s, "Clip") == 0)
    a->kind = CONV_ACT_CLIP;
  else if (strcmp(s, "LeakyRelu") == 0)
    a->kind = CONV_ACT_LEAKY;
  else if (strcmp(s, "HardSwish") == 0)
    a->kind = CONV_ACT_HSWISH;
  else if (strcmp(s, "Sigmoid") == 0)
    a->kind = CONV_ACT_SIGMOID;
  else
    return nn_fail(c, NN_ERR_UNSUPPORTED, "fused activation '%s' is not supported", s);
  return NN_OK;
}

/* y[i] = act(y[i] + bias).  Comparisons are written so NaN propagates as in
 * the unfused ops. */
static void conv_epilogue(float *restrict y, int64_t n, float bias, const conv_act *a) {
  switch (a->kind) {
  case CONV_ACT_NONE:
    if (bias != 0.0f)
      for (int64_t i = 0; i < n; i++)
        y[i] += bias;
    break;
  case CONV_ACT_RELU:
    for (int64_t i = 0; i < n; i++) {
      float v = y[i] + bias;
      y[i] = v < 0.0f ? 0.0f : v;
    }
    break;
  case CONV_ACT_CLIP: {
    float lo = a->lo, hi = a->hi;
    for (int64_t i = 0; i < n; i++) {
      float v = y[i] + bias;
      v = v < lo ? lo : v;
      y[i] = v > hi ? hi : v;
    }
    break;
  }
  case CONV_ACT_LEAKY:
    for (int64_t i = 0; i < n; i++) {
      float v = y[i] + bias;
      y[i] = v < 0.0f ? v * a->alpha : v;
    }
    break;
  case CONV_ACT_HSWISH:
    for (int64_t i = 0; i < n; i++) {
      float v = y[i] + bias;
      float t = v * (1.0f / 6.0f) + 0.5f;
      t = t < 0.0f ? 0.0f : (t > 1.0f ? 1.0f : t);
      y[i] = v * t;
    }
    break;
  case CONV_ACT_SIGMOID:
    for (int64_t i = 0; i < n; i++) {
      float v = y[i] + bias;
      y[i] = 1.0f / (1.0f + expf(-v));
    }
    break;
  }
}

/* ---- GEMM ---------------------------------------------------------------------
 * conv_gemm() is the seam the SIMD work replaces (packed AVX2/AVX-512/NEON
 * kernels); every Conv and ConvTranspose product goes through it.  Building
 * with -DCONV_USE_SGEMM routes it to the shared nn_sgemm of math_gemm.h
 * instead, for comparison: today this register-tiled loop is faster on conv
 * shapes (no packing of A, B already laid out by im2col). */

#define CONV_MR 6
#define CONV_NR 8
#define CONV_KC 256
#define CONV_NC 256

/* The register tile is written with GCC/Clang 4-float vector types (SSE,
 * NEON): as plain arrays the compiler keeps the accumulators in memory and
 * reloads them every step.  6 rows x 2 vectors = 12 accumulators fit the 16
 * SSE registers with room for the B row and one broadcast. */
typedef float conv_v4 __attribute__((vector_size(4 * sizeof(float))));

static inline conv_v4 conv_v4_load(const float *p) {
  conv_v4 v;
  memcpy(&v, p, sizeof v);
  return v;
}

static inline void conv_v4_store(float *p, conv_v4 v) { memcpy(p, &v, sizeof v); }

/* C[0..MR) x [0..NR) (=, or += when acc) sum_p a[i][p] * B[p * ldb + q].  Rows
 * come as pointers so edge tiles can repeat a valid row instead of reading
 * past the matrix. */
static void conv_gemm_tile(int64_t kc, const float *const *a, const float *restrict B,
                           int64_t ldb, float *restrict C, int64_t ldc, bool acc) {
  conv_v4 c[CONV_MR][2];
  for (int i = 0; i < CONV_MR; i++) {
    c[i][0] = acc ? conv_v4_load(C + i * ldc) : (conv_v4){0};
    c[i][1] = acc ? conv_v4_load(C + i * ldc + 4) : (conv_v4){0};
  }
  const float *restrict a0 = a[0], *restrict a1 = a[1], *restrict a2 = a[2],
                        *restrict a3 = a[3], *restrict a4 = a[4], *restrict a5 = a[5];
  for (int64_t p = 0; p < kc; p++) {
    conv_v4 b0 = conv_v4_load(B + p * ldb), b1 = conv_v4_load(B + p * ldb + 4);
    float v;
    v = a0[p]; c[0][0] += v * b0; c[0][1] += v * b1;
    v = a1[p]; c[1][0] += v * b0; c[1][1] += v * b1;
    v = a2[p]; c[2][0] += v * b0; c[2][1] += v * b1;
    v = a3[p]; c[3][0] += v * b0; c[3][1] += v * b1;
    v = a4[p]; c[4][0] += v * b0; c[4][1] += v * b1;
    v = a5[p]; c[5][0] += v * b0; c[5][1] += v * b1;
  }
  for (int i = 0; i < CONV_MR; i++) {
    conv_v4_store(C + i * ldc, c[i][0]);
    conv_v4_store(C + i * ldc + 4, c[i][1]);
  }
}

/* C[M x N] = A[M x K] * B[K x N], row-major with leading dimensions.
 * Blocked over N (CONV_NC) and K (CONV_KC) so the B panel stays in cache.
 * Partial tiles still run the register kernel: a partial column tile is
 * copied zero-padded into bt once per K block, partial rows repeat the last
 * valid A row, and the result goes through a small C buffer. */
static void conv_gemm(int64_t M, int64_t N, int64_t K, const float *A, int64_t lda,
                      const float *B, int64_t ldb, float *C, int64_t ldc) {
#ifdef CONV_USE_SGEMM
  nn_sgemm(0, 0, M, N, K, 1.0f, A, lda, B, ldb, 0.0f, C, ldc);
  return;
#endif
  if (K == 0) {
    for (int64_t i = 0; i < M; i++)
      memset(C + i * ldc, 0, (size_t)N * sizeof(float));
    return;
  }
  float bt[CONV_KC * CONV_NR];
  float ct[CONV_MR * CONV_NR];
  const float *a[CONV_MR];
  for (int64_t j0 = 0; j0 < N; j0 += CONV_NC) {
    int64_t jn = N - j0 < CONV_NC ? N - j0 : CONV_NC;
    int64_t jfull = j0 + jn / CONV_NR * CONV_NR;   /* first column of the partial tile */
    int64_t nrem = j0 + jn - jfull;
    for (int64_t k0 = 0; k0 < K; k0 += CONV_KC) {
      int64_t kc = K - k0 < CONV_KC ? K - k0 : CONV_KC;
      bool acc = k0 > 0;
      if (nrem) {
        for (int64_t p = 0; p < kc; p++) {
          const float *src = B + (k0 + p) * ldb + jfull;
          float *dst = bt + p * CONV_NR;
          for (int64_t q = 0; q < CONV_NR; q++)
            dst[q] = q < nrem ? src[q] : 0.0f;
        }
      }
      for (int64_t i = 0; i < M; i += CONV_MR) {
        int64_t mr = M - i < CONV_MR ? M - i : CONV_MR;
        for (int r = 0; r < CONV_MR; r++)
          a[r] = A + (i + (r < mr ? r : mr - 1)) * lda + k0;
        for (int64_t j = j0; j < j0 + jn; j += CONV_NR) {
          int64_t nr = j0 + jn - j < CONV_NR ? j0 + jn - j : CONV_NR;
          const float *b = nr == CONV_NR ? B + k0 * ldb + j : bt;
          int64_t lb = nr == CONV_NR ? ldb : CONV_NR;
          float *cc = C + i * ldc + j;
          if (mr == CONV_MR && nr == CONV_NR) {
            conv_gemm_tile(kc, a, b, lb, cc, ldc, acc);
            continue;
          }
          for (int64_t r = 0; r < CONV_MR; r++)
            for (int64_t q = 0; q < CONV_NR; q++)
              ct[r * CONV_NR + q] = acc && r < mr && q < nr ? cc[r * ldc + q] : 0.0f;
          conv_gemm_tile(kc, a, b, lb, ct, CONV_NR, acc);
          for (int64_t r = 0; r < mr; r++)
            for (int64_t q = 0; q < nr; q++)
              cc[r * ldc + q] = ct[r * CONV_NR + q];
        }
      }
    }
  }
}

/* ---- parameters ------------------------------------------------------------ */

typedef enum conv_path {
  CONV_PATH_GEMM = 0,
  CONV_PATH_1X1,
  CONV_PATH_DW,
  CONV_PATH_TRANSPOSE,
  CONV_PATH_DEFORM,       /* DeformConv: bilinear-sampled im2col, then GEMM */
  CONV_PATH_INT,          /* ConvInteger / QLinearConv: exact int32 accumulation */
} conv_path;

/* Depthwise direct kernel up to this many outputs per group; beyond, im2col
 * is amortized over enough GEMM rows to win. */
#define CONV_DW_MAX_MG 4
/* Target size in floats of one im2col / col tile (fits L2 with room). */
#define CONV_TILE_FLOATS ((int64_t)1 << 17)
#define CONV_MAX_SLOTS 64
/* Smallest row block when output channels are split between workers. */
#define CONV_MIN_MB 32

typedef struct conv_priv {
  conv_geom g;            /* Conv: in -> out; ConvTranspose: X spatial -> Y spatial */
  conv_path path;
  nn_dtype dt;
  int64_t batch, C, M, group, Cg, Mg;
  int64_t K;              /* GEMM depth: Cg * k_sz (Conv), Cg (ConvTranspose) */
  int64_t nt, ntiles;     /* GEMM column tile over out_sz (Conv) / in_sz (ConvTranspose) */
  int64_t mb, nmb;        /* Conv GEMM: output rows per task, row blocks per group */
  int64_t ntasks;
  int nslots;
  size_t slot_floats;     /* scratch floats per slot */
  size_t wt_floats;       /* ConvTranspose: transposed weights, before the slots */
  size_t stage_floats;    /* float16: float copies of X, W, B, Y, before all else */
  int64_t offset_group;   /* DeformConv */
  conv_act act;
} conv_priv;

static int conv_slots_for(nn_ctx *c, int64_t ntasks) {
  int64_t t = c->threads > 1 ? c->threads : 1;
  if (t > CONV_MAX_SLOTS)
    t = CONV_MAX_SLOTS;
  if (t > ntasks)
    t = ntasks;
  return t < 1 ? 1 : (int)t;
}

/* Column tile: multiple of CONV_NR, sized so rows x tile floats ~ CONV_TILE_FLOATS. */
static int64_t conv_tile_cols(int64_t rows, int64_t cols) {
  int64_t nt = CONV_TILE_FLOATS / (rows > 0 ? rows : 1);
  nt = nt / CONV_NR * CONV_NR;
  if (nt < 4 * CONV_NR)
    nt = 4 * CONV_NR;
  if (nt > cols)
    nt = cols;
  return nt < 1 ? 1 : nt;
}

static nn_status conv_check_dtypes(nn_ctx *c, const nn_node *n) {
  if (n->n_in < 1 || !n->x[0])
    return nn_fail(c, NN_ERR_INVALID_MODEL, "needs input X");
  nn_dtype dt = n->x[0]->dtype;
  if (dt != NN_DTYPE_FLOAT && dt != NN_DTYPE_FLOAT16)
    return nn_fail(c, NN_ERR_UNSUPPORTED, "input type %s is not supported (float32, float16)",
                   nn_dtype_name(dt));
  for (int i = 1; i < n->n_in && i < 3; i++)
    if (n->x[i] && n->x[i]->dtype != dt)
      return nn_fail(c, NN_ERR_DTYPE, "input %d is %s, input 0 is %s", i,
                     nn_dtype_name(n->x[i]->dtype), nn_dtype_name(dt));
  return NN_OK;
}

/* Common checks of X, W (input wi) and kernel_shape; fills the spatial sizes
 * and the kernel. */
static nn_status conv_check_inputs(nn_ctx *c, const nn_node *n, int wi, int *nsp, int64_t *in_sp,
                                   int64_t *kern) {
  if (n->n_in <= wi || !n->x[0] || !n->x[wi])
    return nn_fail(c, NN_ERR_INVALID_MODEL, "needs inputs X and W");
  if (n->n_out < 1 || !n->y[0])
    return nn_fail(c, NN_ERR_INVALID_MODEL, "needs output Y");
  const nn_value *x = n->x[0], *w = n->x[wi];
  if (x->rank < 3 || x->rank > 2 + CONV_SP)
    return nn_fail(c, NN_ERR_UNSUPPORTED, "input rank %d (3 to %d supported)", x->rank,
                   2 + CONV_SP);
  if (w->rank != x->rank)
    return nn_fail(c, NN_ERR_SHAPE, "W has rank %d, X has rank %d", w->rank, x->rank);
  *nsp = x->rank - 2;
  int cnt = 0;
  const int64_t *ks = nn_attr_ints(n, "kernel_shape", &cnt);
  if (ks && cnt != *nsp)
    return nn_fail(c, NN_ERR_INVALID_MODEL, "kernel_shape has %d values, expected %d", cnt, *nsp);
  for (int i = 0; i < *nsp; i++) {
    in_sp[i] = x->dims[2 + i];
    kern[i] = w->dims[2 + i];
    if (ks && ks[i] != kern[i])
      return nn_fail(c, NN_ERR_SHAPE, "kernel_shape[%d] = %lld but W has %lld", i,
                     (long long)ks[i], (long long)kern[i]);
  }
  return NN_OK;
}

static nn_status conv_finish_priv(nn_ctx *c, nn_node *n, const conv_priv *p) {
  size_t ws = p->stage_floats + p->wt_floats;
  size_t slots;
  if (nn_mul_overflow_size((size_t)p->nslots, p->slot_floats, &slots) ||
      __builtin_add_overflow(ws, slots, &ws) ||
      nn_mul_overflow_size(ws, sizeof(float), &ws))
    return nn_fail(c, NN_ERR_LIMIT, "workspace size overflows");
  conv_priv *q = nn_malloc(sizeof *q);
  if (!q)
    return nn_fail(c, NN_ERR_NOMEM, "out of memory");
  *q = *p;
  n->priv = q;
  n->ws_bytes = ws;
  return NN_OK;
}

/* float16 runs on float32 copies of every tensor, laid out first in the workspace. */
static size_t conv_stage_floats(const nn_node *n) {
  if (n->x[0]->dtype != NN_DTYPE_FLOAT16)
    return 0;
  size_t s = 0;
  for (int i = 0; i < n->n_in && i < 3; i++)
    if (n->x[i])
      s += nn_align_up((size_t)n->x[i]->numel, 16);
  s += nn_align_up((size_t)n->y[0]->numel, 16);
  return s;
}

/* ---- Conv prepare ------------------------------------------------------------ */

/* Shared by Conv, ConvInteger, QLinearConv and DeformConv: channels and
 * groups of X and W (input wi), bias shape (input bi, -1 none), the window
 * geometry, and output 0 as (N, M, out...) of type ydt. */
static nn_status conv_prepare_common(nn_ctx *c, nn_node *n, int wi, int bi, nn_dtype ydt,
                                     conv_priv *p) {
  int nsp;
  int64_t in_sp[CONV_SP], kern[CONV_SP];
  nn_status st = conv_check_inputs(c, n, wi, &nsp, in_sp, kern);
  if (st)
    return st;
  const nn_value *x = n->x[0], *w = n->x[wi];
  const nn_value *b = bi >= 0 && n->n_in > bi ? n->x[bi] : NULL;
  memset(p, 0, sizeof *p);
  p->dt = x->dtype;
  p->batch = x->dims[0];
  p->C = x->dims[1];
  p->M = w->dims[0];
  p->group = nn_attr_int(n, "group", 1);
  if (p->group < 1 || p->group > CONV_ATTR_MAX)
    return nn_fail(c, NN_ERR_INVALID_MODEL, "group %lld is invalid", (long long)p->group);
  if (p->C % p->group != 0 || p->M % p->group != 0)
    return nn_fail(c, NN_ERR_SHAPE, "group %lld does not divide %lld input / %lld output channels",
                   (long long)p->group, (long long)p->C, (long long)p->M);
  p->Cg = p->C / p->group;
  p->Mg = p->M / p->group;
  if (w->dims[1] != p->Cg)
    return nn_fail(c, NN_ERR_SHAPE, "W has %lld input channels per group, X gives %lld",
                   (long long)w->dims[1], (long long)p->Cg);
  if (b && (b->rank != 1 || b->dims[0] != p->M))
    return nn_fail(c, NN_ERR_SHAPE, "B must have shape [%lld]", (long long)p->M);
  if ((st = conv_geom_init(c, n, nsp, in_sp, kern, true, false, &p->g)) ||
      (st = conv_act_parse(c, n, &p->act)))
    return st;
  for (int i = 0; i < CONV_SP; i++)
    if (p->g.out[i] < 1 && p->g.in[i] > 0)
      return nn_fail(c, NN_ERR_SHAPE, "empty output in spatial dimension %d", i);
  int64_t dims[2 + CONV_SP];
  dims[0] = p->batch;
  dims[1] = p->M;
  for (int i = 0; i < nsp; i++)
    dims[2 + i] = p->g.out[CONV_SP - nsp + i];
  if ((st = nn_set_output(c, n->y[0], ydt, x->rank, dims)))
    return st;
  p->K = p->Cg * p->g.k_sz;
  return NN_OK;
}

/* Column tiles and tasks of the im2col / 1x1 / deformable GEMM paths. */
static void conv_plan_gemm(nn_ctx *c, conv_priv *p) {
  p->nt = conv_tile_cols(p->path == CONV_PATH_1X1 ? 0 : p->K, p->g.out_sz);
  p->ntiles = p->g.out_sz > 0 ? (p->g.out_sz + p->nt - 1) / p->nt : 0;
  /* Too few (batch, group, tile) tasks to feed the workers (deep layers:
   * small planes, many channels): split the output channels too.  Each row
   * block redoes its tile's im2col, cheap next to >= CONV_MIN_MB rows of GEMM. */
  int64_t base = p->batch * p->group * p->ntiles;
  int64_t want = 2 * (int64_t)conv_slots_for(c, INT64_MAX);
  p->mb = p->Mg;
  if (base > 0 && base < want && want > 2) {
    int64_t mb = (p->Mg * base + want - 1) / want;
    mb = (mb + CONV_MR - 1) / CONV_MR * CONV_MR;
    p->mb = mb < CONV_MIN_MB ? CONV_MIN_MB : mb;
    if (p->mb > p->Mg)
      p->mb = p->Mg;
  }
  p->nmb = p->mb > 0 ? (p->Mg + p->mb - 1) / p->mb : 1;
  p->ntasks = base * p->nmb;
  if (p->path != CONV_PATH_1X1)
    p->slot_floats = nn_align_up((size_t)(p->K * p->nt), 16);
  p->nslots = conv_slots_for(c, p->ntasks);
}

static nn_status conv_prepare(nn_ctx *c, nn_node *n) {
  nn_status st = conv_check_dtypes(c, n);
  if (st)
    return st;
  conv_priv p;
  if ((st = conv_prepare_common(c, n, 1, 2, n->x[0]->dtype, &p)))
    return st;
  bool unit = true;
  for (int i = 0; i < CONV_SP; i++)
    if (p.g.k[i] != 1 || p.g.s[i] != 1 || p.g.pb[i] != 0 || p.g.pe[i] != 0)
      unit = false;
  if (p.Cg == 1 && p.Mg <= CONV_DW_MAX_MG)
    p.path = CONV_PATH_DW;
  else if (unit)
    p.path = CONV_PATH_1X1;
  else
    p.path = CONV_PATH_GEMM;
  if (p.path == CONV_PATH_DW) {
    p.ntiles = 1;
    p.mb = p.Mg;
    p.nmb = 1;
    p.ntasks = p.batch * p.M;
    p.nslots = conv_slots_for(c, p.ntasks);
  } else {
    conv_plan_gemm(c, &p);
  }
  p.stage_floats = conv_stage_floats(n);
  return conv_finish_priv(c, n, &p);
}

/* ---- Conv run ------------------------------------------------------------------ */

typedef struct conv_job {
  const conv_priv *p;
  const float *x, *w, *b;
  float *y;
  float *scratch;         /* slot s at scratch + s * slot_floats */
  const float *wt;        /* ConvTranspose: per-group transposed weights */
  const float *offset;    /* DeformConv: (N, og*k_sz*2, out) sampling offsets */
  const float *mask;      /* DeformConv: (N, og*k_sz, out) modulation, NULL = 1 */
} conv_job;

/* im2col of output positions [j0, j0 + nn) of one group: col is K x nn. */
static void conv_im2col(const conv_priv *p, const float *x, int64_t j0, int64_t nn,
                        float *col) {
  const conv_geom *g = &p->g;
  const int64_t OD = g->out[0], OH = g->out[1], OW = g->out[2];
  const int64_t ID = g->in[0], IH = g->in[1], IW = g->in[2];
  const int64_t sw = g->s[2];
  (void)OD;
  for (int64_t r = 0; r < p->K; r++) {
    int64_t ci = r / g->k_sz, kk = r % g->k_sz;
    int64_t kw = kk % g->k[2], kh = (kk / g->k[2]) % g->k[1], kd = kk / (g->k[2] * g->k[1]);
    int64_t offd = kd * g->d[0] - g->pb[0];
    int64_t offh = kh * g->d[1] - g->pb[1];
    int64_t offw = kw * g->d[2] - g->pb[2];
    const float *xc = x + ci * g->in_sz;
    float *dst = col + r * nn;
    int64_t j = j0, jend = j0 + nn;
    int64_t ow = j % OW, oh = (j / OW) % OH, od = j / (OW * OH);
    while (j < jend) {
      int64_t len = OW - ow < jend - j ? OW - ow : jend - j;
      int64_t id = od * g->s[0] + offd, ih = oh * g->s[1] + offh;
      if (id < 0 || id >= ID || ih < 0 || ih >= IH) {
        memset(dst, 0, (size_t)len * sizeof(float));
      } else {
        const float *row = xc + (id * IH + ih) * IW;
        int64_t base = ow * sw + offw;
        int64_t lo = base < 0 ? (-base + sw - 1) / sw : 0;
        int64_t hi = base >= IW ? 0 : (IW - 1 - base) / sw + 1;
        if (lo > len)
          lo = len;
        if (hi > len)
          hi = len;
        if (hi < lo)
          hi = lo;
        for (int64_t t = 0; t < lo; t++)
          dst[t] = 0.0f;
        if (sw == 1)
          memcpy(dst + lo, row + base + lo, (size_t)(hi - lo) * sizeof(float));
        else
          for (int64_t t = lo; t < hi; t++)
            dst[t] = row[base + t * sw];
        for (int64_t t = hi; t < len; t++)
          dst[t] = 0.0f;
      }
      dst += len;
      j += len;
      ow += len;
      if (ow == OW) {
        ow = 0;
        if (++oh == OH) {
          oh = 0;
          od++;
        }
      }
    }
  }
}

/* Bilinear sample of plane x (h x w) at (y, xx); corners outside read 0
 * (GridSample, align_corners = 1, zeros padding: what DeformConv specifies). */
static float conv_bilinear(const float *x, int64_t h, int64_t w, float y, float xx) {
  if (!(y > -1.0f && y < (float)h && xx > -1.0f && xx < (float)w))
    return 0.0f;   /* also catches NaN offsets */
  float fy = floorf(y), fx = floorf(xx);
  int64_t y0 = (int64_t)fy, x0 = (int64_t)fx;
  float ly = y - fy, lx = xx - fx;
  float v00 = 0, v01 = 0, v10 = 0, v11 = 0;
  if (y0 >= 0) {
    if (x0 >= 0)
      v00 = x[y0 * w + x0];
    if (x0 + 1 < w)
      v01 = x[y0 * w + x0 + 1];
  }
  if (y0 + 1 < h) {
    if (x0 >= 0)
      v10 = x[(y0 + 1) * w + x0];
    if (x0 + 1 < w)
      v11 = x[(y0 + 1) * w + x0 + 1];
  }
  return (1.0f - ly) * ((1.0f - lx) * v00 + lx * v01) + ly * ((1.0f - lx) * v10 + lx * v11);
}

/* im2col of DeformConv (2-D): tap (ki, kj) of output position (oh, ow) reads
 * X at (oh*s - p + ki*d + dy, ow*s - p + kj*d + dx), bilinearly, times the
 * mask; (dy, dx) and the mask come per offset group of input channels. */
static void conv_deform_im2col(const conv_job *jb, int64_t bi, int64_t g, int64_t j0, int64_t nn,
                               float *col) {
  const conv_priv *p = jb->p;
  const conv_geom *gm = &p->g;
  const int64_t IH = gm->in[1], IW = gm->in[2], OW = gm->out[2];
  const int64_t KW = gm->k[2], osz = gm->out_sz;
  const int64_t cpo = p->C / p->offset_group;   /* input channels per offset group */
  const float *ob = jb->offset + bi * p->offset_group * gm->k_sz * 2 * osz;
  const float *mb = jb->mask ? jb->mask + bi * p->offset_group * gm->k_sz * osz : NULL;
  for (int64_t r = 0; r < p->K; r++) {
    int64_t ch = g * p->Cg + r / gm->k_sz, kk = r % gm->k_sz;
    int64_t ki = kk / KW, kj = kk % KW, og = ch / cpo;
    const float *xc = jb->x + (bi * p->C + ch) * gm->in_sz;
    const float *offy = ob + ((og * gm->k_sz + kk) * 2) * osz;
    const float *offx = offy + osz;
    const float *mk = mb ? mb + (og * gm->k_sz + kk) * osz : NULL;
    float *dst = col + r * nn;
    for (int64_t t = 0; t < nn; t++) {
      int64_t j = j0 + t, oh = j / OW, ow = j % OW;
      float y = (float)(oh * gm->s[1] - gm->pb[1] + ki * gm->d[1]) + offy[j];
      float xx = (float)(ow * gm->s[2] - gm->pb[2] + kj * gm->d[2]) + offx[j];
      float v = conv_bilinear(xc, IH, IW, y, xx);
      dst[t] = mk ? v * mk[j] : v;
    }
  }
}

static void conv_task_gemm(const conv_job *jb, int64_t t, float *col) {
  const conv_priv *p = jb->p;
  int64_t mblk = t % p->nmb, tt = t / p->nmb;
  int64_t tile = tt % p->ntiles, bg = tt / p->ntiles;
  int64_t g = bg % p->group, bi = bg / p->group;
  int64_t j0 = tile * p->nt;
  int64_t nn = p->g.out_sz - j0 < p->nt ? p->g.out_sz - j0 : p->nt;
  int64_t m0 = mblk * p->mb;
  int64_t mn = p->Mg - m0 < p->mb ? p->Mg - m0 : p->mb;
  const float *xg = jb->x + (bi * p->C + g * p->Cg) * p->g.in_sz;
  const float *wg = jb->w + (g * p->Mg + m0) * p->K;
  float *yg = jb->y + (bi * p->M + g * p->Mg + m0) * p->g.out_sz + j0;
  const float *bm;
  int64_t ldb;
  if (p->path == CONV_PATH_1X1) {
    bm = xg + j0;
    ldb = p->g.in_sz;
  } else {
    if (p->path == CONV_PATH_DEFORM)
      conv_deform_im2col(jb, bi, g, j0, nn, col);
    else
      conv_im2col(p, xg, j0, nn, col);
    bm = col;
    ldb = nn;
  }
  conv_gemm(mn, nn, p->K, wg, p->K, bm, ldb, yg, p->g.out_sz);
  for (int64_t m = 0; m < mn; m++)
    conv_epilogue(yg + m * p->g.out_sz, nn, jb->b ? jb->b[g * p->Mg + m0 + m] : 0.0f, &p->act);
}

/* Depthwise: one output channel per task, each output row computed once with
 * all its taps.  Columns whose taps all fall inside the input row (the
 * interior, [ow_lo, ow_hi)) run without bounds checks, 4 at a time when the
 * stride is 1; the few border columns check every tap. */
static void conv_task_dw(const conv_job *jb, int64_t t, float *unused) {
  (void)unused;
  const conv_priv *p = jb->p;
  const conv_geom *g = &p->g;
  int64_t bi = t / p->M, m = t % p->M, gi = m / p->Mg;
  const float *xc = jb->x + (bi * p->C + gi) * g->in_sz;
  const float *wm = jb->w + m * g->k_sz;
  float *yc = jb->y + (bi * p->M + m) * g->out_sz;
  const int64_t OD = g->out[0], OH = g->out[1], OW = g->out[2];
  const int64_t ID = g->in[0], IH = g->in[1], IW = g->in[2];
  const int64_t KH = g->k[1], KW = g->k[2];
  const int64_t sw = g->s[2], dw = g->d[2], pw = g->pb[2];
  int64_t ow_lo = (pw + sw - 1) / sw;
  int64_t last = IW - 1 + pw - (KW - 1) * dw;   /* largest ow*sw with all taps inside */
  int64_t ow_hi = last >= 0 ? last / sw + 1 : 0;
  if (ow_lo > OW)
    ow_lo = OW;
  if (ow_hi > OW)
    ow_hi = OW;
  if (ow_hi < ow_lo)
    ow_hi = ow_lo;
  for (int64_t od = 0; od < OD; od++) {
    int64_t kd0, kd1;
    conv_geom_taps(od, g->s[0], g->pb[0], g->d[0], g->k[0], ID, &kd0, &kd1);
    for (int64_t oh = 0; oh < OH; oh++) {
      int64_t kh0, kh1;
      conv_geom_taps(oh, g->s[1], g->pb[1], g->d[1], KH, IH, &kh0, &kh1);
      float *restrict yrow = yc + (od * OH + oh) * OW;
      int64_t id0 = od * g->s[0] - g->pb[0], ih0 = oh * g->s[1] - g->pb[1];
      /* border columns */
      for (int64_t ow = 0; ow < OW; ow++) {
        if (ow == ow_lo)
          ow = ow_hi;
        if (ow >= OW)
          break;
        float acc = 0.0f;
        for (int64_t kd = kd0; kd < kd1; kd++)
          for (int64_t kh = kh0; kh < kh1; kh++) {
            const float *xrow = xc + ((id0 + kd * g->d[0]) * IH + ih0 + kh * g->d[1]) * IW;
            const float *wk = wm + (kd * KH + kh) * KW;
            for (int64_t kw = 0; kw < KW; kw++) {
              int64_t iw = ow * sw - pw + kw * dw;
              if (iw >= 0 && iw < IW)
                acc += wk[kw] * xrow[iw];
            }
          }
        yrow[ow] = acc;
      }
      /* interior */
      int64_t ow = ow_lo;
      if (sw == 1) {
        for (; ow + 4 <= ow_hi; ow += 4) {
          conv_v4 acc = {0};
          for (int64_t kd = kd0; kd < kd1; kd++)
            for (int64_t kh = kh0; kh < kh1; kh++) {
              const float *xs =
                  xc + ((id0 + kd * g->d[0]) * IH + ih0 + kh * g->d[1]) * IW + ow - pw;
              const float *wk = wm + (kd * KH + kh) * KW;
              for (int64_t kw = 0; kw < KW; kw++)
                acc += wk[kw] * conv_v4_load(xs + kw * dw);
            }
          conv_v4_store(yrow + ow, acc);
        }
      }
      for (; ow < ow_hi; ow++) {
        float acc = 0.0f;
        for (int64_t kd = kd0; kd < kd1; kd++)
          for (int64_t kh = kh0; kh < kh1; kh++) {
            const float *xs =
                xc + ((id0 + kd * g->d[0]) * IH + ih0 + kh * g->d[1]) * IW + ow * sw - pw;
            const float *wk = wm + (kd * KH + kh) * KW;
            for (int64_t kw = 0; kw < KW; kw++)
              acc += wk[kw] * xs[kw * dw];
          }
        yrow[ow] = acc;
      }
    }
  }
  conv_epilogue(yc, g->out_sz, jb->b ? jb->b[m] : 0.0f, &p->act);
}

/* col2im of ConvTranspose: col (Mg*k_sz x nn) for input positions
 * [j0, j0 + nn) is added into the group's output planes yg. */
static void convt_col2im(const conv_priv *p, const float *col, int64_t j0, int64_t nn,
                         float *yg) {
  const conv_geom *g = &p->g;
  const int64_t OD = g->out[0], OH = g->out[1], OW = g->out[2];
  const int64_t IH = g->in[1], IW = g->in[2];
  const int64_t sw = g->s[2];
  int64_t rows = p->Mg * g->k_sz;
  for (int64_t r = 0; r < rows; r++) {
    int64_t m = r / g->k_sz, kk = r % g->k_sz;
    int64_t kw = kk % g->k[2], kh = (kk / g->k[2]) % g->k[1], kd = kk / (g->k[2] * g->k[1]);
    int64_t offd = kd * g->d[0] - g->pb[0];
    int64_t offh = kh * g->d[1] - g->pb[1];
    int64_t offw = kw * g->d[2] - g->pb[2];
    float *ym = yg + m * g->out_sz;
    const float *src = col + r * nn;
    int64_t j = j0, jend = j0 + nn;
    int64_t iw = j % IW, ih = (j / IW) % IH, id = j / (IW * IH);
    while (j < jend) {
      int64_t len = IW - iw < jend - j ? IW - iw : jend - j;
      int64_t od = id * g->s[0] + offd, oh = ih * g->s[1] + offh;
      if (od >= 0 && od < OD && oh >= 0 && oh < OH) {
        float *orow = ym + (od * OH + oh) * OW;
        int64_t base = iw * sw + offw;
        int64_t lo = base < 0 ? (-base + sw - 1) / sw : 0;
        int64_t hi = base >= OW ? 0 : (OW - 1 - base) / sw + 1;
        if (hi > len)
          hi = len;
        for (int64_t t = lo; t < hi; t++)
          orow[base + t * sw] += src[t];
      }
      src += len;
      j += len;
      iw += len;
      if (iw == IW) {
        iw = 0;
        if (++ih == IH) {
          ih = 0;
          id++;
        }
      }
    }
  }
}

static void convt_task(const conv_job *jb, int64_t t, float *col) {
  const conv_priv *p = jb->p;
  const conv_geom *g = &p->g;
  int64_t gi = t % p->group, bi = t / p->group;
  int64_t rows = p->Mg * g->k_sz;
  const float *xg = jb->x + (bi * p->C + gi * p->Cg) * g->in_sz;
  const float *wt = jb->wt + gi * rows * p->Cg;
  float *yg = jb->y + (bi * p->M + gi * p->Mg) * g->out_sz;
  memset(yg, 0, (size_t)(p->Mg * g->out_sz) * sizeof(float));
  for (int64_t j0 = 0; j0 < g->in_sz; j0 += p->nt) {
    int64_t nn = g->in_sz - j0 < p->nt ? g->in_sz - j0 : p->nt;
    conv_gemm(rows, nn, p->Cg, wt, p->Cg, xg + j0, g->in_sz, col, nn);
    convt_col2im(p, col, j0, nn, yg);
  }
  for (int64_t m = 0; m < p->Mg; m++)
    conv_epilogue(yg + m * g->out_sz, g->out_sz, jb->b ? jb->b[gi * p->Mg + m] : 0.0f,
                  &p->act);
}

static void conv_run_slots(void *arg, int64_t s0, int64_t s1) {
  const conv_job *jb = arg;
  const conv_priv *p = jb->p;
  float *scratch = jb->scratch + (size_t)s0 * p->slot_floats;
  void (*task)(const conv_job *, int64_t, float *) =
      p->path == CONV_PATH_DW ? conv_task_dw
      : p->path == CONV_PATH_TRANSPOSE ? convt_task
                                       : conv_task_gemm;
  for (int64_t s = s0; s < s1; s++)
    for (int64_t t = s; t < p->ntasks; t += p->nslots)
      task(jb, t, scratch);
}

static void conv_f16_to_f32(const nn_value *v, float *dst) {
  const uint16_t *s = v->data;
  for (int64_t i = 0; i < v->numel; i++)
    dst[i] = nn_f16_to_f32(s[i]);
}

static nn_status conv_run(nn_ctx *c, nn_node *n) {
  const conv_priv *p = n->priv;
  conv_job jb;
  memset(&jb, 0, sizeof jb);
  jb.p = p;
  float *ws = n->ws;
  const nn_value *bv = n->n_in > 2 ? n->x[2] : NULL;
  if (p->dt == NN_DTYPE_FLOAT16) {
    float *s = ws;
    const nn_value *v[3] = {n->x[0], n->x[1], bv};
    const float *dst[3] = {NULL, NULL, NULL};
    for (int i = 0; i < 3; i++) {
      if (!v[i])
        continue;
      conv_f16_to_f32(v[i], s);
      dst[i] = s;
      s += nn_align_up((size_t)v[i]->numel, 16);
    }
    jb.x = dst[0];
    jb.w = dst[1];
    jb.b = dst[2];
    jb.y = s;
  } else {
    jb.x = n->x[0]->data;
    jb.w = n->x[1]->data;
    jb.b = bv ? bv->data : NULL;
    jb.y = n->y[0]->data;
  }
  if (p->path == CONV_PATH_DEFORM) {
    jb.offset = n->x[2]->data;
    jb.b = n->n_in > 3 && n->x[3] ? n->x[3]->data : NULL;
    jb.mask = n->n_in > 4 && n->x[4] ? n->x[4]->data : NULL;
  }
  float *wt = ws ? ws + p->stage_floats : NULL;
  if (p->path == CONV_PATH_TRANSPOSE) {
    /* W is (C, Mg, k...) = per group Cg x (Mg*k_sz); the GEMM wants its
     * transpose (Mg*k_sz) x Cg as the row-major left operand. */
    int64_t rows = p->Mg * p->g.k_sz;
    for (int64_t gi = 0; gi < p->group; gi++) {
      const float *src = jb.w + gi * p->Cg * rows;
      float *dst = wt + gi * rows * p->Cg;
      for (int64_t ci = 0; ci < p->Cg; ci++)
        for (int64_t r = 0; r < rows; r++)
          dst[r * p->Cg + ci] = src[ci * rows + r];
    }
    jb.wt = wt;
  }
  jb.scratch = wt ? wt + p->wt_floats : NULL;
  if (p->ntasks > 0)
    nn_parallel_for(c, p->nslots, 1, conv_run_slots, &jb);
  if (p->dt == NN_DTYPE_FLOAT16) {
    uint16_t *yd = n->y[0]->data;
    for (int64_t i = 0; i < n->y[0]->numel; i++)
      yd[i] = nn_f32_to_f16(jb.y[i]);
  }
  return NN_OK;
}

/* ---- ConvTranspose prepare --------------------------------------------------- */

static nn_status convt_prepare(nn_ctx *c, nn_node *n) {
  int nsp;
  int64_t in_sp[CONV_SP], kern[CONV_SP];
  nn_status st = conv_check_inputs(c, n, 1, &nsp, in_sp, kern);
  if (!st)
    st = conv_check_dtypes(c, n);
  if (st)
    return st;
  const nn_value *x = n->x[0], *w = n->x[1];
  const nn_value *b = n->n_in > 2 ? n->x[2] : NULL;
  conv_priv p;
  memset(&p, 0, sizeof p);
  p.path = CONV_PATH_TRANSPOSE;
  p.dt = x->dtype;
  p.batch = x->dims[0];
  p.C = x->dims[1];
  p.group = nn_attr_int(n, "group", 1);
  if (p.group < 1 || p.group > CONV_ATTR_MAX)
    return nn_fail(c, NN_ERR_INVALID_MODEL, "group %lld is invalid", (long long)p.group);
  if (p.C % p.group != 0)
    return nn_fail(c, NN_ERR_SHAPE, "group %lld does not divide %lld input channels",
                   (long long)p.group, (long long)p.C);
  if (w->dims[0] != p.C)
    return nn_fail(c, NN_ERR_SHAPE, "W has %lld input channels, X has %lld",
                   (long long)w->dims[0], (long long)p.C);
  p.Cg = p.C / p.group;
  p.Mg = w->dims[1];
  p.M = p.Mg * p.group;
  if (b && (b->rank != 1 || b->dims[0] != p.M))
    return nn_fail(c, NN_ERR_SHAPE, "B must have shape [%lld]", (long long)p.M);
  if ((st = conv_act_parse(c, n, &p.act)))
    return st;

  int64_t s[CONV_SP], d[CONV_SP], pads[2 * CONV_SP], opad[CONV_SP];
  for (int i = 0; i < CONV_SP; i++) {
    s[i] = d[i] = 1;
    opad[i] = 0;
  }
  memset(pads, 0, sizeof pads);
  if ((st = conv_geom_ints(c, n, "strides", nsp, 1, s)) ||
      (st = conv_geom_ints(c, n, "dilations", nsp, 1, d)) ||
      (st = conv_geom_ints(c, n, "pads", 2 * nsp, 0, pads)) ||
      (st = conv_geom_ints(c, n, "output_padding", nsp, 0, opad)))
    return st;
  conv_autopad ap;
  if ((st = conv_geom_autopad(c, n, &ap)))
    return st;
  int cnt = 0;
  const int64_t *oshape = nn_attr_ints(n, "output_shape", &cnt);
  if (oshape) {
    /* Some exporters give the full shape (N, C, spatial...). */
    if (cnt == nsp + 2)
      oshape += 2;
    else if (cnt != nsp)
      return nn_fail(c, NN_ERR_INVALID_MODEL, "output_shape has %d values, expected %d", cnt,
                     nsp);
  }

  conv_geom *g = &p.g;
  g->nsp = nsp;
  for (int i = 0; i < CONV_SP; i++) {
    g->in[i] = g->out[i] = g->k[i] = g->s[i] = g->d[i] = 1;
    g->pb[i] = g->pe[i] = 0;
  }
  int off = CONV_SP - nsp;
  for (int i = 0; i < nsp; i++) {
    int j = off + i;
    if (kern[i] < 1 || kern[i] > CONV_ATTR_MAX)
      return nn_fail(c, NN_ERR_INVALID_MODEL, "kernel size %lld in dimension %d is invalid",
                     (long long)kern[i], i);
    g->in[j] = in_sp[i];
    g->k[j] = kern[i];
    g->s[j] = s[i];
    g->d[j] = d[i];
    int64_t ek = (kern[i] - 1) * d[i] + 1;
    int64_t full = s[i] * (in_sp[i] - 1) + opad[i] + ek;   /* output with no padding */
    int64_t out;
    if (oshape || ap == CONV_PAD_SAME_UPPER || ap == CONV_PAD_SAME_LOWER) {
      if (oshape) {
        out = oshape[i];
        if (out < 0 || out > CONV_ATTR_MAX)
          return nn_fail(c, NN_ERR_INVALID_MODEL, "output_shape[%d] = %lld is invalid", i,
                         (long long)out);
      } else {
        out = in_sp[i] * s[i];
      }
      int64_t total = full - out;
      if (total < 0) {
        /* asked for more than the kernel reaches: the extra is at the end */
        g->pb[j] = 0;
      } else {
        int64_t half = total / 2;
        g->pb[j] = ap == CONV_PAD_SAME_UPPER ? half : total - half;
      }
      g->pe[j] = total - g->pb[j];
    } else {
      if (ap == CONV_PAD_NOTSET) {
        g->pb[j] = pads[i];
        g->pe[j] = pads[nsp + i];
      }
      out = full - g->pb[j] - g->pe[j];
    }
    if (out < 1 && in_sp[i] > 0)
      return nn_fail(c, NN_ERR_SHAPE, "output size %lld in spatial dimension %d is not positive",
                     (long long)out, i);
    g->out[j] = out;
  }
  g->in_sz = g->out_sz = g->k_sz = 1;
  for (int i = 0; i < CONV_SP; i++) {
    g->in_sz *= g->in[i];
    g->out_sz *= g->out[i];
    g->k_sz *= g->k[i];
  }

  int64_t dims[2 + CONV_SP];
  dims[0] = p.batch;
  dims[1] = p.M;
  for (int i = 0; i < nsp; i++)
    dims[2 + i] = g->out[off + i];
  if ((st = nn_set_output(c, n->y[0], x->dtype, x->rank, dims)))
    return st;

  p.K = p.Cg;
  int64_t rows = p.Mg * g->k_sz;
  p.nt = conv_tile_cols(rows, g->in_sz);
  p.ntiles = 1;
  p.mb = p.Mg;
  p.nmb = 1;
  p.ntasks = p.batch * p.group;
  p.slot_floats = nn_align_up((size_t)(rows * p.nt), 16);
  p.wt_floats = nn_align_up((size_t)w->numel, 16);
  p.nslots = conv_slots_for(c, p.ntasks);
  p.stage_floats = conv_stage_floats(n);
  return conv_finish_priv(c, n, &p);
}

/* ---- DeformConv ----------------------------------------------------------------- */

static nn_status deform_prepare(nn_ctx *c, nn_node *n) {
  if (n->n_in < 3 || !n->x[0] || !n->x[1] || !n->x[2])
    return nn_fail(c, NN_ERR_INVALID_MODEL, "needs inputs X, W and offset");
  for (int i = 0; i < n->n_in && i < 5; i++)
    if (n->x[i] && n->x[i]->dtype != NN_DTYPE_FLOAT)
      return nn_fail(c, NN_ERR_UNSUPPORTED, "input %d type %s is not supported (float32)", i,
                     nn_dtype_name(n->x[i]->dtype));
  if (n->x[0]->rank != 4)
    return nn_fail(c, NN_ERR_UNSUPPORTED, "only 2-D DeformConv is supported (input rank %d)",
                   n->x[0]->rank);
  conv_priv p;
  nn_status st = conv_prepare_common(c, n, 1, 3, NN_DTYPE_FLOAT, &p);
  if (st)
    return st;
  p.offset_group = nn_attr_int(n, "offset_group", 1);
  if (p.offset_group < 1 || p.C % p.offset_group != 0)
    return nn_fail(c, NN_ERR_INVALID_MODEL, "offset_group %lld does not divide %lld channels",
                   (long long)p.offset_group, (long long)p.C);
  const nn_value *off = n->x[2];
  const nn_value *mask = n->n_in > 4 ? n->x[4] : NULL;
  int64_t want[4] = {p.batch, p.offset_group * p.g.k_sz * 2, p.g.out[1], p.g.out[2]};
  for (int pass = 0; pass < 2; pass++) {
    const nn_value *v = pass ? mask : off;
    if (!v)
      continue;
    want[1] = p.offset_group * p.g.k_sz * (pass ? 1 : 2);
    if (v->rank != 4 || memcmp(v->dims, want, sizeof want) != 0)
      return nn_fail(c, NN_ERR_SHAPE, "%s must have shape [%lld, %lld, %lld, %lld]",
                     pass ? "mask" : "offset", (long long)want[0], (long long)want[1],
                     (long long)want[2], (long long)want[3]);
  }
  p.path = CONV_PATH_DEFORM;
  conv_plan_gemm(c, &p);
  return conv_finish_priv(c, n, &p);
}

/* ---- ConvInteger and QLinearConv --------------------------------------------------
 * Exact int32 sums of (x - x_zero_point) * (w - w_zero_point); im2col pads with
 * zeros of the shifted values, i.e. with the zero point.  QLinearConv then
 * adds the int32 bias and requantizes: round_half_even(acc * x_scale * w_scale
 * / y_scale) + y_zero_point, saturated.  Serial: quantized models are not
 * the speed target of this path. */

typedef struct conv_qin {
  int x, x_zp, w, w_zp, bias;      /* input indices, -1 = none */
  int x_scale, w_scale, y_scale, y_zp;
} conv_qin;

static const conv_qin conv_qin_integer = {0, 2, 1, 3, -1, -1, -1, -1, -1};
static const conv_qin conv_qin_linear = {0, 2, 3, 5, 8, 1, 4, 6, 7};

static const nn_value *conv_qget(const nn_node *n, int i) {
  return i >= 0 && i < n->n_in ? n->x[i] : NULL;
}

static bool conv_is_q8(nn_dtype dt) { return dt == NN_DTYPE_UINT8 || dt == NN_DTYPE_INT8; }

static int32_t conv_q8(const nn_value *v, int64_t i) {
  return v->dtype == NN_DTYPE_UINT8 ? ((const uint8_t *)v->data)[i] : ((const int8_t *)v->data)[i];
}

static nn_status qconv_prepare(nn_ctx *c, nn_node *n, const conv_qin *q) {
  const nn_value *x = conv_qget(n, q->x), *w = conv_qget(n, q->w);
  if (!x || !w)
    return nn_fail(c, NN_ERR_INVALID_MODEL, "needs inputs x and w");
  if (!conv_is_q8(x->dtype) || !conv_is_q8(w->dtype))
    return nn_fail(c, NN_ERR_UNSUPPORTED, "x %s / w %s: only uint8 and int8 are supported",
                   nn_dtype_name(x->dtype), nn_dtype_name(w->dtype));
  bool linear = q->y_scale >= 0;
  const nn_value *yzp = conv_qget(n, q->y_zp);
  nn_dtype ydt = !linear ? NN_DTYPE_INT32 : yzp ? yzp->dtype : x->dtype;
  if (linear && !conv_is_q8(ydt))
    return nn_fail(c, NN_ERR_UNSUPPORTED, "output type %s is not supported", nn_dtype_name(ydt));
  conv_priv p;
  nn_status st = conv_prepare_common(c, n, q->w, q->bias, ydt, &p);
  if (st)
    return st;
  if (p.act.kind != CONV_ACT_NONE)
    return nn_fail(c, NN_ERR_UNSUPPORTED, "a fused activation on an integer convolution");
  /* zero points: x per tensor, w per tensor or per output channel */
  const nn_value *xzp = conv_qget(n, q->x_zp), *wzp = conv_qget(n, q->w_zp);
  if (xzp && (xzp->numel != 1 || xzp->dtype != x->dtype))
    return nn_fail(c, NN_ERR_UNSUPPORTED, "x_zero_point must be one %s", nn_dtype_name(x->dtype));
  if (wzp && ((wzp->numel != 1 && wzp->numel != p.M) || wzp->dtype != w->dtype))
    return nn_fail(c, NN_ERR_UNSUPPORTED, "w_zero_point must be one or %lld %s", (long long)p.M,
                   nn_dtype_name(w->dtype));
  if (linear) {
    const nn_value *xs = conv_qget(n, q->x_scale), *ws = conv_qget(n, q->w_scale);
    const nn_value *ys = conv_qget(n, q->y_scale), *b = conv_qget(n, q->bias);
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
  p.path = CONV_PATH_INT;
  p.nt = conv_tile_cols(p.K, p.g.out_sz);
  p.ntiles = p.g.out_sz > 0 ? (p.g.out_sz + p.nt - 1) / p.nt : 0;
  p.nslots = 1;
  /* workspace (int32): shifted weights M x K, one col tile, one acc tile */
  p.wt_floats = nn_align_up((size_t)(p.M * p.K), 16);
  p.slot_floats = nn_align_up((size_t)(p.K * p.nt), 16) + nn_align_up((size_t)(p.Mg * p.nt), 16);
  return conv_finish_priv(c, n, &p);
}

static nn_status convint_prepare(nn_ctx *c, nn_node *n) { return qconv_prepare(c, n, &conv_qin_integer); }
static nn_status qlinearconv_prepare(nn_ctx *c, nn_node *n) { return qconv_prepare(c, n, &conv_qin_linear); }

static nn_status qconv_run_with(nn_ctx *c, nn_node *n, const conv_qin *q) {
  (void)c;
  const conv_priv *p = n->priv;
  const conv_geom *g = &p->g;
  const nn_value *x = conv_qget(n, q->x), *w = conv_qget(n, q->w);
  const nn_value *xzpv = conv_qget(n, q->x_zp), *wzpv = conv_qget(n, q->w_zp);
  const nn_value *bv = conv_qget(n, q->bias), *yzpv = conv_qget(n, q->y_zp);
  const nn_value *xsv = conv_qget(n, q->x_scale), *wsv = conv_qget(n, q->w_scale);
  const nn_value *ysv = conv_qget(n, q->y_scale);
  nn_value *y = n->y[0];
  int32_t *wq = n->ws;
  int32_t *col = wq + p->wt_floats;
  int32_t *acc = col + nn_align_up((size_t)(p->K * p->nt), 16);
  int32_t xzp = xzpv ? conv_q8(xzpv, 0) : 0;
  for (int64_t m = 0; m < p->M; m++) {
    int32_t wzp = wzpv ? conv_q8(wzpv, wzpv->numel == 1 ? 0 : m) : 0;
    for (int64_t k = 0; k < p->K; k++)
      wq[m * p->K + k] = conv_q8(w, m * p->K + k) - wzp;
  }
  const int64_t OH = g->out[1], OW = g->out[2], ID = g->in[0], IH = g->in[1], IW = g->in[2];
  for (int64_t bi = 0; bi < p->batch; bi++)
    for (int64_t gi = 0; gi < p->group; gi++)
      for (int64_t j0 = 0; j0 < g->out_sz; j0 += p->nt) {
        int64_t nn = g->out_sz - j0 < p->nt ? g->out_sz - j0 : p->nt;
        for (int64_t r = 0; r < p->K; r++) {
          int64_t ci = gi * p->Cg + r / g->k_sz, kk = r % g->k_sz;
          int64_t kw = kk % g->k[2], kh = (kk / g->k[2]) % g->k[1], kd = kk / (g->k[2] * g->k[1]);
          int64_t xbase = (bi * p->C + ci) * g->in_sz;
          for (int64_t t = 0; t < nn; t++) {
            int64_t j = j0 + t, ow = j % OW, oh = (j / OW) % OH, od = j / (OW * OH);
            int64_t id = od * g->s[0] - g->pb[0] + kd * g->d[0];
            int64_t ih = oh * g->s[1] - g->pb[1] + kh * g->d[1];
            int64_t iw = ow * g->s[2] - g->pb[2] + kw * g->d[2];
            bool in = id >= 0 && id < ID && ih >= 0 && ih < IH && iw >= 0 && iw < IW;
            col[r * nn + t] = in ? conv_q8(x, xbase + (id * IH + ih) * IW + iw) - xzp : 0;
          }
        }
        for (int64_t m = 0; m < p->Mg; m++) {
          int32_t *a = acc + m * nn;
          const int32_t *wr = wq + (gi * p->Mg + m) * p->K;
          for (int64_t t = 0; t < nn; t++)
            a[t] = 0;
          /* unsigned: a hostile K wraps around (as int32 hardware does)
           * instead of being undefined behaviour */
          uint32_t *au = (uint32_t *)a;
          for (int64_t k = 0; k < p->K; k++) {
            uint32_t wv = (uint32_t)wr[k];
            const int32_t *cr = col + k * nn;
            for (int64_t t = 0; t < nn; t++)
              au[t] += wv * (uint32_t)cr[t];
          }
          int64_t mo = gi * p->Mg + m;
          int64_t obase = (bi * p->M + mo) * g->out_sz + j0;
          if (!xsv) {
            memcpy((int32_t *)y->data + obase, a, (size_t)nn * sizeof(int32_t));
            continue;
          }
          /* the multiplier as the ONNX reference forms it: float32 x*w/y,
           * applied to the int32 sum in double */
          float xs = *(const float *)xsv->data, ys = *(const float *)ysv->data;
          float wsc = ((const float *)wsv->data)[wsv->numel == 1 ? 0 : mo];
          double mult = (double)(float)(xs * wsc / ys);
          int32_t bias = bv ? ((const int32_t *)bv->data)[mo] : 0;
          double zp = yzpv ? conv_q8(yzpv, 0) : 0;
          double lo = y->dtype == NN_DTYPE_UINT8 ? 0.0 : -128.0;
          double hi = y->dtype == NN_DTYPE_UINT8 ? 255.0 : 127.0;
          for (int64_t t = 0; t < nn; t++) {
            double v = nearbyint((double)((int64_t)a[t] + bias) * mult) + zp;
            v = v > lo ? v : lo;   /* NaN (zero scales) saturates low */
            v = v < hi ? v : hi;
            if (y->dtype == NN_DTYPE_UINT8)
              ((uint8_t *)y->data)[obase + t] = (uint8_t)v;
            else
              ((int8_t *)y->data)[obase + t] = (int8_t)v;
          }
        }
      }
  return NN_OK;
}

static nn_status convint_run(nn_ctx *c, nn_node *n) { return qconv_run_with(c, n, &conv_qin_integer); }
static nn_status qlinearconv_run(nn_ctx *c, nn_node *n) { return qconv_run_with(c, n, &conv_qin_linear); }

const nn_op_def nn_ops_conv[] = {
  {.name = "Conv", .versions = {1, 11}, .prepare = conv_prepare, .run = conv_run},
  {.name = "ConvTranspose", .versions = {1, 11}, .prepare = convt_prepare, .run = conv_run},
  {.name = "DeformConv", .versions = {19}, .prepare = deform_prepare, .run = conv_run},
  {.name = "ConvInteger", .versions = {10}, .prepare = convint_prepare, .run = convint_run},
  {.name = "QLinearConv", .versions = {10}, .prepare = qlinearconv_prepare, .run = qlinearconv_run},
  {0},
};

/* test_sgemm.c - the packed SGEMM engine and the depthwise kernel against
 * naive double-accumulating references.
 *
 * Every dispatch path the machine has (portable, AVX2, AVX-512) is forced in
 * turn with nn_cpu_isa_set and run serially and on a 2-thread pool, through
 * all three entries (plain, pre-packed A, pre-packed B), every transpose
 * combination, alpha/beta, bias (row/column) and every fused activation, on
 * edge shapes (1, odd, K = 0, exact tile multiples and one past them) and
 * random ones.  Workspaces and packed buffers are allocated at exactly the
 * advertised size with nn_malloc (16-byte aligned, not 64) so ASan catches
 * any overrun; C is surrounded by sentinels that must survive.
 *
 *   test-sgemm            run the tests
 *   test-sgemm --bench    print GFLOP/s per path on model-like shapes
 *                         (information only, never pass/fail)
 */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cpu/dwconv.h"
#include "cpu/qgemm.h"
#include "cpu/sgemm.h"
#include "cpu/vmath.h"
#include "threadpool.h"

static int g_passed, g_failed, g_skipped;
static double g_worst_ratio;   /* max |err| / tolerance seen over all checks */

#define CHECK(cond)                                                                   \
  do {                                                                                \
    if (!(cond)) {                                                                    \
      fprintf(stderr, "  %s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond);       \
      ok = false;                                                                     \
    }                                                                                 \
  } while (0)

/* ---- deterministic random numbers ----------------------------------------------- */
static uint64_t g_rng = 0x9E3779B97F4A7C15ull;
static uint32_t rnd_u32(void) {
  g_rng ^= g_rng << 13;
  g_rng ^= g_rng >> 7;
  g_rng ^= g_rng << 17;
  return (uint32_t)(g_rng >> 32);
}
static int64_t rnd_range(int64_t lo, int64_t hi) { return lo + (int64_t)(rnd_u32() % (uint32_t)(hi - lo + 1)); }
static float rnd_float(void) { return (float)((double)rnd_u32() / 2147483648.0 - 1.0); }   /* [-1, 1) */
static void fill(float *p, int64_t n) {
  for (int64_t i = 0; i < n; i++)
    p[i] = rnd_float();
}

/* ---- reference ------------------------------------------------------------------- */
static const char *act_name(nn_sgemm_act a) {
  static const char *n[] = {"none", "relu", "clip", "leaky", "hswish", "sigmoid", "silu", "gelu"};
  return n[a];
}

static double ref_act(const nn_sgemm_epi *e, double v) {
  if (!e)
    return v;
  switch (e->act) {
  case NN_SGEMM_ACT_RELU: return v < 0 ? 0 : v;
  case NN_SGEMM_ACT_CLIP: v = v < e->lo ? e->lo : v; return v > e->hi ? e->hi : v;
  case NN_SGEMM_ACT_LEAKY: return v < 0 ? v * e->alpha : v;
  case NN_SGEMM_ACT_HSWISH: {
    double t = v / 6.0 + 0.5;
    t = t < 0 ? 0 : (t > 1 ? 1 : t);
    return v * t;
  }
  case NN_SGEMM_ACT_SIGMOID: return 1.0 / (1.0 + exp(-v));
  case NN_SGEMM_ACT_SILU: return v / (1.0 + exp(-v));
  case NN_SGEMM_ACT_GELU: return 0.5 * v * (1.0 + erf(v * 0.70710678118654752440));
  default: return v;
  }
}

/* The activations, NONE to the last (the conv and depthwise cases cycle
 * through them). */
#define SG_TEST_ACTS (NN_SGEMM_ACT_GELU + 1)

/* Largest slope of the activation: how much an error before it can grow. */
static double act_gain(const nn_sgemm_epi *e) {
  return e && (e->act == NN_SGEMM_ACT_HSWISH || e->act == NN_SGEMM_ACT_SILU ||
               e->act == NN_SGEMM_ACT_GELU) ? 1.5 : 1.0;
}

typedef struct gemm_case {
  int ta, tb;
  int64_t M, N, K;
  float alpha, beta;
  nn_sgemm_epi epi;
  bool use_epi;
} gemm_case;

/* Compare C (ldc) with the reference computed from A, B and the old C (C0).
 * Tolerance: float accumulation error grows with K and with the magnitude of
 * the terms; sqrt(K) scaling is what a blocked sum of random terms shows, the
 * constant leaves a margin of ~10x over the worst error seen. */
static bool check_result(const gemm_case *g, const float *A, int64_t lda, const float *B,
                         int64_t ldb, const float *C0, const float *C, int64_t ldc,
                         int64_t crows) {
  const nn_sgemm_epi *e = g->use_epi ? &g->epi : NULL;
  bool ok = true;
  int reported = 0;
  for (int64_t i = 0; i < crows; i++)
    for (int64_t j = 0; j < ldc; j++) {
      float got = C[i * ldc + j];
      if (i >= g->M || j >= g->N) {   /* outside the result: sentinel must survive */
        if (memcmp(&got, &C0[i * ldc + j], sizeof got) != 0 && reported++ < 3) {
          fprintf(stderr, "  C(%lld,%lld) outside the result was overwritten\n", (long long)i,
                  (long long)j);
          ok = false;
        }
        continue;
      }
      double acc = 0, mag = 0;
      for (int64_t k = 0; k < g->K; k++) {
        double a = g->ta ? A[k * lda + i] : A[i * lda + k];
        double b = g->tb ? B[j * ldb + k] : B[k * ldb + j];
        acc += a * b;
        mag += fabs(a * b);
      }
      double v = (double)g->alpha * acc;
      mag *= fabs(g->alpha);
      if (g->K == 0 || g->alpha == 0.0f) {
        v = 0;
        mag = 0;
      }
      if (g->beta != 0.0f) {
        v += (double)g->beta * C0[i * ldc + j];
        mag += fabs((double)g->beta * C0[i * ldc + j]);
      }
      if (e && e->bias && e->bias_kind != NN_SGEMM_BIAS_NONE) {
        double b = e->bias_kind == NN_SGEMM_BIAS_ROW ? e->bias[i] : e->bias[j];
        v += b;
        mag += fabs(b);
      }
      if (e && e->res) {
        double r = e->res[i * e->ldres + j];
        v += r;
        mag += fabs(r);
      }
      double want = ref_act(e, v);
      double tol = (4.0 * sqrt((double)g->K + 1.0) * 1.2e-7 * mag + 2e-6) * act_gain(e);
      double err = fabs(got - want);
      if (tol > 0 && err / tol > g_worst_ratio && isfinite(err))
        g_worst_ratio = err / tol;
      if (!(err <= tol) && reported++ < 3) {
        fprintf(stderr, "  C(%lld,%lld) = %.9g, want %.9g (tol %.3g)\n", (long long)i,
                (long long)j, got, want, tol);
        ok = false;
      }
    }
  return ok;
}

/* ---- one GEMM case through one entry ---------------------------------------------------- */
typedef enum entry { ENTRY_PLAIN = 0, ENTRY_PA, ENTRY_PB, ENTRY_PAPB, ENTRY_COUNT } entry;
static const char *entry_name[] = {"plain", "packed-A", "packed-B", "packed-A+B"};

static nn_ctx *g_ctx2;   /* a context on a 2-thread pool */

static bool run_case(const gemm_case *g, entry en, nn_ctx *ctx, bool small_ws) {
  int64_t M = g->M, N = g->N, K = g->K;
  int64_t lda = (g->ta ? M : K) + (int64_t)(rnd_u32() % 3);
  int64_t ldb = (g->tb ? K : N) + (int64_t)(rnd_u32() % 3);
  int64_t ldc = N + (int64_t)(rnd_u32() % 3);
  int64_t arows = g->ta ? K : M, brows = g->tb ? N : K;
  int64_t crows = M + 1;
  /* +1 element so that an empty matrix still has a valid pointer */
  float *A = nn_malloc(sizeof(float) * (size_t)(arows * lda + 1));
  float *B = nn_malloc(sizeof(float) * (size_t)(brows * ldb + 1));
  float *C = nn_malloc(sizeof(float) * (size_t)(crows * ldc + 1));
  float *C0 = nn_malloc(sizeof(float) * (size_t)(crows * ldc + 1));
  fill(A, arows * lda);
  fill(B, brows * ldb);
  fill(C0, crows * ldc);
  if (g->beta == 0.0f)   /* beta = 0: C must be write-only, NaN never read */
    for (int64_t i = 0; i < M; i++)
      for (int64_t j = 0; j < N; j++)
        C0[i * ldc + j] = NAN;
  memcpy(C, C0, sizeof(float) * (size_t)(crows * ldc));
  int threads = ctx ? ctx->threads : 1;
  size_t wsb = nn_sgemm_workspace(M, N, K, threads);
  if (small_ws && wsb > 0)   /* room for one slot only: must still be right */
    wsb = nn_sgemm_workspace(M, N, K, 1);
  void *ws = wsb ? nn_malloc(wsb) : NULL;
  void *pk = NULL, *pk2 = NULL;
  nn_status st;
  const nn_sgemm_epi *e = g->use_epi ? &g->epi : NULL;
  switch (en) {
  case ENTRY_PA:
    pk = nn_malloc(nn_sgemm_pack_a_size(M, K));
    nn_sgemm_pack_a(g->ta, M, K, A, lda, pk);
    st = nn_sgemm_compute_pa(ctx, g->tb, M, N, K, g->alpha, pk, B, ldb, g->beta, C, ldc, e, ws,
                             wsb);
    break;
  case ENTRY_PB:
    pk = nn_malloc(nn_sgemm_pack_b_size(K, N));
    nn_sgemm_pack_b(g->tb, K, N, B, ldb, pk);
    st = nn_sgemm_compute_pb(ctx, g->ta, M, N, K, g->alpha, A, lda, pk, g->beta, C, ldc, e, ws,
                             wsb);
    break;
  case ENTRY_PAPB:   /* the packed conv path; small B tiles take the panel-outer order */
    pk = nn_malloc(nn_sgemm_pack_a_size(M, K));
    pk2 = nn_malloc(nn_sgemm_pack_b_size(K, N));
    nn_sgemm_pack_a(g->ta, M, K, A, lda, pk);
    nn_sgemm_pack_b(g->tb, K, N, B, ldb, pk2);
    st = nn_sgemm_compute_papb(ctx, M, N, K, g->alpha, pk, pk2, g->beta, C, ldc, e, ws, wsb);
    break;
  default:
    st = nn_sgemm_compute(ctx, g->ta, g->tb, M, N, K, g->alpha, A, lda, B, ldb, g->beta, C, ldc,
                          e, ws, wsb);
    break;
  }
  bool ok = st == NN_OK;
  if (!ok)
    fprintf(stderr, "  compute returned %s\n", nn_status_str(st));
  else
    ok = check_result(g, A, lda, B, ldb, C0, C, ldc, crows);
  if (!ok)
    fprintf(stderr,
            "FAIL gemm %s %s threads=%d ta=%d tb=%d M=%lld N=%lld K=%lld alpha=%g beta=%g "
            "act=%s bias=%d res=%d%s\n",
            nn_cpu_isa_name(nn_cpu_isa_get()), entry_name[en], threads, g->ta, g->tb,
            (long long)M, (long long)N, (long long)K, g->alpha, g->beta,
            g->use_epi ? act_name(g->epi.act) : "none", g->use_epi ? (int)g->epi.bias_kind : 0,
            g->use_epi && g->epi.res != NULL, small_ws ? " (1-slot workspace)" : "");
  nn_free(pk);
  nn_free(pk2);
  nn_free(ws);
  nn_free(A);
  nn_free(B);
  nn_free(C);
  nn_free(C0);
  return ok;
}

static void tally(bool ok) {
  if (ok)
    g_passed++;
  else
    g_failed++;
}

/* The residual operand of the current case (pick_epi), M x (N + 1). */
static float *g_res;

/* Epilogue number `v` (cycled over cases): activation x bias kind, and a
 * residual on every fourth (its own row stride, one more than N). */
static void pick_epi(gemm_case *g, int v, float *bias_buf) {
  memset(&g->epi, 0, sizeof g->epi);
  g->use_epi = v != 0;
  nn_free(g_res);
  g_res = NULL;
  if (!g->use_epi)
    return;
  if (v % 4 == 3) {
    g_res = nn_malloc(sizeof(float) * (size_t)(g->M * (g->N + 1) + 1));
    fill(g_res, g->M * (g->N + 1) + 1);
    g->epi.res = g_res;
    g->epi.ldres = g->N + 1;
  }
  static const nn_sgemm_act acts[] = {NN_SGEMM_ACT_NONE,   NN_SGEMM_ACT_RELU,
                                      NN_SGEMM_ACT_CLIP,   NN_SGEMM_ACT_LEAKY,
                                      NN_SGEMM_ACT_HSWISH, NN_SGEMM_ACT_SIGMOID,
                                      NN_SGEMM_ACT_SILU,   NN_SGEMM_ACT_GELU};
  g->epi.act = acts[v % 8];
  g->epi.alpha = 0.1f;
  g->epi.lo = 0.0f;
  g->epi.hi = 0.75f;   /* Relu6 scaled to the data's range, so both bounds bite */
  g->epi.bias_kind = (nn_sgemm_bias)((v / 8) % 3);
  if (g->epi.bias_kind != NN_SGEMM_BIAS_NONE) {
    fill(bias_buf, g->M > g->N ? g->M : g->N);
    g->epi.bias = bias_buf;
  }
}

static const float alphas[][2] = {{1.0f, 0.0f}, {1.0f, 1.0f}, {-1.5f, 0.25f}, {0.5f, 0.0f}};

/* ---- tests ------------------------------------------------------------------------------- */

/* Edge shapes and random ones, every entry x transpose x thread count. */
static void test_gemm_shapes(void) {
  static const int64_t shapes[][3] = {
      {1, 1, 1},     {1, 1, 0},    {0, 5, 3},    {5, 0, 3},    {7, 13, 0},   {1, 1, 7},
      {1, 33, 17},   {1, 1000, 64}, {40, 1, 100}, {37, 2, 50},  {29, 3, 31},  {30, 5, 9},
      {15, 7, 20},   {17, 8, 12},  {19, 9, 300}, {3, 17, 5},   {13, 17, 19}, {14, 32, 256},
      {15, 33, 257}, {6, 16, 8},   {7, 17, 9},   {4, 8, 3},    {5, 9, 513},  {28, 64, 64},
      {113, 130, 70}, {100, 100, 300}, {121, 513, 40}, {64, 200, 576}, {200, 70, 1100},
      /* last panel just past half width: the half-width kernel + narrow */
      {20, 49, 70},  {14, 56, 33},  {29, 81, 129}, {6, 25, 40},  {13, 28, 300}, {30, 529, 17},
      /* B read in place, its last panel wider than that but narrower than
       * NR (AVX-512 32, AVX2 16): no column past N may be read */
      {9, 62, 40},   {5, 30, 20},  {15, 94, 260}, {11, 14, 33}, {7, 46, 17},  {3, 31, 5},
  };
  float *bias = nn_malloc(sizeof(float) * 4096);
  int n_fixed = (int)(sizeof shapes / sizeof shapes[0]);
  int n_random = 24;
  int variant = 0;
  for (int isa = 0; isa < NN_CPU_ISA_COUNT; isa++) {
    if (!nn_cpu_isa_set((nn_cpu_isa)isa)) {
      g_skipped++;
      printf("  path %s not supported here: skipped\n", nn_cpu_isa_name((nn_cpu_isa)isa));
      continue;
    }
    int before = g_failed, cases = 0;
    for (int s = 0; s < n_fixed + n_random; s++) {
      gemm_case g;
      memset(&g, 0, sizeof g);
      if (s < n_fixed) {
        g.M = shapes[s][0], g.N = shapes[s][1], g.K = shapes[s][2];
      } else {
        g.M = rnd_range(1, 90), g.N = rnd_range(1, 150), g.K = rnd_range(1, 400);
      }
      for (int tr = 0; tr < 4; tr++)
        for (int en = 0; en < ENTRY_COUNT; en++)
          for (int th = 0; th < 2; th++) {
            g.ta = tr & 1, g.tb = tr >> 1;
            const float *ab = alphas[variant % 4];
            g.alpha = ab[0], g.beta = ab[1];
            pick_epi(&g, variant % 19, bias);
            variant++;
            tally(run_case(&g, (entry)en, th ? g_ctx2 : NULL, false));
            cases++;
          }
    }
    printf("  %-8s %d GEMM cases, %d failed\n", nn_cpu_isa_name((nn_cpu_isa)isa), cases,
           g_failed - before);
  }
  nn_free(bias);
}

/* The lean kernels (one K slice of up to 96, alpha 1, beta 0, any
 * activation, row bias or none, a residual or none: 1x1 convs of few
 * channels),
 * over every row count of a panel, whole and partial last column panels,
 * and K on both sides of the lean limit. */
static void test_gemm_lean(void) {
  static const int64_t shapes[][3] = {
      {24, 1024, 24}, {6, 16, 1},   {5, 48, 8},    {14, 64, 16},  {13, 100, 33},
      {28, 96, 96},   {30, 70, 97}, {1, 32, 24},   {17, 531, 40}, {48, 256, 48},
  };
  static const nn_sgemm_act acts[] = {NN_SGEMM_ACT_NONE, NN_SGEMM_ACT_RELU, NN_SGEMM_ACT_CLIP,
                                      NN_SGEMM_ACT_SILU, NN_SGEMM_ACT_GELU, NN_SGEMM_ACT_LEAKY};
  float *bias = nn_malloc(sizeof(float) * 4096);
  fill(bias, 4096);
  for (int isa = 0; isa < NN_CPU_ISA_COUNT; isa++) {
    if (!nn_cpu_isa_set((nn_cpu_isa)isa))
      continue;
    int before = g_failed, cases = 0;
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
      for (int v = 0; v < 24; v++)
        for (int en = 0; en < ENTRY_COUNT; en++) {
          gemm_case g;
          memset(&g, 0, sizeof g);
          g.M = shapes[s][0], g.N = shapes[s][1], g.K = shapes[s][2];
          g.alpha = 1.0f, g.beta = 0.0f;
          g.use_epi = true;
          g.epi.act = acts[v % 6];
          g.epi.alpha = 0.1f;
          g.epi.lo = 0.0f;
          g.epi.hi = 0.75f;
          g.epi.bias_kind = v / 6 % 2 ? NN_SGEMM_BIAS_ROW : NN_SGEMM_BIAS_NONE;
          g.epi.bias = g.epi.bias_kind ? bias : NULL;
          nn_free(g_res);
          g_res = NULL;
          if (v / 12) {   /* its own row stride, one more than N */
            g_res = nn_malloc(sizeof(float) * (size_t)(g.M * (g.N + 1) + 1));
            fill(g_res, g.M * (g.N + 1) + 1);
            g.epi.res = g_res;
            g.epi.ldres = g.N + 1;
          }
          tally(run_case(&g, (entry)en, en % 2 ? g_ctx2 : NULL, false));
          cases++;
        }
    printf("  %-8s %d lean-epilogue cases, %d failed\n", nn_cpu_isa_name((nn_cpu_isa)isa), cases,
           g_failed - before);
  }
  nn_free(g_res);
  g_res = NULL;
  nn_free(bias);
}

/* Every activation x bias kind x entry on a multi-slice, multi-tile shape. */
static void test_gemm_epilogues(void) {
  float *bias = nn_malloc(sizeof(float) * 4096);
  for (int isa = 0; isa < NN_CPU_ISA_COUNT; isa++) {
    if (!nn_cpu_isa_set((nn_cpu_isa)isa))
      continue;
    int before = g_failed, cases = 0;
    for (int v = 1; v < 18; v++)
      for (int en = 0; en < ENTRY_COUNT; en++) {
        gemm_case g;
        memset(&g, 0, sizeof g);
        g.M = 45, g.N = 71, g.K = 300;   /* two K slices: the epilogue runs on the last */
        g.alpha = 1.0f, g.beta = v % 2 ? 0.0f : 0.5f;
        pick_epi(&g, v, bias);
        tally(run_case(&g, (entry)en, g_ctx2, false));
        g.N = 3;                        /* the narrow kernel's epilogue */
        tally(run_case(&g, (entry)en, NULL, false));
        g.M = 1, g.N = 71;              /* one row: rows of B in place (sg_gevm) */
        tally(run_case(&g, (entry)en, g_ctx2, false));
        g.M = 45, g.N = 1;              /* one column: rows of A in place (sg_gemv) */
        g.tb = 1;
        tally(run_case(&g, (entry)en, g_ctx2, false));
        cases += 4;
      }
    printf("  %-8s %d epilogue cases, %d failed\n", nn_cpu_isa_name((nn_cpu_isa)isa), cases,
           g_failed - before);
  }
  nn_free(bias);
}

/* Large products on 2 threads, and with a workspace of one slot only. */
static void test_gemm_large(void) {
  static const int64_t shapes[][3] = {
      {64, 3136, 576}, {256, 784, 128}, {1, 1000, 2048}, {1000, 1, 2048}, {300, 300, 300},
      /* AVX-512: 5 row tiles of 8 panels or fewer, made 6 of 6 and 7 for 2
       * threads (M = 512 is 37 panels) */
      {512, 49, 300},
  };
  for (int isa = 0; isa < NN_CPU_ISA_COUNT; isa++) {
    if (!nn_cpu_isa_set((nn_cpu_isa)isa))
      continue;
    int before = g_failed, cases = 0;
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
      for (int en = 0; en < ENTRY_COUNT; en++) {
        gemm_case g;
        memset(&g, 0, sizeof g);
        g.M = shapes[s][0], g.N = shapes[s][1], g.K = shapes[s][2];
        g.ta = 0, g.tb = en == ENTRY_PB;   /* Gemm's weights arrive as W^T */
        g.alpha = 1.0f, g.beta = 0.0f;
        tally(run_case(&g, (entry)en, g_ctx2, s == 0));
        cases++;
      }
    printf("  %-8s %d large cases, %d failed\n", nn_cpu_isa_name((nn_cpu_isa)isa), cases,
           g_failed - before);
  }
}

/* A buffer packed on one path keeps working when another path is active
 * (it records its own), and bad arguments are refused. */
static void test_gemm_api(void) {
  bool ok = true;
  int64_t M = 20, N = 40, K = 33;
  float *A = nn_malloc(sizeof(float) * (size_t)(M * K));
  float *B = nn_malloc(sizeof(float) * (size_t)(K * N));
  float *C = nn_malloc(sizeof(float) * (size_t)(M * N));
  float *R = nn_malloc(sizeof(float) * (size_t)(M * N));
  fill(A, M * K);
  fill(B, K * N);
  size_t wsb = nn_sgemm_workspace(M, N, K, 2);
  void *ws = nn_malloc(wsb);
  void *pa = nn_malloc(nn_sgemm_pack_a_size(M, K));
  void *pb = nn_malloc(nn_sgemm_pack_b_size(K, N));
  nn_cpu_isa best = NN_CPU_PORTABLE;
  for (int i = 0; i < NN_CPU_ISA_COUNT; i++)
    if (nn_cpu_isa_supported((nn_cpu_isa)i))
      best = (nn_cpu_isa)i;
  nn_cpu_isa_set(best);
  nn_sgemm_pack_a(0, M, K, A, K, pa);
  nn_sgemm_pack_b(0, K, N, B, N, pb);
  nn_cpu_isa_set(NN_CPU_PORTABLE);
  CHECK(nn_sgemm_compute(NULL, 0, 0, M, N, K, 1, A, K, B, N, 0, R, N, NULL, ws, wsb) == NN_OK);
  CHECK(nn_sgemm_compute_pa(g_ctx2, 0, M, N, K, 1, pa, B, N, 0, C, N, NULL, ws, wsb) == NN_OK);
  for (int64_t i = 0; i < M * N; i++)
    if (fabsf(C[i] - R[i]) > 1e-4f) {
      fprintf(stderr, "  C[%lld] = %g, want %g\n", (long long)i, C[i], R[i]);
      ok = false;
      break;
    }
  CHECK(nn_sgemm_compute_pb(g_ctx2, 0, M, N, K, 1, A, K, pb, 0, C, N, NULL, ws, wsb) == NN_OK);
  for (int64_t i = 0; i < M * N; i++)
    if (fabsf(C[i] - R[i]) > 1e-4f) {
      fprintf(stderr, "  C[%lld] = %g, want %g\n", (long long)i, C[i], R[i]);
      ok = false;
      break;
    }
  /* refusals */
  CHECK(nn_sgemm_compute(NULL, 0, 0, M, N, K, 1, A, K, B, N, 0, C, N, NULL, ws, 8) ==
        NN_ERR_INVALID_ARG);
  CHECK(nn_sgemm_compute(NULL, 0, 0, M, N, K, 1, A, K, B, N, 0, C, N, NULL, NULL, 0) ==
        NN_ERR_INVALID_ARG);
  CHECK(nn_sgemm_compute(NULL, 0, 0, -1, N, K, 1, A, K, B, N, 0, C, N, NULL, ws, wsb) ==
        NN_ERR_INVALID_ARG);
  CHECK(nn_sgemm_compute(NULL, 0, 0, M, N, K, 1, A, K - 1, B, N, 0, C, N, NULL, ws, wsb) ==
        NN_ERR_INVALID_ARG);
  CHECK(nn_sgemm_compute_pa(NULL, 0, M + 1, N, K, 1, pa, B, N, 0, C, N, NULL, ws, wsb) ==
        NN_ERR_INVALID_ARG);
  CHECK(nn_sgemm_compute_pa(NULL, 0, M, N, K, 1, pb, B, N, 0, C, N, NULL, ws, wsb) ==
        NN_ERR_INVALID_ARG);   /* a packed B is not a packed A */
  CHECK(nn_sgemm_compute_pb(NULL, 0, M, N, K + 1, 1, A, K, pb, 0, C, N, NULL, ws, wsb) ==
        NN_ERR_INVALID_ARG);
  /* empty products need no workspace; K == 0 is C = beta * C (+ epilogue) */
  CHECK(nn_sgemm_workspace(0, N, K, 2) == 0 && nn_sgemm_workspace(M, N, 0, 2) == 0);
  for (int64_t i = 0; i < M * N; i++)
    C[i] = 2.0f;
  nn_sgemm_epi e = {NN_SGEMM_ACT_RELU, 0, 0, 0, NN_SGEMM_BIAS_NONE, NULL};
  CHECK(nn_sgemm_compute(NULL, 0, 0, M, N, 0, 1, A, K, B, N, -0.5f, C, N, &e, NULL, 0) == NN_OK);
  CHECK(C[0] == 0.0f && C[M * N - 1] == 0.0f);
  nn_free(pa);
  nn_free(pb);
  nn_free(ws);
  nn_free(A);
  nn_free(B);
  nn_free(C);
  nn_free(R);
  tally(ok);
  if (!ok)
    fprintf(stderr, "FAIL gemm api\n");
}

/* A workspace sized for M x N x K also serves every smaller product: the
 * depthwise -> pointwise bands size it for a full band and run the last one
 * short, and even tiles made a shorter N want a larger slot (MobileNetV2's
 * 32 -> 16 at 112x112 ran bands of 672 pixels and a last one of 448, which
 * the AVX-512 plan made one tile of 448 columns against 352 for the full
 * band: the product was refused).  Every N' <= N and a few M' <= M, on each
 * path, through the plain and packed-A entries, results checked. */
static void test_gemm_ws_smaller(void) {
  static const int64_t shapes[][3] = {{16, 672, 32}, {24, 1024, 24}, {130, 700, 40}, {7, 300, 300}};
  for (int isa = 0; isa < NN_CPU_ISA_COUNT; isa++) {
    if (!nn_cpu_isa_set((nn_cpu_isa)isa))
      continue;
    for (size_t si = 0; si < sizeof shapes / sizeof shapes[0]; si++) {
      const int64_t M = shapes[si][0], N = shapes[si][1], K = shapes[si][2];
      bool ok = true;
      float *A = nn_malloc(sizeof(float) * (size_t)(M * K));
      float *B = nn_malloc(sizeof(float) * (size_t)(K * N));
      float *C = nn_malloc(sizeof(float) * (size_t)(M * N));
      float *R = nn_malloc(sizeof(float) * (size_t)(M * N));
      void *pa = nn_malloc(nn_sgemm_pack_a_size(M, K));
      size_t wsb = nn_sgemm_workspace(M, N, K, 1);
      void *ws = nn_malloc(wsb);
      fill(A, M * K);
      fill(B, K * N);
      nn_sgemm_pack_a(0, M, K, A, K, pa);
      const int64_t ms[] = {M, (M + 1) / 2, 1};
      for (int mi = 0; mi < 3 && ok; mi++) {
        const int64_t m = ms[mi];
        for (int64_t n = 1; n <= N && ok; n++) {
          /* B's first n columns, row stride N, as a band of planes is read */
          nn_status st = nn_sgemm_compute(NULL, 0, 0, m, n, K, 1, A, K, B, N, 0, C, n, NULL, ws, wsb);
          if (st != NN_OK) {
            fprintf(stderr, "  plain M=%lld N=%lld: %s\n", (long long)m, (long long)n, nn_status_str(st));
            ok = false;
            break;
          }
          if (m == M) {   /* pa is packed for M rows */
            st = nn_sgemm_compute_pa(NULL, 0, m, n, K, 1, pa, B, N, 0, R, n, NULL, ws, wsb);
            if (st != NN_OK) {
              fprintf(stderr, "  packed-A N=%lld: %s\n", (long long)n, nn_status_str(st));
              ok = false;
              break;
            }
          }
          if (n % 97 == 1 || n == N) {   /* a sample of the results against the reference */
            for (int64_t i = 0; i < m && ok; i++)
              for (int64_t j = 0; j < n; j++) {
                double ref = 0;
                for (int64_t k = 0; k < K; k++)
                  ref += (double)A[i * K + k] * B[k * N + j];
                double tol = 1e-4 * (double)K;
                if (fabs(C[i * n + j] - ref) > tol || (m == M && fabs(R[i * n + j] - ref) > tol)) {
                  fprintf(stderr, "  M=%lld N=%lld C[%lld][%lld] = %g / %g, want %g\n", (long long)m,
                          (long long)n, (long long)i, (long long)j, C[i * n + j],
                          m == M ? R[i * n + j] : 0.0, ref);
                  ok = false;
                  break;
                }
              }
          }
        }
      }
      tally(ok);
      if (!ok)
        fprintf(stderr, "FAIL gemm workspace for %lldx%lldx%lld on %s: a smaller product refused or wrong\n",
                (long long)M, (long long)N, (long long)K, nn_cpu_isa_name((nn_cpu_isa)isa));
      nn_free(ws);
      nn_free(pa);
      nn_free(A);
      nn_free(B);
      nn_free(C);
      nn_free(R);
    }
  }
}

/* ---- vector transcendental functions (vmath.h) ---------------------------------------- */
static double vm_ref(nn_vmath_fn f, double x) {
  switch (f) {
  case NN_VM_EXP: return exp(x);
  case NN_VM_SIGMOID: return x >= 0 ? 1.0 / (1.0 + exp(-x)) : exp(x) / (1.0 + exp(x));
  case NN_VM_SILU: return x * (x >= 0 ? 1.0 / (1.0 + exp(-x)) : exp(x) / (1.0 + exp(x)));
  case NN_VM_TANH: return tanh(x);
  case NN_VM_ERF: return erf(x);
  case NN_VM_GELU: return 0.5 * x * (1.0 + erf(x * 0.70710678118654752440));
  default: return NAN;
  }
}

/* Error allowed at x: relative to the reference plus an absolute floor
 * (denormal-range results of exp and sigmoid, where the vector exp stops at
 * float's smallest normal; GELU's 1 + erf cancels for negative x). */
static double vm_tol(nn_vmath_fn f, double x, double ref) {
  double rel = 4e-7 * fabs(ref);
  switch (f) {
  case NN_VM_EXP: case NN_VM_SIGMOID: return rel + 2e-38;
  case NN_VM_SILU: return rel + 2e-38 * fabs(x);
  case NN_VM_ERF: return rel + 5e-8;
  case NN_VM_GELU: return rel + 1e-7 * fabs(x);
  default: return rel + 1e-38;
  }
}

static const char *vm_name[NN_VM_COUNT] = {"exp", "sigmoid", "silu", "tanh", "erf", "gelu"};

/* Every function on every vector path: a dense grid over [-12, 12], wide
 * random magnitudes, the pieces' seams, and the special values (NaN stays
 * NaN, infinities give the limits), in place and at every tail length.  The
 * portable path has no vector form (false: the caller's libm loop runs). */
static void test_vmath(void) {
  enum { GRID = 48001, RAND = 20000, SPECIAL = 22 };
  const int64_t n = GRID + RAND + SPECIAL;
  float *x = nn_malloc(sizeof(float) * (size_t)n), *y = nn_malloc(sizeof(float) * (size_t)n);
  for (int64_t i = 0; i < GRID; i++)
    x[i] = (float)(-12.0 + 24.0 * (double)i / (GRID - 1));
  for (int64_t i = 0; i < RAND; i++)   /* sign * 2^[-30, 7) * [1, 2) */
    x[GRID + i] = (rnd_u32() & 1 ? -1.0f : 1.0f) * ldexpf(1.0f + 0.5f * (rnd_float() + 1.0f),
                                                       (int)(rnd_u32() % 37) - 30);
  const float sp[SPECIAL] = {0.0f, -0.0f, INFINITY, -INFINITY, NAN, 1e-30f, -1e-30f, 1e-40f,
                             0.625f, -0.625f, 0.9f, -0.9f, 3.95f, -3.95f, 88.0f, -87.0f,
                             89.0f, -89.0f, 100.0f, -100.0f, 0.62499994f, 0.90000004f};
  memcpy(x + GRID + RAND, sp, sizeof sp);
  for (int isa = 0; isa < NN_CPU_ISA_COUNT; isa++) {
    if (!nn_cpu_isa_set((nn_cpu_isa)isa))
      continue;
    for (int f = 0; f < NN_VM_COUNT; f++) {
      bool ok = true;
      if (!nn_vmath_f32((nn_vmath_fn)f, x, y, n)) {
        if (isa != NN_CPU_PORTABLE) {
          fprintf(stderr, "  %s has no vector %s\n", nn_cpu_isa_name((nn_cpu_isa)isa), vm_name[f]);
          ok = false;
        }
        tally(ok);
        continue;
      }
      double worst = 0;
      for (int64_t i = 0; i < n && ok; i++) {
        double ref = vm_ref((nn_vmath_fn)f, (double)x[i]);
        if (fabs(ref) > FLT_MAX)   /* past float's range: infinity */
          ref = copysign(INFINITY, ref);
        bool good = isnan(ref) ? isnan(y[i])
                    : isinf(ref) ? y[i] == ref
                                 : fabs((double)y[i] - ref) <= vm_tol((nn_vmath_fn)f, x[i], ref);
        if (!isnan(ref) && !isinf(ref) && fabs(ref) > 1e-30)
          worst = fmax(worst, fabs((double)y[i] - ref) / vm_tol((nn_vmath_fn)f, x[i], ref));
        if (!good) {
          fprintf(stderr, "  %s %s(%.9g) = %.9g, want %.9g\n", nn_cpu_isa_name((nn_cpu_isa)isa),
                  vm_name[f], (double)x[i], (double)y[i], ref);
          ok = false;
        }
      }
      /* every tail length, in place: the same values as the long run */
      for (int len = 1; len <= 33 && ok; len++) {
        float buf[33], want[33];
        memcpy(buf, x + 1000 * len, sizeof(float) * (size_t)len);
        nn_vmath_f32((nn_vmath_fn)f, buf, buf, len);
        memcpy(want, y + 1000 * len, sizeof(float) * (size_t)len);
        if (memcmp(buf, want, sizeof(float) * (size_t)len) != 0) {
          fprintf(stderr, "  %s %s: %d elements in place differ from the long run\n",
                  nn_cpu_isa_name((nn_cpu_isa)isa), vm_name[f], len);
          ok = false;
        }
      }
      printf("  vmath %-8s %-7s worst error / tolerance %.2f%s\n", nn_cpu_isa_name((nn_cpu_isa)isa),
             vm_name[f], worst, ok ? "" : "  FAIL");
      tally(ok);
    }
  }
  nn_free(x);
  nn_free(y);
}

/* Softmax rows (nn_vmath_softmax_row_f32) against double: every length to
 * 40 (the tails), an attention row, rows past the sum's flush interval, a
 * wide range of logits, in place; a NaN or +inf anywhere makes every output
 * NaN (what the scalar loop and the IEEE rules give). */
static void test_vmath_softmax(void) {
  static const int64_t lens[] = {197, 1023, 1024, 1025, 5000};
  float *x = nn_malloc(sizeof(float) * 5000), *y = nn_malloc(sizeof(float) * 5000);
  for (int isa = 0; isa < NN_CPU_ISA_COUNT; isa++) {
    if (!nn_cpu_isa_set((nn_cpu_isa)isa))
      continue;
    bool ok = true, vec = true;
    double worst = 0;
    for (int li = 0; li < 40 + 5 && ok && vec; li++) {
      int64_t n = li < 40 ? li + 1 : lens[li - 40];
      for (int64_t i = 0; i < n; i++)
        x[i] = 20.0f * rnd_float() + (i == n / 3 ? 30.0f : 0.0f);
      double mx = -INFINITY, sum = 0;
      for (int64_t i = 0; i < n; i++)
        mx = fmax(mx, x[i]);
      for (int64_t i = 0; i < n; i++)
        sum += exp((double)x[i] - mx);
      for (int pass = 0; pass < 2 && ok; pass++) {   /* out of place, then in place */
        float *dst = pass ? x : y;
        float *src = nn_malloc(sizeof(float) * (size_t)n);
        memcpy(src, x, sizeof(float) * (size_t)n);
        if (!nn_vmath_softmax_row_f32(x, dst, n)) {
          vec = false;
          nn_free(src);
          break;
        }
        for (int64_t i = 0; i < n && ok; i++) {
          double ref = exp((double)src[i] - mx) / sum;
          /* x - max is rounded to float first: half an ulp of it is an
           * absolute error in exp's argument, a relative one in its value */
          double rel = 4e-7 + 6e-8 * fabs((double)src[i] - mx);
          double err = fabs((double)dst[i] - ref) / (rel * ref + 1e-38);
          worst = fmax(worst, err);
          if (!(err <= 1.0)) {
            fprintf(stderr, "  %s softmax row of %lld: y[%lld] = %.9g, want %.9g\n",
                    nn_cpu_isa_name((nn_cpu_isa)isa), (long long)n, (long long)i,
                    (double)dst[i], ref);
            ok = false;
          }
        }
        memcpy(x, src, sizeof(float) * (size_t)n);
        nn_free(src);
      }
    }
    /* a NaN or +inf at each position of a 37-row */
    const float bad[2] = {NAN, INFINITY};
    for (int b = 0; b < 2 && ok && vec; b++)
      for (int at = 0; at < 37 && ok; at++) {
        for (int i = 0; i < 37; i++)
          x[i] = rnd_float();
        x[at] = bad[b];
        nn_vmath_softmax_row_f32(x, y, 37);
        for (int i = 0; i < 37; i++)
          if (!isnan(y[i])) {
            fprintf(stderr, "  %s softmax row with %s at %d: y[%d] = %g, want NaN\n",
                    nn_cpu_isa_name((nn_cpu_isa)isa), b ? "inf" : "NaN", at, i, (double)y[i]);
            ok = false;
            break;
          }
      }
    if (!vec && isa != NN_CPU_PORTABLE) {
      fprintf(stderr, "  %s has no vector softmax row\n", nn_cpu_isa_name((nn_cpu_isa)isa));
      ok = false;
    }
    if (vec)
      printf("  vmath %-8s softmax worst error / tolerance %.2f%s\n",
             nn_cpu_isa_name((nn_cpu_isa)isa), worst, ok ? "" : "  FAIL");
    tally(ok);
  }
  nn_free(x);
  nn_free(y);
}

/* NaN and infinities propagate through every activation like the unfused ops. */
static void test_gemm_nan(void) {
  for (int isa = 0; isa < NN_CPU_ISA_COUNT; isa++) {
    if (!nn_cpu_isa_set((nn_cpu_isa)isa))
      continue;
    bool ok = true;
    int64_t M = 9, N = 40, K = 5;
    float A[9 * 5], B[5 * 40], C[9 * 40];
    for (int i = 0; i < M * K; i++)
      A[i] = 1.0f;
    for (int i = 0; i < K * N; i++)
      B[i] = 0.0f;
    B[3] = NAN;                       /* column 3 is NaN */
    B[4] = INFINITY;                  /* column 4 is +inf */
    B[5] = -INFINITY;                 /* column 5 is -inf */
    size_t wsb = nn_sgemm_workspace(M, N, K, 1);
    void *ws = nn_malloc(wsb);
    for (int a = 1; a <= NN_SGEMM_ACT_GELU; a++) {
      nn_sgemm_epi e = {(nn_sgemm_act)a, 0.1f, 0.0f, 6.0f, NN_SGEMM_BIAS_NONE, NULL};
      CHECK(nn_sgemm_compute(NULL, 0, 0, M, N, K, 1, A, K, B, N, 0, C, N, &e, ws, wsb) == NN_OK);
      for (int i = 0; i < M; i++) {
        CHECK(isnan(C[i * N + 3]));
        double wp = ref_act(&e, INFINITY), wn = ref_act(&e, -INFINITY);
        if (a != NN_SGEMM_ACT_HSWISH) {   /* hswish(-inf) = -inf * 0 = NaN: compare as is */
          CHECK(C[i * N + 4] == (float)wp);
          CHECK(C[i * N + 5] == (float)wn || (isnan(wn) && isnan(C[i * N + 5])));
        }
        CHECK(C[i * N + 6] == (float)ref_act(&e, 0.0));
      }
    }
    nn_free(ws);
    tally(ok);
    if (!ok)
      fprintf(stderr, "FAIL gemm nan %s\n", nn_cpu_isa_name((nn_cpu_isa)isa));
  }
}

/* ---- implicit-GEMM convolution ------------------------------------------------------------- */
static int64_t dw_out(int64_t in, int k, int s, int d, int pa, int pb);

/* Conv of one image: W [M][C][KH][KW] packed as A, B from nn_sgemm_pack_im2col. */
static bool run_conv_case(int64_t C, int64_t IH, int64_t IW, int64_t M, int KH, int KW, int S,
                          int pad, int dil, const nn_sgemm_epi *e, nn_ctx *ctx, bool raw_w) {
  nn_sgemm_im2col g;
  memset(&g, 0, sizeof g);
  g.C = C, g.IH = IH, g.IW = IW, g.KH = KH, g.KW = KW, g.SH = g.SW = S;
  g.PT = g.PL = pad, g.DH = g.DW = dil;
  g.OH = dw_out(IH, KH, S, dil, pad, pad);
  g.OW = dw_out(IW, KW, S, dil, pad, pad + 1);   /* one more pad on the right */
  int64_t N = g.OH * g.OW, K = C * KH * KW;
  float *x = nn_malloc(sizeof(float) * (size_t)(C * IH * IW + 1));
  float *w = nn_malloc(sizeof(float) * (size_t)(M * K + 1));
  float *y = nn_malloc(sizeof(float) * (size_t)(M * N + 1));
  float *bias = nn_malloc(sizeof(float) * (size_t)M);
  fill(x, C * IH * IW);
  fill(w, M * K);
  fill(bias, M);
  for (int64_t i = 0; i < M * N; i++)
    y[i] = NAN;
  g.x = x;
  nn_sgemm_epi ee = *e;
  if (ee.bias_kind == NN_SGEMM_BIAS_ROW)
    ee.bias = bias;
  void *pa = nn_malloc(nn_sgemm_pack_a_size(M, K));
  nn_sgemm_pack_a(0, M, K, w, K, pa);
  size_t wsb = nn_sgemm_workspace(M, N, K, ctx ? ctx->threads : 1);
  void *ws = wsb ? nn_malloc(wsb) : NULL;
  nn_status st = raw_w ? nn_sgemm_compute_fn(ctx, 0, M, N, K, 1.0f, w, K, nn_sgemm_pack_im2col,
                                             &g, 0.0f, y, N, &ee, ws, wsb)
                       : nn_sgemm_compute_pa_fn(ctx, M, N, K, 1.0f, pa, nn_sgemm_pack_im2col, &g,
                                                0.0f, y, N, &ee, ws, wsb);
  bool ok = st == NN_OK;
  int bad = 0;
  for (int64_t m = 0; ok && m < M; m++)
    for (int64_t oh = 0; oh < g.OH; oh++)
      for (int64_t ow = 0; ow < g.OW; ow++) {
        double acc = 0, mag = 0;
        for (int64_t c = 0; c < C; c++)
          for (int kh = 0; kh < KH; kh++)
            for (int kw = 0; kw < KW; kw++) {
              int64_t ih = oh * S - pad + kh * dil, iw = ow * S - pad + kw * dil;
              if (ih < 0 || ih >= IH || iw < 0 || iw >= IW)
                continue;
              double t = (double)w[((m * C + c) * KH + kh) * KW + kw] * x[(c * IH + ih) * IW + iw];
              acc += t;
              mag += fabs(t);
            }
        if (ee.bias) {
          acc += bias[m];
          mag += fabs(bias[m]);
        }
        double want = ref_act(&ee, acc);
        float got = y[m * N + oh * g.OW + ow];
        double tol = (4.0 * sqrt((double)K + 1.0) * 1.2e-7 * mag + 2e-6) * act_gain(&ee);
        if (!(fabs(got - want) <= tol)) {
          if (bad++ < 3)
            fprintf(stderr, "  y(%lld,%lld,%lld) = %.9g, want %.9g\n", (long long)m,
                    (long long)oh, (long long)ow, got, want);
          ok = false;
        }
      }
  if (!ok)
    fprintf(stderr,
            "FAIL conv %s%s st=%s threads=%d C=%lld in=%lldx%lld M=%lld k=%dx%d s=%d pad=%d "
            "dil=%d act=%s\n",
            nn_cpu_isa_name(nn_cpu_isa_get()), raw_w ? " (raw weights)" : "", nn_status_str(st),
            ctx ? ctx->threads : 1,
            (long long)C, (long long)IH, (long long)IW, (long long)M, KH, KW, S, pad, dil,
            act_name(e->act));
  nn_free(ws);
  nn_free(pa);
  nn_free(x);
  nn_free(w);
  nn_free(y);
  nn_free(bias);
  return ok;
}

static void test_conv_im2col(void) {
  static const struct {
    int64_t C, IH, IW, M;
    int KH, KW, S, pad, dil;
  } cases[] = {
      {3, 16, 16, 8, 3, 3, 1, 1, 1},  {3, 17, 19, 16, 3, 3, 2, 1, 1}, {4, 9, 9, 5, 5, 5, 1, 2, 1},
      {2, 11, 13, 7, 5, 5, 2, 2, 1},  {5, 10, 10, 6, 3, 3, 1, 2, 2},  {1, 1, 20, 3, 1, 3, 1, 1, 1},
      {6, 4, 4, 9, 3, 3, 1, 0, 1},    {8, 3, 3, 30, 3, 3, 2, 1, 1},   {16, 30, 30, 24, 3, 3, 1, 1, 1},
      {7, 2, 2, 4, 1, 1, 1, 0, 1},    {3, 40, 45, 33, 7, 7, 2, 3, 1}, {32, 14, 14, 40, 3, 3, 1, 1, 1},
      /* rows longer than a panel (the masked run copies of the AVX paths
       * split them at panel edges), stride 2 without padding, stride 3 */
      {4, 9, 70, 12, 3, 3, 1, 1, 1},  {5, 21, 67, 9, 3, 3, 2, 0, 1},  {3, 12, 50, 6, 3, 3, 3, 1, 1},
      /* a padded plane over SG_I2C_PLANE floats: the run copies; the
       * smaller ones above go through the padded-plane gather */
      {2, 70, 70, 5, 3, 3, 1, 1, 1},  {3, 66, 64, 6, 3, 3, 2, 1, 2},
  };
  for (int isa = 0; isa < NN_CPU_ISA_COUNT; isa++) {
    if (!nn_cpu_isa_set((nn_cpu_isa)isa))
      continue;
    int before = g_failed, n = 0;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
      for (int th = 0; th < 2; th++) {
        nn_sgemm_epi e = {(nn_sgemm_act)((i + th) % SG_TEST_ACTS), 0.1f, 0.0f, 0.75f,
                          (i + th) % 3 ? NN_SGEMM_BIAS_ROW : NN_SGEMM_BIAS_NONE, NULL};
        for (int raw = 0; raw < 2; raw++) {
          tally(run_conv_case(cases[i].C, cases[i].IH, cases[i].IW, cases[i].M, cases[i].KH,
                              cases[i].KW, cases[i].S, cases[i].pad, cases[i].dil, &e,
                              th ? g_ctx2 : NULL, raw));
          n++;
        }
      }
    printf("  %-8s %d implicit-GEMM conv cases, %d failed\n", nn_cpu_isa_name((nn_cpu_isa)isa),
           n, g_failed - before);
  }
}

/* An im2col packed once (nn_sgemm_pack_b_fn) by 2 workers in groups of
 * k_unit rows (a channel's KH * KW, single rows, a unit past K, none) is
 * the serial packing, byte for byte, on small maps (the padded-plane gather)
 * and large ones (the run copies), K not a multiple of the groups. */
/* ---- the 8-bit integer GEMM (cpu/qgemm.h) ------------------------------------
 * Every path against int64 sums wrapped to int32, serial and on 2 threads:
 * edge shapes (1, K not a multiple of 4, one past a panel, several column
 * blocks), zero points absent and present, rows handed over both in place
 * and through the scratch, every result stored exactly once, and sums
 * past 2^31 (they wrap as the int32 reference's). */
typedef struct qg_io {
  const uint8_t *b;     /* K x N row-major */
  int32_t *c;           /* M x N */
  int *hits;            /* stores per element */
  int64_t N;
} qg_io;

static const uint8_t *qg_test_row(void *user, int64_t k, int64_t j0, int64_t nb, uint8_t *scratch) {
  const qg_io *s = user;
  if (k % 2 == 0)
    return s->b + k * s->N + j0;
  memcpy(scratch, s->b + k * s->N + j0, (size_t)nb);
  return scratch;
}

static void qg_test_store(void *user, int64_t m0, int64_t mr, int64_t j0, int64_t nb,
                          const int32_t *c, int64_t ldc) {
  qg_io *d = user;
  for (int64_t r = 0; r < mr; r++)
    for (int64_t t = 0; t < nb; t++) {
      d->c[(m0 + r) * d->N + j0 + t] = c[r * ldc + t];
      __atomic_fetch_add(&d->hits[(m0 + r) * d->N + j0 + t], 1, __ATOMIC_RELAXED);
    }
}

static bool qgemm_case(int64_t M, int64_t N, int64_t K, int zmode, bool worst) {
  int8_t *A = nn_malloc((size_t)(M * K));
  uint8_t *B = nn_malloc((size_t)(K * N));
  int32_t *za = nn_malloc(sizeof(int32_t) * (size_t)M), *C = nn_malloc(sizeof(int32_t) * (size_t)(M * N));
  int *hits = nn_malloc(sizeof(int) * (size_t)(M * N));
  for (int64_t i = 0; i < M * K; i++)
    A[i] = worst ? -128 : (int8_t)(rand() % 256 - 128);
  for (int64_t i = 0; i < K * N; i++)
    B[i] = worst ? 255 : (uint8_t)(rand() % 256);
  for (int64_t m = 0; m < M; m++)
    za[m] = zmode == 0 ? 0 : zmode == 1 ? 3 : rand() % 256 - 128;
  const int32_t zb = zmode == 0 ? 0 : worst ? 0 : rand() % 256;
  void *pa = nn_malloc(nn_qgemm_pack_a_size(M, K));
  nn_qgemm_pack_a(M, K, A, K, zmode == 0 ? NULL : za, pa);
  qg_io io = {B, C, hits, N};
  bool ok = true;
  for (int threads = 1; threads <= 2 && ok; threads++) {
    size_t wsb = nn_qgemm_workspace(M, K, N, threads);
    void *ws = nn_malloc(wsb);
    memset(hits, 0, sizeof(int) * (size_t)(M * N));
    nn_status st = nn_qgemm_compute(threads > 1 ? g_ctx2 : NULL, pa, N, zb, qg_test_row,
                                    qg_test_store, &io, ws, wsb);
    nn_free(ws);
    ok = st == NN_OK;
    for (int64_t m = 0; ok && m < M; m++)
      for (int64_t n = 0; ok && n < N; n++) {
        int64_t want = 0;
        for (int64_t k = 0; k < K; k++)
          want += ((int64_t)A[m * K + k] - (zmode == 0 ? 0 : za[m])) * ((int64_t)B[k * N + n] - zb);
        int32_t w32 = (int32_t)(uint32_t)(uint64_t)want;
        if (hits[m * N + n] != 1 || C[m * N + n] != w32) {
          fprintf(stderr, "FAIL qgemm %s threads=%d M=%lld N=%lld K=%lld z=%d: C[%lld][%lld] = %d "
                  "(stored %d times), want %d\n", nn_cpu_isa_name(nn_cpu_isa_get()), threads,
                  (long long)M, (long long)N, (long long)K, zmode, (long long)m, (long long)n,
                  C[m * N + n], hits[m * N + n], w32);
          ok = false;
        }
      }
  }
  nn_free(pa);
  nn_free(A);
  nn_free(B);
  nn_free(za);
  nn_free(C);
  nn_free(hits);
  return ok;
}

static void test_qgemm(void) {
  static const int64_t shapes[][3] = {
      {1, 1, 1},   {1, 33, 5},   {5, 17, 3},  {8, 32, 4},    {9, 33, 7},    {6, 16, 8},
      {7, 49, 576}, {13, 100, 37}, {24, 700, 9}, {64, 1200, 64}, {3, 5000, 12}, {40, 70, 2000},
  };
  for (int isa = 0; isa < NN_CPU_ISA_COUNT; isa++) {
    if (!nn_cpu_isa_set((nn_cpu_isa)isa))
      continue;
    int before = g_failed;
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++)
      for (int z = 0; z < 3; z++)
        tally(qgemm_case(shapes[i][0], shapes[i][1], shapes[i][2], z, false));
    /* 70000 x 255 x 128 is past 2^31: the sums wrap */
    tally(qgemm_case(3, 5, 70000, 0, true));
    tally(qgemm_case(2, 40, 70001, 1, true));
    printf("%s qgemm (%s)\n", g_failed == before ? "ok  " : "FAIL", nn_cpu_isa_name((nn_cpu_isa)isa));
  }
}

static void test_pack_b_fn_rows(void) {
  static const struct {
    int64_t C, IH, IW;
    int K, S, pad;
  } cases[] = {
      {37, 14, 14, 3, 2, 1}, {20, 7, 7, 3, 1, 1}, {9, 28, 30, 3, 2, 1},
      {5, 70, 66, 3, 1, 1},  {3, 40, 45, 7, 2, 3}, {64, 9, 9, 1, 1, 0},
  };
  for (int isa = 0; isa < NN_CPU_ISA_COUNT; isa++) {
    if (!nn_cpu_isa_set((nn_cpu_isa)isa))
      continue;
    int before = g_failed, n = 0;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
      nn_sgemm_im2col g;
      memset(&g, 0, sizeof g);
      g.C = cases[i].C, g.IH = cases[i].IH, g.IW = cases[i].IW;
      g.KH = g.KW = cases[i].K, g.SH = g.SW = cases[i].S, g.PT = g.PL = cases[i].pad;
      g.DH = g.DW = 1;
      g.OH = dw_out(g.IH, g.KH, g.SH, 1, g.PT, g.PT);
      g.OW = dw_out(g.IW, g.KW, g.SW, 1, g.PL, g.PL);
      int64_t K = g.C * g.KH * g.KW, N = g.OH * g.OW;
      float *x = nn_malloc(sizeof(float) * (size_t)(g.C * g.IH * g.IW));
      fill(x, g.C * g.IH * g.IW);
      g.x = x;
      size_t bytes = nn_sgemm_pack_b_size(K, N);
      /* both 64-byte aligned: the packed block's layout (its header's gap)
       * follows its address, so two blocks compare byte for byte only alike */
      void *want = nn_aligned_alloc(bytes), *got = nn_aligned_alloc(bytes);
      memset(want, 0x7f, bytes);   /* the header's alignment gap is not written */
      nn_sgemm_pack_b_fn(NULL, K, N, 0, nn_sgemm_pack_im2col, &g, want);
      const int64_t units[] = {(int64_t)g.KH * g.KW, 1, K + 5, 0};
      for (size_t u = 0; u < sizeof units / sizeof units[0]; u++) {
        memset(got, 0x7f, bytes);
        nn_sgemm_pack_b_fn(g_ctx2, K, N, units[u], nn_sgemm_pack_im2col, &g, got);
        bool ok = memcmp(got, want, bytes) == 0;
        if (!ok)
          fprintf(stderr, "FAIL pack_b_fn rows %s C=%lld %lldx%lld k=%d s=%d unit=%lld\n",
                  nn_cpu_isa_name(nn_cpu_isa_get()), (long long)g.C, (long long)g.IH,
                  (long long)g.IW, g.KH, g.SH, (long long)units[u]);
        tally(ok);
        n++;
      }
      nn_free(x);
      nn_aligned_free(want);
      nn_aligned_free(got);
    }
    printf("  %-8s %d im2col packed-once cases, %d failed\n", nn_cpu_isa_name((nn_cpu_isa)isa), n,
           g_failed - before);
  }
}

/* ---- depthwise ----------------------------------------------------------------------------- */

/* with_res: a residual of y's shape in the epilogue (a fused shortcut Add). */
static bool run_dw_case(const nn_dwconv_shape *s, const nn_sgemm_epi *e, bool with_res,
                        nn_ctx *ctx) {
  int64_t cin = s->batch * s->C, cout = s->batch * s->C * s->mult;
  int dh = s->DH > 0 ? s->DH : 1, dw = s->DW > 0 ? s->DW : 1;
  size_t xn = (size_t)(cin * s->IH * s->IW), yn = (size_t)(cout * s->OH * s->OW);
  size_t wn = (size_t)(s->C * s->mult * s->KH * s->KW);
  float *x = nn_malloc(sizeof(float) * (xn + 1));
  float *w = nn_malloc(sizeof(float) * (wn + 1));
  float *y = nn_malloc(sizeof(float) * (yn + 1));
  float *bias = nn_malloc(sizeof(float) * (size_t)(s->C * s->mult + 1));
  fill(x, (int64_t)xn);
  fill(w, (int64_t)wn);
  fill(bias, s->C * s->mult);
  float *res = nn_malloc(sizeof(float) * (yn + 1));
  fill(res, (int64_t)yn);
  for (size_t i = 0; i < yn; i++)
    y[i] = NAN;   /* write-only */
  nn_sgemm_epi ee = e ? *e : (nn_sgemm_epi){0};
  if (e && e->bias_kind == NN_SGEMM_BIAS_ROW)
    ee.bias = bias;
  with_res = with_res && e;
  if (with_res) {
    ee.res = res;
    ee.ldres = s->OW;
  }
  nn_status st = nn_dwconv2d(ctx, s, x, w, y, e ? &ee : NULL);
  bool ok = st == NN_OK;
  int bad = 0;
  for (int64_t n = 0; ok && n < s->batch; n++)
    for (int64_t oc = 0; oc < s->C * s->mult; oc++) {
      int64_t ic = oc / s->mult;
      const float *xc = x + (n * s->C + ic) * s->IH * s->IW;
      const float *wc = w + oc * s->KH * s->KW;
      for (int64_t oh = 0; oh < s->OH; oh++)
        for (int64_t ow = 0; ow < s->OW; ow++) {
          double acc = 0, mag = 0;
          for (int kh = 0; kh < s->KH; kh++)
            for (int kw = 0; kw < s->KW; kw++) {
              int64_t ih = oh * s->SH - s->PT + kh * dh, iw = ow * s->SW - s->PL + kw * dw;
              if (ih < 0 || ih >= s->IH || iw < 0 || iw >= s->IW)
                continue;
              double t = (double)wc[kh * s->KW + kw] * xc[ih * s->IW + iw];
              acc += t;
              mag += fabs(t);
            }
          if (ee.bias) {
            acc += bias[oc];
            mag += fabs(bias[oc]);
          }
          size_t yi = (size_t)(((n * s->C * s->mult + oc) * s->OH + oh) * s->OW + ow);
          if (with_res) {
            acc += res[yi];
            mag += fabs(res[yi]);
          }
          double want = ref_act(e, acc);
          float got = y[yi];
          double tol = (8 * 1.2e-7 * mag + 2e-6) * act_gain(e);
          if (!(fabs(got - want) <= tol)) {
            if (bad++ < 3)
              fprintf(stderr, "  y(%lld,%lld,%lld,%lld) = %.9g, want %.9g\n", (long long)n,
                      (long long)oc, (long long)oh, (long long)ow, got, want);
            ok = false;
          }
        }
    }
  if (!ok)
    fprintf(stderr,
            "FAIL dwconv %s st=%s N=%lld C=%lld mult=%lld in=%lldx%lld out=%lldx%lld k=%dx%d "
            "s=%dx%d pad=%d,%d dil=%d,%d act=%s res=%d\n",
            nn_cpu_isa_name(nn_cpu_isa_get()), nn_status_str(st), (long long)s->batch,
            (long long)s->C, (long long)s->mult, (long long)s->IH, (long long)s->IW,
            (long long)s->OH, (long long)s->OW, s->KH, s->KW, s->SH, s->SW, s->PT, s->PL, dh,
            dw, e ? act_name(e->act) : "none", with_res);
  nn_free(res);
  nn_free(x);
  nn_free(w);
  nn_free(y);
  nn_free(bias);
  return ok;
}

/* Output size with pads (pt, pb) as ONNX computes it. */
static int64_t dw_out(int64_t in, int k, int s, int d, int pa, int pb) {
  int64_t o = (in + pa + pb - ((int64_t)(k - 1) * d + 1)) / s + 1;
  return o < 0 ? 0 : o;
}

static void test_dwconv(void) {
  /* {2, 1700}: rows too wide for the AVX2 path's stack ring (portable fallback) */
  static const int64_t sizes[][2] = {{1, 1},   {2, 3},   {5, 5},   {7, 9},  {8, 8},   {16, 16},
                                     {13, 31}, {33, 17}, {28, 27}, {56, 56}, {3, 70}, {2, 1700}};
  for (int isa = 0; isa < NN_CPU_ISA_COUNT; isa++) {
    if (!nn_cpu_isa_set((nn_cpu_isa)isa))
      continue;
    int before = g_failed, cases = 0, v = 0;
    for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++)
      for (int k = 1; k <= 7; k += 2)
        for (int st = 1; st <= 2; st++)
          for (int pad = 0; pad <= 2; pad++) {
            nn_dwconv_shape s;
            memset(&s, 0, sizeof s);
            s.batch = 1 + v % 2;
            /* more than 8 channels too: the small-map kernel's whole and
             * partial blocks of 8 */
            s.C = v % 4 == 1 ? 9 + rnd_range(0, 16) : 1 + rnd_range(0, 5);
            s.mult = v % 5 == 4 ? 2 : 1;
            s.IH = sizes[si][0], s.IW = sizes[si][1];
            s.KH = s.KW = k;
            if (v % 7 == 3)
              s.KW = k == 1 ? 3 : k - 2;      /* non-square kernels */
            s.SH = s.SW = st;
            s.DH = s.DW = (v % 11 == 5) ? 2 : 1;
            int pt = pad > k / 2 ? k / 2 : pad, pl = pt, pbm = pt + (v % 3 == 1), prt = pl;
            if (pad == 2 && k >= 3) {            /* asymmetric, SAME_UPPER-like */
              pbm = pt + 1;
              prt = pl + 1;
            }
            s.PT = pt, s.PL = pl;
            s.OH = dw_out(s.IH, s.KH, s.SH, s.DH, pt, pbm);
            s.OW = dw_out(s.IW, s.KW, s.SW, s.DW, pl, prt);
            if (s.OH < 1 || s.OW < 1) {
              v++;
              continue;
            }
            nn_sgemm_epi e = {(nn_sgemm_act)(v % SG_TEST_ACTS), 0.1f, 0.0f, 0.75f,
                              v % 4 ? NN_SGEMM_BIAS_ROW : NN_SGEMM_BIAS_NONE, NULL};
            tally(run_dw_case(&s, v % 9 == 8 ? NULL : &e, v % 3 == 2, v % 2 ? g_ctx2 : NULL));
            cases++;
            v++;
          }
    /* dilated, stride 1 (DeepLab's backbone): the ring kernel's dilated
     * taps, rows whose taps fall partly or wholly outside the map, unequal
     * dilations, "same" pads and none */
    static const int dils[][2] = {{2, 2}, {4, 4}, {2, 3}, {3, 1}, {1, 2}, {6, 6}};
    static const int64_t dsz[][2] = {{9, 9}, {33, 33}, {20, 70}, {3, 40}};
    for (size_t di = 0; di < sizeof dils / sizeof dils[0]; di++)
      for (size_t si = 0; si < sizeof dsz / sizeof dsz[0]; si++)
        for (int k = 3; k <= 5; k += 2)
          for (int same = 0; same < 2; same++) {
            nn_dwconv_shape s;
            memset(&s, 0, sizeof s);
            s.batch = 1;
            s.C = 1 + rnd_range(0, 4);
            s.mult = 1;
            s.IH = dsz[si][0], s.IW = dsz[si][1];
            s.KH = s.KW = k;
            s.SH = s.SW = 1;
            s.DH = dils[di][0], s.DW = dils[di][1];
            s.PT = same ? s.DH * (k / 2) : 0;
            s.PL = same ? s.DW * (k / 2) : 0;
            s.OH = dw_out(s.IH, k, 1, s.DH, s.PT, s.PT);
            s.OW = dw_out(s.IW, k, 1, s.DW, s.PL, s.PL);
            if (s.OH < 1 || s.OW < 1)
              continue;
            nn_sgemm_epi e = {(nn_sgemm_act)(v % SG_TEST_ACTS), 0.1f, 0.0f, 0.75f,
                              v % 4 ? NN_SGEMM_BIAS_ROW : NN_SGEMM_BIAS_NONE, NULL};
            tally(run_dw_case(&s, &e, v % 3 == 2, v % 2 ? g_ctx2 : NULL));
            cases++;
            v++;
          }
    /* every activation on 3x3 stride-1 "same" maps wide and tall enough
     * for the interior kernel of four rows (dw2_k3s1_rows4, one instance
     * per clamp kind), with and without a bias */
    for (int a = 0; a < SG_TEST_ACTS; a++)
      for (int bias = 0; bias < 2; bias++) {
        nn_dwconv_shape s = {.batch = 1, .C = 2, .mult = 1, .IH = 21, .IW = 48, .OH = 21, .OW = 48,
                             .KH = 3, .KW = 3, .SH = 1, .SW = 1, .PT = 1, .PL = 1};
        nn_sgemm_epi e = {(nn_sgemm_act)a, 0.1f, 0.0f, 0.75f,
                          bias ? NN_SGEMM_BIAS_ROW : NN_SGEMM_BIAS_NONE, NULL};
        tally(run_dw_case(&s, &e, false, bias ? g_ctx2 : NULL));
        cases++;
      }
    printf("  %-8s %d depthwise cases, %d failed\n", nn_cpu_isa_name((nn_cpu_isa)isa), cases,
           g_failed - before);
  }
  /* refusals */
  bool ok = true;
  nn_dwconv_shape s = {1, 1, 1, 4, 4, 4, 4, 3, 3, 1, 1, 1, 1, 1, 1};
  float x[16] = {0}, w[9] = {0}, y[16];
  nn_dwconv_shape bad = s;
  bad.SH = 0;
  CHECK(nn_dwconv2d(NULL, &bad, x, w, y, NULL) == NN_ERR_INVALID_ARG);
  bad = s;
  bad.mult = 0;
  CHECK(nn_dwconv2d(NULL, &bad, x, w, y, NULL) == NN_ERR_INVALID_ARG);
  CHECK(nn_dwconv2d(NULL, &s, x, w, y, NULL) == NN_OK);
  tally(ok);
}

/* The depthwise half of a dw -> pw pair: a pointwise GEMM whose B panels
 * nn_dwconv2d_pack computes must equal the same GEMM over the depthwise
 * output planes (nn_dwconv2d), through the engine's packer entries (one
 * block per tile, and packed once), on 1 and 2 threads. */
static void test_dwconv_pack(void) {
  static const int shapes[][5] = {
      /* C, H, W, pad, M */
      {24, 16, 128, 1, 24}, {5, 7, 8, 1, 9}, {16, 9, 40, 1, 96}, {3, 33, 24, 0, 7},
      {48, 4, 16, 1, 130}, {7, 5, 13, 1, 6}, /* 13 wide: not a multiple of 8, the slow path */
  };
  for (int isa = 0; isa < NN_CPU_ISA_COUNT; isa++) {
    if (!nn_cpu_isa_set((nn_cpu_isa)isa))
      continue;
    int before = g_failed, cases = 0;
    for (size_t si = 0; si < sizeof shapes / sizeof shapes[0]; si++) {
      const int *sh = shapes[si];
      nn_dwconv_panel pp;
      memset(&pp, 0, sizeof pp);
      nn_dwconv_shape *ds = &pp.s;
      ds->batch = 1, ds->C = sh[0], ds->mult = 1, ds->IH = sh[1], ds->IW = sh[2];
      ds->KH = ds->KW = 3, ds->SH = ds->SW = 1, ds->PT = ds->PL = sh[3];
      ds->OH = dw_out(ds->IH, 3, 1, 1, sh[3], sh[3]);
      ds->OW = dw_out(ds->IW, 3, 1, 1, sh[3], sh[3]);
      int64_t C = ds->C, N = ds->OH * ds->OW, M = sh[4];
      float *x = nn_malloc(sizeof(float) * (size_t)(C * ds->IH * ds->IW));
      float *w = nn_malloc(sizeof(float) * (size_t)(C * 9));
      float *db = nn_malloc(sizeof(float) * (size_t)C);
      float *planes = nn_malloc(sizeof(float) * (size_t)(C * N));
      float *a = nn_malloc(sizeof(float) * (size_t)(M * C));
      float *want = nn_malloc(sizeof(float) * (size_t)(M * N));
      /* M * N for the products, C * (N + 3) for the bands */
      float *got = nn_malloc(sizeof(float) * (size_t)((M > C ? M : C) * (N + 3)));
      fill(x, C * ds->IH * ds->IW);
      fill(w, C * 9);
      fill(db, C);
      fill(a, M * C);
      pp.x = x, pp.w = w;
      pp.epi = (nn_sgemm_epi){NN_SGEMM_ACT_RELU, 0, 0, 0, NN_SGEMM_BIAS_ROW, db};
      bool ok = nn_dwconv2d(NULL, ds, x, w, planes, &pp.epi) == NN_OK;
      size_t wsb = nn_sgemm_workspace(M, N, C, 2);
      void *ws = nn_malloc(wsb);
      void *pa = nn_malloc(nn_sgemm_pack_a_size(M, C));
      void *pb = nn_malloc(nn_sgemm_pack_b_size(C, N));
      nn_sgemm_pack_a(0, M, C, a, C, pa);
      ok = ok && nn_sgemm_compute(NULL, 0, 0, M, N, C, 1.0f, a, C, planes, N, 0.0f, want, N, NULL,
                                  ws, wsb) == NN_OK;
      /* nn_dwconv2d_band: bands of whole rows (the plane kernel from a row
       * offset; the last band shorter) and ranges that start and end inside
       * a row (the per-pixel path), into planes ld = np + 3 apart whose
       * gaps must stay untouched */
      for (int bi = 0; bi < 4 && ok; bi++) {
        static const int64_t band_rows[] = {1, 2, 3, 5};
        int64_t np = band_rows[bi] * ds->OW, ld = np + 3;
        int64_t first = bi == 3 ? ds->OW / 2 + 1 : 0;
        for (int64_t p0 = first; p0 < N && ok; p0 += np) {
          int64_t n = N - p0 < np ? N - p0 : np;
          for (int64_t i = 0; i < C * ld; i++)
            got[i] = -7.0f;
          nn_dwconv2d_band(&pp, p0, n, got, ld);
          for (int64_t k = 0; k < C && ok; k++)
            for (int64_t q = 0; q < ld && ok; q++) {
              float g = got[k * ld + q], e = q < n ? planes[k * N + p0 + q] : -7.0f;
              if (!(fabsf(g - e) <= 1e-5f * (1.0f + fabsf(e)))) {
                fprintf(stderr, "FAIL dwconv band %s C=%lld %lldx%lld p0=%lld np=%lld: "
                        "[%lld][%lld] = %.9g, want %.9g\n", nn_cpu_isa_name(nn_cpu_isa_get()),
                        (long long)C, (long long)ds->IH, (long long)ds->IW, (long long)p0,
                        (long long)n, (long long)k, (long long)q, g, e);
                ok = false;
              }
            }
          cases++;
        }
      }
      for (int mode = 0; mode < 4 && ok; mode++) {
        nn_ctx *ctx = mode & 1 ? g_ctx2 : NULL;
        for (int64_t i = 0; i < M * N; i++)
          got[i] = NAN;
        nn_status st;
        if (mode < 2) {
          st = nn_sgemm_compute_pa_fn(ctx, M, N, C, 1.0f, pa, nn_dwconv2d_pack, &pp, 0.0f, got, N,
                                      NULL, ws, wsb);
        } else {
          nn_sgemm_pack_b_fn(ctx, C, N, 1, nn_dwconv2d_pack, &pp, pb);
          st = nn_sgemm_compute_papb(ctx, M, N, C, 1.0f, pa, pb, 0.0f, got, N, NULL, ws, wsb);
        }
        for (int64_t i = 0; i < M * N && st == NN_OK; i++)
          if (!(fabsf(got[i] - want[i]) <= 1e-4f * (1.0f + fabsf(want[i])))) {
            fprintf(stderr, "  y[%lld] = %.9g, want %.9g\n", (long long)i, got[i], want[i]);
            st = NN_ERR_RUNTIME;
          }
        if (st != NN_OK) {
          fprintf(stderr, "FAIL dwconv pack %s C=%lld %lldx%lld pad=%d M=%lld mode=%d\n",
                  nn_cpu_isa_name(nn_cpu_isa_get()), (long long)C, (long long)ds->IH,
                  (long long)ds->IW, sh[3], (long long)M, mode);
          ok = false;
        }
        cases++;
      }
      tally(ok);
      nn_free(x);
      nn_free(w);
      nn_free(db);
      nn_free(planes);
      nn_free(a);
      nn_free(want);
      nn_free(got);
      nn_free(ws);
      nn_free(pa);
      nn_free(pb);
    }
    printf("  %-8s %d depthwise->pointwise panel and band cases, %d failed\n",
           nn_cpu_isa_name((nn_cpu_isa)isa), cases, g_failed - before);
  }
}

/* ---- benchmark ----------------------------------------------------------------------------- */

/* The machine is shared: a serial run is timed in this thread's CPU time,
 * which does not count the time another process holds the core; a 2-thread
 * run can only be timed on the wall clock (its ratio to the serial one is
 * meaningful only on an idle machine).  Each figure is the best of a few
 * repetitions: noise only ever adds time. */
static bool g_wall;
static double now_s(void) {
  struct timespec ts;
  clock_gettime(g_wall ? CLOCK_MONOTONIC : CLOCK_THREAD_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* The plain loop the kernels replace: i-k-j order, inner loop contiguous. */
static void naive_gemm(int64_t M, int64_t N, int64_t K, const float *A, const float *B,
                       float *C) {
  for (int64_t i = 0; i < M; i++) {
    float *c = C + i * N;
    for (int64_t j = 0; j < N; j++)
      c[j] = 0.0f;
    for (int64_t k = 0; k < K; k++) {
      float a = A[i * K + k];
      const float *b = B + k * N;
      for (int64_t j = 0; j < N; j++)
        c[j] += a * b[j];
    }
  }
}

typedef struct bench_shape {
  const char *what;
  int64_t M, N, K;
  entry en;
  int tb;
} bench_shape;

/* Best of BENCH_REPS timings, each repeating the product for ~20 ms. */
#define BENCH_REPS 7

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

typedef struct bench_args {
  const bench_shape *s;
  const float *A, *B;
  float *C;
  void *pk, *ws;
  size_t wsb;
  nn_ctx *ctx;
  int which;   /* 0 naive, 1 engine */
} bench_args;

static void bench_once(const bench_args *a) {
  const bench_shape *s = a->s;
  int64_t lda = s->K, ldb = s->tb ? s->K : s->N;
  if (a->which == 0) {
    naive_gemm(s->M, s->N, s->K, a->A, a->B, a->C);
  } else if (s->en == ENTRY_PA) {
    nn_sgemm_compute_pa(a->ctx, s->tb, s->M, s->N, s->K, 1.0f, a->pk, a->B, ldb, 0.0f, a->C, s->N,
                        NULL, a->ws, a->wsb);
  } else if (s->en == ENTRY_PB) {
    nn_sgemm_compute_pb(a->ctx, 0, s->M, s->N, s->K, 1.0f, a->A, lda, a->pk, 0.0f, a->C, s->N,
                        NULL, a->ws, a->wsb);
  } else {
    nn_sgemm_compute(a->ctx, 0, s->tb, s->M, s->N, s->K, 1.0f, a->A, lda, a->B, ldb, 0.0f, a->C,
                     s->N, NULL, a->ws, a->wsb);
  }
}

static double bench_gflops(const bench_args *a) {
  const bench_shape *s = a->s;
  double flops = 2.0 * (double)s->M * (double)s->N * (double)s->K;
  bench_once(a);   /* warm */
  double t0 = now_s();
  int iters = 0;
  do {
    bench_once(a);
    iters++;
  } while (now_s() - t0 < 0.02);
  double best[BENCH_REPS];
  for (int r = 0; r < BENCH_REPS; r++) {
    double t = now_s();
    for (int i = 0; i < iters; i++)
      bench_once(a);
    best[r] = (now_s() - t) / iters;
  }
  qsort(best, BENCH_REPS, sizeof best[0], cmp_double);
  return flops / best[0] * 1e-9;
}

static void bench(void) {
  static const bench_shape shapes[] = {
      {"conv3x3 64ch 56x56 (im2col)", 64, 3136, 576, ENTRY_PA, 0},
      {"same, W not packed", 64, 3136, 576, ENTRY_PLAIN, 0},
      {"conv1x1 128->256 28x28", 256, 784, 128, ENTRY_PA, 0},
      {"conv1x1 16->64 56x56 (squeezenet)", 64, 3136, 16, ENTRY_PA, 0},
      {"conv3x3 16ch 64x64 (blazeface)", 24, 4096, 144, ENTRY_PA, 0},
      {"fc 2048->1000 as W*x", 1000, 1, 2048, ENTRY_PA, 0},
      {"fc 2048->1000 as x*W^T", 1, 1000, 2048, ENTRY_PB, 1},
      {"fc 2048->1000 as x*W^T, W not packed", 1, 1000, 2048, ENTRY_PLAIN, 1},
      {"matmul 256x512x512", 256, 512, 512, ENTRY_PB, 0},
      {"conv1x1 512->2048 7x7 (N 49)", 2048, 49, 512, ENTRY_PA, 0},
      {"conv1x1 512->2048 8x8 (N 64)", 2048, 64, 512, ENTRY_PA, 0},
      {"conv1x1 512->2048 8x4 (N 32)", 2048, 32, 512, ENTRY_PA, 0},
      {"conv1x1 512->2048 4x4 (N 16)", 2048, 16, 512, ENTRY_PA, 0},
      {"plain 512^3", 512, 512, 512, ENTRY_PLAIN, 0},
  };
  nn_cpu_isa top = nn_cpu_isa_get();
  printf("GFLOP/s, best of %d; 1 thread: CPU time, 2thr: wall time (naive = i-k-j C loop)\n",
         BENCH_REPS);
  printf("%-36s %18s %7s", "shape", "MxNxK", "naive");
  for (int isa = 0; isa < NN_CPU_ISA_COUNT; isa++)
    if (nn_cpu_isa_supported((nn_cpu_isa)isa))
      printf(" %9s %6s", nn_cpu_isa_name((nn_cpu_isa)isa), "2thr");
  printf("\n");
  for (size_t si = 0; si < sizeof shapes / sizeof shapes[0]; si++) {
    const bench_shape *s = &shapes[si];
    float *A = nn_malloc(sizeof(float) * (size_t)(s->M * s->K));
    float *B = nn_malloc(sizeof(float) * (size_t)(s->K * s->N));
    float *C = nn_malloc(sizeof(float) * (size_t)(s->M * s->N));
    fill(A, s->M * s->K);
    fill(B, s->K * s->N);
    char dims[40];
    snprintf(dims, sizeof dims, "%lldx%lldx%lld", (long long)s->M, (long long)s->N,
             (long long)s->K);
    bench_args a = {s, A, B, C, NULL, NULL, 0, NULL, 0};
    printf("%-36s %18s", s->what, dims);
    fflush(stdout);
    a.which = 0;
    printf(" %7.1f", bench_gflops(&a));
    fflush(stdout);
    a.which = 1;
    a.wsb = nn_sgemm_workspace(s->M, s->N, s->K, 2);
    a.ws = nn_malloc(a.wsb);
    for (int isa = 0; isa < NN_CPU_ISA_COUNT; isa++) {
      if (!nn_cpu_isa_set((nn_cpu_isa)isa))
        continue;
      if (s->en == ENTRY_PA) {
        a.pk = nn_malloc(nn_sgemm_pack_a_size(s->M, s->K));
        nn_sgemm_pack_a(0, s->M, s->K, A, s->K, a.pk);
      } else if (s->en == ENTRY_PB) {
        a.pk = nn_malloc(nn_sgemm_pack_b_size(s->K, s->N));
        nn_sgemm_pack_b(s->tb, s->K, s->N, B, s->tb ? s->K : s->N, a.pk);
      }
      a.ctx = NULL;
      g_wall = false;
      printf(" %9.1f", bench_gflops(&a));
      a.ctx = g_ctx2;
      g_wall = true;
      printf(" %6.1f", bench_gflops(&a));
      g_wall = false;
      fflush(stdout);
      nn_free(a.pk);
      a.pk = NULL;
    }
    printf("\n");
    nn_free(a.ws);
    nn_free(A);
    nn_free(B);
    nn_free(C);
  }
  nn_cpu_isa_set(top);
}

/* Conv as GEMM: explicit im2col into a buffer then the packed-A product, vs
 * the implicit GEMM (nn_sgemm_pack_im2col writing panels directly). */
static void bench_conv(void) {
  static const struct {
    const char *what;
    int64_t C, H, W, M;
    int k, s;
  } shapes[] = {
      {"conv3x3 64->64 56x56 (resnet)", 64, 56, 56, 64, 3, 1},
      {"conv5x5 s2 3->24 128x128 (blazeface)", 3, 128, 128, 24, 5, 2},
      {"conv3x3 s2 3->16 48x192 (pp-ocr)", 3, 48, 192, 16, 3, 2},
      {"conv3x3 256->256 14x14", 256, 14, 14, 256, 3, 1},
  };
  printf("conv GFLOP/s, best of %d, 1 thread CPU time, default path: explicit im2col + "
         "packed-A GEMM, implicit GEMM (packed W), implicit GEMM (raw W)\n", BENCH_REPS);
  printf("%-40s %9s %9s %9s\n", "shape", "im2col", "implicit", "impl.rawW");
  for (size_t si = 0; si < sizeof shapes / sizeof shapes[0]; si++) {
    nn_sgemm_im2col g;
    memset(&g, 0, sizeof g);
    g.C = shapes[si].C, g.IH = shapes[si].H, g.IW = shapes[si].W;
    g.KH = g.KW = shapes[si].k, g.SH = g.SW = shapes[si].s, g.PT = g.PL = shapes[si].k / 2;
    g.OH = dw_out(g.IH, g.KH, g.SH, 1, g.PT, g.PT);
    g.OW = dw_out(g.IW, g.KW, g.SW, 1, g.PL, g.PL);
    int64_t M = shapes[si].M, N = g.OH * g.OW, K = g.C * g.KH * g.KW;
    float *x = nn_malloc(sizeof(float) * (size_t)(g.C * g.IH * g.IW));
    float *w = nn_malloc(sizeof(float) * (size_t)(M * K));
    float *y = nn_malloc(sizeof(float) * (size_t)(M * N));
    float *col = nn_malloc(sizeof(float) * (size_t)(K * N));
    fill(x, g.C * g.IH * g.IW);
    fill(w, M * K);
    g.x = x;
    void *pa = nn_malloc(nn_sgemm_pack_a_size(M, K));
    nn_sgemm_pack_a(0, M, K, w, K, pa);
    size_t wsb = nn_sgemm_workspace(M, N, K, 1);
    void *ws = nn_malloc(wsb);
    double flops = 2.0 * (double)M * (double)N * (double)K;
    printf("%-40s", shapes[si].what);
    for (int implicit = 0; implicit < 3; implicit++) {
      double best = 1e30;
      for (int r = 0; r < BENCH_REPS; r++) {
        int iters = 0;
        double t0 = now_s(), t;
        do {
          if (implicit == 2) {
            nn_sgemm_compute_fn(NULL, 0, M, N, K, 1.0f, w, K, nn_sgemm_pack_im2col, &g, 0.0f, y,
                                N, NULL, ws, wsb);
          } else if (implicit) {
            nn_sgemm_compute_pa_fn(NULL, M, N, K, 1.0f, pa, nn_sgemm_pack_im2col, &g, 0.0f, y, N,
                                   NULL, ws, wsb);
          } else {
            /* one panel as wide as the matrix is a row-major im2col */
            nn_sgemm_pack_im2col(&g, 0, K, 0, N, (int)N, col, 0);
            nn_sgemm_compute_pa(NULL, 0, M, N, K, 1.0f, pa, col, N, 0.0f, y, N, NULL, ws, wsb);
          }
          iters++;
          t = now_s() - t0;
        } while (t < 0.02);
        if (t / iters < best)
          best = t / iters;
      }
      printf(" %9.1f", flops / best * 1e-9);
    }
    printf("\n");
    nn_free(ws);
    nn_free(pa);
    nn_free(col);
    nn_free(x);
    nn_free(w);
    nn_free(y);
  }
}

/* Which threads run the tiles of a 2-thread product: the packer callback
 * counts its calls made from a thread other than the caller's. */
#include <pthread.h>
#include <stdatomic.h>
static pthread_t g_main_thread;
static atomic_long g_calls_main, g_calls_other;
static void pack_counting(void *user, int64_t k0, int64_t kc, int64_t j0, int64_t nb, int nr,
                          float *dst, int64_t pstride) {
  if (pthread_equal(pthread_self(), g_main_thread))
    atomic_fetch_add(&g_calls_main, 1);
  else
    atomic_fetch_add(&g_calls_other, 1);
  nn_sgemm_pack_im2col(user, k0, kc, j0, nb, nr, dst, pstride);
}

static void bench_split(void) {
  nn_sgemm_im2col g;
  memset(&g, 0, sizeof g);
  g.C = 64, g.IH = g.IW = 56, g.KH = g.KW = 3, g.SH = g.SW = 1, g.PT = g.PL = 1;
  g.OH = g.OW = 56;
  int64_t M = 64, N = g.OH * g.OW, K = g.C * 9;
  float *x = nn_malloc(sizeof(float) * (size_t)(g.C * g.IH * g.IW));
  float *w = nn_malloc(sizeof(float) * (size_t)(M * K));
  float *y = nn_malloc(sizeof(float) * (size_t)(M * N));
  fill(x, g.C * g.IH * g.IW);
  fill(w, M * K);
  g.x = x;
  void *pa = nn_malloc(nn_sgemm_pack_a_size(M, K));
  nn_sgemm_pack_a(0, M, K, w, K, pa);
  size_t wsb = nn_sgemm_workspace(M, N, K, 2);
  void *ws = nn_malloc(wsb);
  g_main_thread = pthread_self();
  atomic_store(&g_calls_main, 0);
  atomic_store(&g_calls_other, 0);
  struct timespec c0, c1;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c0);
  double t0 = now_s();
  for (int i = 0; i < 200; i++)
    nn_sgemm_compute_pa_fn(g_ctx2, M, N, K, 1.0f, pa, pack_counting, &g, 0.0f, y, N, NULL, ws,
                           wsb);
  double wall = now_s() - t0;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c1);
  double cpu = (double)(c1.tv_sec - c0.tv_sec) + 1e-9 * (double)(c1.tv_nsec - c0.tv_nsec);
  long a = atomic_load(&g_calls_main), b = atomic_load(&g_calls_other);
  printf("2-thread split, conv3x3 64->64 56x56 x200: tile slices run by the caller %ld, by the "
         "worker %ld (%.0f%%); wall %.2f ms, process cpu %.2f ms per product\n",
         a, b, 100.0 * (double)b / (double)(a + b), wall / 200 * 1e3, cpu / 200 * 1e3);
  nn_free(ws);
  nn_free(pa);
  nn_free(x);
  nn_free(w);
  nn_free(y);
}

static void bench_dw(void) {
  static const struct {
    const char *what;
    int64_t C, H, W;
    int k, s;
  } shapes[] = {
      {"dw3x3 s1 32ch 112x112", 32, 112, 112, 3, 1},
      {"dw3x3 s2 96ch 112x112", 96, 112, 112, 3, 2},
      {"dw5x5 s1 24ch 64x64 (blazeface)", 24, 64, 64, 5, 1},
      {"dw3x3 s1 144ch 28x28", 144, 28, 28, 3, 1},
      {"dw5x5 s2 72ch 56x56", 72, 56, 56, 5, 2},
  };
  printf("depthwise GFLOP/s (2 flops per tap), best of %d, timed as above\n", BENCH_REPS);
  printf("%-36s", "shape");
  for (int isa = 0; isa < NN_CPU_ISA_COUNT; isa++)
    if (nn_cpu_isa_supported((nn_cpu_isa)isa))
      printf(" %9s %6s", nn_cpu_isa_name((nn_cpu_isa)isa), "2thr");
  printf("\n");
  nn_cpu_isa top = nn_cpu_isa_get();
  for (size_t si = 0; si < sizeof shapes / sizeof shapes[0]; si++) {
    nn_dwconv_shape s;
    memset(&s, 0, sizeof s);
    s.batch = 1, s.C = shapes[si].C, s.mult = 1;
    s.IH = shapes[si].H, s.IW = shapes[si].W;
    s.KH = s.KW = shapes[si].k;
    s.SH = s.SW = shapes[si].s;
    s.PT = s.PL = shapes[si].k / 2;
    s.OH = dw_out(s.IH, s.KH, s.SH, 1, s.PT, s.PT);
    s.OW = dw_out(s.IW, s.KW, s.SW, 1, s.PL, s.PL);
    float *x = nn_malloc(sizeof(float) * (size_t)(s.C * s.IH * s.IW));
    float *w = nn_malloc(sizeof(float) * (size_t)(s.C * s.KH * s.KW));
    float *y = nn_malloc(sizeof(float) * (size_t)(s.C * s.OH * s.OW));
    fill(x, s.C * s.IH * s.IW);
    fill(w, s.C * s.KH * s.KW);
    double flops = 2.0 * (double)(s.C * s.OH * s.OW) * s.KH * s.KW;
    printf("%-36s", shapes[si].what);
    for (int isa = 0; isa < NN_CPU_ISA_COUNT; isa++) {
      if (!nn_cpu_isa_set((nn_cpu_isa)isa))
        continue;
      for (int th = 0; th < 2; th++) {
        nn_ctx *ctx = th ? g_ctx2 : NULL;
        g_wall = th;
        nn_dwconv2d(ctx, &s, x, w, y, NULL);
        double t0 = now_s();
        int iters = 0;
        do {
          nn_dwconv2d(ctx, &s, x, w, y, NULL);
          iters++;
        } while (now_s() - t0 < 0.02);
        double ts[BENCH_REPS];
        for (int r = 0; r < BENCH_REPS; r++) {
          double t = now_s();
          for (int i = 0; i < iters; i++)
            nn_dwconv2d(ctx, &s, x, w, y, NULL);
          ts[r] = (now_s() - t) / iters;
        }
        qsort(ts, BENCH_REPS, sizeof ts[0], cmp_double);
        printf(th ? " %6.1f" : " %9.1f", flops / ts[0] * 1e-9);
        g_wall = false;
        fflush(stdout);
      }
    }
    printf("\n");
    nn_free(x);
    nn_free(w);
    nn_free(y);
  }
  nn_cpu_isa_set(top);
}

int main(int argc, char **argv) {
  nn_threadpool *pool = NULL;
  if (nn_threadpool_create(2, &pool) != NN_OK) {
    fprintf(stderr, "cannot create the thread pool\n");
    return 1;
  }
  nn_ctx ctx2 = {0};
  ctx2.pool = pool;
  ctx2.threads = 2;
  g_ctx2 = &ctx2;
  printf("cpu paths:");
  for (int i = 0; i < NN_CPU_ISA_COUNT; i++)
    printf(" %s%s", nn_cpu_isa_name((nn_cpu_isa)i),
           nn_cpu_isa_supported((nn_cpu_isa)i) ? "" : "(absent)");
  printf("; default %s\n", nn_cpu_isa_name(nn_cpu_isa_get()));
  if (argc == 9 && strcmp(argv[1], "--convshape") == 0) {
    /* --convshape C H W M K S SECONDS: implicit-GEMM conv in a loop */
    nn_sgemm_im2col g;
    memset(&g, 0, sizeof g);
    g.C = atoll(argv[2]), g.IH = atoll(argv[3]), g.IW = atoll(argv[4]);
    int64_t M = atoll(argv[5]);
    g.KH = g.KW = atoi(argv[6]), g.SH = g.SW = atoi(argv[7]), g.PT = g.PL = g.KH / 2;
    g.OH = dw_out(g.IH, g.KH, g.SH, 1, g.PT, g.PT);
    g.OW = dw_out(g.IW, g.KW, g.SW, 1, g.PL, g.PL);
    int64_t N = g.OH * g.OW, K = g.C * g.KH * g.KW;
    float *x = nn_malloc(sizeof(float) * (size_t)(g.C * g.IH * g.IW));
    float *w = nn_malloc(sizeof(float) * (size_t)(M * K));
    float *y = nn_malloc(sizeof(float) * (size_t)(M * N));
    fill(x, g.C * g.IH * g.IW);
    fill(w, M * K);
    g.x = x;
    void *pa = nn_malloc(nn_sgemm_pack_a_size(M, K));
    nn_sgemm_pack_a(0, M, K, w, K, pa);
    size_t wsb = nn_sgemm_workspace(M, N, K, 1);
    void *ws = nn_malloc(wsb);
    double t0 = now_s(), secs = atof(argv[8]);
    long iters = 0;
    while (now_s() - t0 < secs) {
      nn_sgemm_compute_pa_fn(NULL, M, N, K, 1.0f, pa, nn_sgemm_pack_im2col, &g, 0.0f, y, N, NULL,
                             ws, wsb);
      iters++;
    }
    double dt = (now_s() - t0) / (double)iters;
    printf("conv %s: %.1f us, %.1f GFLOP/s\n", nn_cpu_isa_name(nn_cpu_isa_get()), dt * 1e6,
           2.0 * (double)M * (double)N * (double)K / dt * 1e-9);
    nn_free(ws);
    nn_free(pa);
    nn_free(x);
    nn_free(w);
    nn_free(y);
    nn_threadpool_destroy(pool);
    return 0;
  }
  if (argc == 9 && strcmp(argv[1], "--dwshape") == 0) {
    /* --dwshape C H W K S ISA SECONDS: one depthwise conv in a loop */
    nn_dwconv_shape s;
    memset(&s, 0, sizeof s);
    s.batch = 1, s.C = atoll(argv[2]), s.mult = 1, s.IH = atoll(argv[3]), s.IW = atoll(argv[4]);
    s.KH = s.KW = atoi(argv[5]);
    s.SH = s.SW = atoi(argv[6]);
    s.PT = s.PL = s.KH / 2;
    s.OH = dw_out(s.IH, s.KH, s.SH, 1, s.PT, s.PT);
    s.OW = dw_out(s.IW, s.KW, s.SW, 1, s.PL, s.PL);
    for (int i = 0; i < NN_CPU_ISA_COUNT; i++)
      if (strcmp(argv[7], nn_cpu_isa_name((nn_cpu_isa)i)) == 0)
        nn_cpu_isa_set((nn_cpu_isa)i);
    float *x = nn_malloc(sizeof(float) * (size_t)(s.C * s.IH * s.IW));
    float *w = nn_malloc(sizeof(float) * (size_t)(s.C * s.KH * s.KW));
    float *y = nn_malloc(sizeof(float) * (size_t)(s.C * s.OH * s.OW));
    fill(x, s.C * s.IH * s.IW);
    fill(w, s.C * s.KH * s.KW);
    double t0 = now_s(), secs = atof(argv[8]);
    long iters = 0;
    while (now_s() - t0 < secs) {
      nn_dwconv2d(NULL, &s, x, w, y, NULL);
      iters++;
    }
    double dt = (now_s() - t0) / (double)iters;
    printf("dw %s: %.1f us, %.1f GFLOP/s\n", nn_cpu_isa_name(nn_cpu_isa_get()), dt * 1e6,
           2.0 * (double)(s.C * s.OH * s.OW) * s.KH * s.KW / dt * 1e-9);
    nn_free(x);
    nn_free(w);
    nn_free(y);
    nn_threadpool_destroy(pool);
    return 0;
  }
  if (argc == 9 && strcmp(argv[1], "--shape") == 0) {
    /* --shape M N K plain|pa|pb ISA THREADS SECONDS: one product in a loop,
     * for profilers (perf record -e cpu-clock) */
    bench_shape s = {"shape", atoll(argv[2]), atoll(argv[3]), atoll(argv[4]), ENTRY_PLAIN, 0};
    s.en = strcmp(argv[5], "pa") == 0 ? ENTRY_PA : strcmp(argv[5], "pb") == 0 ? ENTRY_PB
                                                                               : ENTRY_PLAIN;
    for (int i = 0; i < NN_CPU_ISA_COUNT; i++)
      if (strcmp(argv[6], nn_cpu_isa_name((nn_cpu_isa)i)) == 0)
        nn_cpu_isa_set((nn_cpu_isa)i);
    float *A = nn_malloc(sizeof(float) * (size_t)(s.M * s.K));
    float *B = nn_malloc(sizeof(float) * (size_t)(s.K * s.N));
    float *C = nn_malloc(sizeof(float) * (size_t)(s.M * s.N));
    fill(A, s.M * s.K);
    fill(B, s.K * s.N);
    bench_args a = {&s, A, B, C, NULL, NULL, 0, atoi(argv[7]) > 1 ? g_ctx2 : NULL, 2};
    a.wsb = nn_sgemm_workspace(s.M, s.N, s.K, 2);
    a.ws = nn_malloc(a.wsb);
    if (s.en == ENTRY_PA) {
      a.pk = nn_malloc(nn_sgemm_pack_a_size(s.M, s.K));
      nn_sgemm_pack_a(0, s.M, s.K, A, s.K, a.pk);
    } else if (s.en == ENTRY_PB) {
      a.pk = nn_malloc(nn_sgemm_pack_b_size(s.K, s.N));
      nn_sgemm_pack_b(0, s.K, s.N, B, s.N, a.pk);
    }
    g_wall = true;
    struct timespec c0, c1;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c0);
    double t0 = now_s(), secs = atof(argv[8]);
    long iters = 0;
    while (now_s() - t0 < secs) {
      bench_once(&a);
      iters++;
    }
    double dt = (now_s() - t0) / (double)iters;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c1);
    double cpu = ((double)(c1.tv_sec - c0.tv_sec) + 1e-9 * (double)(c1.tv_nsec - c0.tv_nsec)) /
                 (double)iters;
    printf("%s %lldx%lldx%lld %s %s thr: wall %.1f us (%.1f GFLOP/s), process cpu %.1f us\n",
           nn_cpu_isa_name(nn_cpu_isa_get()), (long long)s.M, (long long)s.N, (long long)s.K,
           argv[5], argv[7], dt * 1e6, 2.0 * (double)s.M * (double)s.N * (double)s.K / dt * 1e-9,
           cpu * 1e6);
    nn_free(a.pk);
    nn_free(a.ws);
    nn_free(A);
    nn_free(B);
    nn_free(C);
    nn_threadpool_destroy(pool);
    return 0;
  }
  if (argc > 1 && strcmp(argv[1], "--bench") == 0) {
    bench();
    bench_conv();
    bench_dw();
    g_wall = true;
    bench_split();
    g_wall = false;
    nn_threadpool_destroy(pool);
    return 0;
  }
  nn_cpu_isa top = nn_cpu_isa_get();
  test_gemm_api();
  test_gemm_ws_smaller();
  test_vmath();
  test_vmath_softmax();
  test_gemm_nan();
  test_gemm_shapes();
  test_gemm_epilogues();
  test_gemm_lean();
  test_gemm_large();
  test_conv_im2col();
  test_pack_b_fn_rows();
  test_dwconv();
  test_dwconv_pack();
  test_qgemm();
  nn_cpu_isa_set(top);
  nn_free(g_res);
  nn_threadpool_destroy(pool);
  printf("worst error / tolerance: %.3f\n", g_worst_ratio);
  printf("%d passed, %d failed, %d skipped\n", g_passed, g_failed, g_skipped);
  return g_failed ? 1 : 0;
}

/* sgemm.c - packed single-precision GEMM: portable C, AVX2+FMA and AVX-512
 * micro-kernels behind one driver.  See sgemm.h for the contract.
 *
 * Driver (per call):
 *   the result is cut into tiles of mb x nb; a tile loops over K in slices of
 *   kc: pack op(A)[tile rows, slice] into MR-row panels and op(B)[slice, tile
 *   columns] into NR-column panels (each skipped when the operand was
 *   pre-packed), then for each A panel (kept in L1 across the inner loop) and
 *   each B panel (the B block stays in L2) run the micro-kernel.  alpha/beta
 *   are applied when the first slice is stored, bias and activation when the
 *   last one is, while the tile is still in registers.
 * Threads: tiles are claimed with an atomic counter by nn_parallel_for
 *   participants; nn_parallel_for gives no worker id, so it is run over
 *   workspace *slots* (one per participant) and each slot's function claims
 *   tiles until none are left.  Uneven tiles and a busy core balance
 *   themselves.
 * Everything the kernels read beyond the logical matrix is zero padding
 * written by the packers, so edges cost no special loads; edge stores are
 * masked.
 */
#include <math.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "knobs.h"
#include "cpu/kernel_util.h"
#include "cpu/sgemm.h"
#include "cpu/sgemm_simd.h"
#include "ops/act_kinds.h"
#include "threadpool.h"
#if SG_X86
#include <cpuid.h>
#endif

static inline int64_t sg_min(int64_t a, int64_t b) { return a < b ? a : b; }
static inline int64_t sg_max(int64_t a, int64_t b) { return a > b ? a : b; }
static inline int64_t sg_ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }
static inline int64_t sg_round_up(int64_t a, int64_t b) { return sg_ceil_div(a, b) * b; }

/* ---- CPU dispatch ------------------------------------------------------------ */

static atomic_int g_isa = -1;   /* -1: not resolved yet */

bool nn_cpu_isa_supported(nn_cpu_isa isa) {
  switch (isa) {
  case NN_CPU_PORTABLE:
    return true;
#if SG_X86
  /* __builtin_cpu_supports also checks that the OS saves the wide registers
   * (XCR0), so a kernel without AVX-512 state support reports false. */
  case NN_CPU_AVX2:
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  case NN_CPU_AVX512:
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx2") &&
           __builtin_cpu_supports("fma");
#endif
  default:
    return false;
  }
}

bool nn_cpu_avx512_half_rate(void) {
#if SG_X86
  static atomic_int half = -1;
  int v = atomic_load(&half);
  if (v < 0) {
    unsigned a = 0, b = 0, c = 0, d = 0;
    v = 0;
    /* "AuthenticAMD", family 19h: Zen 3 has no AVX-512, Zen 4 runs it as
     * two 256-bit halves (Zen 5 is family 1Ah, full width) */
    if (__get_cpuid(0, &a, &b, &c, &d) && b == 0x68747541u && d == 0x69746e65u &&
        c == 0x444d4163u && __get_cpuid(1, &a, &b, &c, &d)) {
      unsigned fam = (a >> 8) & 0xfu;
      if (fam == 0xfu)
        fam += (a >> 20) & 0xffu;
      v = fam == 0x19u;
    }
    atomic_store(&half, v);
  }
  return v == 1;
#else
  return false;
#endif
}

const char *nn_cpu_isa_name(nn_cpu_isa isa) {
  switch (isa) {
  case NN_CPU_PORTABLE: return "portable";
  case NN_CPU_AVX2: return "avx2";
  case NN_CPU_AVX512: return "avx512";
  default: return "?";
  }
}

nn_cpu_isa nn_cpu_isa_get(void) {
  int v = atomic_load_explicit(&g_isa, memory_order_acquire);
  if (v >= 0)
    return (nn_cpu_isa)v;
  int best = NN_CPU_PORTABLE;
  for (int i = NN_CPU_ISA_COUNT - 1; i > 0; i--)
    if (nn_cpu_isa_supported((nn_cpu_isa)i)) {
      best = i;
      break;
    }
  /* NN_CPU lowers the path (tests, comparisons); a request the CPU cannot
   * honour falls back to the best one it has instead of failing. */
  const char *env = nn_knobs().cpu;
  if (env) {
    for (int i = 0; i < NN_CPU_ISA_COUNT; i++)
      if (strcmp(env, nn_cpu_isa_name((nn_cpu_isa)i)) == 0) {
        if (i < best && nn_cpu_isa_supported((nn_cpu_isa)i))
          best = i;
        break;
      }
  }
  /* Racing first callers compute the same answer; whichever store wins is fine. */
  atomic_store_explicit(&g_isa, best, memory_order_release);
  return (nn_cpu_isa)best;
}

bool nn_cpu_isa_set(nn_cpu_isa isa) {
  if ((int)isa < 0 || isa >= NN_CPU_ISA_COUNT || !nn_cpu_isa_supported(isa))
    return false;
  atomic_store_explicit(&g_isa, (int)isa, memory_order_release);
  return true;
}

/* ---- epilogue ------------------------------------------------------------------ */

enum { SG_FIRST = 1u, SG_LAST = 2u };

/* The call's epilogue, flattened for the kernels. */
typedef struct sg_rt {
  float alpha, beta;
  sg_act act;
  nn_sgemm_bias bias_kind;
  const float *bias;
  const float *res;       /* residual added before the activation, NULL none */
  int64_t ldres;
  /* lean: alpha 1, beta 0, no column bias, and an activation that is a
   * clamp to [clo, chi] (none, Relu, Clip): a single-K-block tile's
   * epilogue is then add, clamp, store (sg2_ukr_t) */
  bool lean;
  /* the same with any activation: what the lean kernels take (sg_lean_fn) */
  bool lean_act;
  sg_clamp clamp;
} sg_rt;

/* One result element: *cp = epilogue(alpha * acc [+ beta * old | + old]). */
static inline void sg_epi1(const sg_rt *e, unsigned flags, float acc, float *cp, float bias) {
  float v = e->alpha * acc;
  if (flags & SG_FIRST) {
    if (e->beta != 0.0f)
      v += e->beta * *cp;
  } else {
    v += *cp;
  }
  if (flags & SG_LAST)
    v = sg_act1(&e->act, v + bias);
  *cp = v;
}

/* What the last store adds to result (i, j) before the activation: the
 * bias, then the residual. */
static inline float sg_bias_at(const sg_rt *e, int64_t i, int64_t j) {
  float b;
  switch (e->bias_kind) {
  case NN_SGEMM_BIAS_ROW: b = e->bias[i]; break;
  case NN_SGEMM_BIAS_COL: b = e->bias[j]; break;
  default: b = 0.0f; break;
  }
  return e->res ? b + e->res[i * e->ldres + j] : b;
}

/* ---- kernel table -------------------------------------------------------------- */

/* The lean kernels run products of K up to this: past it the general
 * kernel's entry costs little against its loop (ResNet-18's 256-channel
 * Winograd products at 14x14 ran 8% slower through them, AVX-512, Zen 4). */
#define SG_LEAN_MAX_K 96
/* Lean kernel: C[mr x npan * NR] = epilogue(A panel * B), the product's only
 * K slice, alpha 1, beta 0, no column bias (sg_rt.lean_act); B panel p at bp + p *
 * bstride, its row k bsk floats after row k - 1 (see sg2_lean_t). */
typedef void (*sg_lean_fn)(int64_t kc, const float *pa, const float *bp, int64_t bstride,
                           int64_t bsk, float *crow, int64_t ldc, int64_t npan, const sg_rt *e,
                           int64_t i0, int64_t j0);
/* Micro-kernel: C[mr x nr] (+)= A panel (kc x MR, MR-strided) * B panel
 * (kc x NR, row k at pb + k * bsk: NR in a packed panel, ldb when B is read
 * in place); mr is fixed by the table entry, nr <= NR is masked at the store
 * (the kernel still reads NR columns of every row of B).  (i0, j0): position
 * of the tile in C, for the bias. */
typedef void (*sg_ukr_fn)(int64_t kc, const float *pa, const float *pb, int64_t bsk, float *c,
                          int64_t ldc, int nr, unsigned flags, const sg_rt *e, int64_t i0,
                          int64_t j0);
/* Narrow kernel: C[mr x n] for n (fixed by the entry) <= NRN columns, vector
 * over the MR rows of an A panel; B(k, j) = b[k * bsk + j * bsj] unpacked. */
typedef void (*sg_nkr_fn)(int64_t kc, const float *pa, const float *b, int64_t bsk, int64_t bsj,
                          float *c, int64_t ldc, int mr, unsigned flags, const sg_rt *e,
                          int64_t i0, int64_t j0);

#define SG_MAX_MR 14
#define SG_MAX_NRN 8

/* Up to this many columns (a whole narrow product, or the last panel of a
 * wide one) the narrow kernel, at MR/vector-width efficiency, beats the
 * micro-kernel at nr/NR. */
#define SG_NARROW_MAX(kn) (2 * (kn)->nrn)

/* out[r] = sum_k a[r * lda + k] * x[k] for r < R (1 <= R <= SG_DOT_ROWS). */
#define SG_DOT_ROWS 4
/* A template of SG_DOT_ROWS rows or fewer called with its row count a
 * constant. */
#define SG_BY_ROWS(T_, R_, ...)           \
  switch (R_) {                           \
  case 4: T_(4, __VA_ARGS__); break;      \
  case 3: T_(3, __VA_ARGS__); break;      \
  case 2: T_(2, __VA_ARGS__); break;      \
  default: T_(1, __VA_ARGS__); break;     \
  }
typedef void (*sg_dot_fn)(int R, const float *a, int64_t lda, const float *x, int64_t K,
                          float *out);
/* y[q] += sum_{r < R} x[r] * b[r * ldb + q] for q < n (1 <= R <= SG_DOT_ROWS). */
typedef void (*sg_axpy_fn)(int R, const float *b, int64_t ldb, const float *x, float *y,
                           int64_t n);

typedef struct sg_kern {
  int mr, nr, nrn;
  int64_t kc, mc, nc;     /* cache blocking: K slice, rows and columns of a tile */
  sg_ukr_fn ukr[SG_MAX_MR + 1];
  sg_ukr_fn hkr[SG_MAX_MR + 1];   /* first NR/2 columns of a panel only (NULL: none) */
  sg_nkr_fn nkr[SG_MAX_NRN + 1];
  sg_dot_fn dot;          /* rows of A against one vector (sg_gemv) */
  sg_axpy_fn axpy;        /* one row against rows of B (sg_gevm) */
  /* kc rows of one NR-column panel of B, ld apart, copied contiguous (NULL:
   * B read in place is never staged, sg_tile) */
  void (*stage)(float *dst, const float *src, int64_t ld, int64_t kc);
  /* mr rows against npan whole NR panels in one call, the single K slice
   * of a product with the lean epilogue (sg_rt.lean) (NULL: none) */
  sg_lean_fn lean[SG_MAX_MR + 1];
} sg_kern;

/* ---- packing ------------------------------------------------------------------- *
 * Panels of op(A): [panel][k][MR], rows past M zero.  Panels of op(B):
 * [panel][k][NR], columns past N zero.  `pstride` is the distance between
 * panels in floats: MR * kc in a workspace block; in a pre-packed A, K
 * block by K block (kc = the kernel's kc, the last one shorter), block k0
 * at k0 * round_up(M, MR) and in it panel p at p * MR * kc (nn_sgemm_pack_a);
 * in a pre-packed B, NR * K, slice k0 of panel p at p * NR * K + k0 * NR. */

static SG_ALWAYS_INLINE void sg_pack_a_t(const int MR, int transa, const float *A, int64_t lda,
                                         int64_t i0, int64_t mb, int64_t k0, int64_t kc,
                                         float *dst, int64_t pstride) {
  for (int64_t ip = 0; ip * MR < mb; ip++) {
    int64_t i = i0 + ip * MR;
    int mr = (int)sg_min(MR, mb - ip * MR);
    float *d = dst + ip * pstride;
    if (!transa) {
      /* rows are contiguous in k: read MR streams, write the panel k-major */
      for (int r = 0; r < mr; r++) {
        const float *src = A + (i + r) * lda + k0;
        for (int64_t k = 0; k < kc; k++)
          d[k * MR + r] = src[k];
      }
      for (int r = mr; r < MR; r++)
        for (int64_t k = 0; k < kc; k++)
          d[k * MR + r] = 0.0f;
    } else {
      for (int64_t k = 0; k < kc; k++) {
        const float *src = A + (k0 + k) * lda + i;
        float *dk = d + k * MR;
        int r = 0;
        for (; r < mr; r++)
          dk[r] = src[r];
        for (; r < MR; r++)
          dk[r] = 0.0f;
      }
    }
  }
}

#define SG_PF_ROWS 4

static SG_ALWAYS_INLINE void sg_pack_b_t(const int NR, int transb, const float *B, int64_t ldb,
                                         int64_t k0, int64_t kc, int64_t j0, int64_t nb,
                                         float *dst, int64_t pstride) {
  if (!transb) {
    /* k outer: each source row is read once, front to back, and scattered
     * over the panels (which sit in L2).  Walking one panel at a time instead
     * reads NR floats from each of kc rows far apart, which defeats the
     * hardware prefetcher: that cost a third of a small-M conv product. */
    int64_t nfull = nb / NR;
    int nr_last = (int)(nb - nfull * NR);
    for (int64_t k = 0; k < kc; k++) {
      const float *src = B + (k0 + k) * ldb + j0;
      float *d = dst + k * NR;
#if SG_X86
      /* rows are short runs far apart: the hardware prefetcher has no time
       * to lock on, so ask for the row SG_PF_ROWS ahead ourselves */
      if (k + SG_PF_ROWS < kc)
        for (int64_t q = 0; q < nb; q += 16)
          _mm_prefetch((const char *)(src + SG_PF_ROWS * ldb + q), _MM_HINT_T0);
#endif
      for (int64_t jp = 0; jp < nfull; jp++)
        memcpy(d + jp * pstride, src + jp * NR, sizeof(float) * NR);
      if (nr_last) {
        float *dl = d + nfull * pstride;
        const float *sl = src + nfull * NR;
        int q = 0;
        for (; q < nr_last; q++)
          dl[q] = sl[q];
        for (; q < NR; q++)
          dl[q] = 0.0f;
      }
    }
    return;
  }
  for (int64_t jp = 0; jp * NR < nb; jp++) {
    int64_t j = j0 + jp * NR;
    int nr = (int)sg_min(NR, nb - jp * NR);
    float *d = dst + jp * pstride;
    {
      /* columns of op(B) are contiguous in k: read nr streams */
      for (int q = 0; q < nr; q++) {
        const float *src = B + (j + q) * ldb + k0;
        for (int64_t k = 0; k < kc; k++)
          d[k * NR + q] = src[k];
      }
      for (int q = nr; q < NR; q++)
        for (int64_t k = 0; k < kc; k++)
          d[k * NR + q] = 0.0f;
    }
  }
}

#if SG_X86
/* An 8 x 8 block, transposed: rows src + q * ld (8 floats each) become
 * rows d + j * dstride. */
static SG_ALWAYS_INLINE SG256 void sg_tr8_copy(const float *src, int64_t ld, float *d,
                                               int64_t dstride) {
  __m256 r[8];
SG_UNROLL(8)
  for (int q = 0; q < 8; q++)
    r[q] = _mm256_loadu_ps(src + q * ld);
  sg_tr8(r);
SG_UNROLL(8)
  for (int j = 0; j < 8; j++)
    _mm256_storeu_ps(d + j * dstride, r[j]);
}

/* One full panel of a row-major A (MR = 14 or 6, the AVX-512 and AVX2
 * kernels' heights; only called on those paths): 8 k at a time, the rows
 * are loaded as vectors and transposed in registers.  The scalar copy
 * writes one float per store at a stride of MR floats and cost ~2 cycles
 * per float: a sixth of a ResNet-50 run, whose deep 1x1 convolutions have
 * few columns to amortize the packing of their weights over.
 * MR = 14: rows 0-7 and 6-13 as two 8-row blocks (rows 6 and 7 are
 * written twice, with the same values).  MR = 6: two zero rows pad the
 * block; each 8-float store spills 2 floats into the next k row, which the
 * next store overwrites, and the last one is split 4 + 2. */
static SG256 void sg_pack_a_panel_avx(const int MR, const float *A, int64_t lda, int64_t k0,
                                      int64_t kc, float *d) {
  int64_t k = 0;
  for (; k + 8 <= kc; k += 8) {
    __m256 r[8];
    const float *src = A + k0 + k;
    if (MR == 14) {
      /* the weights stream from memory in 14 rows at once, more streams
       * than the hardware prefetcher follows: ask for each row's line 4
       * lines ahead (measured: -5% on ResNet-50, whose weights do not fit
       * the caches) */
      if ((k & 15) == 0)
SG_UNROLL(14)
        for (int q = 0; q < 14; q++)
          _mm_prefetch((const char *)(src + q * lda + 64), _MM_HINT_T0);
      sg_tr8_copy(src, lda, d + k * 14, 14);
      sg_tr8_copy(src + 6 * lda, lda, d + k * 14 + 6, 14);
    } else {
      if ((k & 15) == 0)
SG_UNROLL(6)
        for (int q = 0; q < 6; q++)
          _mm_prefetch((const char *)(src + q * lda + 64), _MM_HINT_T0);
SG_UNROLL(6)
      for (int q = 0; q < 6; q++)
        r[q] = _mm256_loadu_ps(src + q * lda);
      r[6] = r[7] = _mm256_setzero_ps();
      sg_tr8(r);
SG_UNROLL(7)
      for (int j = 0; j < 7; j++)
        _mm256_storeu_ps(d + (k + j) * 6, r[j]);
      _mm_storeu_ps(d + (k + 7) * 6, _mm256_castps256_ps128(r[7]));
      _mm_storel_pi((__m64 *)(d + (k + 7) * 6 + 4), _mm256_extractf128_ps(r[7], 1));
    }
  }
  for (; k < kc; k++)
    for (int q = 0; q < MR; q++)
      d[k * MR + q] = A[q * lda + k0 + k];
}
#endif

/* MR / NR are compile-time constants in each instance, so the copies unroll. */
static void sg_pack_a(int MR, int transa, const float *A, int64_t lda, int64_t i0, int64_t mb,
                      int64_t k0, int64_t kc, float *dst, int64_t pstride) {
#if SG_X86
  if (!transa && (MR == 14 || MR == 6)) {
    /* full panels transposed in registers, a partial last one the plain way */
    int64_t full = mb / MR;
    for (int64_t ip = 0; ip < full; ip++)
      sg_pack_a_panel_avx(MR, A + (i0 + ip * MR) * lda, lda, k0, kc, dst + ip * pstride);
    if (mb > full * MR)
      sg_pack_a_t(MR, transa, A, lda, i0 + full * MR, mb - full * MR, k0, kc,
                  dst + full * pstride, pstride);
    return;
  }
#endif
  switch (MR) {
  case 4: sg_pack_a_t(4, transa, A, lda, i0, mb, k0, kc, dst, pstride); break;
  case 6: sg_pack_a_t(6, transa, A, lda, i0, mb, k0, kc, dst, pstride); break;
  case 14: sg_pack_a_t(14, transa, A, lda, i0, mb, k0, kc, dst, pstride); break;
  default: sg_pack_a_t(MR, transa, A, lda, i0, mb, k0, kc, dst, pstride); break;
  }
}

#if SG_X86
/* One full panel of a transposed B (NR = 32 or 16, the AVX-512 and AVX2
 * kernels' widths; only called on those paths): column q of op(B) is row
 * j + q of B, contiguous in k.  8 k at a time, each group of 8 rows is
 * loaded as vectors and transposed in registers; the scalar copy stored one
 * float at a time at a stride of NR floats.  (A fully connected layer's
 * weights, and the weights of a convolution computed transposed, come this
 * way.) */
static SG256 void sg_pack_bt_panel_avx(const int NR, const float *B, int64_t ldb, int64_t k0,
                                       int64_t kc, float *d) {
  int64_t k = 0;
  for (; k + 8 <= kc; k += 8) {
    const float *src = B + k0 + k;
    for (int q0 = 0; q0 < NR; q0 += 8)
      sg_tr8_copy(src + q0 * ldb, ldb, d + k * NR + q0, NR);
  }
  for (; k < kc; k++)
    for (int q = 0; q < NR; q++)
      d[k * NR + q] = B[q * ldb + k0 + k];
}
#endif

static void sg_pack_b(int NR, int transb, const float *B, int64_t ldb, int64_t k0, int64_t kc,
                      int64_t j0, int64_t nb, float *dst, int64_t pstride) {
#if SG_X86
  if (transb && (NR == 32 || NR == 16)) {
    /* full panels transposed in registers, a partial last one the plain way */
    int64_t full = nb / NR;
    for (int64_t jp = 0; jp < full; jp++)
      sg_pack_bt_panel_avx(NR, B + (j0 + jp * NR) * ldb, ldb, k0, kc, dst + jp * pstride);
    if (nb > full * NR)
      sg_pack_b_t(NR, transb, B, ldb, k0, kc, j0 + full * NR, nb - full * NR,
                  dst + full * pstride, pstride);
    return;
  }
#endif
  switch (NR) {
  case 8: sg_pack_b_t(8, transb, B, ldb, k0, kc, j0, nb, dst, pstride); break;
  case 16: sg_pack_b_t(16, transb, B, ldb, k0, kc, j0, nb, dst, pstride); break;
  case 32: sg_pack_b_t(32, transb, B, ldb, k0, kc, j0, nb, dst, pstride); break;
  default: sg_pack_b_t(NR, transb, B, ldb, k0, kc, j0, nb, dst, pstride); break;
  }
}

/* ---- portable kernels (4 x 8) -------------------------------------------------- *
 * Written so that a compiler with any 128-bit SIMD (SSE2, NEON) keeps the
 * 4 x 8 accumulators in registers: 8 vectors, 2 for the B row. */
#define SGP_MR 4
#define SGP_NR 8
#define SGP_NRN 2

static SG_ALWAYS_INLINE void sgp_ukr_t(const int MR, int64_t kc, const float *restrict pa,
                                       const float *restrict pb, int64_t bsk, float *restrict c,
                                       int64_t ldc, int nr, unsigned flags, const sg_rt *e,
                                       int64_t i0, int64_t j0) {
  float acc[SGP_MR][SGP_NR];
  for (int r = 0; r < MR; r++)
    for (int q = 0; q < SGP_NR; q++)
      acc[r][q] = 0.0f;
  for (int64_t k = 0; k < kc; k++) {
    const float *b = pb + k * bsk;
    for (int r = 0; r < MR; r++) {
      float a = pa[k * SGP_MR + r];
      for (int q = 0; q < SGP_NR; q++)
        acc[r][q] += a * b[q];
    }
  }
  for (int r = 0; r < MR; r++)
    for (int q = 0; q < nr; q++)
      sg_epi1(e, flags, acc[r][q], c + r * ldc + q, sg_bias_at(e, i0 + r, j0 + q));
}

#define SGP_UKR(M_)                                                                       \
  static void sgp_ukr_##M_(int64_t kc, const float *pa, const float *pb, int64_t bsk,     \
                           float *c, int64_t ldc, int nr, unsigned flags, const sg_rt *e, \
                           int64_t i0, int64_t j0) {                                      \
    sgp_ukr_t(M_, kc, pa, pb, bsk, c, ldc, nr, flags, e, i0, j0);                         \
  }
SGP_UKR(1)
SGP_UKR(2)
SGP_UKR(3)
SGP_UKR(4)

static SG_ALWAYS_INLINE void sgp_nkr_t(const int NN, int64_t kc, const float *restrict pa,
                                       const float *restrict b, int64_t bsk, int64_t bsj,
                                       float *restrict c, int64_t ldc, int mr, unsigned flags,
                                       const sg_rt *e, int64_t i0, int64_t j0) {
  float acc[SGP_NRN][SGP_MR];
  for (int j = 0; j < NN; j++)
    for (int r = 0; r < SGP_MR; r++)
      acc[j][r] = 0.0f;
  for (int64_t k = 0; k < kc; k++) {
    const float *a = pa + k * SGP_MR;
    for (int j = 0; j < NN; j++) {
      float bv = b[k * bsk + j * bsj];
      for (int r = 0; r < SGP_MR; r++)
        acc[j][r] += a[r] * bv;
    }
  }
  for (int j = 0; j < NN; j++)
    for (int r = 0; r < mr; r++)
      sg_epi1(e, flags, acc[j][r], c + r * ldc + j, sg_bias_at(e, i0 + r, j0 + j));
}

static void sgp_nkr_1(int64_t kc, const float *pa, const float *b, int64_t bsk, int64_t bsj,
                      float *c, int64_t ldc, int mr, unsigned flags, const sg_rt *e, int64_t i0,
                      int64_t j0) {
  sgp_nkr_t(1, kc, pa, b, bsk, bsj, c, ldc, mr, flags, e, i0, j0);
}
static void sgp_nkr_2(int64_t kc, const float *pa, const float *b, int64_t bsk, int64_t bsj,
                      float *c, int64_t ldc, int mr, unsigned flags, const sg_rt *e, int64_t i0,
                      int64_t j0) {
  sgp_nkr_t(2, kc, pa, b, bsk, bsj, c, ldc, mr, flags, e, i0, j0);
}

static void sgp_dot(int R, const float *a, int64_t lda, const float *x, int64_t K, float *out) {
  for (int r = 0; r < R; r++) {
    const float *ar = a + r * lda;
    float s0 = 0.0f, s1 = 0.0f, s2 = 0.0f, s3 = 0.0f;
    int64_t k = 0;
    for (; k + 4 <= K; k += 4) {
      s0 += ar[k] * x[k];
      s1 += ar[k + 1] * x[k + 1];
      s2 += ar[k + 2] * x[k + 2];
      s3 += ar[k + 3] * x[k + 3];
    }
    for (; k < K; k++)
      s0 += ar[k] * x[k];
    out[r] = (s0 + s1) + (s2 + s3);
  }
}

static void sgp_axpy(int R, const float *b, int64_t ldb, const float *x, float *y, int64_t n) {
  for (int r = 0; r < R; r++)
    for (int64_t q = 0; q < n; q++)
      y[q] += x[r] * b[r * ldb + q];
}

static const sg_kern sg_kern_portable = {
  .mr = SGP_MR, .nr = SGP_NR, .nrn = SGP_NRN,
  .kc = 256, .mc = 64, .nc = 512,
  .ukr = {NULL, sgp_ukr_1, sgp_ukr_2, sgp_ukr_3, sgp_ukr_4},
  .nkr = {NULL, sgp_nkr_1, sgp_nkr_2},
  .dot = sgp_dot,
  .axpy = sgp_axpy,
};

#if SG_X86
/* ---- AVX2 + FMA kernels (6 x 16) --------------------------------------------------
 * 12 accumulators + 2 B vectors + 1 broadcast = 15 of the 16 ymm registers. */
#define SG2_MR 6
/* The full-width kernels prefetch the A panel this many k-steps ahead,
 * about 3 KiB on both paths.  Pre-packed weights too large for the cache
 * (ResNet-50's 7x7 layers: 9 MiB per 3x3 conv, each weight used for only 49
 * columns) stream from DRAM through the first column panel's kernel; the
 * hardware prefetcher alone left it waiting: with this, ResNet-50's 3x3
 * convs at 7x7 went from 2.3 to 1.64 ms on AVX-512 and its stride-2 3x3 at
 * 28x28 from 4.6 to 3.3 ms on AVX2 (Zen 5, 1 thread).  The half-width and
 * narrow kernels run after it on the same panel, from L1. */
#define SG2_PF_K 128
#define SG2_NR 16
#define SG2_NRN 4

static SG_ALWAYS_INLINE SG256 __m256 sg2_load(const float *p, bool full, __m256i m) {
  return full ? _mm256_loadu_ps(p) : _mm256_maskload_ps(p, m);
}

/* Store the first `cnt` lanes (all 8 when full).  Partial stores go through
 * a stack copy: vmaskmovps stores are microcoded on AMD. */
static SG_ALWAYS_INLINE SG256 void sg2_store(float *p, __m256 v, bool full, int cnt) {
  if (full) {
    _mm256_storeu_ps(p, v);
    return;
  }
  float t[8];
  _mm256_storeu_ps(t, v);
  for (int q = 0; q < cnt; q++)
    p[q] = t[q];
}

/* HALF: the first 8 columns of the panel only (nr must be 8), as sg5_ukr_t. */
static SG_ALWAYS_INLINE SG256 void sg2_ukr_t(const int MR, const bool HALF, int64_t kc,
                                             const float *restrict pa,
                                             const float *restrict pb, int64_t bsk,
                                             float *restrict c, int64_t ldc, int nr,
                                             unsigned flags, const sg_rt *e, int64_t i0,
                                             int64_t j0) {
  __m256 c0[SG2_MR], c1[SG2_MR];
SG_UNROLL(6)
  for (int r = 0; r < MR; r++) {
    c0[r] = _mm256_setzero_ps();
    c1[r] = _mm256_setzero_ps();
    _mm_prefetch((const char *)(c + r * ldc), _MM_HINT_T0);
    if (!HALF)
      _mm_prefetch((const char *)(c + r * ldc + 15), _MM_HINT_T0);
  }
  for (int64_t k = 0; k < kc; k++) {
    __m256 b0 = _mm256_loadu_ps(pb), b1 = HALF ? b0 : _mm256_loadu_ps(pb + 8);
    if (!HALF)
      _mm_prefetch((const char *)(pa + SG2_MR * SG2_PF_K), _MM_HINT_T0);
SG_UNROLL(6)
    for (int r = 0; r < MR; r++) {
      __m256 a = _mm256_broadcast_ss(pa + r);
      c0[r] = _mm256_fmadd_ps(a, b0, c0[r]);
      if (!HALF)
        c1[r] = _mm256_fmadd_ps(a, b1, c1[r]);
    }
    pa += SG2_MR;
    pb += bsk;
  }
  const bool first = flags & SG_FIRST, last = flags & SG_LAST;
  if (first && last && e->lean && (HALF || nr == SG2_NR)) {
    /* the whole product in one K block (small K: 1x1 convs with few input
     * channels), the common epilogue: add, clamp, store.  The general one
     * below costs as much as a 24-deep loop on AVX2. */
    const int ck = e->clamp.kind;
    const __m256 lo = _mm256_set1_ps(e->clamp.lo), hi = _mm256_set1_ps(e->clamp.hi);
    const float *bias = e->bias_kind == NN_SGEMM_BIAS_ROW ? e->bias + i0 : NULL;
SG_UNROLL(6)
    for (int r = 0; r < MR; r++) {
      __m256 v0 = c0[r], v1 = c1[r];
      if (bias) {
        __m256 br = _mm256_broadcast_ss(bias + r);
        v0 = _mm256_add_ps(v0, br);
        v1 = _mm256_add_ps(v1, br);
      }
      if (e->res) {
        const float *rr = e->res + (i0 + r) * e->ldres + j0;
        v0 = _mm256_add_ps(v0, _mm256_loadu_ps(rr));
        if (!HALF)
          v1 = _mm256_add_ps(v1, _mm256_loadu_ps(rr + 8));
      }
      v0 = sg2_clamp(ck, v0, lo, hi);
      v1 = sg2_clamp(ck, v1, lo, hi);
      _mm256_storeu_ps(c + r * ldc, v0);
      if (!HALF)
        _mm256_storeu_ps(c + r * ldc + 8, v1);
    }
    return;
  }
  const __m256i iota = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  const bool full = HALF || nr == SG2_NR;
  const __m256i m0 = _mm256_cmpgt_epi32(_mm256_set1_epi32(nr), iota);
  const __m256i m1 = _mm256_cmpgt_epi32(_mm256_set1_epi32(nr - 8), iota);
  const __m256 va = _mm256_set1_ps(e->alpha), vb = _mm256_set1_ps(e->beta);
  const bool use_beta = e->beta != 0.0f;
  __m256 bc0 = _mm256_setzero_ps(), bc1 = _mm256_setzero_ps();
  if (last && e->bias_kind == NN_SGEMM_BIAS_COL) {
    bc0 = sg2_load(e->bias + j0, full, m0);
    if (!HALF)
      bc1 = sg2_load(e->bias + j0 + 8, full, m1);
  }
SG_UNROLL(6)
  for (int r = 0; r < MR; r++) {
    float *cr = c + r * ldc;
    __m256 v0 = _mm256_mul_ps(c0[r], va), v1 = _mm256_mul_ps(c1[r], va);
    if (!first) {
      v0 = _mm256_add_ps(v0, sg2_load(cr, full, m0));
      if (!HALF)
        v1 = _mm256_add_ps(v1, sg2_load(cr + 8, full, m1));
    } else if (use_beta) {
      v0 = _mm256_fmadd_ps(vb, sg2_load(cr, full, m0), v0);
      if (!HALF)
        v1 = _mm256_fmadd_ps(vb, sg2_load(cr + 8, full, m1), v1);
    }
    if (last) {
      if (e->bias_kind == NN_SGEMM_BIAS_ROW) {
        __m256 br = _mm256_set1_ps(e->bias[i0 + r]);
        v0 = _mm256_add_ps(v0, br);
        v1 = _mm256_add_ps(v1, br);
      } else if (e->bias_kind == NN_SGEMM_BIAS_COL) {
        v0 = _mm256_add_ps(v0, bc0);
        v1 = _mm256_add_ps(v1, bc1);
      }
      if (e->res) {
        const float *rr = e->res + (i0 + r) * e->ldres + j0;
        v0 = _mm256_add_ps(v0, sg2_load(rr, full, m0));
        if (!HALF)
          v1 = _mm256_add_ps(v1, sg2_load(rr + 8, full, m1));
      }
      v0 = sg2_act(&e->act, v0);
      v1 = sg2_act(&e->act, v1);
    }
    sg2_store(cr, v0, full, nr < 8 ? nr : 8);
    if (!HALF)
      sg2_store(cr + 8, v1, full, nr - 8);
  }
}

#define SG2_UKR(M_)                                                                       \
  static SG256 void sg2_ukr_##M_(int64_t kc, const float *pa, const float *pb, int64_t bsk, \
                                 float *c, int64_t ldc, int nr, unsigned flags,           \
                                 const sg_rt *e, int64_t i0, int64_t j0) {                \
    sg2_ukr_t(M_, false, kc, pa, pb, bsk, c, ldc, nr, flags, e, i0, j0);                  \
  }                                                                                       \
  static SG256 void sg2_hkr_##M_(int64_t kc, const float *pa, const float *pb, int64_t bsk, \
                                 float *c, int64_t ldc, int nr, unsigned flags,           \
                                 const sg_rt *e, int64_t i0, int64_t j0) {                \
    sg2_ukr_t(M_, true, kc, pa, pb, bsk, c, ldc, nr, flags, e, i0, j0);                   \
  }
SG2_UKR(1)
SG2_UKR(2)
SG2_UKR(3)
SG2_UKR(4)
SG2_UKR(5)
SG2_UKR(6)

/* The lean single-K-block case of sg2_ukr_t (first and last slice, alpha 1,
 * beta 0, no column bias) over npan whole NR panels of one MR-row panel, in one call:
 * with a short K (1x1 convs of 16-32 channels: 24 k-steps, about 150
 * cycles), the general kernel's entry and its epilogue's branches cost a
 * third as much again as the loop. */
static SG_ALWAYS_INLINE SG256 void sg2_lean_t(const int MR, int64_t kc, const float *pa,
                                               const float *bp, int64_t bstride, int64_t bsk,
                                               float *crow, int64_t ldc, int64_t npan,
                                               const sg_rt *e, int64_t i0, int64_t j0) {
  const int ck = e->clamp.kind;
  const __m256 lo = _mm256_set1_ps(e->clamp.lo), hi = _mm256_set1_ps(e->clamp.hi);
  const float *bias = e->bias_kind == NN_SGEMM_BIAS_ROW ? e->bias + i0 : NULL;
  const float *res = e->res ? e->res + i0 * e->ldres + j0 : NULL;
  __m256 br[SG2_MR];
SG_UNROLL(6)
  for (int r = 0; r < MR; r++)
    br[r] = bias ? _mm256_broadcast_ss(bias + r) : _mm256_setzero_ps();
  for (int64_t jp = 0; jp < npan; jp++) {
    float *c = crow + jp * SG2_NR;
    const float *pb = bp + jp * bstride, *a = pa;
    __m256 c0[SG2_MR], c1[SG2_MR];
SG_UNROLL(6)
    for (int r = 0; r < MR; r++)
      c0[r] = c1[r] = _mm256_setzero_ps();
    for (int64_t k = 0; k < kc; k++) {
      const __m256 b0 = _mm256_loadu_ps(pb), b1 = _mm256_loadu_ps(pb + 8);
      _mm_prefetch((const char *)(a + SG2_MR * SG2_PF_K), _MM_HINT_T0);
SG_UNROLL(6)
      for (int r = 0; r < MR; r++) {
        const __m256 av = _mm256_broadcast_ss(a + r);
        c0[r] = _mm256_fmadd_ps(av, b0, c0[r]);
        c1[r] = _mm256_fmadd_ps(av, b1, c1[r]);
      }
      a += SG2_MR;
      pb += bsk;
    }
SG_UNROLL(6)
    for (int r = 0; r < MR; r++) {
      __m256 v0 = _mm256_add_ps(c0[r], br[r]), v1 = _mm256_add_ps(c1[r], br[r]);
      if (res) {
        const float *rr = res + r * e->ldres + jp * SG2_NR;
        v0 = _mm256_add_ps(v0, _mm256_loadu_ps(rr));
        v1 = _mm256_add_ps(v1, _mm256_loadu_ps(rr + 8));
      }
      if (ck >= 0) {
        v0 = sg2_clamp(ck, v0, lo, hi);
        v1 = sg2_clamp(ck, v1, lo, hi);
      } else {   /* SiLU, sigmoid, GELU...: as the general kernel's epilogue */
        v0 = sg2_act(&e->act, v0);
        v1 = sg2_act(&e->act, v1);
      }
      _mm256_storeu_ps(c + r * ldc, v0);
      _mm256_storeu_ps(c + r * ldc + 8, v1);
    }
  }
}

#define SG2_LEAN(M_)                                                                        \
  static SG256 void sg2_lean_##M_(int64_t kc, const float *pa, const float *bp, int64_t bstride, \
                                  int64_t bsk, float *crow, int64_t ldc, int64_t npan,       \
                                  const sg_rt *e, int64_t i0, int64_t j0) {                  \
    sg2_lean_t(M_, kc, pa, bp, bstride, bsk, crow, ldc, npan, e, i0, j0);                    \
  }
SG2_LEAN(1)
SG2_LEAN(2)
SG2_LEAN(3)
SG2_LEAN(4)
SG2_LEAN(5)
SG2_LEAN(6)

/* Epilogue of one column of a narrow tile, kept in column form (lane r =
 * row r of C, at c + r * ldc).  Old values come in by masked gather and
 * results leave through a stack copy read back element by element: turning
 * the tile into rows through memory instead (scalar stores, vector loads)
 * stalls on store-to-load forwarding at every row. */
static SG_ALWAYS_INLINE SG256 void sg2_nepi_col(__m256 acc, __m256i ma, int mr, float *c,
                                                int64_t ldc, unsigned flags, const sg_rt *e,
                                                int64_t i0, int64_t j) {
  if (ldc > INT32_MAX / 8) {   /* gather offsets are 32-bit: the scalar way */
    float t[8];
    _mm256_storeu_ps(t, acc);
    for (int r = 0; r < mr; r++)
      sg_epi1(e, flags, t[r], c + r * ldc, sg_bias_at(e, i0 + r, j));
    return;
  }
  const bool first = flags & SG_FIRST;
  __m256 v = _mm256_mul_ps(acc, _mm256_set1_ps(e->alpha));
  if (!first || e->beta != 0.0f) {
    __m256i idx = _mm256_mullo_epi32(_mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7),
                                     _mm256_set1_epi32((int)ldc));
    __m256 old = _mm256_mask_i32gather_ps(_mm256_setzero_ps(), c, idx, _mm256_castsi256_ps(ma), 4);
    v = first ? _mm256_fmadd_ps(_mm256_set1_ps(e->beta), old, v) : _mm256_add_ps(v, old);
  }
  if (flags & SG_LAST) {
    if (e->bias_kind == NN_SGEMM_BIAS_ROW)
      v = _mm256_add_ps(v, _mm256_maskload_ps(e->bias + i0, ma));
    else if (e->bias_kind == NN_SGEMM_BIAS_COL)
      v = _mm256_add_ps(v, _mm256_set1_ps(e->bias[j]));
    if (e->res) {
      if (e->ldres > INT32_MAX / 8) {
        float t[8];
        _mm256_storeu_ps(t, v);
        for (int r = 0; r < mr; r++)
          t[r] += e->res[(i0 + r) * e->ldres + j];
        v = _mm256_loadu_ps(t);
      } else {
        __m256i ridx = _mm256_mullo_epi32(_mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7),
                                          _mm256_set1_epi32((int)e->ldres));
        v = _mm256_add_ps(v, _mm256_mask_i32gather_ps(_mm256_setzero_ps(),
                                                      e->res + i0 * e->ldres + j, ridx,
                                                      _mm256_castsi256_ps(ma), 4));
      }
    }
    v = sg2_act(&e->act, v);
  }
  float t[8];
  _mm256_storeu_ps(t, v);
  for (int r = 0; r < mr; r++)
    c[r * ldc] = t[r];
}

/* The narrow kernels' A is often a pre-packed weight read once per product
 * from memory (a 1x1 conv on a 1x1 map, convs on 7x7 maps), a single stream
 * the hardware prefetcher follows too closely: the panels are prefetched
 * this many bytes ahead.  ResNet-50's 2048 -> 1000 layer, when it ran here
 * on packed weights, took 0.33 instead of 0.14 ms without (22 against
 * 57 GB/s; Zen 5, 1 thread); batch-1 fully connected layers now read their
 * weights in place (sg_gemv). */
#define SG_NKR_PF 8192

/* Prefetch the A bytes [pa + SG_NKR_PF, ... + bytes): the ones U k-steps
 * will read that far ahead (no fault past the end of the operand). */
static SG_ALWAYS_INLINE void sg_nkr_prefetch(const float *pa, int bytes) {
  const char *q = (const char *)((uintptr_t)pa + SG_NKR_PF);
  for (int o = 0; o < bytes; o += 64)
    _mm_prefetch(q + o, _MM_HINT_T0);
}

/* Narrow kernel: vector over the 6 rows of an A panel (8 lanes, 6 used);
 * U independent k-chains hide the FMA latency when there are few columns. */
static SG_ALWAYS_INLINE SG256 void sg2_nkr_t(const int NN, const int U, int64_t kc,
                                             const float *restrict pa, const float *restrict b,
                                             int64_t bsk, int64_t bsj, float *restrict c,
                                             int64_t ldc, int mr, unsigned flags,
                                             const sg_rt *e, int64_t i0, int64_t j0) {
  const __m256i ma = _mm256_cmpgt_epi32(_mm256_set1_epi32(mr),
                                        _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
  __m256 acc[4][SG2_NRN];
SG_UNROLL(4)
  for (int u = 0; u < U; u++)
SG_UNROLL(4)
    for (int j = 0; j < NN; j++)
      acc[u][j] = _mm256_setzero_ps();
  /* U is a constant: with U == 1 the tail loop and the reduction vanish,
   * which also lets the compiler keep the accumulators in registers */
  const int64_t kmain = kc - kc % U;
  for (int64_t k = 0; k < kmain; k += U) {
    sg_nkr_prefetch(pa + k * SG2_MR, U * SG2_MR * (int)sizeof(float));
SG_UNROLL(4)
    for (int u = 0; u < U; u++) {
      __m256 a = _mm256_maskload_ps(pa + (k + u) * SG2_MR, ma);
      const float *bk = b + (k + u) * bsk;
SG_UNROLL(8)
      for (int j = 0; j < NN; j++)
        acc[u][j] = _mm256_fmadd_ps(a, _mm256_broadcast_ss(bk + j * bsj), acc[u][j]);
    }
  }
  if (U > 1) {
    for (int64_t k = kmain; k < kc; k++) {
      __m256 a = _mm256_maskload_ps(pa + k * SG2_MR, ma);
      const float *bk = b + k * bsk;
SG_UNROLL(8)
      for (int j = 0; j < NN; j++)
        acc[0][j] = _mm256_fmadd_ps(a, _mm256_broadcast_ss(bk + j * bsj), acc[0][j]);
    }
SG_UNROLL(4)
    for (int u = 1; u < U; u++)
SG_UNROLL(8)
      for (int j = 0; j < NN; j++)
        acc[0][j] = _mm256_add_ps(acc[0][j], acc[u][j]);
  }
  /* unrolled: a variable index would force the accumulators into memory */
SG_UNROLL(4)
  for (int j = 0; j < NN; j++)
    sg2_nepi_col(acc[0][j], ma, mr, c + j, ldc, flags, e, i0, j0 + j);
}

#define SG2_NKR(N_, U_)                                                                   \
  static SG256 void sg2_nkr_##N_(int64_t kc, const float *pa, const float *b, int64_t bsk, \
                                 int64_t bsj, float *c, int64_t ldc, int mr,              \
                                 unsigned flags, const sg_rt *e, int64_t i0, int64_t j0) { \
    sg2_nkr_t(N_, U_, kc, pa, b, bsk, bsj, c, ldc, mr, flags, e, i0, j0);                 \
  }
SG2_NKR(1, 4)
SG2_NKR(2, 2)
SG2_NKR(3, 2)
SG2_NKR(4, 1)

/* Rows of A streamed once each (a batch-1 fully connected layer's weights,
 * straight from memory): two accumulators a row for the FMA latency, x
 * from L1/L2, R row streams the prefetcher follows. */
static SG_ALWAYS_INLINE SG256 void sg2_dot_t(const int R, const float *a, int64_t lda,
                                             const float *x, int64_t K, float *out) {
  __m256 acc[SG_DOT_ROWS][2];
SG_UNROLL(4)
  for (int r = 0; r < R; r++)
    acc[r][0] = acc[r][1] = _mm256_setzero_ps();
  int64_t k = 0;
  for (; k + 16 <= K; k += 16) {
    __m256 x0 = _mm256_loadu_ps(x + k), x1 = _mm256_loadu_ps(x + k + 8);
SG_UNROLL(4)
    for (int r = 0; r < R; r++) {
      acc[r][0] = _mm256_fmadd_ps(_mm256_loadu_ps(a + r * lda + k), x0, acc[r][0]);
      acc[r][1] = _mm256_fmadd_ps(_mm256_loadu_ps(a + r * lda + k + 8), x1, acc[r][1]);
    }
  }
SG_UNROLL(4)
  for (int r = 0; r < R; r++) {
    __m256 v = _mm256_add_ps(acc[r][0], acc[r][1]);
    __m128 h = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    h = _mm_add_ps(h, _mm_movehl_ps(h, h));
    h = _mm_add_ss(h, _mm_movehdup_ps(h));
    float t = _mm_cvtss_f32(h);
    for (int64_t q = k; q < K; q++)
      t += a[r * lda + q] * x[q];
    out[r] = t;
  }
}

static SG256 void sg2_dot(int R, const float *a, int64_t lda, const float *x, int64_t K,
                          float *out) {
  SG_BY_ROWS(sg2_dot_t, R, a, lda, x, K, out)
}

static SG256 void sg2_stage(float *restrict dst, const float *restrict src, int64_t ld,
                            int64_t kc) {
  for (int64_t k = 0; k < kc; k++) {
    __m256 a = _mm256_loadu_ps(src + k * ld), b = _mm256_loadu_ps(src + k * ld + 8);
    _mm256_storeu_ps(dst + k * 16, a);
    _mm256_storeu_ps(dst + k * 16 + 8, b);
  }
}
static SG_ALWAYS_INLINE SG256 void sg2_axpy_t(const int R, const float *b, int64_t ldb,
                                              const float *x, float *y, int64_t n) {
  __m256 xv[SG_DOT_ROWS];
SG_UNROLL(4)
  for (int r = 0; r < R; r++)
    xv[r] = _mm256_set1_ps(x[r]);
  int64_t q = 0;
  for (; q + 16 <= n; q += 16) {
    __m256 y0 = _mm256_loadu_ps(y + q), y1 = _mm256_loadu_ps(y + q + 8);
SG_UNROLL(4)
    for (int r = 0; r < R; r++) {
      y0 = _mm256_fmadd_ps(xv[r], _mm256_loadu_ps(b + r * ldb + q), y0);
      y1 = _mm256_fmadd_ps(xv[r], _mm256_loadu_ps(b + r * ldb + q + 8), y1);
    }
    _mm256_storeu_ps(y + q, y0);
    _mm256_storeu_ps(y + q + 8, y1);
  }
  for (; q < n; q++) {
    float t = y[q];
    for (int r = 0; r < R; r++)
      t += x[r] * b[r * ldb + q];
    y[q] = t;
  }
}

static SG256 void sg2_axpy(int R, const float *b, int64_t ldb, const float *x, float *y,
                           int64_t n) {
  SG_BY_ROWS(sg2_axpy_t, R, b, ldb, x, y, n)
}

static const sg_kern sg_kern_avx2 = {
  .mr = SG2_MR, .nr = SG2_NR, .nrn = SG2_NRN,
  .kc = 256, .mc = 120, .nc = 512,
  .ukr = {NULL, sg2_ukr_1, sg2_ukr_2, sg2_ukr_3, sg2_ukr_4, sg2_ukr_5, sg2_ukr_6},
  .hkr = {NULL, sg2_hkr_1, sg2_hkr_2, sg2_hkr_3, sg2_hkr_4, sg2_hkr_5, sg2_hkr_6},
  .nkr = {NULL, sg2_nkr_1, sg2_nkr_2, sg2_nkr_3, sg2_nkr_4},
  .dot = sg2_dot,
  .stage = sg2_stage,
  .axpy = sg2_axpy,
  .lean = {NULL, sg2_lean_1, sg2_lean_2, sg2_lean_3, sg2_lean_4, sg2_lean_5, sg2_lean_6},
};

/* ---- AVX-512 kernels (14 x 32) -------------------------------------------------
 * 28 accumulators + 2 B vectors of the 32 zmm registers; A is broadcast
 * straight from memory into the FMA. */
#define SG5_MR 14
#define SG5_PF_K 56   /* see SG2_PF_K */
#define SG5_NR 32
#define SG5_NRN 8

/* HALF: only the first 16 columns of the panel (nr must be 16): the last
 * panel of a product whose width leaves 17..24 columns there (7x7 maps: 49 =
 * 32 + 17) runs this plus the narrow kernel instead of wasting up to half of
 * a full tile. */
static SG_ALWAYS_INLINE SG512 void sg5_ukr_t(const int MR, const bool HALF, int64_t kc,
                                             const float *restrict pa,
                                             const float *restrict pb, int64_t bsk,
                                             float *restrict c, int64_t ldc, int nr,
                                             unsigned flags, const sg_rt *e, int64_t i0,
                                             int64_t j0) {
  __m512 c0[SG5_MR], c1[SG5_MR];
SG_UNROLL(14)
  for (int r = 0; r < MR; r++) {
    c0[r] = _mm512_setzero_ps();
    c1[r] = _mm512_setzero_ps();
    _mm_prefetch((const char *)(c + r * ldc), _MM_HINT_T0);
    if (!HALF)
      _mm_prefetch((const char *)(c + r * ldc + 31), _MM_HINT_T0);
  }
  for (int64_t k = 0; k < kc; k++) {
    __m512 b0 = _mm512_loadu_ps(pb), b1 = HALF ? b0 : _mm512_loadu_ps(pb + 16);
    if (!HALF)
      _mm_prefetch((const char *)(pa + SG5_MR * SG5_PF_K), _MM_HINT_T0);
SG_UNROLL(14)
    for (int r = 0; r < MR; r++) {
      __m512 a = _mm512_set1_ps(pa[r]);
      c0[r] = _mm512_fmadd_ps(a, b0, c0[r]);
      if (!HALF)
        c1[r] = _mm512_fmadd_ps(a, b1, c1[r]);
    }
    pa += SG5_MR;
    pb += bsk;
  }
  const __mmask16 m0 = nr >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << nr) - 1);
  const __mmask16 m1 = HALF ? (__mmask16)0 : nr >= 32 ? (__mmask16)0xFFFF
                       : nr > 16 ? (__mmask16)((1u << (nr - 16)) - 1)
                                 : (__mmask16)0;
  const bool first = flags & SG_FIRST, last = flags & SG_LAST;
  if (first && last && e->lean) {
    /* as sg2_ukr_t's: add, clamp, store */
    const int ck = e->clamp.kind;
    const __m512 lo = _mm512_set1_ps(e->clamp.lo), hi = _mm512_set1_ps(e->clamp.hi);
    const float *bias = e->bias_kind == NN_SGEMM_BIAS_ROW ? e->bias + i0 : NULL;
SG_UNROLL(14)
    for (int r = 0; r < MR; r++) {
      __m512 v0 = c0[r], v1 = c1[r];
      if (bias) {
        __m512 br = _mm512_set1_ps(bias[r]);
        v0 = _mm512_add_ps(v0, br);
        v1 = _mm512_add_ps(v1, br);
      }
      if (e->res) {
        const float *rr = e->res + (i0 + r) * e->ldres + j0;
        v0 = _mm512_add_ps(v0, _mm512_maskz_loadu_ps(m0, rr));
        if (!HALF)
          v1 = _mm512_add_ps(v1, _mm512_maskz_loadu_ps(m1, rr + 16));
      }
      _mm512_mask_storeu_ps(c + r * ldc, m0, sg5_clamp(ck, v0, lo, hi));
      if (!HALF)
        _mm512_mask_storeu_ps(c + r * ldc + 16, m1, sg5_clamp(ck, v1, lo, hi));
    }
    return;
  }
  const __m512 va = _mm512_set1_ps(e->alpha), vb = _mm512_set1_ps(e->beta);
  const bool use_beta = e->beta != 0.0f;
  __m512 bc0 = _mm512_setzero_ps(), bc1 = _mm512_setzero_ps();
  if (last && e->bias_kind == NN_SGEMM_BIAS_COL) {
    bc0 = _mm512_maskz_loadu_ps(m0, e->bias + j0);
    bc1 = _mm512_maskz_loadu_ps(m1, e->bias + j0 + 16);
  }
SG_UNROLL(14)
  for (int r = 0; r < MR; r++) {
    float *cr = c + r * ldc;
    __m512 v0 = _mm512_mul_ps(c0[r], va), v1 = _mm512_mul_ps(c1[r], va);
    if (!first) {
      v0 = _mm512_add_ps(v0, _mm512_maskz_loadu_ps(m0, cr));
      if (!HALF)
        v1 = _mm512_add_ps(v1, _mm512_maskz_loadu_ps(m1, cr + 16));
    } else if (use_beta) {
      v0 = _mm512_fmadd_ps(vb, _mm512_maskz_loadu_ps(m0, cr), v0);
      if (!HALF)
        v1 = _mm512_fmadd_ps(vb, _mm512_maskz_loadu_ps(m1, cr + 16), v1);
    }
    if (last) {
      if (e->bias_kind == NN_SGEMM_BIAS_ROW) {
        __m512 br = _mm512_set1_ps(e->bias[i0 + r]);
        v0 = _mm512_add_ps(v0, br);
        v1 = _mm512_add_ps(v1, br);
      } else if (e->bias_kind == NN_SGEMM_BIAS_COL) {
        v0 = _mm512_add_ps(v0, bc0);
        v1 = _mm512_add_ps(v1, bc1);
      }
      if (e->res) {
        const float *rr = e->res + (i0 + r) * e->ldres + j0;
        v0 = _mm512_add_ps(v0, _mm512_maskz_loadu_ps(m0, rr));
        if (!HALF)
          v1 = _mm512_add_ps(v1, _mm512_maskz_loadu_ps(m1, rr + 16));
      }
      v0 = sg5_act(&e->act, v0);
      v1 = sg5_act(&e->act, v1);
    }
    _mm512_mask_storeu_ps(cr, m0, v0);
    if (!HALF)
      _mm512_mask_storeu_ps(cr + 16, m1, v1);
  }
}

#define SG5_UKR(M_)                                                                       \
  static SG512 void sg5_ukr_##M_(int64_t kc, const float *pa, const float *pb, int64_t bsk, \
                                 float *c, int64_t ldc, int nr, unsigned flags,           \
                                 const sg_rt *e, int64_t i0, int64_t j0) {                \
    sg5_ukr_t(M_, false, kc, pa, pb, bsk, c, ldc, nr, flags, e, i0, j0);                  \
  }                                                                                       \
  static SG512 void sg5_hkr_##M_(int64_t kc, const float *pa, const float *pb, int64_t bsk, \
                                 float *c, int64_t ldc, int nr, unsigned flags,           \
                                 const sg_rt *e, int64_t i0, int64_t j0) {                \
    sg5_ukr_t(M_, true, kc, pa, pb, bsk, c, ldc, nr, flags, e, i0, j0);                   \
  }
SG5_UKR(1)
SG5_UKR(2)
SG5_UKR(3)
SG5_UKR(4)
SG5_UKR(5)
SG5_UKR(6)
SG5_UKR(7)
SG5_UKR(8)
SG5_UKR(9)
SG5_UKR(10)
SG5_UKR(11)
SG5_UKR(12)
SG5_UKR(13)
SG5_UKR(14)

/* sg2_lean_t on AVX-512 (see there). */
static SG_ALWAYS_INLINE SG512 void sg5_lean_t(const int MR, int64_t kc, const float *pa,
                                               const float *bp, int64_t bstride, int64_t bsk,
                                               float *crow, int64_t ldc, int64_t npan,
                                               const sg_rt *e, int64_t i0, int64_t j0) {
  const int ck = e->clamp.kind;
  const __m512 lo = _mm512_set1_ps(e->clamp.lo), hi = _mm512_set1_ps(e->clamp.hi);
  const float *bias = e->bias_kind == NN_SGEMM_BIAS_ROW ? e->bias + i0 : NULL;
  const float *res = e->res ? e->res + i0 * e->ldres + j0 : NULL;
  for (int64_t jp = 0; jp < npan; jp++) {
    float *c = crow + jp * SG5_NR;
    const float *pb = bp + jp * bstride, *a = pa;
    __m512 c0[SG5_MR], c1[SG5_MR];
SG_UNROLL(14)
    for (int r = 0; r < MR; r++)
      c0[r] = c1[r] = _mm512_setzero_ps();
    for (int64_t k = 0; k < kc; k++) {
      const __m512 b0 = _mm512_loadu_ps(pb), b1 = _mm512_loadu_ps(pb + 16);
      _mm_prefetch((const char *)(a + SG5_MR * SG5_PF_K), _MM_HINT_T0);
SG_UNROLL(14)
      for (int r = 0; r < MR; r++) {
        const __m512 av = _mm512_set1_ps(a[r]);
        c0[r] = _mm512_fmadd_ps(av, b0, c0[r]);
        c1[r] = _mm512_fmadd_ps(av, b1, c1[r]);
      }
      a += SG5_MR;
      pb += bsk;
    }
SG_UNROLL(14)
    for (int r = 0; r < MR; r++) {
      __m512 v0 = c0[r], v1 = c1[r];
      if (bias) {
        const __m512 br = _mm512_set1_ps(bias[r]);
        v0 = _mm512_add_ps(v0, br);
        v1 = _mm512_add_ps(v1, br);
      }
      if (res) {
        const float *rr = res + r * e->ldres + jp * SG5_NR;
        v0 = _mm512_add_ps(v0, _mm512_loadu_ps(rr));
        v1 = _mm512_add_ps(v1, _mm512_loadu_ps(rr + 16));
      }
      if (ck >= 0) {
        v0 = sg5_clamp(ck, v0, lo, hi);
        v1 = sg5_clamp(ck, v1, lo, hi);
      } else {
        v0 = sg5_act(&e->act, v0);
        v1 = sg5_act(&e->act, v1);
      }
      _mm512_storeu_ps(c + r * ldc, v0);
      _mm512_storeu_ps(c + r * ldc + 16, v1);
    }
  }
}

#define SG5_LEAN(M_)                                                                        \
  static SG512 void sg5_lean_##M_(int64_t kc, const float *pa, const float *bp, int64_t bstride, \
                                  int64_t bsk, float *crow, int64_t ldc, int64_t npan,       \
                                  const sg_rt *e, int64_t i0, int64_t j0) {                  \
    sg5_lean_t(M_, kc, pa, bp, bstride, bsk, crow, ldc, npan, e, i0, j0);                    \
  }
SG5_LEAN(1)
SG5_LEAN(2)
SG5_LEAN(3)
SG5_LEAN(4)
SG5_LEAN(5)
SG5_LEAN(6)
SG5_LEAN(7)
SG5_LEAN(8)
SG5_LEAN(9)
SG5_LEAN(10)
SG5_LEAN(11)
SG5_LEAN(12)
SG5_LEAN(13)
SG5_LEAN(14)

/* As sg2_nepi_col, 16 lanes: masked gather in, masked scatter out. */
static SG_ALWAYS_INLINE SG512 void sg5_nepi_col(__m512 acc, __mmask16 ma, int mr, float *c,
                                                int64_t ldc, unsigned flags, const sg_rt *e,
                                                int64_t i0, int64_t j) {
  if (ldc > INT32_MAX / 16) {   /* gather offsets are 32-bit: the scalar way */
    float t[16];
    _mm512_storeu_ps(t, acc);
    for (int r = 0; r < mr; r++)
      sg_epi1(e, flags, t[r], c + r * ldc, sg_bias_at(e, i0 + r, j));
    return;
  }
  const bool first = flags & SG_FIRST;
  const __m512i idx = _mm512_mullo_epi32(
      _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15),
      _mm512_set1_epi32((int)ldc));
  __m512 v = _mm512_mul_ps(acc, _mm512_set1_ps(e->alpha));
  if (!first || e->beta != 0.0f) {
    __m512 old = _mm512_mask_i32gather_ps(_mm512_setzero_ps(), ma, idx, c, 4);
    v = first ? _mm512_fmadd_ps(_mm512_set1_ps(e->beta), old, v) : _mm512_add_ps(v, old);
  }
  if (flags & SG_LAST) {
    if (e->bias_kind == NN_SGEMM_BIAS_ROW)
      v = _mm512_add_ps(v, _mm512_maskz_loadu_ps(ma, e->bias + i0));
    else if (e->bias_kind == NN_SGEMM_BIAS_COL)
      v = _mm512_add_ps(v, _mm512_set1_ps(e->bias[j]));
    if (e->res) {
      if (e->ldres > INT32_MAX / 16) {
        float t[16];
        _mm512_storeu_ps(t, v);
        for (int r = 0; r < mr; r++)
          t[r] += e->res[(i0 + r) * e->ldres + j];
        v = _mm512_loadu_ps(t);
      } else {
        const __m512i ridx = _mm512_mullo_epi32(
            _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15),
            _mm512_set1_epi32((int)e->ldres));
        v = _mm512_add_ps(v, _mm512_mask_i32gather_ps(_mm512_setzero_ps(), ma, ridx,
                                                      e->res + i0 * e->ldres + j, 4));
      }
    }
    v = sg5_act(&e->act, v);
  }
  _mm512_mask_i32scatter_ps(c, ma, idx, v, 4);
}

static SG_ALWAYS_INLINE SG512 void sg5_nkr_t(const int NN, const int U, int64_t kc,
                                             const float *restrict pa, const float *restrict b,
                                             int64_t bsk, int64_t bsj, float *restrict c,
                                             int64_t ldc, int mr, unsigned flags,
                                             const sg_rt *e, int64_t i0, int64_t j0) {
  const __mmask16 ma = (__mmask16)((1u << mr) - 1);
  __m512 acc[4][SG5_NRN];
SG_UNROLL(4)
  for (int u = 0; u < U; u++)
SG_UNROLL(8)
    for (int j = 0; j < NN; j++)
      acc[u][j] = _mm512_setzero_ps();
  /* U is a constant: with U == 1 the tail loop and the reduction vanish,
   * which also lets the compiler keep the accumulators in registers */
  const int64_t kmain = kc - kc % U;
  for (int64_t k = 0; k < kmain; k += U) {
    sg_nkr_prefetch(pa + k * SG5_MR, U * SG5_MR * (int)sizeof(float));
SG_UNROLL(4)
    for (int u = 0; u < U; u++) {
      __m512 a = _mm512_maskz_loadu_ps(ma, pa + (k + u) * SG5_MR);
      const float *bk = b + (k + u) * bsk;
SG_UNROLL(8)
      for (int j = 0; j < NN; j++)
        acc[u][j] = _mm512_fmadd_ps(a, _mm512_set1_ps(bk[j * bsj]), acc[u][j]);
    }
  }
  if (U > 1) {
    for (int64_t k = kmain; k < kc; k++) {
      __m512 a = _mm512_maskz_loadu_ps(ma, pa + k * SG5_MR);
      const float *bk = b + k * bsk;
SG_UNROLL(8)
      for (int j = 0; j < NN; j++)
        acc[0][j] = _mm512_fmadd_ps(a, _mm512_set1_ps(bk[j * bsj]), acc[0][j]);
    }
SG_UNROLL(4)
    for (int u = 1; u < U; u++)
SG_UNROLL(8)
      for (int j = 0; j < NN; j++)
        acc[0][j] = _mm512_add_ps(acc[0][j], acc[u][j]);
  }
  /* unrolled: a variable index would force the accumulators into memory */
SG_UNROLL(8)
  for (int j = 0; j < NN; j++)
    sg5_nepi_col(acc[0][j], ma, mr, c + j, ldc, flags, e, i0, j0 + j);
}

#define SG5_NKR(N_, U_)                                                                   \
  static SG512 void sg5_nkr_##N_(int64_t kc, const float *pa, const float *b, int64_t bsk, \
                                 int64_t bsj, float *c, int64_t ldc, int mr,              \
                                 unsigned flags, const sg_rt *e, int64_t i0, int64_t j0) { \
    sg5_nkr_t(N_, U_, kc, pa, b, bsk, bsj, c, ldc, mr, flags, e, i0, j0);                 \
  }
SG5_NKR(1, 4)
SG5_NKR(2, 2)
SG5_NKR(3, 2)
SG5_NKR(4, 1)
SG5_NKR(5, 1)
SG5_NKR(6, 1)
SG5_NKR(7, 1)
SG5_NKR(8, 1)

static SG_ALWAYS_INLINE SG512 void sg5_dot_t(const int R, const float *a, int64_t lda,
                                             const float *x, int64_t K, float *out) {
  __m512 acc[SG_DOT_ROWS][2];
SG_UNROLL(4)
  for (int r = 0; r < R; r++)
    acc[r][0] = acc[r][1] = _mm512_setzero_ps();
  int64_t k = 0;
  for (; k + 32 <= K; k += 32) {
    __m512 x0 = _mm512_loadu_ps(x + k), x1 = _mm512_loadu_ps(x + k + 16);
SG_UNROLL(4)
    for (int r = 0; r < R; r++) {
      acc[r][0] = _mm512_fmadd_ps(_mm512_loadu_ps(a + r * lda + k), x0, acc[r][0]);
      acc[r][1] = _mm512_fmadd_ps(_mm512_loadu_ps(a + r * lda + k + 16), x1, acc[r][1]);
    }
  }
  for (; k < K; k += 16) {
    __mmask16 m = K - k >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << (K - k)) - 1u);
    __m512 x0 = _mm512_maskz_loadu_ps(m, x + k);
SG_UNROLL(4)
    for (int r = 0; r < R; r++)
      acc[r][0] = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(m, a + r * lda + k), x0, acc[r][0]);
  }
SG_UNROLL(4)
  for (int r = 0; r < R; r++)
    out[r] = _mm512_reduce_add_ps(_mm512_add_ps(acc[r][0], acc[r][1]));
}

static SG512 void sg5_dot(int R, const float *a, int64_t lda, const float *x, int64_t K,
                          float *out) {
  SG_BY_ROWS(sg5_dot_t, R, a, lda, x, K, out)
}

static SG_ALWAYS_INLINE SG512 void sg5_axpy_t(const int R, const float *b, int64_t ldb,
                                              const float *x, float *y, int64_t n) {
  __m512 xv[SG_DOT_ROWS];
SG_UNROLL(4)
  for (int r = 0; r < R; r++)
    xv[r] = _mm512_set1_ps(x[r]);
  int64_t q = 0;
  for (; q + 32 <= n; q += 32) {
    __m512 y0 = _mm512_loadu_ps(y + q), y1 = _mm512_loadu_ps(y + q + 16);
SG_UNROLL(4)
    for (int r = 0; r < R; r++) {
      y0 = _mm512_fmadd_ps(xv[r], _mm512_loadu_ps(b + r * ldb + q), y0);
      y1 = _mm512_fmadd_ps(xv[r], _mm512_loadu_ps(b + r * ldb + q + 16), y1);
    }
    _mm512_storeu_ps(y + q, y0);
    _mm512_storeu_ps(y + q + 16, y1);
  }
  for (; q < n; q += 16) {
    __mmask16 m = n - q >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << (n - q)) - 1u);
    __m512 y0 = _mm512_maskz_loadu_ps(m, y + q);
SG_UNROLL(4)
    for (int r = 0; r < R; r++)
      y0 = _mm512_fmadd_ps(xv[r], _mm512_maskz_loadu_ps(m, b + r * ldb + q), y0);
    _mm512_mask_storeu_ps(y + q, m, y0);
  }
}

static SG512 void sg5_axpy(int R, const float *b, int64_t ldb, const float *x, float *y,
                           int64_t n) {
  SG_BY_ROWS(sg5_axpy_t, R, b, ldb, x, y, n)
}

static const sg_kern sg_kern_avx512 = {
  .mr = SG5_MR, .nr = SG5_NR, .nrn = SG5_NRN,
  .kc = 256, .mc = 112, .nc = 512,
  .ukr = {NULL, sg5_ukr_1, sg5_ukr_2, sg5_ukr_3, sg5_ukr_4, sg5_ukr_5, sg5_ukr_6, sg5_ukr_7,
          sg5_ukr_8, sg5_ukr_9, sg5_ukr_10, sg5_ukr_11, sg5_ukr_12, sg5_ukr_13, sg5_ukr_14},
  .hkr = {NULL, sg5_hkr_1, sg5_hkr_2, sg5_hkr_3, sg5_hkr_4, sg5_hkr_5, sg5_hkr_6, sg5_hkr_7,
          sg5_hkr_8, sg5_hkr_9, sg5_hkr_10, sg5_hkr_11, sg5_hkr_12, sg5_hkr_13, sg5_hkr_14},
  .nkr = {NULL, sg5_nkr_1, sg5_nkr_2, sg5_nkr_3, sg5_nkr_4, sg5_nkr_5, sg5_nkr_6, sg5_nkr_7,
          sg5_nkr_8},
  .dot = sg5_dot,
  .axpy = sg5_axpy,
  .lean = {NULL, sg5_lean_1, sg5_lean_2, sg5_lean_3, sg5_lean_4, sg5_lean_5, sg5_lean_6,
           sg5_lean_7, sg5_lean_8, sg5_lean_9, sg5_lean_10, sg5_lean_11, sg5_lean_12,
           sg5_lean_13, sg5_lean_14},
};
#endif /* SG_X86 */

static const sg_kern *sg_kern_for(nn_cpu_isa isa) {
  switch (isa) {
#if SG_X86
  case NN_CPU_AVX2: return &sg_kern_avx2;
  case NN_CPU_AVX512: return &sg_kern_avx512;
#endif
  default: return &sg_kern_portable;
  }
}

/* ---- plan ------------------------------------------------------------------------ */

/* Distance between B panels packed in the workspace: one k-row more than
 * their size.  With kc * NR floats exactly (a power of two times 4 KiB), the
 * packer's stores to consecutive panels all fall in one L1 set and evict
 * each other; the extra row staggers them. */
static inline int64_t sg_b_pstride(int NR, int64_t kc) { return NR * (kc + 1); }

/* Below this many multiply-adds per participant, waking workers costs more
 * than it saves (a condition-variable wake-up is a few microseconds). */
#define SG_MIN_MACS_PER_THREAD ((int64_t)1 << 17)
#define SG_LINE 64

typedef struct sg_plan {
  int64_t kc, mb, nb, ntm, ntn;
  int64_t P, Q;                /* panels of rows (MR) and of columns (NR; 1 narrow) */
  bool narrow;
  bool direct_b;               /* B read in place by the micro-kernel, not packed */
  size_t a_floats, b_floats;   /* workspace per slot */
  size_t slot_bytes;
  int threads;                 /* participants worth using */
} sg_plan;

/* How op(B) reaches the kernels. */
typedef enum sg_bsrc {
  SG_B_RAW = 0,    /* packed per tile from a strided matrix (narrow: read in place) */
  SG_B_PACKED,     /* pre-packed by nn_sgemm_pack_b */
  SG_B_FN,         /* packed per tile by the caller's nn_sgemm_pack_fn */
} sg_bsrc;

static void sg_plan_make(const sg_kern *kn, int64_t M, int64_t N, int64_t K, int threads,
                         bool a_packed, sg_bsrc bsrc, sg_plan *p) {
  bool b_packed = bsrc == SG_B_PACKED;
  memset(p, 0, sizeof *p);
  p->kc = sg_min(K, kn->kc);
  /* a pre-packed B is one NR panel when N is narrow: read it in place */
  p->narrow = N <= SG_NARROW_MAX(kn);
  p->mb = sg_min(sg_round_up(M, kn->mr), kn->mc);
  p->nb = p->narrow ? N : sg_min(sg_round_up(N, kn->nr), kn->nc);
  p->ntm = sg_ceil_div(M, p->mb);
  p->ntn = sg_ceil_div(N, p->nb);
  int64_t macs;
  if (__builtin_mul_overflow(M, N, &macs) || __builtin_mul_overflow(macs, K, &macs))
    macs = INT64_MAX;   /* absurdly large: as many threads as there are */
  int64_t t = threads < 1 ? 1 : threads;
  int64_t useful = macs / SG_MIN_MACS_PER_THREAD;
  if (t > useful)
    t = useful < 1 ? 1 : useful;
  /* which cut costs less traffic (below) */
  const int64_t cost_n = M * (a_packed ? 1 : 2), cost_m = N * (b_packed ? 1 : 2);
  const bool prefer_n = cost_n <= cost_m;
  if (t > 1) {
    /* two tiles per participant: each takes its own block of tiles first and
     * steals from the other's (nn_block), so a busy core is still balanced,
     * and every cut costs traffic: four per participant made the small
     * products (7x7 and 14x14 maps) read their B block twice as often, and
     * ResNet-50 ran at 36 ms on 2 threads against 31 with two (Zen 5).  Cut the
     * side that costs the least memory traffic: one more column cut reads
     * (and, unpacked, packs) all of A once more, one more row cut all of B.
     * Cutting columns whenever A was pre-packed read ResNet-50's 7x7 layers'
     * 9 MiB of weights twice, from DRAM: 2 threads ran them 1.08x faster
     * than one (Zen 5) */
    while (p->ntm * p->ntn < 2 * t) {
      int64_t pm = p->mb / kn->mr, pn = p->narrow ? 0 : p->nb / kn->nr;
      if (prefer_n && pn >= 2)
        p->nb = sg_ceil_div(pn, 2) * kn->nr;
      else if (pm >= 2)
        p->mb = sg_ceil_div(pm, 2) * kn->mr;
      else if (pn >= 2)
        p->nb = sg_ceil_div(pn, 2) * kn->nr;
      else
        break;
      p->ntm = sg_ceil_div(M, p->mb);
      p->ntn = sg_ceil_div(N, p->nb);
    }
  }
  /* Tiles of even size, in whole panels (sg_tile spreads the P row panels
   * and Q column panels over them): 128 rows were 112 + 16, and the last
   * worker to take a large tile held the others up.  And a multiple of the
   * participants of them: ResNet-50's 3x3 convs at 7x7 (512 rows) made 5
   * tiles, of which one core took 3 and the other 2; with 6, ResNet-50 ran
   * 5% faster on 2 threads, SqueezeNet 2.5% (Zen 5). */
  p->P = sg_ceil_div(M, kn->mr);
  p->Q = p->narrow ? 1 : sg_ceil_div(N, kn->nr);
  /* rounded up on the side that is cheaper to cut, as above: rounding the
   * row tiles first split a 24-row product with its B made per block by a
   * depthwise packer (MobileNetV2's 144 -> 24 at 56x56, 7 column blocks)
   * into 2 x 7 tiles, each block's depthwise computed twice: 2 threads ran
   * it no faster than one */
  if (t > 1 && (p->ntm * p->ntn) % t != 0) {
    const bool m_ok = sg_round_up(p->ntm, t) <= p->P, n_ok = sg_round_up(p->ntn, t) <= p->Q;
    if (m_ok && !(prefer_n && n_ok))
      p->ntm = sg_round_up(p->ntm, t);
    else if (n_ok)
      p->ntn = sg_round_up(p->ntn, t);
  }
  p->ntm = sg_min(p->ntm, p->P);
  p->ntn = sg_min(p->ntn, p->Q);
  p->mb = sg_ceil_div(p->P, p->ntm) * kn->mr;   /* the largest tile */
  if (!p->narrow)
    p->nb = sg_ceil_div(p->Q, p->ntn) * kn->nr;
  int64_t tiles = p->ntm * p->ntn;
  p->threads = (int)sg_min(t, tiles);
  p->a_floats = a_packed ? 0 : (size_t)(p->mb * p->kc);
  /* a narrow B is read in place, unless only the caller's packer can read it */
  if (b_packed || (p->narrow && bsrc == SG_B_RAW))
    p->b_floats = 0;
  else
    p->b_floats = (size_t)(sg_b_pstride(kn->nr, p->kc) * sg_ceil_div(p->nb, kn->nr));
  p->slot_bytes = nn_align_up(p->a_floats * sizeof(float), SG_LINE) +
                  nn_align_up(p->b_floats * sizeof(float), SG_LINE);
}

bool nn_sgemm_epi_from_act(const nn_act *a, nn_sgemm_epi *e) {
  memset(e, 0, sizeof *e);
  e->act = NN_SGEMM_ACT_NONE;
  e->alpha = 0.01f;
  e->lo = -INFINITY;
  e->hi = INFINITY;
  switch (a->kind) {
  case NN_ACT_NONE: return true;
  case NN_ACT_RELU: e->act = NN_SGEMM_ACT_RELU; return true;
  case NN_ACT_CLIP:
    e->act = NN_SGEMM_ACT_CLIP;
    e->lo = a->a;
    e->hi = a->b;
    return true;
  case NN_ACT_LEAKY_RELU:
    e->act = NN_SGEMM_ACT_LEAKY;
    e->alpha = a->a;
    return true;
  case NN_ACT_HARD_SWISH: e->act = NN_SGEMM_ACT_HSWISH; return true;
  case NN_ACT_SIGMOID: e->act = NN_SGEMM_ACT_SIGMOID; return true;
  case NN_ACT_SILU: e->act = NN_SGEMM_ACT_SILU; return true;
  case NN_ACT_GELU: e->act = NN_SGEMM_ACT_GELU; return true;
  default: return false;
  }
}

size_t nn_sgemm_workspace(int64_t M, int64_t N, int64_t K, int threads) {
  if (M <= 0 || N <= 0 || K <= 0)
    return 0;
  if (threads < 1)
    threads = 1;
  size_t best = 0;
  for (int i = 0; i < NN_CPU_ISA_COUNT; i++) {
    const sg_kern *kn = sg_kern_for((nn_cpu_isa)i);
    /* The unsplit (1-thread) tile is the largest a slot ever needs, and a
     * size made here must also cover every smaller product (callers run the
     * last band or tile of a planned size short): tiles are even, so a
     * smaller N can make a larger tile (672 columns split 352 + 320 on
     * AVX-512; 448 make one of 448).  A product of one whole row tile and
     * one whole column block is the largest tile any M' <= M, N' <= N makes. */
    const int64_t Mt = sg_min(sg_round_up(M, kn->mr), kn->mc);
    const int64_t Nt = sg_min(sg_round_up(N, kn->nr), kn->nc);
    for (int b = SG_B_RAW; b <= SG_B_FN; b += SG_B_FN) {
      sg_plan p, q;
      sg_plan_make(kn, M, N, K, 1, false, (sg_bsrc)b, &p);
      sg_plan_make(kn, Mt, Nt, K, 1, false, (sg_bsrc)b, &q);
      best = sg_max(best, sg_max(p.slot_bytes, q.slot_bytes));
    }
  }
  if (best == 0)
    return 0;
  return best * (size_t)threads + SG_LINE;   /* + room to align the base */
}

/* ---- pre-packed operands ------------------------------------------------------------ */

#define SG_MAGIC_A 0x41504753u   /* "SGPA" */
#define SG_MAGIC_B 0x42504753u   /* "SGPB" */

typedef struct sg_hdr {
  uint32_t magic;
  uint32_t isa;
  int64_t rows;     /* M for A, N for B */
  int64_t K;
  int64_t data_off; /* bytes from the start of the block to the panels */
} sg_hdr;

static size_t sg_pack_size(int64_t rows, int64_t K, bool is_a) {
  if (rows < 0 || K < 0)
    return 0;
  size_t best = 0;
  for (int i = 0; i < NN_CPU_ISA_COUNT; i++) {
    const sg_kern *kn = sg_kern_for((nn_cpu_isa)i);
    size_t f = (size_t)(sg_round_up(rows, is_a ? kn->mr : kn->nr) * K);
    if (f > best)
      best = f;
  }
  return sizeof(sg_hdr) + SG_LINE + best * sizeof(float);
}

size_t nn_sgemm_pack_a_size(int64_t M, int64_t K) { return sg_pack_size(M, K, true); }
size_t nn_sgemm_pack_b_size(int64_t K, int64_t N) { return sg_pack_size(N, K, false); }

/* Panels start at the first cache line after the header, whatever the
 * block's own alignment; the offset is stored so a moved copy still reads. */
static float *sg_pack_begin(void *dst, uint32_t magic, nn_cpu_isa isa, int64_t rows, int64_t K) {
  uintptr_t base = (uintptr_t)dst;
  uintptr_t data = (base + sizeof(sg_hdr) + SG_LINE - 1) & ~(uintptr_t)(SG_LINE - 1);
  sg_hdr h = {magic, (uint32_t)isa, rows, K, (int64_t)(data - base)};
  memcpy(dst, &h, sizeof h);
  return (float *)data;
}

void nn_sgemm_pack_a(int transa, int64_t M, int64_t K, const float *A, int64_t lda, void *dst) {
  nn_cpu_isa isa = nn_cpu_isa_get();
  const sg_kern *kn = sg_kern_for(isa);
  float *d = sg_pack_begin(dst, SG_MAGIC_A, isa, M, K);
  if (M <= 0 || K <= 0)
    return;
  /* K block by K block (sg_pa_block): a tile's panels of one block are one
   * contiguous run of memory, so the weights stream in the order the
   * kernels read them */
  const int64_t mpad = sg_round_up(M, kn->mr);
  for (int64_t k0 = 0; k0 < K; k0 += kn->kc) {
    int64_t kcb = sg_min(kn->kc, K - k0);
    sg_pack_a(kn->mr, transa, A, lda, 0, M, k0, kcb, d + k0 * mpad, kn->mr * kcb);
  }
}

void nn_sgemm_pack_b(int transb, int64_t K, int64_t N, const float *B, int64_t ldb, void *dst) {
  nn_cpu_isa isa = nn_cpu_isa_get();
  const sg_kern *kn = sg_kern_for(isa);
  float *d = sg_pack_begin(dst, SG_MAGIC_B, isa, N, K);
  if (N > 0 && K > 0)
    sg_pack_b(kn->nr, transb, B, ldb, 0, K, 0, N, d, kn->nr * K);
}

typedef struct sg_packfn_job {
  nn_sgemm_pack_fn fn;
  void *user;
  float *d;
  int64_t K, N, k_unit;
  int nr;
} sg_packfn_job;

/* Row groups [u0, u1) of k_unit rows each, across every panel. */
static void sg_packfn_range(void *arg, int64_t u0, int64_t u1) {
  const sg_packfn_job *j = arg;
  int64_t k0 = u0 * j->k_unit, k1 = sg_min(j->K, u1 * j->k_unit);
  j->fn(j->user, k0, k1 - k0, 0, j->N, j->nr, j->d + k0 * j->nr, j->nr * j->K);
}

void nn_sgemm_pack_b_fn(nn_ctx *c, int64_t K, int64_t N, int64_t k_unit, nn_sgemm_pack_fn pack_b,
                        void *user, void *dst) {
  nn_cpu_isa isa = nn_cpu_isa_get();
  const sg_kern *kn = sg_kern_for(isa);
  float *d = sg_pack_begin(dst, SG_MAGIC_B, isa, N, K);
  if (N <= 0 || K <= 0)
    return;
  if (k_unit < 1 || k_unit > K)
    k_unit = K;
  sg_packfn_job j = {pack_b, user, d, K, N, k_unit, kn->nr};
  /* The workers split the rows, not the panels: one panel per call (7 panels
   * for 2 threads) gave each call 32 columns, too few for the small-map
   * im2col to copy its input planes, and its run-by-run gather took 5.5x the
   * CPU time of one thread on ResNet-50's 3x3 stride-2 conv at 14x14 (Zen 5);
   * split by channels, each plane is copied once, by one worker.  That conv
   * ran 15% faster on 2 threads, ResNet-50 2% and Inception-v2 2.7%. */
  int64_t unit = k_unit * sg_round_up(N, kn->nr);
  int64_t grain = unit >= (1 << 14) ? 1 : ((1 << 14) + unit - 1) / unit;
  nn_parallel_for(c, sg_ceil_div(K, k_unit), grain, sg_packfn_range, &j);
}

/* Validate a packed block; returns its panels and path, NULL when it is not
 * a block of this kind and shape. */
static const float *sg_pack_open(const void *src, uint32_t magic, int64_t rows, int64_t K,
                                 nn_cpu_isa *isa) {
  if (!src)
    return NULL;
  sg_hdr h;
  memcpy(&h, src, sizeof h);
  if (h.magic != magic || h.rows != rows || h.K != K || h.isa >= NN_CPU_ISA_COUNT ||
      !nn_cpu_isa_supported((nn_cpu_isa)h.isa))
    return NULL;
  *isa = (nn_cpu_isa)h.isa;
  return (const float *)((const char *)src + h.data_off);
}

nn_status nn_sgemm_unpack_a(const void *src, int64_t M, int64_t K, float *A) {
  nn_cpu_isa isa;
  const float *d = sg_pack_open(src, SG_MAGIC_A, M, K, &isa);
  if (!d)
    return NN_ERR_INVALID_ARG;
  const sg_kern *kn = sg_kern_for(isa);
  const int64_t MR = kn->mr, mpad = sg_round_up(M, MR);
  /* row i, column k: block k0 = k - k % kc of kcb columns starts at
   * d[k0 * mpad]; in it, panel i / MR at (i / MR) * MR * kcb, then k - k0
   * rows of MR */
  for (int64_t k0 = 0; k0 < K; k0 += kn->kc) {
    int64_t kcb = sg_min(kn->kc, K - k0);
    const float *blk = d + k0 * mpad;
    for (int64_t i = 0; i < M; i++) {
      const float *panel = blk + (i / MR) * MR * kcb + i % MR;
      for (int64_t k = 0; k < kcb; k++)
        A[i * K + k0 + k] = panel[k * MR];
    }
  }
  return NN_OK;
}

/* ---- driver ------------------------------------------------------------------------ */

/* Claiming blocks of an sg_job (on the stack): participants past this many
 * share blocks. */
#define SG_MAX_BLOCKS 16

typedef struct sg_job {
  const sg_kern *kn;
  sg_plan pl;
  sg_rt rt;
  int64_t M, N, K;
  const float *A, *pa;   /* pa: pre-packed panels, else A raw */
  const float *B, *pb;
  nn_sgemm_pack_fn pack_b;   /* caller's packer, or NULL */
  void *pack_user;
  int64_t lda, ldb, ldc;
  int transa, transb;
  float *C;
  char *ws;
  int64_t ntiles;
  /* tiles in one contiguous block per participant (threadpool.h): a tile
   * index runs over M fastest, so a block is a range of columns, and the
   * same participant takes the same columns of consecutive products (a
   * 1x1 Conv then reads the part of its input its own core wrote) */
  int nblk;
  nn_block blk[SG_MAX_BLOCKS];
  bool b_stage;          /* direct B copied a column panel at a time (sg_tile) */
  int64_t gevm_cols;     /* sg_gevm: columns of C per task */
} sg_job;

/* One MR-row panel of A against the NR-column panels of a B block: the
 * products of rows [i, i + mr) and columns [j0, j0 + ncur) over one K block.
 * Panel jp of the block starts at bp + jp * bstride, its row k bsk floats
 * after row k - 1.  raw: B is read in place, so a last panel narrower than
 * NR must not be read NR wide (past the end of B). */
static void sg_panel_row(const sg_job *j, int mr, int64_t kc, const float *a, const float *bp,
                         int64_t bstride, int64_t bsk, bool raw, float *crow, int64_t ncur,
                         unsigned flags, int64_t i, int64_t j0) {
  const sg_kern *kn = j->kn;
  const int NR = kn->nr;
  sg_ukr_fn ukr = kn->ukr[mr];
  int64_t jp = 0;
  if (kn->lean[mr] && j->rt.lean_act && flags == (SG_FIRST | SG_LAST) && kc <= SG_LEAN_MAX_K &&
      ncur >= NR) {
    jp = ncur / NR;
    kn->lean[mr](kc, a, bp, bstride, bsk, crow, j->ldc, jp, &j->rt, i, j0);
  }
  for (; jp * NR < ncur; jp++) {
    int nr = (int)sg_min(NR, ncur - jp * NR);
    const float *b = bp + jp * bstride;
    int q = 0;
    /* the full-width kernel for a whole panel, and for a packed last one
     * (zero past N) too wide for the half-width kernel and a narrow one */
    bool whole = nr == NR || (!raw && (nr > NR / 2 + kn->nrn ||
                                       (nr > SG_NARROW_MAX(kn) && !kn->hkr[mr])));
    if (whole) {
      ukr(kc, a, b, bsk, crow + jp * NR, j->ldc, nr, flags, &j->rt, i, j0 + jp * NR);
      continue;
    }
    if (nr > SG_NARROW_MAX(kn) && nr >= NR / 2 && kn->hkr[mr]) {
      /* a last panel just past half width (7x7 maps: 49 = 32 + 17), or
       * any narrower than NR read in place: the half-width kernel, then the
       * narrow one for the rest */
      kn->hkr[mr](kc, a, b, bsk, crow + jp * NR, j->ldc, NR / 2, flags, &j->rt, i, j0 + jp * NR);
      q = NR / 2;
    }
    /* a thin last panel: the narrow kernel reads the panel in place instead
     * of wasting most of NR lanes */
    for (; q < nr; q += kn->nrn) {
      int n = nr - q < kn->nrn ? nr - q : kn->nrn;
      kn->nkr[n](kc, a, b + q, bsk, 1, crow + jp * NR + q, j->ldc, mr, flags, &j->rt, i,
                 j0 + jp * NR + q);
    }
  }
}

static void sg_tile(const sg_job *j, int64_t t, float *wa, float *wb) {
  const sg_kern *kn = j->kn;
  const sg_plan *pl = &j->pl;
  const int MR = kn->mr, NR = kn->nr;
  int64_t tm = t % pl->ntm, tn = t / pl->ntm;
  /* tile tm of ntm spans panels [tm * P / ntm, (tm + 1) * P / ntm) */
  int64_t i0 = tm * pl->P / pl->ntm * MR, j0 = pl->narrow ? 0 : tn * pl->Q / pl->ntn * NR;
  int64_t mcur = sg_min((tm + 1) * pl->P / pl->ntm * MR, j->M) - i0;
  int64_t ncur = pl->narrow ? j->N : sg_min((tn + 1) * pl->Q / pl->ntn * NR, j->N) - j0;
  int64_t K = j->K;
  for (int64_t k0 = 0; k0 < K; k0 += pl->kc) {
    int64_t kc = sg_min(pl->kc, K - k0);
    unsigned flags = (k0 == 0 ? SG_FIRST : 0u) | (k0 + kc == K ? SG_LAST : 0u);
    const float *ap;
    int64_t astride;
    if (j->pa) {
      ap = j->pa + k0 * sg_round_up(j->M, MR) + (i0 / MR) * MR * kc;
      astride = MR * kc;
    } else {
      sg_pack_a(MR, j->transa, j->A, j->lda, i0, mcur, k0, kc, wa, MR * kc);
      ap = wa;
      astride = MR * kc;
    }
    float *c0 = j->C + i0 * j->ldc + j0;
    if (pl->narrow) {
      /* B read in place: raw, or the single panel of a packed B */
      const float *b;
      int64_t bsk, bsj;
      if (j->pb) {
        b = j->pb + k0 * NR + j0;
        bsk = NR;
        bsj = 1;
      } else if (j->pack_b) {
        j->pack_b(j->pack_user, k0, kc, j0, ncur, NR, wb, sg_b_pstride(NR, kc));
        b = wb;
        bsk = NR;
        bsj = 1;
      } else if (!j->transb) {
        b = j->B + k0 * j->ldb + j0;
        bsk = j->ldb;
        bsj = 1;
      } else {
        b = j->B + j0 * j->ldb + k0;
        bsk = 1;
        bsj = j->ldb;
      }
      for (int64_t ip = 0; ip * MR < mcur; ip++) {
        int mr = (int)sg_min(MR, mcur - ip * MR);
        for (int64_t q = 0; q < ncur; q += kn->nrn) {
          int n = (int)sg_min(kn->nrn, ncur - q);
          kn->nkr[n](kc, ap + ip * astride, b + q * bsj, bsk, bsj, c0 + ip * MR * j->ldc + q,
                     j->ldc, mr, flags, &j->rt, i0 + ip * MR, j0 + q);
        }
      }
      continue;
    }
    const float *bp;
    int64_t bstride, bsk = NR;
    bool raw = false;
    if (j->pb) {
      bp = j->pb + (j0 / NR) * NR * K + k0 * NR;
      bstride = NR * K;
    } else if (j->b_stage) {
      /* B read in place with its kc rows in too few L1 sets (sg_b_conflicts):
       * each whole column panel is copied to the workspace once, then all
       * the row panels run over the copy; a last narrower panel is read in
       * place */
      for (int64_t jp = 0; jp * NR < ncur; jp++) {
        int nr = (int)sg_min(NR, ncur - jp * NR);
        const float *b = j->B + k0 * j->ldb + j0 + jp * NR;
        int64_t ldp = j->ldb;   /* the panel's row stride */
        if (nr == NR) {
          kn->stage(wb, b, j->ldb, kc);
          b = wb;
          ldp = NR;
        }
        for (int64_t ip = 0; ip * MR < mcur; ip++)
          sg_panel_row(j, (int)sg_min(MR, mcur - ip * MR), kc, ap + ip * astride, b, NR, ldp,
                       nr < NR, c0 + ip * MR * j->ldc + jp * NR, nr, flags, i0 + ip * MR,
                       j0 + jp * NR);
      }
      continue;
    } else if (pl->direct_b) {
      bp = j->B + k0 * j->ldb + j0;
      bstride = NR;
      bsk = j->ldb;
      raw = true;
    } else if (j->pack_b) {
      bstride = sg_b_pstride(NR, kc);
      j->pack_b(j->pack_user, k0, kc, j0, ncur, NR, wb, bstride);
      bp = wb;
    } else {
      bstride = sg_b_pstride(NR, kc);
      sg_pack_b(NR, j->transb, j->B, j->ldb, k0, kc, j0, ncur, wb, bstride);
      bp = wb;
    }
    /* A panel outer: it stays in L1 while the B block streams from L2 */
    for (int64_t ip = 0; ip * MR < mcur; ip++)
      sg_panel_row(j, (int)sg_min(MR, mcur - ip * MR), kc, ap + ip * astride, bp, bstride, bsk,
                   raw, c0 + ip * MR * j->ldc, ncur, flags, i0 + ip * MR, j0);
  }
}

static void sg_slots(void *arg, int64_t s0, int64_t s1) {
  sg_job *j = arg;
  for (int64_t s = s0; s < s1; s++) {
    float *wa = NULL, *wb = NULL;   /* no workspace when nothing is packed per tile */
    if (j->ws) {
      char *slot = j->ws + (size_t)s * j->pl.slot_bytes;
      wa = (float *)slot;
      wb = (float *)(slot + nn_align_up(j->pl.a_floats * sizeof(float), SG_LINE));
    }
    for (;;) {
      int64_t t = nn_blocks_claim(j->blk, j->nblk, nn_parallel_worker() % j->nblk);
      if (t < 0)
        break;
      sg_tile(j, t, wa, wb);
    }
  }
}

/* C = beta * C, then bias and activation: the product is empty or scaled away. */
static void sg_scale_only(const sg_rt *e, int64_t M, int64_t N, float *C, int64_t ldc) {
  for (int64_t i = 0; i < M; i++)
    for (int64_t q = 0; q < N; q++) {
      float *cp = C + i * ldc + q;
      float v = e->beta == 0.0f ? 0.0f : e->beta * *cp;
      *cp = sg_act1(&e->act, v + sg_bias_at(e, i, q));
    }
}

/* ---- one column: rows of A in place ---------------------------------------------
 * C (M x 1) = A (M x K, row-major, unpacked) * x, x contiguous: a batch-1
 * fully connected layer (cpu/gemm.c's swap: W x^T).  Each row of A is read
 * once, straight, SG_DOT_ROWS rows side by side; packing them into panels
 * first (the general path) copied the weights through the cache each run,
 * and its 120-row tiles were 120 streams no prefetcher follows: AlexNet's
 * 9216 -> 4096 layer ran 16.5 ms that way, 7.0 in place, ONNX Runtime 6.4
 * (AVX2, Zen 4). */
#define SG_GEMV_TASK_ROWS 16

static void sg_gemv_range(void *arg, int64_t t0, int64_t t1) {
  const sg_job *j = arg;
  const int64_t end = sg_min(t1 * SG_GEMV_TASK_ROWS, j->M);
  for (int64_t i = t0 * SG_GEMV_TASK_ROWS; i < end; i += SG_DOT_ROWS) {
    int R = (int)sg_min(SG_DOT_ROWS, end - i);
    float out[SG_DOT_ROWS];
    j->kn->dot(R, j->A + i * j->lda, j->lda, j->B, j->K, out);
    for (int r = 0; r < R; r++)
      sg_epi1(&j->rt, SG_FIRST | SG_LAST, out[r], j->C + (i + r) * j->ldc,
              sg_bias_at(&j->rt, i + r, 0));
  }
}

static void sg_gemv(nn_ctx *c, const sg_job *j, int threads) {
  int64_t tasks = sg_ceil_div(j->M, SG_GEMV_TASK_ROWS);
  if (threads > 1 && j->M * j->K >= 2 * SG_MIN_MACS_PER_THREAD)
    nn_parallel_for(c, tasks, 1, sg_gemv_range, (void *)j);
  else
    sg_gemv_range((void *)j, 0, tasks);
}

/* Whether kc rows of B, ldb floats apart, read in place by the micro-
 * kernel, overflow the L1 sets they map to: a 4 KiB period of 64 sets of
 * 64-byte lines, 8 ways (the least of the x86 cores this runs on).  A map
 * of 64x64 or 128x128 pixels puts every row of a 1x1 conv's input in the
 * same set; the AVX2 kernel's six-row panels of A then fetched the panel
 * of B from L2 again each.  Staged (sg_tile), a 24 -> 24 1x1 conv at 64x64
 * ran 3%, a 128 -> 128 one 11%, a 24 -> 96 one 15% faster (Zen 4).  The
 * AVX-512 kernel's 14-row panels read B half as often, and staging slowed
 * it. */
static bool sg_b_conflicts(int64_t ldb, int64_t kc) {
  int64_t lines = (ldb * (int64_t)sizeof(float) / SG_LINE) % 64;
  int64_t g = 64;
  for (int64_t a = lines; a;) {   /* gcd(lines, 64) */
    int64_t t = g % a;
    g = a;
    a = t;
  }
  int64_t sets = 64 / g;          /* distinct sets the rows fall in */
  return kc > 8 * sets;
}

/* ---- one row: rows of B in place -------------------------------------------------
 * C (1 x N) = x (1 x K) * B (K x N, row-major, unpacked), beta 0: a batch-1
 * MatMul against weights stored K x N (TensorFlow's dense layers), which
 * the engine does not pack for a single row.  C's columns, a chunk at a
 * time, accumulate SG_DOT_ROWS rows of B per pass, each row segment read
 * once, straight; the panel kernels read B a 64-byte piece from each of K
 * rows, a page apart (4096 x 4096: 6.3 ms against ONNX Runtime's 3.7).
 * The chunk (SG_GEVM_COLS floats of C) stays in L1. */
#define SG_GEVM_COLS 2048

static void sg_gevm_range(void *arg, int64_t t0, int64_t t1) {
  const sg_job *j = arg;
  const int64_t cols = j->gevm_cols;
  const float *x = j->A;
  const int64_t xs = j->transa ? j->lda : 1;
  float xr[SG_DOT_ROWS];
  for (int64_t t = t0; t < t1; t++) {
    int64_t q0 = t * cols, n = sg_min(cols, j->N - q0);
    float *y = j->C + q0;
    memset(y, 0, (size_t)n * sizeof(float));
    for (int64_t k = 0; k < j->K; k += SG_DOT_ROWS) {
      int R = (int)sg_min(SG_DOT_ROWS, j->K - k);
      for (int r = 0; r < R; r++)
        xr[r] = x[(k + r) * xs];
      j->kn->axpy(R, j->B + k * j->ldb + q0, j->ldb, xr, y, n);
    }
    for (int64_t q = 0; q < n; q++)
      sg_epi1(&j->rt, SG_FIRST | SG_LAST, y[q], y + q, sg_bias_at(&j->rt, 0, q0 + q));
  }
}

static void sg_gevm(nn_ctx *c, sg_job *j, int threads) {
  bool par = threads > 1 && j->N * j->K >= 2 * SG_MIN_MACS_PER_THREAD;
  /* two chunks per worker where the columns allow 256 each */
  int64_t cols = par ? sg_round_up(sg_ceil_div(j->N, 2 * (int64_t)threads), 32) : SG_GEVM_COLS;
  j->gevm_cols = sg_min(SG_GEVM_COLS, sg_max(256, cols));
  int64_t tasks = sg_ceil_div(j->N, j->gevm_cols);
  if (par && tasks > 1)
    nn_parallel_for(c, tasks, 1, sg_gevm_range, j);
  else
    sg_gevm_range(j, 0, tasks);
}

static nn_status sg_run(nn_ctx *c, sg_job *j, nn_cpu_isa isa, void *ws, size_t ws_bytes) {
  int64_t M = j->M, N = j->N, K = j->K;
  if (M == 0 || N == 0)
    return NN_OK;
  if (K == 0 || j->rt.alpha == 0.0f) {
    sg_scale_only(&j->rt, M, N, j->C, j->ldc);
    return NN_OK;
  }
  j->kn = sg_kern_for(isa);
  int threads = c && c->pool && c->threads > 1 ? c->threads : 1;
  if (N == 1 && !j->pa && !j->transa && !j->pb && !j->pack_b && (j->transb || j->ldb == 1)) {
    sg_gemv(c, j, threads);
    return NN_OK;
  }
  if (M == 1 && !j->pa && !j->pb && !j->pack_b && !j->transb && j->rt.beta == 0.0f &&
      j->rt.res != j->C) {
    sg_gevm(c, j, threads);
    return NN_OK;
  }
  sg_plan_make(j->kn, M, N, K, threads, j->pa != NULL,
               j->pb ? SG_B_PACKED : j->pack_b ? SG_B_FN : SG_B_RAW, &j->pl);
  /* A row-major B is read in place: its rows are contiguous in the
   * columns the kernel loads, and copying each block into panels first
   * cost a pass over B per row tile that the L2-resident block never paid
   * back.  In place, SqueezeNet's 128 -> 16 1x1 conv at 55x55 ran 1.37x
   * faster on 1 thread and 2.2x on 2, and the 14 bench models 3-12%
   * faster (Zen 5).  A transposed B still needs the copy. */
  j->pl.direct_b = !j->pb && !j->pack_b && !j->transb && !j->pl.narrow;
  j->b_stage = j->pl.direct_b && j->kn->stage && sg_b_conflicts(j->ldb, j->pl.kc);
  j->ntiles = j->pl.ntm * j->pl.ntn;
  /* no scratch needed (both operands pre-packed, or read in place): one
   * slot per thread costs nothing */
  int64_t slots = j->pl.threads;
  if (j->pl.slot_bytes > 0) {
    uintptr_t base = ((uintptr_t)ws + SG_LINE - 1) & ~(uintptr_t)(SG_LINE - 1);
    size_t lost = (size_t)(base - (uintptr_t)ws);
    if (!ws || ws_bytes < lost + j->pl.slot_bytes)
      return NN_ERR_INVALID_ARG;
    slots = (int64_t)((ws_bytes - lost) / j->pl.slot_bytes);
    j->ws = (char *)base;
  }
  slots = sg_min(slots, j->pl.threads);
  j->nblk = (int)sg_max(1, sg_min(slots, SG_MAX_BLOCKS));
  nn_blocks_init(j->blk, j->nblk, j->ntiles);
  if (slots <= 1)
    sg_slots(j, 0, 1);
  else
    nn_parallel_for(c, slots, 1, sg_slots, j);
  return NN_OK;
}

static void sg_rt_init(sg_rt *rt, float alpha, float beta, const nn_sgemm_epi *epi) {
  memset(rt, 0, sizeof *rt);
  rt->alpha = alpha;
  rt->beta = beta;
  rt->act = sg_act_from(epi);
  if (epi) {
    rt->bias_kind = epi->bias ? epi->bias_kind : NN_SGEMM_BIAS_NONE;
    rt->bias = epi->bias;
    rt->res = epi->res;
    rt->ldres = epi->ldres;
  }
  rt->clamp = sg_clamp_of(&rt->act);
  rt->lean_act = alpha == 1.0f && beta == 0.0f && rt->bias_kind != NN_SGEMM_BIAS_COL;
  rt->lean = rt->lean_act && rt->clamp.kind >= 0;
}

int64_t nn_sgemm_rows_per_tile(void) { return sg_kern_for(nn_cpu_isa_get())->mc; }

int64_t nn_sgemm_narrow_max(void) { return SG_NARROW_MAX(sg_kern_for(nn_cpu_isa_get())); }

static bool sg_dims_ok(int64_t M, int64_t N, int64_t K, const float *C, int64_t ldc) {
  return M >= 0 && N >= 0 && K >= 0 && (M == 0 || N == 0 || (C && ldc >= N));
}

/* What every compute entry sets alike: sizes, scaling, epilogue, C. */
static void sg_job_init(sg_job *j, int64_t M, int64_t N, int64_t K, float alpha, float beta,
                        const nn_sgemm_epi *epi, float *C, int64_t ldc) {
  memset(j, 0, sizeof *j);
  sg_rt_init(&j->rt, alpha, beta, epi);
  j->M = M, j->N = N, j->K = K;
  j->C = C, j->ldc = ldc;
}

nn_status nn_sgemm_compute(nn_ctx *c, int transa, int transb, int64_t M, int64_t N,
                           int64_t K, float alpha, const float *A, int64_t lda,
                           const float *B, int64_t ldb, float beta, float *C, int64_t ldc,
                           const nn_sgemm_epi *epi, void *ws, size_t ws_bytes) {
  if (!sg_dims_ok(M, N, K, C, ldc))
    return NN_ERR_INVALID_ARG;
  if (M > 0 && N > 0 && K > 0 &&
      (!A || !B || lda < (transa ? M : K) || ldb < (transb ? K : N)))
    return NN_ERR_INVALID_ARG;
  sg_job j;
  sg_job_init(&j, M, N, K, alpha, beta, epi, C, ldc);
  j.A = A, j.lda = lda, j.transa = transa;
  j.B = B, j.ldb = ldb, j.transb = transb;
  return sg_run(c, &j, nn_cpu_isa_get(), ws, ws_bytes);
}

nn_status nn_sgemm_compute_pa(nn_ctx *c, int transb, int64_t M, int64_t N, int64_t K,
                              float alpha, const void *packed_a, const float *B, int64_t ldb,
                              float beta, float *C, int64_t ldc, const nn_sgemm_epi *epi,
                              void *ws, size_t ws_bytes) {
  if (!sg_dims_ok(M, N, K, C, ldc))
    return NN_ERR_INVALID_ARG;
  nn_cpu_isa isa;
  const float *pa = sg_pack_open(packed_a, SG_MAGIC_A, M, K, &isa);
  if (!pa)
    return NN_ERR_INVALID_ARG;
  if (M > 0 && N > 0 && K > 0 && (!B || ldb < (transb ? K : N)))
    return NN_ERR_INVALID_ARG;
  sg_job j;
  sg_job_init(&j, M, N, K, alpha, beta, epi, C, ldc);
  j.pa = pa;
  j.B = B, j.ldb = ldb, j.transb = transb;
  return sg_run(c, &j, isa, ws, ws_bytes);
}

nn_status nn_sgemm_compute_pb(nn_ctx *c, int transa, int64_t M, int64_t N, int64_t K,
                              float alpha, const float *A, int64_t lda, const void *packed_b,
                              float beta, float *C, int64_t ldc, const nn_sgemm_epi *epi,
                              void *ws, size_t ws_bytes) {
  if (!sg_dims_ok(M, N, K, C, ldc))
    return NN_ERR_INVALID_ARG;
  nn_cpu_isa isa;
  const float *pb = sg_pack_open(packed_b, SG_MAGIC_B, N, K, &isa);
  if (!pb)
    return NN_ERR_INVALID_ARG;
  if (M > 0 && N > 0 && K > 0 && (!A || lda < (transa ? M : K)))
    return NN_ERR_INVALID_ARG;
  sg_job j;
  sg_job_init(&j, M, N, K, alpha, beta, epi, C, ldc);
  j.A = A, j.lda = lda, j.transa = transa;
  j.pb = pb;
  return sg_run(c, &j, isa, ws, ws_bytes);
}

nn_status nn_sgemm_compute_papb(nn_ctx *c, int64_t M, int64_t N, int64_t K, float alpha,
                                const void *packed_a, const void *packed_b, float beta, float *C,
                                int64_t ldc, const nn_sgemm_epi *epi, void *ws, size_t ws_bytes) {
  if (!sg_dims_ok(M, N, K, C, ldc))
    return NN_ERR_INVALID_ARG;
  nn_cpu_isa isa, isb;
  const float *pa = sg_pack_open(packed_a, SG_MAGIC_A, M, K, &isa);
  const float *pb = sg_pack_open(packed_b, SG_MAGIC_B, N, K, &isb);
  if (!pa || !pb || isa != isb)
    return NN_ERR_INVALID_ARG;
  sg_job j;
  sg_job_init(&j, M, N, K, alpha, beta, epi, C, ldc);
  j.pa = pa;
  j.pb = pb;
  return sg_run(c, &j, isa, ws, ws_bytes);
}

nn_status nn_sgemm_compute_pa_fn(nn_ctx *c, int64_t M, int64_t N, int64_t K, float alpha,
                                 const void *packed_a, nn_sgemm_pack_fn pack_b, void *user,
                                 float beta, float *C, int64_t ldc, const nn_sgemm_epi *epi,
                                 void *ws, size_t ws_bytes) {
  if (!sg_dims_ok(M, N, K, C, ldc) || !pack_b)
    return NN_ERR_INVALID_ARG;
  nn_cpu_isa isa;
  const float *pa = sg_pack_open(packed_a, SG_MAGIC_A, M, K, &isa);
  if (!pa)
    return NN_ERR_INVALID_ARG;
  sg_job j;
  sg_job_init(&j, M, N, K, alpha, beta, epi, C, ldc);
  j.pa = pa;
  j.pack_b = pack_b;
  j.pack_user = user;
  return sg_run(c, &j, isa, ws, ws_bytes);
}

nn_status nn_sgemm_compute_fn(nn_ctx *c, int transa, int64_t M, int64_t N, int64_t K,
                              float alpha, const float *A, int64_t lda, nn_sgemm_pack_fn pack_b,
                              void *user, float beta, float *C, int64_t ldc,
                              const nn_sgemm_epi *epi, void *ws, size_t ws_bytes) {
  if (!sg_dims_ok(M, N, K, C, ldc) || !pack_b)
    return NN_ERR_INVALID_ARG;
  if (M > 0 && N > 0 && K > 0 && (!A || lda < (transa ? M : K)))
    return NN_ERR_INVALID_ARG;
  sg_job j;
  sg_job_init(&j, M, N, K, alpha, beta, epi, C, ldc);
  j.A = A, j.lda = lda, j.transa = transa;
  j.pack_b = pack_b;
  j.pack_user = user;
  return sg_run(c, &j, nn_cpu_isa_get(), ws, ws_bytes);
}

/* ---- implicit im2col ------------------------------------------------------------------ *
 * Row k of the virtual im2col matrix is (channel, kh, kw) = k / (KH*KW),
 * (k / KW) % KH, k % KW (ONNX weight order), column j is output position
 * (oh, ow) = (j / OW, j % OW).  A block is written one k row at a time,
 * walking its columns in runs that stay in one output row and one panel:
 * with stride 1 each run is a contiguous copy of an input row segment,
 * zero-filled where the window hangs over the padding. */
/* Small maps (7x7, 14x14): the runs above are a few floats long, and
 * finding each one (divisions, padding tests, a memset) cost more than
 * copying it; the gather took a third of a 3x3 conv at 7x7 (Zen 5).  Each
 * channel is first copied into a zero-padded plane on the stack, that covers
 * every input position a window reaches, so that column j of row
 * (ci, kh, kw) is simply plane[base[j] + kh * DH * PW + kw * DW], with the
 * bases computed once per call; no test is left in the copy.  Used when the
 * padded plane fits SG_I2C_PLANE floats and building it costs less than the
 * gathers that read it. */
#define SG_I2C_PLANE 4096
#define SG_I2C_COLS 2048
static SG_ALWAYS_INLINE bool sg_pack_im2col_small(const nn_sgemm_im2col *g, int64_t k0,
                                                  int64_t kc, int64_t j0, int64_t nb, int nr,
                                                  float *dst, int64_t pstride) {
  const int64_t KHW = (int64_t)g->KH * g->KW;
  const int64_t dh = g->DH > 0 ? g->DH : 1, dw = g->DW > 0 ? g->DW : 1;
  const int64_t PH = (g->OH - 1) * g->SH + (g->KH - 1) * dh + 1;
  const int64_t PW = (g->OW - 1) * g->SW + (g->KW - 1) * dw + 1;
  if (nb > SG_I2C_COLS || PH * PW > SG_I2C_PLANE || PH * PW > KHW * nb)
    return false;
  float plane[SG_I2C_PLANE];
  int32_t base[SG_I2C_COLS];
  for (int64_t t = 0; t < nb; t++) {
    int64_t oh = (j0 + t) / g->OW, ow = (j0 + t) % g->OW;
    base[t] = (int32_t)(oh * g->SH * PW + ow * g->SW);
  }
  const int64_t npanels = sg_ceil_div(nb, nr), used = nb - (npanels - 1) * nr;
  int64_t cur = -1;
  /* (ci, kh, kw) of row k0, then stepped: a division per row cost more than
   * the row's gathers */
  int64_t ci = k0 / KHW, kh = (k0 / g->KW) % g->KH, kw = k0 % g->KW;
  for (int64_t k = 0; k < kc; k++) {
    if (k > 0 && ++kw == g->KW) {
      kw = 0;
      if (++kh == g->KH) {
        kh = 0;
        ci++;
      }
    }
    if (ci != cur) {
      const float *xc = g->x + ci * g->IH * g->IW;
      for (int64_t r = 0; r < PH; r++) {
        int64_t ih = r - g->PT;
        if (ih < 0 || ih >= g->IH)
          memset(plane + r * PW, 0, sizeof(float) * (size_t)PW);
        else
          ku_gather_row(plane + r * PW, xc + ih * g->IW, g->IW, -g->PL, 1, PW);
      }
      cur = ci;
    }
    const float *src = plane + kh * dh * PW + kw * dw;
    for (int64_t p = 0; p < npanels; p++) {
      float *restrict d = dst + p * pstride + k * nr;
      const int32_t *b = base + p * nr;
      const int64_t cnt = p + 1 < npanels ? nr : used;
      for (int64_t q = 0; q < cnt; q++)
        d[q] = src[b[q]];
      for (int64_t q = cnt; q < nr; q++)
        d[q] = 0.0f;
    }
  }
  return true;
}

/* The gather, compiled twice: for the baseline and for AVX2, where the
 * stride-2 copies of the first (3-channel) conv of BlazeFace and PP-OCR
 * vectorize 8 wide instead of 4 (they were 8% of BlazeFace back-256). */
static SG_ALWAYS_INLINE void sg_pack_im2col_body(const nn_sgemm_im2col *g, int64_t k0,
                                                 int64_t kc, int64_t j0, int64_t nb, int nr,
                                                 float *dst, int64_t pstride) {
  if (sg_pack_im2col_small(g, k0, kc, j0, nb, nr, dst, pstride))
    return;
  const int64_t KHW = (int64_t)g->KH * g->KW;
  const int64_t dh = g->DH > 0 ? g->DH : 1, dw = g->DW > 0 ? g->DW : 1;
  int64_t npanels = sg_ceil_div(nb, nr);
  for (int64_t k = 0; k < kc; k++) {
    int64_t kk = k0 + k;
    int64_t ci = kk / KHW, kh = (kk / g->KW) % g->KH, kw = kk % g->KW;
    const float *xc = g->x + ci * g->IH * g->IW;
    int64_t offh = kh * dh - g->PT, offw = kw * dw - g->PL;
    /* output columns whose iw = ow * SW + offw lies in [0, IW) */
    int64_t ow_lo = offw < 0 ? (-offw + g->SW - 1) / g->SW : 0;
    int64_t ow_hi = g->IW - 1 - offw >= 0 ? (g->IW - 1 - offw) / g->SW + 1 : 0;
    ow_lo = sg_min(ow_lo, g->OW);
    ow_hi = sg_max(ow_lo, sg_min(ow_hi, g->OW));
    int64_t jj = j0, jend = j0 + nb;
    int64_t oh = jj / g->OW, ow = jj % g->OW;
    int64_t p = 0, q = 0;   /* panel and lane of column jj */
    while (jj < jend) {
      int64_t len = sg_min(sg_min(g->OW - ow, jend - jj), nr - q);
      float *restrict d = dst + p * pstride + k * nr + q;
      int64_t ih = oh * g->SH + offh;
      if (ih < 0 || ih >= g->IH) {
        memset(d, 0, sizeof(float) * (size_t)len);
      } else {
        const float *xr = xc + ih * g->IW;
        int64_t a = sg_min(sg_max(ow_lo - ow, 0), len);   /* leading zeros */
        int64_t b = sg_max(sg_min(ow_hi - ow, len), a);   /* end of the data */
        if (a > 0)
          memset(d, 0, sizeof(float) * (size_t)a);
        /* an inline copy through restrict pointers: the compiler vectorizes
         * it (runtime/meson.build's cost model), and on small maps (runs of
         * 7 or 14 floats) a memcpy call per run cost more than the copy */
        if (g->SW == 1) {
          const float *restrict src = xr + ow + offw;
          for (int64_t t = a; t < b; t++)
            d[t] = src[t];
        } else if (g->SW == 2) {
          /* a constant stride lets the compiler deinterleave with shuffles:
           * the first (3-channel, stride-2) conv of BlazeFace and PP-OCR is
           * bound by this gather, not by its few multiply-adds */
          const float *restrict src = xr + ow * 2 + offw;
          for (int64_t t = a; t < b; t++)
            d[t] = src[2 * t];
        } else {
          const float *restrict src = xr + ow * g->SW + offw;
          for (int64_t t = a; t < b; t++)
            d[t] = src[t * g->SW];
        }
        if (len > b)
          memset(d + b, 0, sizeof(float) * (size_t)(len - b));
      }
      jj += len;
      ow += len;
      if (ow == g->OW) {
        ow = 0;
        oh++;
      }
      q += len;
      if (q == nr) {
        q = 0;
        p++;
      }
    }
    /* zero the columns of the last panel past the block */
    int64_t used = nb - (npanels - 1) * nr;
    float *dl = dst + (npanels - 1) * pstride + k * nr;
    for (int64_t t = used; t < nr; t++)
      dl[t] = 0.0f;
  }
}

static void sg_pack_im2col_base(const nn_sgemm_im2col *g, int64_t k0, int64_t kc, int64_t j0,
                                int64_t nb, int nr, float *dst, int64_t pstride) {
  sg_pack_im2col_body(g, k0, kc, j0, nb, nr, dst, pstride);
}
#if SG_X86
static SG256 void sg_pack_im2col_avx2(const nn_sgemm_im2col *g, int64_t k0, int64_t kc,
                                      int64_t j0, int64_t nb, int nr, float *dst,
                                      int64_t pstride) {
  sg_pack_im2col_body(g, k0, kc, j0, nb, nr, dst, pstride);
}
#endif

void nn_sgemm_pack_im2col(void *user, int64_t k0, int64_t kc, int64_t j0, int64_t nb, int nr,
                          float *dst, int64_t pstride) {
#if SG_X86
  if (nn_cpu_isa_get() >= NN_CPU_AVX2) {
    sg_pack_im2col_avx2(user, k0, kc, j0, nb, nr, dst, pstride);
    return;
  }
#endif
  sg_pack_im2col_base(user, k0, kc, j0, nb, nr, dst, pstride);
}

#if SG_X86
/* ---- an activation over an array (sgemm_simd.h nn_sgemm_act_run) ------------ */
#define SG_ACT_CASES(X)                                                                   \
  X(NN_SGEMM_ACT_RELU) X(NN_SGEMM_ACT_CLIP) X(NN_SGEMM_ACT_LEAKY) X(NN_SGEMM_ACT_HSWISH) \
  X(NN_SGEMM_ACT_SIGMOID) X(NN_SGEMM_ACT_SILU) X(NN_SGEMM_ACT_GELU)

static SG512 void sg5_act_run(const sg_act *a, float *v, int64_t n) {
  sg_act k = *a;
  int64_t i = 0;
  const __mmask16 tail = (__mmask16)((1u << (n % 16)) - 1u);
  switch (a->act) {
#define SG5_ACT_CASE(KIND)                                                           \
  case KIND:                                                                         \
    k.act = KIND;                                                                    \
    for (i = 0; i + 16 <= n; i += 16)                                                \
      _mm512_storeu_ps(v + i, sg5_act(&k, _mm512_loadu_ps(v + i)));                  \
    if (tail)                                                                        \
      _mm512_mask_storeu_ps(v + i, tail, sg5_act(&k, _mm512_maskz_loadu_ps(tail, v + i))); \
    break;
    SG_ACT_CASES(SG5_ACT_CASE)
#undef SG5_ACT_CASE
  default: break;
  }
}

static SG256 void sg2_act_run(const sg_act *a, float *v, int64_t n) {
  sg_act k = *a;
  int64_t i = 0;
  switch (a->act) {
#define SG2_ACT_CASE(KIND)                                                  \
  case KIND:                                                                \
    k.act = KIND;                                                           \
    for (i = 0; i + 8 <= n; i += 8)                                         \
      _mm256_storeu_ps(v + i, sg2_act(&k, _mm256_loadu_ps(v + i)));         \
    if (i < n) {                                                            \
      float buf[8] = {0};                                                   \
      memcpy(buf, v + i, sizeof(float) * (size_t)(n - i));                  \
      _mm256_storeu_ps(buf, sg2_act(&k, _mm256_loadu_ps(buf)));             \
      memcpy(v + i, buf, sizeof(float) * (size_t)(n - i));                  \
    }                                                                       \
    break;
    SG_ACT_CASES(SG2_ACT_CASE)
#undef SG2_ACT_CASE
  default: break;
  }
}

#endif

void nn_sgemm_act_run(const sg_act *a, float *v, int64_t n) {
  if (a->act == NN_SGEMM_ACT_NONE || n <= 0)
    return;
#if SG_X86
  nn_cpu_isa isa = nn_cpu_isa_get();
  if (isa >= NN_CPU_AVX512) {
    sg5_act_run(a, v, n);
    return;
  }
  if (isa >= NN_CPU_AVX2) {
    sg2_act_run(a, v, n);
    return;
  }
#endif
  for (int64_t i = 0; i < n; i++)
    v[i] = sg_act1(a, v[i]);
}

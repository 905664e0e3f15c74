/* qgemm.c - the 8-bit integer GEMM of qgemm.h.
 *
 * Layouts, per path (qg_path):
 *   Q4 (VNNI, portable): four consecutive k of a row or column side by side,
 *     A panels [k/4][mr][4] int8, B panels [k/4][nr][4] uint8: one 32-bit
 *     lane of vpdpbusd holds one column's (or the broadcast row's) 4 taps.
 *   Q2 (AVX2): pairs of k as int16, A panels [k/2][mr][2], B [k/2][nr][2]:
 *     vpmaddwd's lanes.
 * K is padded to a multiple of 4 with zero weights, so B's padding rows may
 * hold anything (they are read as zeros, see qg_zero_row, all the same).
 *
 * Work: the columns are cut into blocks whose packed B (K x NB) stays in
 * L2; a task packs one block (implicit im2col through the caller's rows),
 * then runs its rows' A panels over it, each A panel staying in L1 while the
 * block's panels stream, and hands each panel's finished rows to the caller
 * (requantization while the tile is in cache).  Few blocks (the 7x7 and
 * 14x14 maps) split the rows too, so two workers have work.
 */
#include <stdatomic.h>
#include <string.h>

#include "cpu/qgemm.h"
#include "cpu/sgemm.h"
#include "cpu/sgemm_simd.h"
#include "knobs.h"
#include "threadpool.h"

enum { QG_PORTABLE = 0, QG_AVX2 = 1, QG_VNNI = 2 };

#define QG_MAGIC 0x7167656du   /* "qgem" */
#define QG_LINE 64
#define QG_NB_MAX NN_QGEMM_COLS_MAX   /* columns per block at most */
#define QG_B_BYTES (128 * 1024) /* a packed B block's budget (L2) */
#define QG_MAX_BLOCKS 64

typedef struct qg_head {
  uint32_t magic;
  int path, mr, nr;
  int64_t M, K, Kp;
  bool any_za;
  size_t panels;               /* offset of the A panels from the block's start */
} qg_head;

static const uint8_t qg_zero_row[QG_NB_MAX];

static int64_t qg_round_up(int64_t a, int64_t b) { return (a + b - 1) / b * b; }
static int64_t qg_min(int64_t a, int64_t b) { return a < b ? a : b; }
static int64_t qg_max(int64_t a, int64_t b) { return a > b ? a : b; }

int nn_qgemm_path(void) {
  nn_cpu_isa isa = nn_cpu_isa_get();
#if SG_X86
  if (isa == NN_CPU_AVX512 && !nn_knobs().no_vnni) {
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512vnni") && __builtin_cpu_supports("avx512bw"))
      return QG_VNNI;
  }
  if (isa >= NN_CPU_AVX2)
    return QG_AVX2;
#endif
  (void)isa;
  return QG_PORTABLE;
}

static void qg_geom(int path, int *mr, int *nr) {
  switch (path) {
  case QG_VNNI: *mr = 8, *nr = 32; break;
  case QG_AVX2: *mr = 6, *nr = 16; break;
  default: *mr = 4, *nr = 8; break;
  }
}

/* bytes per packed element: int16 pairs on AVX2, bytes otherwise */
static int qg_elem(int path) { return path == QG_AVX2 ? 2 : 1; }

/* The head sits at the block's first 64-byte boundary (the caller's block
 * may have any alignment: nn_qgemm_pack_a_size leaves room for it). */
static qg_head *qg_head_of(const void *block) {
  return (qg_head *)(((uintptr_t)block + QG_LINE - 1) & ~(uintptr_t)(QG_LINE - 1));
}
static int32_t *qg_rowsum(const qg_head *h) { return (int32_t *)((char *)h + nn_align_up(sizeof *h, QG_LINE)); }
static int32_t *qg_za(const qg_head *h) { return qg_rowsum(h) + h->M; }

size_t nn_qgemm_pack_a_size(int64_t M, int64_t K) {
  if (M <= 0 || K <= 0)
    return 2 * QG_LINE + sizeof(qg_head);
  int64_t Kp = qg_round_up(K, 4);
  /* the widest layout (int16 pairs), rows rounded up to a panel of 8 or 6 */
  size_t panels = (size_t)(M + 8) * (size_t)Kp * 2;
  return QG_LINE + nn_align_up(sizeof(qg_head), QG_LINE) +
         nn_align_up((size_t)M * 2 * sizeof(int32_t), QG_LINE) + panels;
}

void nn_qgemm_pack_a(int64_t M, int64_t K, const int8_t *A, int64_t lda, const int32_t *za,
                     void *dst) {
  qg_head *h = qg_head_of(dst);
  memset(h, 0, sizeof *h);
  h->magic = QG_MAGIC;
  h->path = nn_qgemm_path();
  qg_geom(h->path, &h->mr, &h->nr);
  h->M = M < 0 ? 0 : M;
  h->K = K < 0 ? 0 : K;
  h->Kp = qg_round_up(h->K, 4);
  h->panels = nn_align_up(sizeof *h, QG_LINE) + nn_align_up((size_t)h->M * 2 * sizeof(int32_t), QG_LINE);
  int32_t *rs = qg_rowsum(h), *z = qg_za(h);
  for (int64_t m = 0; m < h->M; m++) {
    uint32_t s = 0;
    for (int64_t k = 0; k < h->K; k++)
      s += (uint32_t)(int32_t)A[m * lda + k];
    rs[m] = (int32_t)s;
    z[m] = za ? za[m] : 0;
    h->any_za |= z[m] != 0;
  }
  const int mr = h->mr, el = qg_elem(h->path), grp = el == 2 ? 2 : 4;
  const int64_t Kp = h->Kp, np = (h->M + mr - 1) / mr;
  char *pan = (char *)h + h->panels;
  for (int64_t ip = 0; ip < np; ip++) {
    char *pp = pan + (size_t)ip * (size_t)mr * (size_t)Kp * (size_t)el;
    for (int64_t kg = 0; kg < Kp / grp; kg++)
      for (int r = 0; r < mr; r++)
        for (int i = 0; i < grp; i++) {
          int64_t m = ip * mr + r, k = kg * grp + i;
          int8_t v = m < h->M && k < h->K ? A[m * lda + k] : 0;
          size_t at = ((size_t)kg * (size_t)mr + (size_t)r) * (size_t)grp + (size_t)i;
          if (el == 2)
            ((int16_t *)pp)[at] = v;
          else
            ((int8_t *)pp)[at] = v;
        }
  }
}

/* ---- the per-worker plan ------------------------------------------------------ */

typedef struct qg_plan {
  int64_t NB;              /* columns per block (a multiple of nr) */
  int64_t nblk, msplit, ntasks;
  size_t bpack, rows, colsum, tile, slot;   /* byte offsets in a slot; slot size */
} qg_plan;

static void qg_plan_make(const qg_head *h, int64_t N, int threads, qg_plan *p) {
  const int el = qg_elem(h->path);
  int64_t per_col = h->Kp * el > 0 ? h->Kp * el : 1;
  int64_t NB = QG_B_BYTES / per_col / h->nr * h->nr;
  if (NB < h->nr)
    NB = h->nr;
  if (NB > QG_NB_MAX)
    NB = QG_NB_MAX;
  int64_t Nr = qg_round_up(N > 0 ? N : 1, h->nr);
  if (NB > Nr)
    NB = Nr;
  /* even blocks: 3136 columns at 512 would leave a block of 64 last */
  int64_t nblk = (Nr + NB - 1) / NB;
  int64_t np = (h->M + h->mr - 1) / h->mr, t = threads < 1 ? 1 : threads;
  /* the workers share columns before rows: a row split packs the same
   * columns once per part (MobileNetV2's 192 -> 32 projections at 28x28,
   * two column blocks split four ways by rows, ran no faster on two
   * threads; columns first: the whole model 2.5% faster there, ResNet-18
   * the same) */
  if (t > 1 && nblk < 2 * t)
    nblk = qg_min(2 * t, qg_max(1, Nr / qg_max(h->nr, 64)));
  NB = qg_round_up((Nr + nblk - 1) / nblk, h->nr);
  p->NB = NB;
  p->nblk = (N + NB - 1) / NB;
  p->msplit = 1;
  if (t > 1 && p->nblk < 2 * t)
    p->msplit = qg_min(np, (2 * t + p->nblk - 1) / p->nblk);
  if (p->msplit < 1)
    p->msplit = 1;
  p->ntasks = p->nblk * p->msplit;
  size_t off = 0;
  p->bpack = off;
  off += nn_align_up((size_t)(h->Kp * NB * el), QG_LINE);
  p->rows = off;
  off += nn_align_up((size_t)(4 * NB), QG_LINE);
  p->colsum = off;
  off += nn_align_up((size_t)NB * sizeof(int32_t), QG_LINE);
  p->tile = off;
  off += nn_align_up((size_t)(h->mr * NB) * sizeof(int32_t), QG_LINE);
  p->slot = off;
}

static bool qg_valid(const void *packed_a) {
  return packed_a && qg_head_of(packed_a)->magic == QG_MAGIC;
}

size_t nn_qgemm_workspace(int64_t M, int64_t K, int64_t N, int threads) {
  size_t most = 0;
  for (int path = QG_PORTABLE; path <= QG_VNNI; path++) {
    qg_head h = {.path = path, .M = M > 0 ? M : 0, .K = K > 0 ? K : 0};
    qg_geom(path, &h.mr, &h.nr);
    h.Kp = qg_round_up(h.K, 4);
    qg_plan p;
    qg_plan_make(&h, N, threads, &p);
    int64_t t = threads < 1 ? 1 : threads;
    if (t > p.ntasks)
      t = p.ntasks;
    size_t b = QG_LINE + (size_t)t * p.slot;
    if (b > most)
      most = b;
  }
  return most;
}

/* ---- packing B ------------------------------------------------------------------ */

/* Four rows (k .. k + 3) of the block into the panels at kq = k / 4: Q4
 * bytes [nr][4], or Q2 two int16 pairs [nr][2] at k/2 and k/2 + 1. */
static void qg_pack_rows(const qg_head *h, const uint8_t *const r[4], int64_t nb, int64_t nbp,
                         int64_t kq, uint8_t *bp) {
  const int nr = h->nr;
  const int64_t Kp = h->Kp;
  int64_t j = 0;
  if (h->path == QG_VNNI) {
#if SG_X86
    for (; j + 16 <= nb; j += 16) {
      __m128i a = _mm_loadu_si128((const __m128i *)(r[0] + j));
      __m128i b = _mm_loadu_si128((const __m128i *)(r[1] + j));
      __m128i c = _mm_loadu_si128((const __m128i *)(r[2] + j));
      __m128i d = _mm_loadu_si128((const __m128i *)(r[3] + j));
      __m128i ab0 = _mm_unpacklo_epi8(a, b), ab1 = _mm_unpackhi_epi8(a, b);
      __m128i cd0 = _mm_unpacklo_epi8(c, d), cd1 = _mm_unpackhi_epi8(c, d);
      uint8_t *o = bp + (j / nr) * Kp * nr + kq * nr * 4 + (j % nr) * 4;
      _mm_storeu_si128((__m128i *)o, _mm_unpacklo_epi16(ab0, cd0));
      _mm_storeu_si128((__m128i *)(o + 16), _mm_unpackhi_epi16(ab0, cd0));
      _mm_storeu_si128((__m128i *)(o + 32), _mm_unpacklo_epi16(ab1, cd1));
      _mm_storeu_si128((__m128i *)(o + 48), _mm_unpackhi_epi16(ab1, cd1));
    }
#endif
  } else if (h->path == QG_AVX2) {
#if SG_X86
    const __m128i z = _mm_setzero_si128();
    for (; j + 16 <= nb; j += 16) {
      int16_t *base = (int16_t *)bp + (j / nr) * Kp * nr + (j % nr) * 2;
      for (int half = 0; half < 2; half++) {
        __m128i a = _mm_loadu_si128((const __m128i *)(r[2 * half] + j));
        __m128i b = _mm_loadu_si128((const __m128i *)(r[2 * half + 1] + j));
        __m128i ab0 = _mm_unpacklo_epi8(a, b), ab1 = _mm_unpackhi_epi8(a, b);
        int16_t *o = base + (kq * 2 + half) * nr * 2;
        _mm_storeu_si128((__m128i *)o, _mm_unpacklo_epi8(ab0, z));
        _mm_storeu_si128((__m128i *)(o + 8), _mm_unpackhi_epi8(ab0, z));
        _mm_storeu_si128((__m128i *)(o + 16), _mm_unpacklo_epi8(ab1, z));
        _mm_storeu_si128((__m128i *)(o + 24), _mm_unpackhi_epi8(ab1, z));
      }
    }
#endif
  }
  /* the rest (and the portable path): element by element, 0 past nb */
  for (; j < nbp; j++) {
    int64_t p = j / nr, q = j % nr;
    for (int i = 0; i < 4; i++) {
      uint8_t v = j < nb ? r[i][j] : 0;
      if (h->path == QG_AVX2)
        ((int16_t *)bp)[p * Kp * nr + (kq * 2 + i / 2) * nr * 2 + q * 2 + i % 2] = v;
      else
        bp[p * Kp * nr + kq * nr * 4 + q * 4 + i] = v;
    }
  }
}

/* ---- micro-kernels: c[r][q] = sum over the panels' k (int32, wrapping) --------- */

static void qg_kernel_c(int64_t Kp, const int8_t *a, const uint8_t *b, int32_t *c, int64_t ldc) {
  uint32_t acc[4][8];
  memset(acc, 0, sizeof acc);
  for (int64_t kq = 0; kq < Kp / 4; kq++, a += 16, b += 32)
    for (int r = 0; r < 4; r++)
      for (int q = 0; q < 8; q++) {
        int32_t s = 0;
        for (int i = 0; i < 4; i++)
          s += (int32_t)b[q * 4 + i] * a[r * 4 + i];
        acc[r][q] += (uint32_t)s;
      }
  for (int r = 0; r < 4; r++)
    for (int q = 0; q < 8; q++)
      c[r * ldc + q] = (int32_t)acc[r][q];
}

#if SG_X86
__attribute__((target("avx2,fma"))) static void qg_kernel_avx2(int64_t Kp, const int16_t *a,
                                                               const int16_t *b, int32_t *c,
                                                               int64_t ldc) {
  __m256i acc[6][2];
  SG_UNROLL(6)
  for (int r = 0; r < 6; r++)
    acc[r][0] = acc[r][1] = _mm256_setzero_si256();
  for (int64_t k2 = 0; k2 < Kp / 2; k2++, a += 12, b += 32) {
    __m256i b0 = _mm256_loadu_si256((const __m256i *)b);
    __m256i b1 = _mm256_loadu_si256((const __m256i *)(b + 16));
    SG_UNROLL(6)
    for (int r = 0; r < 6; r++) {
      int32_t w;
      memcpy(&w, a + 2 * r, sizeof w);
      __m256i av = _mm256_set1_epi32(w);
      acc[r][0] = _mm256_add_epi32(acc[r][0], _mm256_madd_epi16(b0, av));
      acc[r][1] = _mm256_add_epi32(acc[r][1], _mm256_madd_epi16(b1, av));
    }
  }
  SG_UNROLL(6)
  for (int r = 0; r < 6; r++) {
    _mm256_storeu_si256((__m256i *)(c + r * ldc), acc[r][0]);
    _mm256_storeu_si256((__m256i *)(c + r * ldc + 8), acc[r][1]);
  }
}

__attribute__((target("avx512f,avx512bw,avx512vnni"))) static void
qg_kernel_vnni(int64_t Kp, const int8_t *a, const uint8_t *b, int32_t *c, int64_t ldc) {
  __m512i acc[8][2];
  SG_UNROLL(8)
  for (int r = 0; r < 8; r++)
    acc[r][0] = acc[r][1] = _mm512_setzero_si512();
  for (int64_t kq = 0; kq < Kp / 4; kq++, a += 32, b += 128) {
    __m512i b0 = _mm512_loadu_si512((const void *)b);
    __m512i b1 = _mm512_loadu_si512((const void *)(b + 64));
    SG_UNROLL(8)
    for (int r = 0; r < 8; r++) {
      int32_t w;
      memcpy(&w, a + 4 * r, sizeof w);
      __m512i av = _mm512_set1_epi32(w);
      acc[r][0] = _mm512_dpbusd_epi32(acc[r][0], b0, av);
      acc[r][1] = _mm512_dpbusd_epi32(acc[r][1], b1, av);
    }
  }
  SG_UNROLL(8)
  for (int r = 0; r < 8; r++) {
    _mm512_storeu_si512((void *)(c + r * ldc), acc[r][0]);
    _mm512_storeu_si512((void *)(c + r * ldc + 16), acc[r][1]);
  }
}
#endif

static void qg_kernel(const qg_head *h, const void *a, const void *b, int32_t *c, int64_t ldc) {
#if SG_X86
  if (h->path == QG_VNNI) {
    qg_kernel_vnni(h->Kp, a, b, c, ldc);
    return;
  }
  if (h->path == QG_AVX2) {
    qg_kernel_avx2(h->Kp, a, b, c, ldc);
    return;
  }
#endif
  qg_kernel_c(h->Kp, a, b, c, ldc);
}

/* ---- compute ---------------------------------------------------------------------- */

typedef struct qg_job {
  const qg_head *h;
  qg_plan pl;
  int64_t N;
  int32_t zb;
  nn_qgemm_row_fn row;
  nn_qgemm_store_fn store;
  void *user;
  char *ws;
  nn_block blk[QG_MAX_BLOCKS];
  int nblk;
} qg_job;

static void qg_task(const qg_job *j, int64_t t, char *slot) {
  const qg_head *h = j->h;
  const qg_plan *pl = &j->pl;
  const int mr = h->mr, nr = h->nr, el = qg_elem(h->path);
  const int64_t blk = t / pl->msplit, part = t % pl->msplit;
  const int64_t j0 = blk * pl->NB, nb = qg_min(pl->NB, j->N - j0), nbp = qg_round_up(nb, nr);
  uint8_t *bp = (uint8_t *)(slot + pl->bpack), *rows = (uint8_t *)(slot + pl->rows);
  uint32_t *cs = (uint32_t *)(slot + pl->colsum);
  int32_t *tile = (int32_t *)(slot + pl->tile);
  /* the block of B, and its column sums when a row has a zero point */
  if (h->any_za)
    memset(cs, 0, (size_t)nb * sizeof *cs);
  for (int64_t k = 0; k < h->Kp; k += 4) {
    const uint8_t *r[4];
    for (int i = 0; i < 4; i++)
      r[i] = k + i < h->K ? j->row(j->user, k + i, j0, nb, rows + i * pl->NB) : qg_zero_row;
    qg_pack_rows(h, r, nb, nbp, k / 4, bp);
    if (h->any_za)
      for (int64_t q = 0; q < nb; q++)
        cs[q] += (uint32_t)r[0][q] + r[1][q] + r[2][q] + r[3][q];
  }
  const int64_t np = (h->M + mr - 1) / mr;
  const int64_t p0 = np * part / pl->msplit, p1 = np * (part + 1) / pl->msplit;
  const char *apan = (const char *)h + h->panels;
  const int32_t *rs = qg_rowsum(h), *za = qg_za(h);
  const size_t astride = (size_t)mr * (size_t)h->Kp * (size_t)el;
  const size_t bstride = (size_t)nr * (size_t)h->Kp * (size_t)el;
  for (int64_t ip = p0; ip < p1; ip++) {
    for (int64_t jp = 0; jp < nbp / nr; jp++)
      qg_kernel(h, apan + (size_t)ip * astride, bp + (size_t)jp * bstride, tile + jp * nr, nbp);
    const int64_t m0 = ip * mr, rows_here = qg_min(mr, h->M - m0);
    for (int64_t r = 0; r < rows_here; r++) {
      /* sum (a - za)(b - zb) = sum ab - zb sum a - za sum b + K za zb (mod 2^32) */
      const uint32_t zam = (uint32_t)za[m0 + r];
      const uint32_t off = (uint32_t)h->K * zam * (uint32_t)j->zb - (uint32_t)j->zb * (uint32_t)rs[m0 + r];
      uint32_t *tr = (uint32_t *)tile + r * nbp;
      if (zam)
        for (int64_t q = 0; q < nb; q++)
          tr[q] += off - zam * cs[q];
      else if (off)
        for (int64_t q = 0; q < nb; q++)
          tr[q] += off;
    }
    j->store(j->user, m0, rows_here, j0, nb, tile, nbp);
  }
}

static void qg_slots(void *arg, int64_t s0, int64_t s1) {
  qg_job *j = arg;
  for (int64_t s = s0; s < s1; s++) {
    char *slot = j->ws + (size_t)s * j->pl.slot;
    for (;;) {
      int64_t t = nn_blocks_claim(j->blk, j->nblk, nn_parallel_worker() % j->nblk);
      if (t < 0)
        break;
      qg_task(j, t, slot);
    }
  }
}

nn_status nn_qgemm_compute(nn_ctx *c, const void *packed_a, int64_t N, int32_t zb,
                           nn_qgemm_row_fn row, nn_qgemm_store_fn store, void *user, void *ws,
                           size_t ws_bytes) {
  if (!qg_valid(packed_a) || N < 0 || !row || !store)
    return NN_ERR_INVALID_ARG;
  const qg_head *h = qg_head_of(packed_a);
  if (N == 0 || h->M == 0)
    return NN_OK;
  qg_job j;
  memset(&j, 0, sizeof j);
  j.h = h;
  j.N = N;
  j.zb = zb;
  j.row = row;
  j.store = store;
  j.user = user;
  int threads = c ? nn_parallel_width(c) : 1;
  qg_plan_make(h, N, threads, &j.pl);
  uintptr_t base = ((uintptr_t)ws + QG_LINE - 1) & ~(uintptr_t)(QG_LINE - 1);
  size_t lost = (size_t)(base - (uintptr_t)ws);
  if (!ws || ws_bytes < lost + j.pl.slot)
    return NN_ERR_INVALID_ARG;
  j.ws = (char *)base;
  int64_t slots = (int64_t)((ws_bytes - lost) / j.pl.slot);
  slots = qg_min(qg_min(slots, threads), j.pl.ntasks);
  j.nblk = (int)(slots < 1 ? 1 : qg_min(slots, QG_MAX_BLOCKS));
  nn_blocks_init(j.blk, j.nblk, j.pl.ntasks);
  if (slots <= 1)
    qg_slots(&j, 0, 1);
  else
    nn_parallel_for(c, slots, 1, qg_slots, &j);
  return NN_OK;
}

/* qconv_direct.c - the direct 8-bit integer convolution of qconv_direct.h.
 *
 * Layouts, per path:
 *   VNNI, portable: the copy is [Hp][Wp][Cp] uint8 (Cp = C rounded up to
 *     4); a panel of 64 output channels is [tap][Cp/4][64][4] int8, so one
 *     vpdpbusd takes a broadcast dword (4 channels of one pixel) against 16
 *     output channels' 4 weights.
 *   AVX2: the copy is [Hp][Wp][Cp] int16, a panel of 32 output channels is
 *     [tap][Cp/2][32][2] int16: vpmaddwd's pairs.
 * Padding rows and columns, and the channels past C, hold the zero point
 * (and weights past C or M are 0), so every sum is over the full window and
 * zb * (the channel's weight sum) comes off afterwards (nn_qdc_offsets,
 * which the caller folds into its bias).
 *
 * Work: tasks are (panel, run of pixels); a task's tiles of 6 pixels (3 on
 * AVX2) each read the panel (L2) once and their pixels' taps (the copy,
 * L1/L2), and the run's sums go to the caller's store pixel-major, whole
 * runs of up to 48 pixels at a time (requantized in vectors there).
 */
#include <string.h>

#include "cpu/qconv_direct.h"
#include "cpu/qgemm.h"
#include "cpu/sgemm_simd.h"
#include "cpu/vmath.h"
#include "threadpool.h"

enum { QD_PORTABLE = 0, QD_AVX2 = 1, QD_VNNI = 2 };   /* nn_qgemm_path's numbering */

#define QD_MAGIC 0x71646331u   /* "qdc1" */
#define QD_LINE 64
#define QD_R 6                 /* pixels per tile (VNNI, portable) */
#define QD_R_AVX2 3            /* pixels per tile (AVX2) */
#define QD_PW_MAX 64           /* output channels per panel, widest path */
#define QD_LIMIT ((int64_t)1 << 40)
#define QD_MAX_BLOCKS 64
/* a depthwise load of a panel's last channel vector may pass the last
 * pixel's channels: zeroed slack after the copy */
#define QD_DW_SLACK 128

typedef struct qd_head {
  uint32_t magic;
  int path, pw, el;            /* lanes per panel, bytes per copied element */
  bool dw;                     /* depthwise */
  int64_t tp;                  /* depthwise: pairs of taps */
  nn_qdc_shape s;
  int64_t Cp, Hp, Wp, taps, panels;
  size_t pan_bytes;            /* one panel */
  size_t sums, pan;            /* offsets from the head: channel sums, panels */
} qd_head;

static int64_t qd_up(int64_t a, int64_t b) { return (a + b - 1) / b * b; }
static int64_t qd_min(int64_t a, int64_t b) { return a < b ? a : b; }
static int64_t qd_max(int64_t a, int64_t b) { return a > b ? a : b; }

/* The copy's rows and columns: the input at (PT, PL), and as far as the
 * last output pixel's last tap reaches. */
static void qd_padded(const nn_qdc_shape *s, int64_t *Hp, int64_t *Wp) {
  *Hp = qd_max(s->PT + s->IH, (s->OH - 1) * s->SH + (s->KH - 1) * s->DH + 1);
  *Wp = qd_max(s->PL + s->IW, (s->OW - 1) * s->SW + (s->KW - 1) * s->DW + 1);
}


bool nn_qdc_fits(const nn_qdc_shape *s) {
  const int64_t v[] = {s->C,  s->M,  s->IH, s->IW, s->OH, s->OW, s->KH, s->KW,
                       s->SH, s->SW, s->DH, s->DW, s->PT, s->PL, s->group};
  for (size_t i = 0; i < sizeof v / sizeof v[0]; i++)
    if (v[i] < 0 || v[i] >= QD_LIMIT >> 20)
      return false;
  if (s->C < 1 || s->M < 1 || s->OH < 1 || s->OW < 1 || s->KH < 1 || s->KW < 1 || s->SH < 1 ||
      s->SW < 1 || s->DH < 1 || s->DW < 1)
    return false;
  if (s->group > 1 && (s->group != s->C || s->M != s->C))
    return false;
  int64_t Hp, Wp;
  qd_padded(s, &Hp, &Wp);
  const int64_t Cp = qd_up(s->C, 4);
  return Hp < QD_LIMIT / Wp && Hp * Wp < QD_LIMIT / (2 * Cp) && s->KH * s->KW < QD_LIMIT / Cp &&
         s->KH * s->KW * Cp < QD_LIMIT / (2 * (s->M + QD_PW_MAX)) &&
         s->OH < QD_LIMIT / s->OW;
}

static qd_head *qd_head_of(const void *block) {
  return (qd_head *)(((uintptr_t)block + QD_LINE - 1) & ~(uintptr_t)(QD_LINE - 1));
}
static int32_t *qd_sums(const qd_head *h) { return (int32_t *)((char *)h + h->sums); }

static bool qd_is_dw(const nn_qdc_shape *s) { return s->group > 1; }

/* Lanes per panel: 64 output channels (AVX-512 VNNI, portable, and every
 * depthwise panel), 32 on AVX2's group-1 kernel. */
static int qd_pw(int path, bool dw) { return path == QD_AVX2 && !dw ? 32 : 64; }

bool nn_qdc_worth(const nn_qdc_shape *s) {
  return nn_qdc_fits(s) && 4 * s->M >= 3 * qd_up(s->M, qd_pw(nn_qgemm_path(), qd_is_dw(s)));
}

size_t nn_qdc_pack_size(const nn_qdc_shape *s) {
  const int64_t Cp = qd_up(s->C, 4), taps = s->KH * s->KW;
  const size_t head = 2 * QD_LINE + nn_align_up(sizeof(qd_head), QD_LINE) +
                      nn_align_up((size_t)s->M * sizeof(int32_t), QD_LINE);
  if (qd_is_dw(s))   /* int16 pairs of taps per channel */
    return head + (size_t)(s->M + QD_PW_MAX) * (size_t)((taps + 1) / 2) * 4;
  return head + (size_t)(s->M + QD_PW_MAX) * (size_t)(taps * Cp) * 2;
}

/* Depthwise panels: for each pair of taps and each of the panel's two
 * vectors of W = 32 channels, the weight pairs of the two halves that
 * vpunpcklwd / vpunpckhwd make of two taps' channel vectors: in 128-bit
 * lane L, the low half holds channels 8L .. 8L + 3, the high half 8L + 4
 * .. 8L + 7.  Lane j of half v is channel 8 (j / 4) + 4 v + j % 4. */
static int64_t qd_dw_channel(int v, int j) { return 8 * (j / 4) + 4 * v + j % 4; }

static void qd_pack_dw(qd_head *h, const int8_t *w) {
  const nn_qdc_shape *s = &h->s;
  const int W = h->pw / 2;
  for (int64_t pm = 0; pm < h->panels; pm++) {
    int16_t *pp = (int16_t *)((char *)h + h->pan + (size_t)pm * h->pan_bytes);
    for (int64_t tp = 0; tp < h->tp; tp++)
      for (int g = 0; g < 2; g++)
        for (int v = 0; v < 2; v++)
          for (int j = 0; j < W / 2; j++)
            for (int i = 0; i < 2; i++) {
              const int64_t ch = pm * h->pw + g * W + qd_dw_channel(v, j), t = 2 * tp + i;
              *pp++ = ch < s->C && t < h->taps ? w[ch * h->taps + t] : 0;
            }
  }
}

void nn_qdc_pack(const nn_qdc_shape *s, const int8_t *w, void *dst) {
  qd_head *h = qd_head_of(dst);
  memset(h, 0, sizeof *h);
  h->magic = QD_MAGIC;
  h->path = nn_qgemm_path();
  h->pw = qd_pw(h->path, qd_is_dw(s));
  /* AVX2's group-1 kernel reads int16 pairs from a widened copy; its
   * depthwise kernel widens as it loads */
  h->el = h->path == QD_AVX2 && !qd_is_dw(s) ? 2 : 1;
  h->s = *s;
  h->Cp = qd_up(s->C, 4);
  qd_padded(s, &h->Hp, &h->Wp);
  h->taps = s->KH * s->KW;
  h->dw = qd_is_dw(s);
  h->tp = (h->taps + 1) / 2;
  h->panels = (s->M + h->pw - 1) / h->pw;
  h->pan_bytes = h->dw ? (size_t)(h->tp * h->pw * 4) : (size_t)(h->taps * h->Cp * h->pw * h->el);
  h->sums = nn_align_up(sizeof *h, QD_LINE);
  h->pan = h->sums + nn_align_up((size_t)s->M * sizeof(int32_t), QD_LINE);
  const int64_t K = (h->dw ? 1 : s->C) * h->taps;
  int32_t *sums = qd_sums(h);
  for (int64_t m = 0; m < s->M; m++) {
    uint32_t t = 0;
    for (int64_t k = 0; k < K; k++)
      t += (uint32_t)(int32_t)w[m * K + k];
    sums[m] = (int32_t)t;
  }
  if (h->dw) {
    qd_pack_dw(h, w);
    return;
  }
  const int grp = h->el == 2 ? 2 : 4, pw = h->pw;
  const int64_t cq_n = h->Cp / grp;
  for (int64_t pm = 0; pm < h->panels; pm++) {
    char *pp = (char *)h + h->pan + (size_t)pm * h->pan_bytes;
    for (int64_t t = 0; t < h->taps; t++)
      for (int64_t cq = 0; cq < cq_n; cq++)
        for (int l = 0; l < pw; l++)
          for (int i = 0; i < grp; i++) {
            const int64_t m = pm * pw + l, ch = cq * grp + i;
            const int8_t v = m < s->M && ch < s->C ? w[(m * s->C + ch) * h->taps + t] : 0;
            const size_t at = (size_t)(((t * cq_n + cq) * pw + l) * grp + i);
            if (h->el == 2)
              ((int16_t *)pp)[at] = v;
            else
              ((int8_t *)pp)[at] = v;
          }
  }
}

void nn_qdc_matrix_shape(int64_t rows, int64_t K, int64_t N, nn_qdc_shape *s) {
  *s = (nn_qdc_shape){.C = K, .M = N, .IH = 1, .IW = rows, .OH = 1, .OW = rows, .KH = 1, .KW = 1,
                      .SH = 1, .SW = 1, .DH = 1, .DW = 1, .channels_last = true};
}

bool nn_qdc_pack_matrix(const nn_qdc_shape *s, const uint8_t *b, bool b_u8, void *dst) {
  const int64_t K = s->C, N = s->M;
  int8_t *bt = nn_malloc((size_t)(N * K) + 1);
  if (!bt)
    return false;
  const uint8_t fl = b_u8 ? 0x80 : 0;   /* uint8 at 128 -> int8 at 0 */
  for (int64_t k = 0; k < K; k++)
    for (int64_t j = 0; j < N; j++)
      bt[j * K + k] = (int8_t)(b[k * N + j] ^ fl);
  nn_qdc_pack(s, bt, dst);
  nn_free(bt);
  return true;
}

void nn_qdc_offsets(const void *packed, int32_t zb, int32_t *off) {
  const qd_head *h = qd_head_of(packed);
  const int32_t *sums = qd_sums(h);
  for (int64_t m = 0; m < h->s.M; m++)
    off[m] = (int32_t)(0u - (uint32_t)zb * (uint32_t)sums[m]);
}

static size_t qd_copy_bytes(int64_t Hp, int64_t Wp, int64_t Cp, int el) {
  return nn_align_up((size_t)(Hp * Wp * Cp * el), QD_LINE);
}

size_t nn_qdc_workspace(const nn_qdc_shape *s) {
  int64_t Hp, Wp;
  qd_padded(s, &Hp, &Wp);
  return QD_LINE + qd_copy_bytes(Hp, Wp, qd_up(s->C, 4), 2) + QD_DW_SLACK +
         nn_align_up((size_t)(s->KH * s->KW) * sizeof(int64_t), QD_LINE);
}

/* ---- tile kernels: out[r][l] = sum over taps and channels (wrapping) ---------- */

static void qd_kernel_c(int R, const uint8_t *const *px, const int64_t *toff, int64_t taps,
                        int64_t C4, const int8_t *w, int32_t *out) {
  uint32_t acc[QD_R][64];
  memset(acc, 0, sizeof acc);
  for (int64_t t = 0; t < taps; t++)
    for (int64_t c4 = 0; c4 < C4; c4++, w += 256)
      for (int r = 0; r < R; r++) {
        const uint8_t *a = px[r] + toff[t] + 4 * c4;
        for (int l = 0; l < 64; l++)
          acc[r][l] += (uint32_t)((int32_t)a[0] * w[4 * l] + (int32_t)a[1] * w[4 * l + 1] +
                                  (int32_t)a[2] * w[4 * l + 2] + (int32_t)a[3] * w[4 * l + 3]);
      }
  for (int r = 0; r < R; r++)
    for (int l = 0; l < 64; l++)
      out[r * 64 + l] = (int32_t)acc[r][l];
}

#if SG_X86
#define QD_VNNI_TARGET __attribute__((target("avx512f,avx512bw,avx512vnni")))
#define QD_AVX2_TARGET __attribute__((target("avx2,fma")))

/* The first `lanes` of 16 (all when 16 or more). */
static inline __mmask16 qd_mask16(int64_t lanes) {
  return lanes >= 16 ? (__mmask16)0xFFFF : lanes <= 0 ? 0 : (__mmask16)((1u << lanes) - 1);
}

/* The tile's sums, the bias already in them (qd_vnni_r starts from it),
 * requantized (nn_qdc_requant, mult at the panel's first channel, mr of
 * them valid) to bytes, pixel r's mr at out8 + r * ld8: the steps of
 * nn_vmath_requant_1 with the clamp split, the same bytes: the upper bound
 * in float (a NaN stays NaN), the lower one on the integer, where a NaN or
 * a value below the int32 range arrives as INT32_MIN. */
QD_VNNI_TARGET static inline __attribute__((always_inline)) void
qd_vnni_requant(const int R, __m512i acc[][4], const nn_qdc_requant *rq, int64_t mr, uint8_t *out8,
                int64_t ld8) {
  const __m512 vhi = _mm512_set1_ps((float)((rq->u8 ? 255 : 127) - rq->zp));
  const __m512i vlo = _mm512_set1_epi32((rq->u8 ? 0 : -128) - rq->zp);
  const __m512i vz = _mm512_set1_epi32(rq->zp);
  SG_UNROLL(4)
  for (int v = 0; v < 4; v++) {
    const __mmask16 k = qd_mask16(mr - 16 * v);   /* masked: no access past channel M */
    const __m512 vm = _mm512_maskz_loadu_ps(k, rq->mult + 16 * v);
    SG_UNROLL(6)
    for (int r = 0; r < R; r++) {
      const __m512 f = _mm512_min_ps(vhi, _mm512_mul_ps(_mm512_cvtepi32_ps(acc[r][v]), vm));
      const __m512i q = _mm512_max_epi32(_mm512_cvtps_epi32(f), vlo);
      _mm512_mask_cvtepi32_storeu_epi8(out8 + r * ld8 + 16 * v, k, _mm512_add_epi32(q, vz));
    }
  }
}

QD_VNNI_TARGET static inline __attribute__((always_inline)) void
qd_vnni_r(const int R, const uint8_t *const *px, const int64_t *toff, int64_t taps, int64_t C4,
          const int8_t *w, int32_t *out, const nn_qdc_requant *rq, int64_t mr, uint8_t *out8,
          int64_t ld8) {
  __m512i acc[QD_R][4];
  SG_UNROLL(4)
  for (int v = 0; v < 4; v++) {   /* the sums start from the bias when requantizing */
    const __m512i b0 = rq ? _mm512_maskz_loadu_epi32(qd_mask16(mr - 16 * v), rq->bias + 16 * v)
                          : _mm512_setzero_si512();
    SG_UNROLL(6)
    for (int r = 0; r < R; r++)
      acc[r][v] = b0;
  }
  for (int64_t t = 0; t < taps; t++) {
    const uint8_t *p[QD_R];
    SG_UNROLL(6)
    for (int r = 0; r < R; r++)
      p[r] = px[r] + toff[t];
    for (int64_t c4 = 0; c4 < C4; c4++, w += 256) {
      const __m512i w0 = _mm512_loadu_si512((const void *)w);
      const __m512i w1 = _mm512_loadu_si512((const void *)(w + 64));
      const __m512i w2 = _mm512_loadu_si512((const void *)(w + 128));
      const __m512i w3 = _mm512_loadu_si512((const void *)(w + 192));
      SG_UNROLL(6)
      for (int r = 0; r < R; r++) {
        int32_t v;
        memcpy(&v, p[r] + 4 * c4, sizeof v);
        const __m512i a = _mm512_set1_epi32(v);
        acc[r][0] = _mm512_dpbusd_epi32(acc[r][0], a, w0);
        acc[r][1] = _mm512_dpbusd_epi32(acc[r][1], a, w1);
        acc[r][2] = _mm512_dpbusd_epi32(acc[r][2], a, w2);
        acc[r][3] = _mm512_dpbusd_epi32(acc[r][3], a, w3);
      }
    }
  }
  if (rq) {
    qd_vnni_requant(R, acc, rq, mr, out8, ld8);
    return;
  }
  SG_UNROLL(6)
  for (int r = 0; r < R; r++)
    SG_UNROLL(4)
    for (int v = 0; v < 4; v++)
      _mm512_storeu_si512((void *)(out + r * 64 + 16 * v), acc[r][v]);
}

/* out: the int32 sums; or, with rq, out8: the requantized bytes, a
 * pixel's ld8 apart. */
QD_VNNI_TARGET static void qd_kernel_vnni(int R, const uint8_t *const *px, const int64_t *toff,
                                          int64_t taps, int64_t C4, const int8_t *w, int32_t *out,
                                          const nn_qdc_requant *rq, int64_t mr, uint8_t *out8,
                                          int64_t ld8) {
  switch (R) {
  case 6: qd_vnni_r(6, px, toff, taps, C4, w, out, rq, mr, out8, ld8); break;
  case 5: qd_vnni_r(5, px, toff, taps, C4, w, out, rq, mr, out8, ld8); break;
  case 4: qd_vnni_r(4, px, toff, taps, C4, w, out, rq, mr, out8, ld8); break;
  case 3: qd_vnni_r(3, px, toff, taps, C4, w, out, rq, mr, out8, ld8); break;
  case 2: qd_vnni_r(2, px, toff, taps, C4, w, out, rq, mr, out8, ld8); break;
  default: qd_vnni_r(1, px, toff, taps, C4, w, out, rq, mr, out8, ld8); break;
  }
}

/* Lanes 0 .. lanes - 1 of 8 on (all when 8 or more): a maskload mask. */
QD_AVX2_TARGET static inline __m256i qd_mask8(int64_t lanes) {
  const __m256i idx = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  return _mm256_cmpgt_epi32(_mm256_set1_epi32((int)(lanes < 0 ? 0 : lanes > 8 ? 8 : lanes)), idx);
}

/* qd_vnni_requant's steps on the AVX2 tile (the bias already in the sums):
 * pixel r's 32 channels packed to bytes (in range: the packs do not
 * saturate), mr of them stored at out8 + r * ld8. */
QD_AVX2_TARGET static inline __attribute__((always_inline)) void
qd_avx2_requant(const int R, __m256i acc[][4], const nn_qdc_requant *rq, int64_t mr, uint8_t *out8,
                int64_t ld8) {
  const __m256 vhi = _mm256_set1_ps((float)((rq->u8 ? 255 : 127) - rq->zp));
  const __m256i vlo = _mm256_set1_epi32((rq->u8 ? 0 : -128) - rq->zp), vz = _mm256_set1_epi32(rq->zp);
  __m256 vm[4];
  SG_UNROLL(4)
  for (int q = 0; q < 4; q++)
    vm[q] = _mm256_castsi256_ps(_mm256_maskload_epi32((const int *)rq->mult + 8 * q, qd_mask8(mr - 8 * q)));
  SG_UNROLL(3)
  for (int r = 0; r < R; r++) {
    __m256i v[4];
    SG_UNROLL(4)
    for (int q = 0; q < 4; q++) {
      const __m256 f = _mm256_min_ps(vhi, _mm256_mul_ps(_mm256_cvtepi32_ps(acc[r][q]), vm[q]));
      v[q] = _mm256_add_epi32(_mm256_max_epi32(_mm256_cvtps_epi32(f), vlo), vz);
    }
    /* 32 int32 -> 32 bytes in order */
    const __m256i a = _mm256_permute4x64_epi64(_mm256_packs_epi32(v[0], v[1]), 0xD8);
    const __m256i b = _mm256_permute4x64_epi64(_mm256_packs_epi32(v[2], v[3]), 0xD8);
    const __m256i p = _mm256_permute4x64_epi64(rq->u8 ? _mm256_packus_epi16(a, b) : _mm256_packs_epi16(a, b), 0xD8);
    uint8_t *dst = out8 + r * ld8;
    if (mr >= 32) {
      _mm256_storeu_si256((__m256i *)dst, p);
    } else {
      uint8_t t[32];
      _mm256_storeu_si256((__m256i *)t, p);
      memcpy(dst, t, (size_t)(mr > 0 ? mr : 0));
    }
  }
}

QD_AVX2_TARGET static inline __attribute__((always_inline)) void
qd_avx2_r(const int R, const uint8_t *const *px, const int64_t *toff, int64_t taps, int64_t C2,
          const int16_t *w, int32_t *out, const nn_qdc_requant *rq, int64_t mr, uint8_t *out8,
          int64_t ld8) {
  __m256i acc[QD_R_AVX2][4];
  SG_UNROLL(4)
  for (int q = 0; q < 4; q++) {   /* the sums start from the bias when requantizing */
    const __m256i b0 = rq ? _mm256_maskload_epi32(rq->bias + 8 * q, qd_mask8(mr - 8 * q))
                          : _mm256_setzero_si256();
    SG_UNROLL(3)
    for (int r = 0; r < R; r++)
      acc[r][q] = b0;
  }
  for (int64_t t = 0; t < taps; t++) {
    const uint8_t *p[QD_R_AVX2];
    SG_UNROLL(3)
    for (int r = 0; r < R; r++)
      p[r] = px[r] + toff[t];
    for (int64_t c2 = 0; c2 < C2; c2++, w += 64) {
      SG_UNROLL(3)
      for (int r = 0; r < R; r++) {
        int32_t v;
        memcpy(&v, p[r] + 4 * c2, sizeof v);   /* two channels as int16 */
        const __m256i a = _mm256_set1_epi32(v);
        SG_UNROLL(4)
        for (int q = 0; q < 4; q++)
          acc[r][q] = _mm256_add_epi32(acc[r][q],
                                       _mm256_madd_epi16(a, _mm256_loadu_si256((const __m256i *)(w + 16 * q))));
      }
    }
  }
  if (rq) {
    qd_avx2_requant(R, acc, rq, mr, out8, ld8);
    return;
  }
  SG_UNROLL(3)
  for (int r = 0; r < R; r++)
    SG_UNROLL(4)
    for (int q = 0; q < 4; q++)
      _mm256_storeu_si256((__m256i *)(out + r * 32 + 8 * q), acc[r][q]);
}

/* out: the int32 sums; or, with rq, out8: the requantized bytes, a
 * pixel's ld8 apart. */
QD_AVX2_TARGET static void qd_kernel_avx2(int R, const uint8_t *const *px, const int64_t *toff,
                                          int64_t taps, int64_t C2, const int16_t *w, int32_t *out,
                                          const nn_qdc_requant *rq, int64_t mr, uint8_t *out8,
                                          int64_t ld8) {
  switch (R) {
  case 3: qd_avx2_r(3, px, toff, taps, C2, w, out, rq, mr, out8, ld8); break;
  case 2: qd_avx2_r(2, px, toff, taps, C2, w, out, rq, mr, out8, ld8); break;
  default: qd_avx2_r(1, px, toff, taps, C2, w, out, rq, mr, out8, ld8); break;
  }
}
#endif

/* ---- depthwise: out[ch] for the panel's pw channels of one pixel ---------------- */

#if SG_X86
/* Channels c0 .. c0 + 15 of the panel from two 8-lane sums in order (lo:
 * c0 .. c0 + 7), requantized as qd_avx2_requant does, to 16 bytes at dst
 * (those at mr and beyond not written). */
QD_AVX2_TARGET static inline __attribute__((always_inline)) void
qd_avx2_requant16(__m256i lo, __m256i hi, const nn_qdc_requant *rq, int64_t c0, int64_t mr,
                  uint8_t *dst) {
  const __m256 vhi = _mm256_set1_ps((float)((rq->u8 ? 255 : 127) - rq->zp));
  const __m256i vlo = _mm256_set1_epi32((rq->u8 ? 0 : -128) - rq->zp), vz = _mm256_set1_epi32(rq->zp);
  __m256i v[2] = {lo, hi};
  SG_UNROLL(2)
  for (int q = 0; q < 2; q++) {
    const __m256i k = qd_mask8(mr - c0 - 8 * q);
    const __m256i b = _mm256_maskload_epi32(rq->bias + c0 + 8 * q, k);
    const __m256 m = _mm256_castsi256_ps(_mm256_maskload_epi32((const int *)rq->mult + c0 + 8 * q, k));
    const __m256 f = _mm256_min_ps(vhi, _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_add_epi32(v[q], b)), m));
    v[q] = _mm256_add_epi32(_mm256_max_epi32(_mm256_cvtps_epi32(f), vlo), vz);
  }
  const __m256i p = _mm256_permute4x64_epi64(_mm256_packs_epi32(v[0], v[1]), 0xD8);
  const __m128i l = _mm256_castsi256_si128(p), h = _mm256_extracti128_si256(p, 1);
  const __m128i b8 = rq->u8 ? _mm_packus_epi16(l, h) : _mm_packs_epi16(l, h);
  if (mr - c0 >= 16) {
    _mm_storeu_si128((__m128i *)dst, b8);
  } else if (mr > c0) {
    uint8_t t[16];
    _mm_storeu_si128((__m128i *)t, b8);
    memcpy(dst, t, (size_t)(mr - c0));
  }
}

/* qd_dw_vnni on AVX2, from the same panels: each 32-channel vector of the
 * VNNI layout is two 16-channel halves here (its 256-bit halves are the
 * vpunpck*wd lanes of channels 0-15 and 16-31), the copy's bytes widened
 * as they are loaded, vpmaddwd + vpaddd for vpdpwssd. */
QD_AVX2_TARGET static void qd_dw_avx2(const qd_head *h, const uint8_t *pa, const uint8_t *pb,
                                      const int64_t *toff, const int16_t *w, int32_t *oa,
                                      int32_t *ob, const nn_qdc_requant *rq, int64_t mr,
                                      uint8_t *const o8[2]) {
  __m256i acc[2][2][2][2];   /* [pixel][group][16-channel half][low / high pairs] */
  SG_UNROLL(2)
  for (int q = 0; q < 2; q++)
    SG_UNROLL(2)
    for (int g = 0; g < 2; g++)
      acc[q][g][0][0] = acc[q][g][0][1] = acc[q][g][1][0] = acc[q][g][1][1] = _mm256_setzero_si256();
  const int16_t *wg = w;
  for (int64_t tp = 0; tp < h->tp; tp++, wg += 128) {
    const int64_t t0 = 2 * tp, t1 = t0 + 1 < h->taps ? t0 + 1 : t0;
    SG_UNROLL(2)
    for (int g = 0; g < 2; g++)
      SG_UNROLL(2)
      for (int b = 0; b < 2; b++) {
        const __m256i wl = _mm256_loadu_si256((const __m256i *)(wg + 64 * g + 16 * b));
        const __m256i wh = _mm256_loadu_si256((const __m256i *)(wg + 64 * g + 32 + 16 * b));
        SG_UNROLL(2)
        for (int q = 0; q < 2; q++) {
          const uint8_t *px = (q ? pb : pa) + 32 * g + 16 * b;
          const __m256i x0 = _mm256_cvtepu8_epi16(_mm_loadu_si128((const __m128i *)(px + toff[t0])));
          const __m256i x1 = _mm256_cvtepu8_epi16(_mm_loadu_si128((const __m128i *)(px + toff[t1])));
          acc[q][g][b][0] = _mm256_add_epi32(acc[q][g][b][0], _mm256_madd_epi16(_mm256_unpacklo_epi16(x0, x1), wl));
          acc[q][g][b][1] = _mm256_add_epi32(acc[q][g][b][1], _mm256_madd_epi16(_mm256_unpackhi_epi16(x0, x1), wh));
        }
      }
  }
  SG_UNROLL(2)
  for (int q = 0; q < 2; q++)
    SG_UNROLL(2)
    for (int g = 0; g < 2; g++)
      SG_UNROLL(2)
      for (int b = 0; b < 2; b++) {
        /* low pairs: channels 0-3 and 8-11 of the half, high: 4-7 and 12-15 */
        const __m256i lo = acc[q][g][b][0], hi = acc[q][g][b][1];
        const __m256i c07 = _mm256_permute2x128_si256(lo, hi, 0x20);
        const __m256i c815 = _mm256_permute2x128_si256(lo, hi, 0x31);
        const int64_t c0 = 32 * g + 16 * b;
        if (rq) {
          qd_avx2_requant16(c07, c815, rq, c0, mr, o8[q] + c0);
          continue;
        }
        int32_t *o = (q ? ob : oa) + c0;
        _mm256_storeu_si256((__m256i *)o, c07);
        _mm256_storeu_si256((__m256i *)(o + 8), c815);
      }
}
#endif

/* px: the pixel's (tap 0's) first byte in the copy, at the panel's first
 * channel; w: the panel (qd_pack_dw).  The last pair of an odd tap count
 * pairs the last tap with itself, against a zero weight. */
static void qd_dw_c(const qd_head *h, const uint8_t *px, const int64_t *toff, const int16_t *w,
                    int32_t *out) {
  const int W = h->pw / 2;
  for (int g = 0; g < 2; g++)
    for (int v = 0; v < 2; v++)
      for (int j = 0; j < W / 2; j++) {
        const int64_t ch = g * W + qd_dw_channel(v, j);
        uint32_t acc = 0;
        for (int64_t tp = 0; tp < h->tp; tp++) {
          const int64_t t0 = 2 * tp, t1 = t0 + 1 < h->taps ? t0 + 1 : t0;
          const int16_t *wp = w + ((tp * 2 + g) * 2 + v) * W + 2 * j;
          acc += (uint32_t)((int32_t)px[toff[t0] + ch] * wp[0] + (int32_t)px[toff[t1] + ch] * wp[1]);
        }
        out[ch] = (int32_t)acc;
      }
}

#if SG_X86
/* The np pixels at pxs[] (each at the panel's first channel of its tap 0),
 * two at a time (eight independent sums hide the multiply-adds' latency
 * over the few tap pairs): the int32 sums to out (a pixel's pw apart,
 * channel order), or with rq the bytes at o8 (ld8 apart).  Requantizing,
 * the sums start from the bias and stay in the unpacks' lane order (low
 * half: lane L holds channels 8L .. 8L + 3 of its 32, high: 8L + 4 ..
 * 8L + 7), the bias and multipliers loaded once per run in that order, and
 * the bytes come back to channel order with two 32-bit unpacks. */
QD_VNNI_TARGET static void qd_dw_vnni(const qd_head *h, const uint8_t *const *pxs, int64_t np,
                                      const int64_t *toff, const int16_t *w, int32_t *out,
                                      const nn_qdc_requant *rq, int64_t mr, uint8_t *o8,
                                      int64_t ld8) {
  __m512i bias[2][2];   /* [group][low / high half], lane order */
  __m512 mult[2][2];
  __m512 vhi = _mm512_setzero_ps();
  __m512i vlo = _mm512_setzero_si512(), vz = _mm512_setzero_si512();
  SG_UNROLL(2)
  for (int g = 0; g < 2; g++) {
    bias[g][0] = bias[g][1] = _mm512_setzero_si512();
    mult[g][0] = mult[g][1] = _mm512_setzero_ps();
  }
  if (rq) {
    vhi = _mm512_set1_ps((float)((rq->u8 ? 255 : 127) - rq->zp));
    vlo = _mm512_set1_epi32((rq->u8 ? 0 : -128) - rq->zp);
    vz = _mm512_set1_epi32(rq->zp);
    SG_UNROLL(2)
    for (int g = 0; g < 2; g++) {
      const __mmask16 k0 = qd_mask16(mr - 32 * g), k1 = qd_mask16(mr - 32 * g - 16);
      const __m512i b0 = _mm512_maskz_loadu_epi32(k0, rq->bias + 32 * g);
      const __m512i b1 = _mm512_maskz_loadu_epi32(k1, rq->bias + 32 * g + 16);
      const __m512 m0 = _mm512_maskz_loadu_ps(k0, rq->mult + 32 * g);
      const __m512 m1 = _mm512_maskz_loadu_ps(k1, rq->mult + 32 * g + 16);
      bias[g][0] = _mm512_shuffle_i32x4(b0, b1, 0x88);   /* channels 0-3, 8-11, 16-19, 24-27 */
      bias[g][1] = _mm512_shuffle_i32x4(b0, b1, 0xDD);   /* 4-7, 12-15, 20-23, 28-31 */
      mult[g][0] = _mm512_shuffle_f32x4(m0, m1, 0x88);
      mult[g][1] = _mm512_shuffle_f32x4(m0, m1, 0xDD);
    }
  }
  for (int64_t t = 0; t < np; t += 2) {
    const uint8_t *pa = pxs[t], *pb = t + 1 < np ? pxs[t + 1] : pxs[t];
    __m512i acc[2][2][2];   /* [pixel][group][low / high half] */
    SG_UNROLL(2)
    for (int q = 0; q < 2; q++)
      SG_UNROLL(2)
      for (int g = 0; g < 2; g++)
        acc[q][g][0] = bias[g][0], acc[q][g][1] = bias[g][1];
    const int16_t *wg = w;
    for (int64_t tp = 0; tp < h->tp; tp++, wg += 128) {
      const int64_t t0 = 2 * tp, t1 = t0 + 1 < h->taps ? t0 + 1 : t0;
      SG_UNROLL(2)
      for (int g = 0; g < 2; g++) {
        const __m512i wl = _mm512_loadu_si512((const void *)(wg + 64 * g));
        const __m512i wh = _mm512_loadu_si512((const void *)(wg + 64 * g + 32));
        SG_UNROLL(2)
        for (int q = 0; q < 2; q++) {
          const uint8_t *px = q ? pb : pa;
          const __m512i x0 = _mm512_cvtepu8_epi16(_mm256_loadu_si256((const __m256i *)(px + toff[t0] + 32 * g)));
          const __m512i x1 = _mm512_cvtepu8_epi16(_mm256_loadu_si256((const __m256i *)(px + toff[t1] + 32 * g)));
          acc[q][g][0] = _mm512_dpwssd_epi32(acc[q][g][0], _mm512_unpacklo_epi16(x0, x1), wl);
          acc[q][g][1] = _mm512_dpwssd_epi32(acc[q][g][1], _mm512_unpackhi_epi16(x0, x1), wh);
        }
      }
    }
    const int nq = t + 1 < np ? 2 : 1;
    for (int q = 0; q < nq; q++)
      SG_UNROLL(2)
      for (int g = 0; g < 2; g++) {
        const __m512i lo = acc[q][g][0], hi = acc[q][g][1];
        if (!rq) {
          const __m512i a = _mm512_shuffle_i32x4(lo, hi, 0x44), b = _mm512_shuffle_i32x4(lo, hi, 0xEE);
          int32_t *o = out + (t + q) * h->pw + 32 * g;
          _mm512_storeu_si512((void *)o, _mm512_shuffle_i32x4(a, a, 0xD8));
          _mm512_storeu_si512((void *)(o + 16), _mm512_shuffle_i32x4(b, b, 0xD8));
          continue;
        }
        /* qd_vnni_requant's steps (the clamp split: the same bytes) */
        __m128i b8[2];
        SG_UNROLL(2)
        for (int v = 0; v < 2; v++) {
          const __m512 f = _mm512_min_ps(vhi, _mm512_mul_ps(_mm512_cvtepi32_ps(v ? hi : lo), mult[g][v]));
          b8[v] = _mm512_cvtepi32_epi8(_mm512_add_epi32(_mm512_max_epi32(_mm512_cvtps_epi32(f), vlo), vz));
        }
        const __m128i c0 = _mm_unpacklo_epi32(b8[0], b8[1]), c1 = _mm_unpackhi_epi32(b8[0], b8[1]);
        uint8_t *dst = o8 + (t + q) * ld8 + 32 * g;
        const int64_t left = mr - 32 * g;
        if (left >= 32) {
          _mm_storeu_si128((__m128i *)dst, c0);
          _mm_storeu_si128((__m128i *)(dst + 16), c1);
        } else if (left > 0) {
          uint8_t tmp[32];
          _mm_storeu_si128((__m128i *)tmp, c0);
          _mm_storeu_si128((__m128i *)(tmp + 16), c1);
          memcpy(dst, tmp, (size_t)left);
        }
      }
  }
}

#endif

/* ---- compute ---------------------------------------------------------------------- */

typedef struct qd_job {
  const qd_head *h;
  const uint8_t *xc;           /* the copy */
  const int64_t *toff;         /* each tap's byte offset in the copy */
  int64_t run, runs;           /* pixels per task (a multiple of QD_R), tasks per panel */
  nn_qdc_store_fn store;        /* the sums; or */
  nn_qdc_store8_fn store8;      /* the bytes, requantized as rq says */
  nn_qdc_requant rq;
  void *user;
  nn_block blk[QD_MAX_BLOCKS];
  int nblk;
} qd_job;

static void qd_task(const qd_job *j, int64_t task) {
  const qd_head *h = j->h;
  const nn_qdc_shape *s = &h->s;
  const int pw = h->pw;
  /* a channels-last y: a pixel's panels in consecutive tasks, so one worker
   * writes all of a pixel's row (panel-major, two workers wrote the two
   * halves of the same cache lines at once: a 16 -> 96 1x1 ran slower on two
   * threads than on one); else panel-major (each panel's weights stay in
   * cache over its pixels) */
  const int64_t pm = j->rq.dst ? task % h->panels : task / j->runs;
  const int64_t p0 = (j->rq.dst ? task / h->panels : task % j->runs) * j->run;
  const int64_t P = s->OH * s->OW, np = qd_min(j->run, P - p0);
  const int64_t m0 = pm * pw, mr = qd_min(pw, s->M - m0);
  const char *wp = (const char *)h + h->pan + (size_t)pm * h->pan_bytes;
  const size_t pix = (size_t)(h->Cp * h->el);
  int32_t run[NN_QDC_COLS_MAX * QD_PW_MAX];   /* [pixel][channel of the panel] */
  uint8_t run8[NN_QDC_COLS_MAX * QD_PW_MAX];  /* the same, requantized (store8) */
  const nn_qdc_requant rq = {j->rq.bias ? j->rq.bias + m0 : NULL, j->rq.mult ? j->rq.mult + m0 : NULL,
                             j->rq.zp, j->rq.u8, NULL, 0};
  /* where the bytes go: the output itself (channels-last), else run8 */
  uint8_t *o8 = j->rq.dst ? j->rq.dst + p0 * j->rq.ld + m0 : run8;
  const int64_t ld8 = j->rq.dst ? j->rq.ld : pw;
  bool in_regs = false;                        /* o8 written by the kernel */
  int64_t oh = p0 / s->OW, ow = p0 % s->OW;   /* the next pixel's row and column */
  if (h->dw) {
    const int16_t *w = (const int16_t *)wp;
    const uint8_t *pxs[NN_QDC_COLS_MAX];   /* each pixel's tap 0 in the copy, at channel m0 */
    for (int64_t t = 0; t < np; t++, ow++) {
      if (ow == s->OW)
        ow = 0, oh++;
      pxs[t] = j->xc + (size_t)(oh * s->SH * h->Wp + ow * s->SW) * pix + (size_t)(m0 * h->el);
    }
#if SG_X86
    if (h->path == QD_VNNI) {
      qd_dw_vnni(h, pxs, np, j->toff, w, run, j->rq.bias ? &rq : NULL, mr, o8, ld8);
      in_regs = j->rq.bias != NULL;
      goto store;
    }
#endif
    int32_t spare[QD_PW_MAX];   /* an odd run's second pixel, computed and dropped */
    uint8_t spare8[QD_PW_MAX];
    for (int64_t t = 0; t < np; t += 2) {
      const uint8_t *px[2] = {pxs[t], t + 1 < np ? pxs[t + 1] : pxs[t]};   /* in bounds; */
      int32_t *o[2] = {run + t * pw, t + 1 < np ? run + (t + 1) * pw : spare};   /* to spare */
      uint8_t *const b8[2] = {o8 + t * ld8, t + 1 < np ? o8 + (t + 1) * ld8 : spare8};
#if SG_X86
      if (h->path == QD_AVX2) {
        qd_dw_avx2(h, px[0], px[1], j->toff, w, o[0], o[1], j->rq.bias ? &rq : NULL, mr, b8);
        in_regs = j->rq.bias != NULL;
      } else
#endif
        for (int q = 0; q < 2; q++)
          qd_dw_c(h, px[q], j->toff, w, o[q]);
    }
    goto store;
  }
  const int64_t rmax = h->path == QD_AVX2 ? QD_R_AVX2 : QD_R;
  for (int64_t t0 = 0; t0 < np; t0 += rmax) {
    const int R = (int)qd_min(rmax, np - t0);
    const uint8_t *px[QD_R];
    for (int r = 0; r < R; r++, ow++) {
      if (ow == s->OW)
        ow = 0, oh++;
      px[r] = j->xc + (size_t)(oh * s->SH * h->Wp + ow * s->SW) * pix;
    }
    int32_t *tile = run + t0 * pw;
#if SG_X86
    if (h->path == QD_VNNI) {
      qd_kernel_vnni(R, px, j->toff, h->taps, h->Cp / 4, (const int8_t *)wp, tile,
                     j->rq.bias ? &rq : NULL, mr, o8 + t0 * ld8, ld8);
      in_regs = j->rq.bias != NULL;
    } else if (h->path == QD_AVX2) {
      qd_kernel_avx2(R, px, j->toff, h->taps, h->Cp / 2, (const int16_t *)wp, tile,
                     j->rq.bias ? &rq : NULL, mr, o8 + t0 * ld8, ld8);
      in_regs = j->rq.bias != NULL;
    } else
#endif
      qd_kernel_c(R, px, j->toff, h->taps, h->Cp / 4, (const int8_t *)wp, tile);
  }
store:
  if (!j->rq.bias) {
    j->store(j->user, m0, mr, p0, np, run, pw);
    return;
  }
  for (int64_t t = 0; t < np && !in_regs; t++)   /* the portable kernels' sums */
    for (int64_t r = 0; r < mr; r++)
      nn_vmath_requant_1(run[t * pw + r], rq.bias[r], rq.mult[r], rq.zp, rq.u8, o8 + t * ld8 + r);
  if (!j->rq.dst)
    j->store8(j->user, m0, mr, p0, np, run8, pw);
}

static void qd_tasks(void *arg, int64_t s0, int64_t s1) {
  qd_job *j = arg;
  for (int64_t s = s0; s < s1; s++)
    for (;;) {
      int64_t t = nn_blocks_claim(j->blk, j->nblk, nn_parallel_worker() % j->nblk);
      if (t < 0)
        break;
      qd_task(j, t);
    }
}

/* n bytes, xor'd with flip, as int16 (the AVX2 path's copy). */
static void qd_widen(int16_t *o, const uint8_t *t, int64_t n, uint8_t flip) {
  int64_t i = 0;
#if SG_X86
  const __m128i z = _mm_setzero_si128(), f = _mm_set1_epi8((char)flip);
  for (; i + 16 <= n; i += 16) {
    const __m128i v = _mm_xor_si128(_mm_loadu_si128((const __m128i *)(t + i)), f);
    _mm_storeu_si128((__m128i *)(o + i), _mm_unpacklo_epi8(v, z));
    _mm_storeu_si128((__m128i *)(o + i + 8), _mm_unpackhi_epi8(v, z));
  }
#endif
  for (; i < n; i++)
    o[i] = (uint8_t)(t[i] ^ flip);
}

/* o[i] = t[i] ^ flip for n bytes. */
static void qd_flip_copy(uint8_t *o, const uint8_t *t, int64_t n, uint8_t flip) {
  int64_t i = 0;
#if SG_X86
  const __m128i f = _mm_set1_epi8((char)flip);
  for (; i + 16 <= n; i += 16)
    _mm_storeu_si128((__m128i *)(o + i), _mm_xor_si128(_mm_loadu_si128((const __m128i *)(t + i)), f));
#endif
  for (; i < n; i++)
    o[i] = (uint8_t)(t[i] ^ flip);
}

/* 16 channels x 16 pixels of the image (x at channel c0, flat pixel p0;
 * pixels are contiguous across rows) into the copy, a pixel's 16 channels
 * at a time, uint8 or widened to int16. */
static void qd_copy16(const qd_head *h, const uint8_t *x, int64_t c0, int64_t p0, uint8_t flip,
                      uint8_t *xc) {
  const nn_qdc_shape *s = &h->s;
  uint8_t blk[16 * 16];
  nn_vmath_transpose_u8(blk, 16, x + c0 * s->IH * s->IW + p0, s->IH * s->IW, 16, 16, flip);
  int64_t ih = p0 / s->IW, iw = p0 % s->IW;   /* stepped, not divided, per pixel */
  for (int k = 0; k < 16; k++, iw++) {
    if (iw == s->IW)
      iw = 0, ih++;
    const int64_t at = ((ih + s->PT) * h->Wp + s->PL + iw) * h->Cp + c0;
    if (h->el == 1)
      memcpy(xc + at, blk + 16 * k, 16);
    else
      qd_widen((int16_t *)xc + at, blk + 16 * k, 16, 0);
  }
}

/* n elements of the copy from element `at` set to zb (bytes, or int16). */
static void qd_set(const qd_head *h, uint8_t *xc, int64_t at, int64_t n, int32_t zb) {
  if (h->el == 1) {
    memset(xc + at, zb, (size_t)n);
    return;
  }
  int16_t *xs = (int16_t *)xc + at;
  for (int64_t i = 0; i < n; i++)
    xs[i] = (int16_t)zb;
}

/* What the image's pixels leave unwritten: the padding rows and columns,
 * and the channels past C of the others. */
static void qd_fill_border(const qd_head *h, uint8_t *xc, int32_t zb) {
  const nn_qdc_shape *s = &h->s;
  const int64_t Cp = h->Cp, row = h->Wp * Cp;
  qd_set(h, xc, 0, s->PT * row, zb);
  qd_set(h, xc, (s->PT + s->IH) * row, (h->Hp - s->PT - s->IH) * row, zb);
  for (int64_t ih = s->PT; ih < s->PT + s->IH; ih++) {
    qd_set(h, xc, ih * row, s->PL * Cp, zb);
    qd_set(h, xc, ih * row + (s->PL + s->IW) * Cp, (h->Wp - s->PL - s->IW) * Cp, zb);
    for (int64_t iw = s->PL; Cp > s->C && iw < s->PL + s->IW; iw++)
      qd_set(h, xc, ih * row + iw * Cp + s->C, Cp - s->C, zb);
  }
}

/* Element `at` of the copy: the byte flipped, widened on the int16 path. */
static inline void qd_put(const qd_head *h, uint8_t *xc, int64_t at, uint8_t v) {
  if (h->el == 1)
    xc[at] = v;
  else
    ((int16_t *)xc)[at] = v;
}

typedef struct qd_copy_job {
  const qd_head *h;
  const uint8_t *x;
  uint8_t flip;
  uint8_t *xc;
} qd_copy_job;

/* Rows ih0 .. ih1 - 1 of a channels-last image into the copy: as they are
 * when they need no change, else a byte at a time, flipped or widened. */
static void qd_copy_rows_nhwc(void *arg, int64_t ih0, int64_t ih1) {
  const qd_copy_job *j = arg;
  const qd_head *h = j->h;
  const nn_qdc_shape *s = &h->s;
  const int64_t Cp = h->Cp;
  for (int64_t ih = ih0; ih < ih1; ih++) {
    const int64_t at = ((ih + s->PT) * h->Wp + s->PL) * Cp;
    const uint8_t *src = j->x + ih * s->IW * s->C;
    if (h->el == 1 && !j->flip && Cp == s->C) {
      memcpy(j->xc + at, src, (size_t)(s->IW * s->C));
      continue;
    }
    if (h->el == 2) {   /* widened in vectors: the row at once, or a pixel at a time */
      if (Cp == s->C)
        qd_widen((int16_t *)j->xc + at, src, s->IW * s->C, j->flip);
      else
        for (int64_t iw = 0; iw < s->IW; iw++)
          qd_widen((int16_t *)j->xc + at + iw * Cp, src + iw * s->C, s->C, j->flip);
      continue;
    }
    if (Cp == s->C)   /* bytes, flipped (int8): the row at once, or a pixel at a time */
      qd_flip_copy(j->xc + at, src, s->IW * s->C, j->flip);
    else
      for (int64_t iw = 0; iw < s->IW; iw++)
        qd_flip_copy(j->xc + at + iw * Cp, src + iw * s->C, s->C, j->flip);
  }
}

/* Blocks b0 .. b1 - 1 of 16 flat pixels (the last overlapping), every
 * channel block of each. */
static void qd_copy_range(void *arg, int64_t b0, int64_t b1) {
  const qd_copy_job *j = arg;
  const qd_head *h = j->h;
  const nn_qdc_shape *s = &h->s;
  const int64_t plane = s->IH * s->IW;
  if (h->el == 1 && s->IW >= 16) {   /* units are image rows, transposed in place */
    for (int64_t ih = b0; ih < b1; ih++)
      nn_vmath_transpose_u8(j->xc + ((ih + s->PT) * h->Wp + s->PL) * h->Cp, h->Cp, j->x + ih * s->IW,
                            plane, s->C, s->IW, j->flip);
    return;
  }
  if (s->IW >= 16) {   /* int16: 16 pixels x up to 256 channels at a time, then widened */
    uint8_t tmp[16 * 256];
    for (int64_t ih = b0; ih < b1; ih++)
      for (int64_t w = 0; w < s->IW; w += 16) {
        const int64_t iw0 = qd_min(w, s->IW - 16);
        for (int64_t c = 0; c < s->C; c += 256) {
          const int64_t c0 = qd_min(c, s->C - 16), cn = qd_min(256, s->C - c0);
          nn_vmath_transpose_u8(tmp, 256, j->x + c0 * plane + ih * s->IW + iw0, plane, cn, 16, j->flip);
          for (int k = 0; k < 16; k++)
            qd_widen((int16_t *)j->xc + ((ih + s->PT) * h->Wp + s->PL + iw0 + k) * h->Cp + c0,
                     tmp + 256 * k, cn, 0);
        }
      }
    return;
  }
  for (int64_t b = b0; b < b1; b++)
    for (int64_t c0 = 0; c0 < s->C; c0 += 16)
      qd_copy16(j->h, j->x, qd_min(c0, s->C - 16), qd_min(16 * b, plane - 16), j->flip, j->xc);
}

/* The channels-last copy of one image, padded with zb: whole image rows
 * (or 16 x 16 blocks of flat pixels) transposed on the workers where the
 * image has 16 channels and 16 pixels (an edge block overlapping the one
 * before: the same bytes written twice), a channels-last image row by row,
 * the rest element by element. */
static void qd_copy(nn_ctx *c, const qd_head *h, const uint8_t *x, uint8_t flip, int32_t zb,
                    uint8_t *xc) {
  const nn_qdc_shape *s = &h->s;
  const int64_t Cp = h->Cp, plane = s->IH * s->IW;
  qd_fill_border(h, xc, zb);
  if (s->channels_last) {   /* rows copied, flipped (widened on AVX2), on the workers:
                               a serial copy of a 56 x 56 x 144 image took 11 us on
                               one thread and 36 on two (its rows were written by both) */
    qd_copy_job j = {.h = h, .x = x, .flip = flip, .xc = xc};
    nn_parallel_for(c, s->IH, qd_max(1, 16384 / qd_max(1, s->IW * s->C)), qd_copy_rows_nhwc, &j);
    return;
  }
  if (s->C >= 16 && plane >= 16) {   /* on the workers: a serial copy held back two threads */
    qd_copy_job j = {.h = h, .x = x, .flip = flip, .xc = xc};
    if (s->IW >= 16)
      nn_parallel_for(c, s->IH, qd_max(1, 4096 / (s->C * s->IW)), qd_copy_range, &j);
    else
      nn_parallel_for(c, (plane + 15) / 16, qd_max(1, 4096 / s->C), qd_copy_range, &j);
    return;
  }
  for (int64_t ih = 0; ih < s->IH; ih++) {
    const int64_t row = ((ih + s->PT) * h->Wp + s->PL) * Cp;
    for (int64_t ch = 0; ch < s->C; ch++) {
      const uint8_t *src = x + ch * plane + ih * s->IW;
      for (int64_t iw = 0; iw < s->IW; iw++)
        qd_put(h, xc, row + iw * Cp + ch, src[iw] ^ flip);
    }
  }
}

static nn_status qd_compute(nn_ctx *c, const void *packed, const uint8_t *x, uint8_t flip, int32_t zb,
                            nn_qdc_store_fn store, nn_qdc_store8_fn store8, const nn_qdc_requant *rq,
                            void *user, void *ws, size_t ws_bytes) {
  if (!packed || qd_head_of(packed)->magic != QD_MAGIC || !x || !ws ||
      !(store || (rq && rq->bias && rq->mult && (store8 || rq->dst))))
    return NN_ERR_INVALID_ARG;
  const qd_head *h = qd_head_of(packed);
  const nn_qdc_shape *s = &h->s;
  uintptr_t base = ((uintptr_t)ws + QD_LINE - 1) & ~(uintptr_t)(QD_LINE - 1);
  const size_t copy = qd_copy_bytes(h->Hp, h->Wp, h->Cp, h->el) + QD_DW_SLACK;
  if (ws_bytes < (size_t)(base - (uintptr_t)ws) + copy + (size_t)h->taps * sizeof(int64_t))
    return NN_ERR_INVALID_ARG;
  uint8_t *xc = (uint8_t *)base;
  int64_t *toff = (int64_t *)(xc + copy);
  /* a channels-last image with no border to add (a 1x1 convolution after
   * another direct one, a QLinearMatMul's rows) is its own copy: read in place */
  const bool in_place = s->channels_last && h->el == 1 && !flip && h->Cp == s->C && !h->dw &&
                        s->PT == 0 && s->PL == 0 && h->Hp == s->IH && h->Wp == s->IW;
  if (!in_place) {
    qd_copy(c, h, x, flip, zb, xc);
    const size_t used = (size_t)(h->Hp * h->Wp * h->Cp * h->el);
    memset(xc + used, 0, copy - used);   /* the slack the depthwise loads may reach */
  }
  for (int64_t t = 0; t < h->taps; t++)
    toff[t] = ((t / s->KW) * s->DH * h->Wp + (t % s->KW) * s->DW) * h->Cp * h->el;
  qd_job j;
  memset(&j, 0, sizeof j);
  j.h = h;
  j.xc = in_place ? x : xc;
  j.toff = toff;
  j.store = store;
  j.store8 = store8;
  if (rq)
    j.rq = *rq;
  j.user = user;
  /* runs of up to NN_QDC_COLS_MAX pixels, fewer when two workers would
   * otherwise lack tasks, then evened out (49 pixels: 30 + 19, not 48 + 1) */
  const int threads = c ? nn_parallel_width(c) : 1;
  const int64_t P = s->OH * s->OW;
  int64_t run = NN_QDC_COLS_MAX;
  while (run > QD_R && threads > 1 && h->panels * ((P + run - 1) / run) < 4 * threads)
    run -= QD_R;
  const int64_t runs = (P + run - 1) / run;
  j.run = qd_min(run, qd_up((P + runs - 1) / runs, QD_R));
  j.runs = (P + j.run - 1) / j.run;
  const int64_t tasks = h->panels * j.runs;
  const int64_t par = qd_min(threads, tasks);
  j.nblk = (int)(par < 1 ? 1 : qd_min(par, QD_MAX_BLOCKS));
  nn_blocks_init(j.blk, j.nblk, tasks);
  if (par <= 1)
    qd_tasks(&j, 0, 1);
  else
    nn_parallel_for(c, par, 1, qd_tasks, &j);
  return NN_OK;
}

nn_status nn_qdc_compute(nn_ctx *c, const void *packed, const uint8_t *x, uint8_t flip, int32_t zb,
                         nn_qdc_store_fn store, void *user, void *ws, size_t ws_bytes) {
  return qd_compute(c, packed, x, flip, zb, store, NULL, NULL, user, ws, ws_bytes);
}

nn_status nn_qdc_compute_8(nn_ctx *c, const void *packed, const uint8_t *x, uint8_t flip, int32_t zb,
                           const nn_qdc_requant *rq, nn_qdc_store8_fn store, void *user, void *ws,
                           size_t ws_bytes) {
  return qd_compute(c, packed, x, flip, zb, NULL, store, rq, user, ws, ws_bytes);
}

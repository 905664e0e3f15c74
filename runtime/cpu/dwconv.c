/* dwconv.c - direct depthwise convolution; see dwconv.h.
 *
 * Depthwise conv does KH*KW multiply-adds per output and reads each input
 * value KH*KW times, so it is bound by loads and FMA latency, not by a GEMM's
 * register reuse.  The AVX2 path:
 *   - reads the input through a small ring of zero-padded rows on the stack
 *     (deinterleaved into evens and odds for stride 2), so every output
 *     column runs the same vector code: no edge cases, no gathers;
 *   - keeps 8-wide output vectors in registers across all taps (no
 *     read-modify-write of y per tap), up to 8 of them at once so the FMA
 *     chains overlap; narrow maps (<= 16 columns) block 4 output rows instead;
 *   - applies bias and activation before the single store.
 * On AVX-512, 3x3 stride 2 picks its taps' columns out of plain vector
 * loads with permutes instead (dw5_rows_k3s2).  Maps of at most 28x28
 * outputs go 8 channels a vector instead (dw2_cv_block).
 * The portable path accumulates rows of y tap by tap (contiguous inner loop
 * for stride 1, which compilers vectorize).
 *
 * Work: one task per (image, output channel, block of output rows), claimed
 * by nn_parallel_for; rows are split only when there are too few planes to
 * keep the workers busy.
 */
#include <stdint.h>
#include <string.h>

#include "cpu/dwconv.h"
#include "cpu/sgemm_simd.h"

typedef struct dw_job {
  const nn_dwconv_shape *s;
  const float *x, *w;
  float *y;
  sg_act act;
  const float *bias;
  const float *res;      /* residual of the shape of y, added before act; NULL none */
  int dh, dw;
  int64_t rblk, nrblk;   /* output rows per task, row blocks per plane */
  bool simd;             /* AVX2 ring kernels (dw2_rows_t) */
  bool k3s1;             /* AVX2 3x3 stride-1 kernel (dw2_rows_k3s1) */
  bool k3s2;             /* AVX-512 3x3 stride-2 kernel (dw5_rows_k3s2) */
  bool k5s2;             /* AVX-512 5x5 stride-2 kernel (dw5_rows_k5s2) */
  bool k3s2a;            /* AVX2 3x3 stride-2 kernel (dw2_rows_k3s2) */
  /* panel output (nn_dwconv2d_panel): output pixel j of the plane goes to
   * pan[((j - pj0) / pnr) * pstride + (j - pj0) % pnr] instead of y */
  float *pan;
  int64_t pj0, pstride;
  int pnr, pnr_log2;
  int64_t yoh0;          /* 3x3 stride 1 into planes: the output row at yc (a band's first) */
  sg_clamp clamp;        /* act as a clamp where it is one (AVX2 3x3 kernels) */
  sg_act post;           /* a costly activation dw_range applies to each block of
                            rows the vector kernels wrote (act is then none) */
} dw_job;

static void dw_job_act(dw_job *j, const nn_sgemm_epi *epi) {
  j->act = sg_act_from(epi);
  j->clamp = sg_clamp_of(&j->act);
}

static inline int64_t dw_min(int64_t a, int64_t b) { return a < b ? a : b; }
static inline int64_t dw_max(int64_t a, int64_t b) { return a > b ? a : b; }

/* Portable: rows of y accumulated tap by tap over the range of ow where the
 * tap is inside the input; the inner loop is contiguous for stride 1, so a
 * compiler vectorizes it for whatever SIMD the target has. */
static void dw_rows_portable(const dw_job *j, const float *xc, const float *wc, float *yc,
                             const float *rc, float bias, int64_t oh0, int64_t oh1) {
  const nn_dwconv_shape *s = j->s;
  const int64_t SW = s->SW;
  for (int64_t oh = oh0; oh < oh1; oh++) {
    float *restrict yr = yc + oh * s->OW;
    for (int64_t ow = 0; ow < s->OW; ow++)
      yr[ow] = bias;
    for (int kh = 0; kh < s->KH; kh++) {
      int64_t ih = oh * s->SH - s->PT + (int64_t)kh * j->dh;
      if (ih < 0 || ih >= s->IH)
        continue;
      const float *restrict xr = xc + ih * s->IW;
      for (int kw = 0; kw < s->KW; kw++) {
        int64_t off = (int64_t)kw * j->dw - s->PL;   /* iw = ow * SW + off */
        int64_t lo = off < 0 ? (-off + SW - 1) / SW : 0;
        int64_t hi = s->IW - 1 - off >= 0 ? (s->IW - 1 - off) / SW + 1 : 0;
        lo = dw_min(lo, s->OW);
        hi = dw_min(hi, s->OW);
        float wv = wc[kh * s->KW + kw];
        if (SW == 1) {
          const float *restrict xs = xr + off;
          for (int64_t ow = lo; ow < hi; ow++)
            yr[ow] += wv * xs[ow];
        } else {
          for (int64_t ow = lo; ow < hi; ow++)
            yr[ow] += wv * xr[ow * SW + off];
        }
      }
    }
    if (rc) {
      const float *restrict rr = rc + oh * s->OW;
      for (int64_t ow = 0; ow < s->OW; ow++)
        yr[ow] += rr[ow];
    }
    if (j->act.act != NN_SGEMM_ACT_NONE)
      for (int64_t ow = 0; ow < s->OW; ow++)
        yr[ow] = sg_act1(&j->act, yr[ow]);
  }
}

#if SG_X86
/* The AVX2 path reads its input through a ring of zero-padded rows on the
 * stack: input row ih lives in slot ih % nslots (nslots >= KH, more when
 * several output rows are computed together), padded on the left by PL and
 * on the right far enough that every 8-wide block, including the last
 * partial one, reads inside the slot.  So no output column is an edge case,
 * and each input row is padded once per task however many output rows use
 * it.  For stride 2 the slot holds the padded row deinterleaved, evens then
 * odds (E[t] = row[2t], O[t] = row[2t + 1]): tap kw of outputs ow..ow+7 is
 * then a plain load, E or O at ow + kw / 2.  Dilated (stride 1 only: the
 * 3x3 layers of DeepLab's backbone at dilations 2 and 4) tap kw is the load
 * at ow + kw * DW, and the ring holds the (KH - 1) * DH + 1 input rows an
 * output row spans.  Rows too wide for the 32 KiB ring take the portable
 * path. */
#define DW_RING_FLOATS 8192
#define DW_MAX_KH 8
#define DW_MAX_SLOTS 16
/* Row blocking for narrow maps: with at most 2 vectors per row, DW_RB rows
 * are computed together so that at least 4 FMA chains are in flight. */
#define DW_RB 4

typedef struct dw_ring {
  float *slot[DW_MAX_SLOTS];
  int64_t tag[DW_MAX_SLOTS];   /* input row held, -1 none */
} dw_ring;

static inline int64_t dw_round8(int64_t v) { return (v + 7) / 8 * 8; }

static inline int dw_dil(int d) { return d > 0 ? d : 1; }

/* Slots in the ring: the rows one output row spans, plus the rows of
 * DW_RB - 1 more output rows when they are narrow (row blocking; not
 * dilated). */
static int64_t dw_ring_slots(const nn_dwconv_shape *s) {
  if (dw_dil(s->DH) > 1)
    return (int64_t)(s->KH - 1) * dw_dil(s->DH) + 1;
  int64_t n = s->KH;
  if (s->OW <= 16 && s->KH + (DW_RB - 1) * (int64_t)s->SH <= DW_MAX_SLOTS)
    n = s->KH + (DW_RB - 1) * (int64_t)s->SH;
  return n;
}

/* Floats one slot needs, or 0 when the ring cannot hold its slots. */
static int64_t dw_ring_slot_floats(const nn_dwconv_shape *s, int64_t *len) {
  int64_t owr = dw_round8(s->OW);
  int64_t n;
  if (s->SW == 1) {
    *len = owr + (int64_t)(s->KW - 1) * dw_dil(s->DW);
    n = dw_round8(*len);
  } else {
    *len = owr + s->KW / 2;
    n = 2 * dw_round8(*len);
  }
  if (s->KH > DW_MAX_KH || dw_ring_slots(s) > DW_MAX_SLOTS || dw_ring_slots(s) * n > DW_RING_FLOATS)
    return 0;
  return n;
}

/* Columns [i, i + 8) of the padded input row (column c of the row at
 * c + PL), zero outside the row.  Masked loads instead of memset/memcpy
 * calls: rows of small maps are a few floats and the calls cost more than
 * the copy.  Lanes outside the row are masked off and never touched. */
static SG_ALWAYS_INLINE SG256 __m256 dw2_load_padded(const nn_dwconv_shape *s, const float *xr,
                                                     int64_t i) {
  /* lane l reads column i + l - PL: valid when 0 <= i + l - PL < IW */
  int64_t first = s->PL - i, end = s->PL - i + s->IW;
  if (end <= 0 || first >= 8)
    return _mm256_setzero_ps();
  if (first <= 0 && end >= 8)
    return _mm256_loadu_ps(xr + (i - s->PL));
  const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  __m256i m = _mm256_and_si256(
      _mm256_cmpgt_epi32(lane, _mm256_set1_epi32((int)dw_max(first, -1) - 1)),
      _mm256_cmpgt_epi32(_mm256_set1_epi32((int)dw_min(end, 8)), lane));
  /* the first lane's address may lie before the row: only the unmasked
   * lanes, inside it, are read */
  const float *src =
      (const float *)((uintptr_t)xr + (uintptr_t)((i - s->PL) * (int64_t)sizeof(float)));
  return _mm256_maskload_ps(src, m);
}

/* Fill a ring slot with input row ih: padded (stride 1) or padded and
 * deinterleaved into evens then odds (stride 2), `half` floats each. */
static SG_ALWAYS_INLINE SG256 void dw2_fill(const int S, const nn_dwconv_shape *s,
                                            const float *xc, int64_t ih, float *slot,
                                            int64_t half) {
  const float *xr = xc + ih * s->IW;
  if (S == 1) {
    for (int64_t i = 0; i < half; i += 8)
      _mm256_storeu_ps(slot + i, dw2_load_padded(s, xr, i));
    return;
  }
  for (int64_t t = 0; t < half; t += 8) {
    __m256 lo = dw2_load_padded(s, xr, 2 * t), hi = dw2_load_padded(s, xr, 2 * t + 8);
    _mm256_storeu_ps(slot + t, sg2_even_lanes(lo, hi));
    _mm256_storeu_ps(slot + half + t, sg2_odd_lanes(lo, hi));
  }
}

/* R output rows x V vectors (8 * V outputs from ow each), taps of rows
 * [kh0, kh1) (the same for all R rows: used with R > 1 only where every
 * tap is inside the input); the last vector of each row is stored partially
 * when `tail` < 8.  rows[r][kh] is the padded input row of tap kh of output
 * row r; dil: the dilation along the row (stride 1).  R x V chains of FMAs
 * run side by side to cover their latency. */
static SG_ALWAYS_INLINE SG256 void dw2_block(const int KW, const int S, const int R,
                                             const int V, const dw_job *j,
                                             float *const (*rows)[DW_MAX_KH], int64_t half,
                                             const float *wc, float *yr, const float *rr,
                                             int64_t ldy, int kh0, int kh1, int64_t ow,
                                             float bias, int tail, int dil) {
  /* with few vectors, the odd taps in a second set of chains: 4 chains of
   * KH x KW FMAs were bound by the FMA latency */
  const int SPLIT = R * V <= 4 ? 2 : 1;
  __m256 acc[4][8], acc2[4][8];
SG_UNROLL(4)
  for (int r = 0; r < R; r++)
SG_UNROLL(8)
    for (int v = 0; v < V; v++) {
      acc[r][v] = _mm256_set1_ps(bias);
      acc2[r][v] = _mm256_setzero_ps();
    }
  for (int kh = kh0; kh < kh1; kh++) {
    const float *wr = wc + kh * KW;
SG_UNROLL(5)
    for (int kw = 0; kw < KW; kw++) {
      __m256 wv = _mm256_broadcast_ss(wr + kw);
SG_UNROLL(4)
      for (int r = 0; r < R; r++) {
        const float *p = rows[r][kh] + ow + (S == 1 ? kw * dil : (kw & 1) * half + kw / 2);
SG_UNROLL(8)
        for (int v = 0; v < V; v++) {
          if (SPLIT == 2 && (kw & 1))
            acc2[r][v] = _mm256_fmadd_ps(wv, _mm256_loadu_ps(p + 8 * v), acc2[r][v]);
          else
            acc[r][v] = _mm256_fmadd_ps(wv, _mm256_loadu_ps(p + 8 * v), acc[r][v]);
        }
      }
    }
  }
  if (SPLIT == 2)
SG_UNROLL(4)
    for (int r = 0; r < R; r++)
SG_UNROLL(8)
      for (int v = 0; v < V; v++)
        acc[r][v] = _mm256_add_ps(acc[r][v], acc2[r][v]);
  const __m256i m = _mm256_cmpgt_epi32(_mm256_set1_epi32(tail),
                                       _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
SG_UNROLL(4)
  for (int r = 0; r < R; r++)
SG_UNROLL(8)
    for (int v = 0; v < V; v++) {
      __m256 o = acc[r][v];
      const bool part = v == V - 1 && tail < 8;
      if (rr) {
        const float *src = rr + r * ldy + ow + 8 * v;
        o = _mm256_add_ps(o, part ? _mm256_maskload_ps(src, m) : _mm256_loadu_ps(src));
      }
      o = sg2_act(&j->act, o);
      float *dst = yr + r * ldy + ow + 8 * v;
      if (part)
        _mm256_maskstore_ps(dst, m, o);
      else
        _mm256_storeu_ps(dst, o);
    }
}

static SG_ALWAYS_INLINE SG256 void dw2_rows_t(const int KW, const int S, const dw_job *j,
                                              const float *xc, const float *wc, float *yc,
                                              const float *rc, float bias, int64_t oh0,
                                              int64_t oh1) {
  const nn_dwconv_shape *s = j->s;
  float ring[DW_RING_FLOATS] __attribute__((aligned(32)));
  int64_t len;
  int64_t slot_n = dw_ring_slot_floats(s, &len);
  int64_t half = dw_round8(len);
  int nslots = (int)dw_ring_slots(s);
  const int dh = dw_dil(s->DH), dil = dw_dil(s->DW);
  dw_ring rg;
  for (int k = 0; k < nslots; k++) {
    rg.slot[k] = ring + k * slot_n;
    rg.tag[k] = -1;
  }
  float *rows[DW_RB][DW_MAX_KH];
  const int64_t OW = s->OW;
  const int64_t nvec = (OW + 7) / 8;
  const int tail = (int)(OW - (nvec - 1) * 8);
  for (int64_t oh = oh0; oh < oh1;) {
    int64_t ih0 = oh * s->SH - s->PT;
    /* rows per step: DW_RB while the rows are narrow and all DW_RB windows
     * lie inside the input, else 1 */
    int R = 1;
    if (dh == 1 && nvec <= 2 && nslots >= s->KH + (DW_RB - 1) * s->SH && oh + DW_RB <= oh1 &&
        ih0 >= 0 && ih0 + (DW_RB - 1) * s->SH + s->KH <= s->IH)
      R = DW_RB;
    /* taps inside the input: 0 <= ih0 + kh * dh < IH */
    int kh0 = ih0 >= 0 ? 0 : (int)dw_min(s->KH, (-ih0 + dh - 1) / dh);
    int kh1 = (int)dw_max(kh0, dw_min(s->KH, (s->IH - ih0 + dh - 1) / dh));
    /* slot of input row ih is ih % nslots: one division per step, then the
     * rows of the step (fewer than nslots apart) wrap at most once */
    int sl0 = kh0 < kh1 ? (int)((ih0 + (int64_t)kh0 * dh) % nslots) : 0;
    for (int r = 0; r < R; r++)
      for (int kh = kh0; kh < kh1; kh++) {
        int64_t ih = ih0 + r * s->SH + (int64_t)kh * dh;
        int sl = sl0 + r * s->SH + (kh - kh0) * dh;
        if (sl >= nslots)
          sl -= nslots;
        if (rg.tag[sl] != ih) {
          dw2_fill(S, s, xc, ih, rg.slot[sl], half);
          rg.tag[sl] = ih;
        }
        rows[r][kh] = rg.slot[sl];
      }
    float *yr = yc + oh * OW;
    const float *rr = rc ? rc + oh * OW : NULL;
    if (R == DW_RB) {
      if (nvec == 1)
        dw2_block(KW, S, DW_RB, 1, j, rows, half, wc, yr, rr, OW, kh0, kh1, 0, bias, tail, dil);
      else
        dw2_block(KW, S, DW_RB, 2, j, rows, half, wc, yr, rr, OW, kh0, kh1, 0, bias, tail, dil);
      oh += DW_RB;
      continue;
    }
    /* 8 vectors at a time, then the rest (1..7 vectors, the last one
     * partial) in one block so its chains still overlap */
    int64_t ow = 0, left = nvec;
    for (; left > 8; left -= 8, ow += 64)
      dw2_block(KW, S, 1, 8, j, rows, half, wc, yr, rr, OW, kh0, kh1, ow, bias, 8, dil);
    switch (left) {
    case 1: dw2_block(KW, S, 1, 1, j, rows, half, wc, yr, rr, OW, kh0, kh1, ow, bias, tail, dil); break;
    case 2: dw2_block(KW, S, 1, 2, j, rows, half, wc, yr, rr, OW, kh0, kh1, ow, bias, tail, dil); break;
    case 3: dw2_block(KW, S, 1, 3, j, rows, half, wc, yr, rr, OW, kh0, kh1, ow, bias, tail, dil); break;
    case 4: dw2_block(KW, S, 1, 4, j, rows, half, wc, yr, rr, OW, kh0, kh1, ow, bias, tail, dil); break;
    case 5: dw2_block(KW, S, 1, 5, j, rows, half, wc, yr, rr, OW, kh0, kh1, ow, bias, tail, dil); break;
    case 6: dw2_block(KW, S, 1, 6, j, rows, half, wc, yr, rr, OW, kh0, kh1, ow, bias, tail, dil); break;
    case 7: dw2_block(KW, S, 1, 7, j, rows, half, wc, yr, rr, OW, kh0, kh1, ow, bias, tail, dil); break;
    case 8: dw2_block(KW, S, 1, 8, j, rows, half, wc, yr, rr, OW, kh0, kh1, ow, bias, tail, dil); break;
    default: break;
    }
    oh++;
  }
}

/* 3x3, stride 1: the common depthwise layer (MobileNet, BlazeFace), with
 * its own kernel.  The input is read straight from its rows (no ring copy:
 * the ring's stores, re-read at offsets 1 and 2, stall store forwarding)
 * and R output rows x V vectors are computed together: 8 accumulators, the
 * FMA latency times its throughput, and each input vector loaded once for
 * the (up to 3) output rows it feeds; the weights are broadcast from L1 as
 * they are needed.  Rows above or below the input read a zero row; the few
 * column blocks that reach past either edge of the row (or end the output
 * row) take masked loads and stores.  A task's last block may compute rows
 * past its range (they read valid rows or the zero row) and stores only its
 * own. */
#define DW_ZROW 4096
static const float dw_zero_row[DW_ZROW] __attribute__((aligned(32)));
#define DW_K3_MAXR 4

/* Where the 3x3 stride-1 kernel stores: the plane yc from its row oh0
 * (rows of a band), or the panels (pan != NULL).  A copy in locals: the
 * kernel's stores could alias dw_job's fields (-fno-strict-aliasing), which
 * it would otherwise read again for every vector. */
typedef struct dw_out_map {
  float *pan;
  int64_t pj0, pstride, pmask, oh0;
  int pnr_log2;
} dw_out_map;

static SG_ALWAYS_INLINE dw_out_map dw_out_map_of(const dw_job *j) {
  return (dw_out_map){.pan = j->pan, .pj0 = j->pj0, .pstride = j->pstride,
                      .pmask = j->pnr - 1, .oh0 = j->yoh0, .pnr_log2 = j->pnr_log2};
}

/* What the 3x3 stride-1 blocks read per block, as values: built once per
 * range (dw2_k3s1_range), whose inlined blocks then keep them in registers
 * instead of reading dw_job and the shape again after every store
 * (-fno-strict-aliasing: the stores could alias them). */
typedef struct dw_k3_env {
  const dw_job *j;             /* the activation when it is not a clamp */
  const nn_dwconv_shape *s;    /* edge blocks' padded loads */
  int64_t OW, IW, PL;
  int ck;                      /* j->clamp */
  float lo, hi;
  dw_out_map om;
} dw_k3_env;

static SG_ALWAYS_INLINE dw_k3_env dw_k3_env_of(const dw_job *j) {
  return (dw_k3_env){.j = j, .s = j->s, .OW = j->s->OW, .IW = j->s->IW, .PL = j->s->PL,
                     .ck = j->clamp.kind, .lo = j->clamp.lo, .hi = j->clamp.hi,
                     .om = dw_out_map_of(j)};
}

/* Where output (oh, ow) goes in the panels. */
static SG_ALWAYS_INLINE float *dw_out_at(const dw_out_map *m, int64_t OW, int64_t oh,
                                         int64_t ow) {
  int64_t rel = oh * OW + ow - m->pj0;
  return m->pan + (rel >> m->pnr_log2) * m->pstride + (rel & m->pmask);
}

/* Edge kinds of a column block: inside the row (plain loads), any edge
 * (masked loads and stores), and the two edges of the usual "same" padding
 * (PL = 1, OW = IW, 8 columns): the one tap that reads outside the row is a
 * plain load shifted by one lane with a zero brought in. */
enum { DW_IN = 0, DW_EDGE, DW_LEFT1, DW_RIGHT1 };

/* Tap kw of vector v of a block (px: its input row, offset by ow - PL
 * except for DW_EDGE, where it is the row itself). */
static SG_ALWAYS_INLINE SG256 __m256 dw2_k3_load(const int EK, const nn_dwconv_shape *s,
                                                 const float *px, int64_t ow, int kw, int v) {
  if (EK == DW_EDGE)
    return dw2_load_padded(s, px, ow + kw + 8 * v);
  if (EK == DW_LEFT1 && kw == 0) {   /* columns -1 .. 6: columns 0 .. 7 moved up a lane */
    __m256 t = _mm256_permutevar8x32_ps(_mm256_loadu_ps(px + 1),
                                        _mm256_setr_epi32(0, 0, 1, 2, 3, 4, 5, 6));
    return _mm256_blend_ps(t, _mm256_setzero_ps(), 0x01);
  }
  if (EK == DW_RIGHT1 && kw == 2) {  /* columns ow + 1 .. ow + 8, the last past the row */
    __m256 t = _mm256_permutevar8x32_ps(_mm256_loadu_ps(px + 1),
                                        _mm256_setr_epi32(1, 2, 3, 4, 5, 6, 7, 7));
    return _mm256_blend_ps(t, _mm256_setzero_ps(), 0x80);
  }
  return _mm256_loadu_ps(px + kw + 8 * v);
}

/* One output vector of the direct 3x3 kernels: the residual added (src,
 * NULL none), the activation (a clamp where it is one), stored; `whole`
 * false: only the lanes of mask m. */
static SG_ALWAYS_INLINE SG256 void dw2_out(const dw_job *j, __m256 o, float *dst,
                                           const float *src, bool whole, __m256i m, int ck,
                                           __m256 lo, __m256 hi) {
  if (src)
    o = _mm256_add_ps(o, whole ? _mm256_loadu_ps(src) : _mm256_maskload_ps(src, m));
  o = ck >= 0 ? sg2_clamp(ck, o, lo, hi) : sg2_act(&j->act, o);
  if (whole)
    _mm256_storeu_ps(dst, o);
  else
    _mm256_maskstore_ps(dst, m, o);
}

/* Output rows oh .. oh + R - 1 (the first nrows stored), columns
 * [ow, ow + 8V) (the first cnt stored) of plane yc (residual plane rc);
 * xr: input rows oh - PT + k, k < R + 2, or with UNI (rows all inside the
 * plane, output to planes) xr[0] + k * IW.  EK: the block's edge kind. */
static SG_ALWAYS_INLINE SG256 void dw2_k3s1_block(const int R, const int V, const int EK,
                                                  const bool UNI, const dw_k3_env *e,
                                                  const float *const *xr,
                                                  const float *wc, float bias, float *yc,
                                                  const float *rc, int64_t oh, int nrows,
                                                  int64_t ow, int cnt) {
  const nn_dwconv_shape *s = e->s;
  const int64_t OW = e->OW;
  __m256 acc[DW_K3_MAXR][4];
SG_UNROLL(4)
  for (int r = 0; r < R; r++)
SG_UNROLL(4)
    for (int v = 0; v < V; v++)
      acc[r][v] = _mm256_set1_ps(bias);
  /* plain blocks address every load as row pointer + constant */
  const float *px[DW_K3_MAXR + 2];
SG_UNROLL(6)
  for (int k = 0; k < R + 2; k++)
    px[k] = (UNI ? xr[0] + k * e->IW : xr[k]) + (EK == DW_EDGE ? 0 : ow - e->PL);
SG_UNROLL(6)
  for (int k = 0; k < R + 2; k++)
SG_UNROLL(3)
    for (int kw = 0; kw < 3; kw++) {
      __m256 wv[DW_K3_MAXR];
SG_UNROLL(4)
      for (int r = 0; r < R; r++)
        if (k - r >= 0 && k - r <= 2)
          wv[r] = _mm256_broadcast_ss(wc + (k - r) * 3 + kw);
SG_UNROLL(4)
      for (int v = 0; v < V; v++) {
        __m256 x = dw2_k3_load(EK, s, px[k], ow, kw, v);
SG_UNROLL(4)
        for (int r = 0; r < R; r++)
          if (k - r >= 0 && k - r <= 2)
            acc[r][v] = _mm256_fmadd_ps(wv[r], x, acc[r][v]);
      }
    }
  const int ck = e->ck;
  const __m256 lo = _mm256_set1_ps(e->lo), hi = _mm256_set1_ps(e->hi);
  dw_out_map om = e->om;
  if (UNI)
    om.pan = NULL;   /* dw2_k3s1_range: uniform rows only into planes */
  const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
SG_UNROLL(4)
  for (int r = 0; r < R; r++) {
    if (r >= nrows)
      break;
    float *drow = om.pan ? NULL : yc + (oh + r - om.oh0) * OW + ow;
    const float *srow = rc ? rc + (oh + r) * OW + ow : NULL;
SG_UNROLL(4)
    for (int v = 0; v < V; v++) {
      __m256 o = acc[r][v];
      float *dst = om.pan ? dw_out_at(&om, OW, oh + r, ow + 8 * v) : drow + 8 * v;
      const float *src = srow ? srow + 8 * v : NULL;
      const bool whole = EK != DW_EDGE || cnt >= 8 * (v + 1);
      __m256i m = _mm256_setzero_si256();
      if (!whole) {
        if (cnt <= 8 * v)
          continue;
        m = _mm256_cmpgt_epi32(_mm256_set1_epi32(cnt - 8 * v), lane);
      }
      dw2_out(e->j, o, dst, src, whole, m, ck, lo, hi);
    }
  }
}

/* Four output rows at yb (OW apart), columns [c0, c1) in 16-column blocks,
 * of six input rows at xb (ld apart, xb at column c0 - PL of the first):
 * the interior of dw2_k3s1_range's planes, with nothing to look up per
 * block.  The same operations in the same order as dw2_k3s1_block, whose
 * six row pointers, panel and residual branches and dw_job fields re-read
 * after every store left GCC spilling pointers and weights to the stack:
 * 24-channel 3x3 convs at 64x64 and 128x128 took 1.41-1.63 cycles an
 * output before this and the uniform rows (UNI), 1.14-1.25 after, edges
 * included (AVX2, Zen 4). */
static SG_ALWAYS_INLINE SG256 void dw2_k3s1_rows4(const int CK, const dw_k3_env *e,
                                                  const float *xb, int64_t ld, float *yb,
                                                  int64_t c0, int64_t c1, const float *wc,
                                                  float bias) {
  const int64_t OW = e->OW;
  const __m256 b = _mm256_set1_ps(bias);
  for (int64_t c = c0; c + 16 <= c1; c += 16) {
    const float *xp = xb + (c - c0);
    __m256 acc[4][2];
SG_UNROLL(4)
    for (int r = 0; r < 4; r++)
      acc[r][0] = acc[r][1] = b;
SG_UNROLL(6)
    for (int k = 0; k < 6; k++)
SG_UNROLL(3)
      for (int kw = 0; kw < 3; kw++) {
        __m256 wv[4];
SG_UNROLL(4)
        for (int r = 0; r < 4; r++)
          if (k - r >= 0 && k - r <= 2)
            wv[r] = _mm256_broadcast_ss(wc + (k - r) * 3 + kw);
SG_UNROLL(2)
        for (int v = 0; v < 2; v++) {
          __m256 x = _mm256_loadu_ps(xp + k * ld + kw + 8 * v);
SG_UNROLL(4)
          for (int r = 0; r < 4; r++)
            if (k - r >= 0 && k - r <= 2)
              acc[r][v] = _mm256_fmadd_ps(wv[r], x, acc[r][v]);
        }
      }
SG_UNROLL(4)
    for (int r = 0; r < 4; r++)
SG_UNROLL(2)
      for (int v = 0; v < 2; v++) {
        /* the clamp kind a template argument: bounds of no clamp (or
         * Relu's zero) held across the loop took two of the 16 registers,
         * and GCC spilled accumulators (8 of them, the weights, a load) */
        __m256 o = acc[r][v];
        if (CK == 1)   /* NaN kept, as sg2_clamp */
          o = _mm256_max_ps(_mm256_setzero_ps(), o);
        else if (CK == 2)
          o = sg2_clamp(2, o, _mm256_broadcast_ss(&e->j->clamp.lo),
                        _mm256_broadcast_ss(&e->j->clamp.hi));
        else if (CK < 0)
          o = sg2_act(&e->j->act, o);
        _mm256_storeu_ps(yb + r * OW + c + 8 * v, o);
      }
  }
}

/* One step of R rows, columns [ow0, ow1) (ow0 a multiple of 8): an edge
 * block for the first 8 columns when they read left of the row, then plain
 * blocks of 32, 16 and 8 columns while they read inside it, then edge
 * blocks of 8 for the rest. */
static SG_ALWAYS_INLINE SG256 void dw2_k3s1_step(const int R, const bool UNI,
                                                 const dw_k3_env *e,
                                                 const float *const *xr, const float *wc,
                                                 float bias, float *yc, const float *rc,
                                                 int64_t oh, int nrows, int64_t ow0,
                                                 int64_t ow1) {
  const int64_t PL = e->PL, IW = e->IW, OW = e->OW;
  int64_t ow = ow0;
  /* block [ow, ow + W) reads input columns ow - PL .. ow - PL + W + 1 */
  /* "same" padding: the first and the last 8 columns of a row */
  const bool same1 = PL == 1 && OW == IW && OW % 8 == 0 && OW >= 16;
  if (ow < PL) {
    if (same1 && ow == 0 && ow1 >= 8)
      dw2_k3s1_block(R, 1, DW_LEFT1, UNI, e, xr, wc, bias, yc, rc, oh, nrows, 0, 8);
    else
      dw2_k3s1_block(R, 1, DW_EDGE, UNI, e, xr, wc, bias, yc, rc, oh, nrows, ow,
                     ow1 - ow < 8 ? (int)(ow1 - ow) : 8);
    ow += 8;
  }
  if (ow >= PL) {
    if (UNI && R == 4 && !e->om.pan && !rc) {
      /* the plain 16-column blocks of four rows inside the plane */
      int64_t n = ow1 - ow < IW + PL - 2 - ow ? ow1 - ow : IW + PL - 2 - ow;
      n = n > 0 ? n / 16 * 16 : 0;
      const float *xb = xr[0] + ow - PL;
      float *yb = yc + (oh - e->om.oh0) * OW;
      switch (e->ck) {
      case 0: dw2_k3s1_rows4(0, e, xb, IW, yb, ow, ow + n, wc, bias); break;
      case 1: dw2_k3s1_rows4(1, e, xb, IW, yb, ow, ow + n, wc, bias); break;
      case 2: dw2_k3s1_rows4(2, e, xb, IW, yb, ow, ow + n, wc, bias); break;
      default: dw2_k3s1_rows4(-1, e, xb, IW, yb, ow, ow + n, wc, bias); break;
      }
      ow += n;
    }
    if (R > 2)
      for (; ow + 16 <= ow1 && ow - PL + 18 <= IW; ow += 16)
        dw2_k3s1_block(R, 2, DW_IN, UNI, e, xr, wc, bias, yc, rc, oh, nrows, ow, 16);
    else
      for (; ow + 32 <= ow1 && ow - PL + 34 <= IW; ow += 32)
        dw2_k3s1_block(R, 4, DW_IN, UNI, e, xr, wc, bias, yc, rc, oh, nrows, ow, 32);
    if (ow + 16 <= ow1 && ow - PL + 18 <= IW) {
      dw2_k3s1_block(R, 2, DW_IN, UNI, e, xr, wc, bias, yc, rc, oh, nrows, ow, 16);
      ow += 16;
    }
    if (ow + 8 <= ow1 && ow - PL + 10 <= IW) {
      dw2_k3s1_block(R, 1, DW_IN, UNI, e, xr, wc, bias, yc, rc, oh, nrows, ow, 8);
      ow += 8;
    }
  }
  for (; ow < ow1; ow += 8) {
    if (same1 && ow + 8 == OW && ow1 == OW)
      dw2_k3s1_block(R, 1, DW_RIGHT1, UNI, e, xr, wc, bias, yc, rc, oh, nrows, ow, 8);
    else
      dw2_k3s1_block(R, 1, DW_EDGE, UNI, e, xr, wc, bias, yc, rc, oh, nrows, ow,
                     ow1 - ow < 8 ? (int)(ow1 - ow) : 8);
  }
}

/* Input rows oh - PT .. oh - PT + R + 1 of plane xc, the zero row outside. */
static SG_ALWAYS_INLINE void dw_k3_rows(const nn_dwconv_shape *s, const float *xc, int64_t oh,
                                        int R, const float **xr) {
  for (int k = 0; k < R + 2; k++) {
    int64_t ih = oh - s->PT + k;
    xr[k] = ih >= 0 && ih < s->IH ? xc + ih * s->IW : dw_zero_row;
  }
}

/* Output pixels [p0, p1) of one plane (row-major): the partial first and
 * last rows one row at a time, the full rows between four at a time (in
 * 16-column blocks, 8 accumulators: six input rows, 36 loads for 72
 * multiply-adds), the last two or one together.  Four rows ran 3x3
 * depthwise convs at 32x32 1.35x and at 128x128 1.1x faster than two
 * (AVX2, Zen 4). */
static SG256 void dw2_k3s1_range(const dw_job *j, const float *xc, const float *wc, float *yc,
                                 const float *rc, float bias, int64_t p0, int64_t p1) {
  const nn_dwconv_shape *s = j->s;
  const int64_t OW = s->OW;
  const float *xr[DW_K3_MAXR + 2];
  const dw_k3_env e = dw_k3_env_of(j);
  int64_t oh = p0 / OW, ow = p0 % OW;
  if (ow > 0) {
    int64_t end = p1 - oh * OW < OW ? p1 - oh * OW : OW;
    dw_k3_rows(s, xc, oh, 1, xr);
    dw2_k3s1_step(1, false, &e, xr, wc, bias, yc, rc, oh, 1, ow, end);
    oh++;
  }
  while ((oh + 4) * OW <= p1) {
    dw_k3_rows(s, xc, oh, 4, xr);
    if (!e.om.pan && oh - s->PT >= 0 && oh - s->PT + 5 < s->IH)
      dw2_k3s1_step(4, true, &e, xr, wc, bias, yc, rc, oh, 4, 0, OW);
    else
      dw2_k3s1_step(4, false, &e, xr, wc, bias, yc, rc, oh, 4, 0, OW);
    oh += 4;
  }
  while ((oh + 1) * OW <= p1) {
    int nrows = (oh + 2) * OW <= p1 ? 2 : 1;
    dw_k3_rows(s, xc, oh, 2, xr);
    dw2_k3s1_step(2, false, &e, xr, wc, bias, yc, rc, oh, nrows, 0, OW);
    oh += nrows;
  }
  if (oh * OW < p1) {
    dw_k3_rows(s, xc, oh, 1, xr);
    dw2_k3s1_step(1, false, &e, xr, wc, bias, yc, rc, oh, 1, 0, p1 - oh * OW);
  }
}

static SG256 void dw2_rows_k3s1(const dw_job *j, const float *xc, const float *wc, float *yc,
                                const float *rc, float bias, int64_t oh0, int64_t oh1) {
  dw2_k3s1_range(j, xc, wc, yc, rc, bias, oh0 * j->s->OW, oh1 * j->s->OW);
}

/* ---- 3x3, stride 2 (AVX2) -------------------------------------------------------
 * Read straight from the input rows as the stride-1 kernel: outputs ow ..
 * ow + 7 of tap kw read row columns 2 ow - PL + kw + 2i, the even lanes of
 * two loads (kw 0), their odd lanes (kw 1), and kw 0's lanes moved down one
 * with the next column brought in (kw 2).  Two output rows a step share
 * their middle input row (five rows, not six).  The ring kernel
 * (dw2_rows_t) deinterleaved every row into a stack slot first: 48
 * channels 128x128 -> 64x64 took 0.21 ms that way, 0.165 this way, ONNX
 * Runtime 0.084 (AVX2, Zen 4). */
/* Row columns c .. c + 7 of row xr; EDGE: zero outside [0, IW). */
static SG_ALWAYS_INLINE SG256 __m256 dw2_s2_load(const bool EDGE, const nn_dwconv_shape *s,
                                                 const float *xr, int64_t c) {
  return EDGE ? dw2_load_padded(s, xr, c + s->PL) : _mm256_loadu_ps(xr + c);
}

/* Output rows oh .. oh + R - 1, outputs [ow, ow + 8V) (the first cnt
 * stored); xr: input rows 2 oh - PT + k, k < 2R + 1 (the zero row outside). */
static SG_ALWAYS_INLINE SG256 void dw2_k3s2_block(const int R, const int V, const bool EDGE,
                                                  const dw_job *j, const float *const *xr,
                                                  const float *wc, float bias, float *yc,
                                                  const float *rc, int64_t oh, int64_t ow,
                                                  int cnt) {
  const nn_dwconv_shape *s = j->s;
  const int64_t OW = s->OW;
  __m256 acc[2][2];
SG_UNROLL(2)
  for (int r = 0; r < R; r++)
SG_UNROLL(2)
    for (int v = 0; v < V; v++)
      acc[r][v] = _mm256_set1_ps(bias);
SG_UNROLL(5)
  for (int k = 0; k < 2 * R + 1; k++)
SG_UNROLL(2)
    for (int v = 0; v < V; v++) {
      int64_t c = 2 * (ow + 8 * v) - s->PL;
      __m256 a = dw2_s2_load(EDGE, s, xr[k], c), b = dw2_s2_load(EDGE, s, xr[k], c + 8);
      __m256 t0 = sg2_even_lanes(a, b), t1 = sg2_odd_lanes(a, b);
      /* tap 2 is tap 0 a lane on, column c + 16 brought in (edge blocks:
       * from two more loads, zero outside the row) */
      __m256 t2 = EDGE ? sg2_even_lanes(dw2_s2_load(true, s, xr[k], c + 2),
                                        dw2_s2_load(true, s, xr[k], c + 10))
                       : _mm256_blend_ps(_mm256_permutevar8x32_ps(
                                             t0, _mm256_setr_epi32(1, 2, 3, 4, 5, 6, 7, 7)),
                                         _mm256_broadcast_ss(xr[k] + c + 16), 0x80);
SG_UNROLL(2)
      for (int r = 0; r < R; r++) {
        int kh = k - 2 * r;
        if (kh < 0 || kh > 2)
          continue;
        acc[r][v] = _mm256_fmadd_ps(_mm256_broadcast_ss(wc + kh * 3), t0, acc[r][v]);
        acc[r][v] = _mm256_fmadd_ps(_mm256_broadcast_ss(wc + kh * 3 + 1), t1, acc[r][v]);
        acc[r][v] = _mm256_fmadd_ps(_mm256_broadcast_ss(wc + kh * 3 + 2), t2, acc[r][v]);
      }
    }
  const int ck = j->clamp.kind;
  const __m256 lo = _mm256_set1_ps(j->clamp.lo), hi = _mm256_set1_ps(j->clamp.hi);
  const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
SG_UNROLL(2)
  for (int r = 0; r < R; r++)
SG_UNROLL(2)
    for (int v = 0; v < V; v++) {
      int n = cnt - 8 * v;
      if (n <= 0)
        break;
      __m256 o = acc[r][v];
      float *dst = yc + (oh + r) * OW + ow + 8 * v;
      const float *src = rc ? rc + (oh + r) * OW + ow + 8 * v : NULL;
      dw2_out(j, o, dst, src, n >= 8, _mm256_cmpgt_epi32(_mm256_set1_epi32(n), lane), ck, lo,
              hi);
    }
}

/* One step of R output rows over the whole row: plain blocks of 16 outputs
 * where their loads stay inside the row, edge blocks of 8 elsewhere. */
static SG_ALWAYS_INLINE SG256 void dw2_k3s2_step(const int R, const dw_job *j,
                                                 const float *const *xr, const float *wc,
                                                 float bias, float *yc, const float *rc,
                                                 int64_t oh) {
  const nn_dwconv_shape *s = j->s;
  const int64_t OW = s->OW;
  /* a block of 8V outputs at ow reads columns 2 ow - PL .. 2 ow - PL + 16V
   * (+ 1 for 16): edge blocks of 8 left of the row, plain blocks of 16
   * inside it, one plain block of 8 where 16 would pass its end (half of
   * a 28-wide map's right side went through edge blocks), edge blocks for
   * the rest */
  int64_t ow = 0;
  for (; ow < OW && 2 * ow - s->PL < 0; ow += 8)
    dw2_k3s2_block(R, 1, true, j, xr, wc, bias, yc, rc, oh, ow, (int)(OW - ow < 8 ? OW - ow : 8));
  for (; ow + 16 <= OW && 2 * ow - s->PL + 34 <= s->IW; ow += 16)
    dw2_k3s2_block(R, 2, false, j, xr, wc, bias, yc, rc, oh, ow, 16);
  if (ow + 8 <= OW && 2 * ow - s->PL + 17 <= s->IW) {
    dw2_k3s2_block(R, 1, false, j, xr, wc, bias, yc, rc, oh, ow, 8);
    ow += 8;
  }
  for (; ow < OW; ow += 8)
    dw2_k3s2_block(R, 1, true, j, xr, wc, bias, yc, rc, oh, ow, (int)(OW - ow < 8 ? OW - ow : 8));
}

static SG256 void dw2_rows_k3s2(const dw_job *j, const float *xc, const float *wc, float *yc,
                                const float *rc, float bias, int64_t oh0, int64_t oh1) {
  const nn_dwconv_shape *s = j->s;
  const float *xr[5];
  for (int64_t oh = oh0; oh < oh1;) {
    int R = oh + 2 <= oh1 ? 2 : 1;
    for (int k = 0; k < 2 * R + 1; k++) {
      int64_t ih = 2 * oh - s->PT + k;
      xr[k] = ih >= 0 && ih < s->IH ? xc + ih * s->IW : dw_zero_row;
    }
    if (R == 2)
      dw2_k3s2_step(2, j, xr, wc, bias, yc, rc, oh);
    else
      dw2_k3s2_step(1, j, xr, wc, bias, yc, rc, oh);
    oh += R;
  }
}

#define DW2_ROWS(K_, S_)                                                                   \
  static SG256 void dw2_rows_##K_##_##S_(const dw_job *j, const float *xc, const float *wc, \
                                         float *yc, const float *rc, float bias, int64_t oh0, \
                                         int64_t oh1) {                                      \
    dw2_rows_t(K_, S_, j, xc, wc, yc, rc, bias, oh0, oh1);                                  \
  }
DW2_ROWS(3, 1)
DW2_ROWS(3, 2)
DW2_ROWS(5, 1)
DW2_ROWS(5, 2)
DW2_ROWS(7, 1)   /* ConvNeXt's 7x7 (96 x 56x56 0.39 ms on the portable loop 3.5) */
DW2_ROWS(7, 2)

/* Columns [c, c + 16) of input row xr under mask k (sg5_cols_mask): those
 * outside the row read as 0, the padding, without being touched. */
static SG_ALWAYS_INLINE SG512 __m512 dw5_cols16(const float *xr, int64_t c, __mmask16 k) {
  /* the address of column c, which may lie outside the row: masked off */
  return _mm512_maskz_loadu_ps(k, (const float *)((uintptr_t)xr + (uintptr_t)(c * (int64_t)4)));
}

/* 3x3 and 5x5 stride 2 on AVX-512 (MobileNet's and ShuffleNet's
 * downsampling depthwise convs, EfficientNet's and MobileNetV3's 5x5 ones),
 * 16 outputs of a row at a time: per input row, the columns under each tap
 * (2 ow - PL + kw) picked from three vectors by a permute each, no copy of
 * the row.  The AVX2 ring deinterleaves each row into a buffer first:
 * ShuffleNet's 112 x 56 x 56 -> 28 x 28 layer ran 0.11 ms there and 0.062
 * here, its 272 x 14 x 14 -> 7 x 7 one 0.037 and 0.019 (Zen 5, 1 thread;
 * ShuffleNet 3.7% faster on 1 thread, 1.9% on 2, PP-OCR's detector 1% and
 * 2.4%); 5x5 on 144 x 56 x 56 -> 28 x 28 0.30 -> ~0.1 ms (Zen 4), where the
 * ring kernel spilled its row pointers. */
static SG_ALWAYS_INLINE SG512 void dw5_rows_s2_t(const int K, const dw_job *j, const float *xc,
                                                 const float *wc, float *yc, const float *rc,
                                                 float bias, int64_t oh0, int64_t oh1) {
  const nn_dwconv_shape *s = j->s;
  const int64_t IH = s->IH, IW = s->IW, OW = s->OW;
  /* even lanes of a pair (tap 0), odd (tap 1); then the same moved down one
   * lane with lanes of the third vector brought in (taps 2, 3), two lanes
   * (tap 4) */
  const __m512i ie = SG5_EVEN_IDX;
  const __m512i io = _mm512_add_epi32(ie, _mm512_set1_epi32(1));
  const __m512i is1 = _mm512_setr_epi32(1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16);
  const __m512i is1o = _mm512_setr_epi32(1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 17);
  const __m512i is2 = _mm512_setr_epi32(2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 18);
  __m512 w[25];
  for (int t = 0; t < K * K; t++)
    w[t] = _mm512_set1_ps(wc[t]);
  for (int64_t oh = oh0; oh < oh1; oh++) {
    for (int64_t ow = 0; ow < OW; ow += 16) {
      const int64_t c0 = 2 * ow - s->PL;
      const __mmask16 k0 = sg5_cols_mask(IW, c0), k1 = sg5_cols_mask(IW, c0 + 16);
      const __mmask16 k2 = sg5_cols_mask(IW, c0 + 32);
      /* a sum per tap column: K chains of K multiply-adds, not one of K*K */
      __m512 a[5];
      a[0] = _mm512_set1_ps(bias);
      for (int kw = 1; kw < K; kw++)
        a[kw] = _mm512_setzero_ps();
      for (int kh = 0; kh < K; kh++) {
        int64_t ih = 2 * oh - s->PT + kh;
        if (ih < 0 || ih >= IH)
          continue;
        const float *xr = xc + ih * IW;
        __m512 l0 = dw5_cols16(xr, c0, k0), l1 = dw5_cols16(xr, c0 + 16, k1);
        __m512 l2 = dw5_cols16(xr, c0 + 32, k2);
        __m512 e = _mm512_permutex2var_ps(l0, ie, l1), o = _mm512_permutex2var_ps(l0, io, l1);
        a[0] = _mm512_fmadd_ps(w[K * kh], e, a[0]);
        a[1] = _mm512_fmadd_ps(w[K * kh + 1], o, a[1]);
        a[2] = _mm512_fmadd_ps(w[K * kh + 2], _mm512_permutex2var_ps(e, is1, l2), a[2]);
        if (K == 5) {
          a[3] = _mm512_fmadd_ps(w[K * kh + 3], _mm512_permutex2var_ps(o, is1o, l2), a[3]);
          a[4] = _mm512_fmadd_ps(w[K * kh + 4], _mm512_permutex2var_ps(e, is2, l2), a[4]);
        }
      }
      __m512 acc = _mm512_add_ps(_mm512_add_ps(a[0], a[1]), a[2]);
      if (K == 5)
        acc = _mm512_add_ps(acc, _mm512_add_ps(a[3], a[4]));
      __mmask16 k = OW - ow >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << (OW - ow)) - 1u);
      if (rc)
        acc = _mm512_add_ps(acc, _mm512_maskz_loadu_ps(k, rc + oh * OW + ow));
      _mm512_mask_storeu_ps(yc + oh * OW + ow, k, sg5_act(&j->act, acc));
    }
  }
}

static SG512 void dw5_rows_k3s2(const dw_job *j, const float *xc, const float *wc, float *yc,
                                const float *rc, float bias, int64_t oh0, int64_t oh1) {
  dw5_rows_s2_t(3, j, xc, wc, yc, rc, bias, oh0, oh1);
}

static SG512 void dw5_rows_k5s2(const dw_job *j, const float *xc, const float *wc, float *yc,
                                const float *rc, float bias, int64_t oh0, int64_t oh1) {
  dw5_rows_s2_t(5, j, xc, wc, yc, rc, bias, oh0, oh1);
}
#endif

static void dw_range(void *arg, int64_t t0, int64_t t1) {
  const dw_job *j = arg;
  const nn_dwconv_shape *s = j->s;
  int64_t cout = s->C * s->mult;
  for (int64_t t = t0; t < t1; t++) {
    int64_t rb = t % j->nrblk, plane = t / j->nrblk;   /* plane = n * cout + oc */
    int64_t n = plane / cout, oc = plane % cout;
    const float *xc = j->x + (n * s->C + oc / s->mult) * s->IH * s->IW;
    const float *wc = j->w + oc * s->KH * s->KW;
    float *yc = j->y + plane * s->OH * s->OW;
    const float *rc = j->res ? j->res + plane * s->OH * s->OW : NULL;
    float bias = j->bias ? j->bias[oc] : 0.0f;
    int64_t oh0 = rb * j->rblk, oh1 = dw_min(s->OH, oh0 + j->rblk);
#if SG_X86
    if (j->k3s1) {
      dw2_rows_k3s1(j, xc, wc, yc, rc, bias, oh0, oh1);
    } else if (j->k3s2) {
      dw5_rows_k3s2(j, xc, wc, yc, rc, bias, oh0, oh1);
    } else if (j->k5s2) {
      dw5_rows_k5s2(j, xc, wc, yc, rc, bias, oh0, oh1);
    } else if (j->k3s2a) {
      dw2_rows_k3s2(j, xc, wc, yc, rc, bias, oh0, oh1);
    } else if (j->simd) {
      if (s->KW == 3)
        (s->SW == 1 ? dw2_rows_3_1 : dw2_rows_3_2)(j, xc, wc, yc, rc, bias, oh0, oh1);
      else if (s->KW == 5)
        (s->SW == 1 ? dw2_rows_5_1 : dw2_rows_5_2)(j, xc, wc, yc, rc, bias, oh0, oh1);
      else
        (s->SW == 1 ? dw2_rows_7_1 : dw2_rows_7_2)(j, xc, wc, yc, rc, bias, oh0, oh1);
    } else
#endif
      dw_rows_portable(j, xc, wc, yc, rc, bias, oh0, oh1);
    if (j->post.act != NN_SGEMM_ACT_NONE)   /* the rows are still in L1 */
      nn_sgemm_act_run(&j->post, yc + oh0 * s->OW, (oh1 - oh0) * s->OW);
  }
}

/* ---- small maps, 8 channels a vector -------------------------------------------
 * On maps of at most DW_CV_MAX_OUT columns and rows (MobileNetV2's and
 * EfficientNet's 28x28, 14x14 and 7x7 layers, 144-1152 channels) every
 * kernel above works a plane at a time and its per-plane set-up outweighs
 * the few hundred multiply-adds: 960 planes of 7x7 took ~500 cycles each
 * (Zen 4).  Here 8
 * channels go through together, one per lane: their input planes are
 * transposed (8x8 blocks) into a zero-padded tile of pixel vectors, each
 * output pixel is KH*KW FMAs of tile vectors by the taps' weight vectors,
 * and the output pixels are transposed back into the 8 planes.  Against the
 * plane kernels (Zen 4, 1 thread): 960 x 7x7 3x3 0.136 -> 0.033 ms, 576 x
 * 14x14 0.176 -> 0.062, 672 x 14x14 5x5 0.25 -> 0.15, 192 x 28x28 0.25 ->
 * 0.078, 240 x 28x28 5x5 0.38 -> 0.18. */
#define DW_CV_MAX_OUT 28
#define DW_CV_TILE 8192   /* floats of the padded input tile: 1024 pixels */

static bool dw_cv_ok(const nn_dwconv_shape *s, const float *res) {
  if (nn_cpu_isa_get() < NN_CPU_AVX2 || res || s->mult != 1 || s->KH != s->KW ||
      (s->KH != 3 && s->KH != 5 && s->KH != 7) || s->SH != s->SW || (s->SH != 1 && s->SH != 2) ||
      s->DH > 1 ||
      s->DW > 1 || s->OW > DW_CV_MAX_OUT || s->OH > DW_CV_MAX_OUT)
    return false;
  /* the tile: every input pixel a tap reads, padding included */
  int64_t th = (s->OH - 1) * s->SH + s->KH, tw = (s->OW - 1) * s->SW + s->KW;
  return th * tw * 8 <= DW_CV_TILE;
}

static SG_ALWAYS_INLINE SG256 __m256i dw2_first_lanes(int64_t n) {
  return _mm256_cmpgt_epi32(_mm256_set1_epi32((int)(n < 8 ? n : 8)),
                            _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

/* The output pixels of a tile (th x tw pixel vectors) into outv (OH x OW
 * pixel vectors), bias added, no activation: 4 pixels of a row at a time, 4
 * FMA chains; KxK stride S as constants so that the taps unroll and their
 * weights stay in registers. */
static SG_ALWAYS_INLINE SG256 void dw2_cv_taps(const int K, const int S, const dw_job *j,
                                               const float *tile, int64_t tw, const float *w,
                                               __m256 bias, int nc, float *outv) {
  const nn_dwconv_shape *s = j->s;
  const int64_t OH = s->OH, OW = s->OW;
  /* the taps' weights, a lane per channel: 8 taps of the 8 channels a
   * transpose */
  __m256 wv[56];   /* up to 7x7 */
  for (int t0 = 0; t0 < K * K; t0 += 8) {
    const __m256i m = dw2_first_lanes(K * K - t0);
    __m256 r[8];
SG_UNROLL(8)
    for (int c = 0; c < 8; c++)
      r[c] = c < nc ? _mm256_maskload_ps(w + c * K * K + t0, m) : _mm256_setzero_ps();
    sg_tr8(r);
SG_UNROLL(8)
    for (int q = 0; q < 8; q++)
      wv[t0 + q] = r[q];
  }
  /* 7x7: 8 output pixels at a time, in the order of the output plane
   * across its rows (each with its own window corner in the tile): 8 FMA
   * chains, each tap's weights (49 of them: not in registers) loaded once
   * for the 8.  A row at a time in blocks of 4 (and single pixels at its
   * end) 384 x 14x14 took 0.34 ms, this 0.23; for 3x3 and 5x5, whose
   * weights stay in registers, it was slower (192 x 28x28 3x3 0.075 ->
   * 0.10).  The last block starts 8 pixels before the end and recomputes
   * what the one before wrote. */
  if (K == 7) {
    const int64_t npx = OH * OW;
    int64_t oh0 = 0, ow0 = 0;   /* pixel p0's row and column, stepped (no division per pixel) */
    for (int64_t p0 = 0; p0 < npx; p0 += 8) {
      const int64_t q0 = p0 + 8 <= npx || npx < 8 ? p0 : npx - 8;
      const int64_t cnt = npx - q0 < 8 ? npx - q0 : 8;
      int64_t oh = q0 == p0 ? oh0 : q0 / OW, ow = q0 == p0 ? ow0 : q0 % OW;
      const float *bp[8];
      for (int p = 0; p < 8; p++) {
        bp[p] = tile + (oh * S * tw + ow * S) * 8;
        if (p + 1 < cnt && ++ow == OW) {
          ow = 0;
          oh++;
        }
      }
      for (ow0 += 8; ow0 >= OW; ow0 -= OW)
        oh0++;
      __m256 a[8];
SG_UNROLL(8)
      for (int p = 0; p < 8; p++)
        a[p] = bias;
SG_UNROLL(7)
      for (int kh = 0; kh < K; kh++)
SG_UNROLL(7)
        for (int kw = 0; kw < K; kw++) {
          const __m256 wt = wv[kh * K + kw];
          const int64_t off = ((int64_t)kh * tw + kw) * 8;
SG_UNROLL(8)
          for (int p = 0; p < 8; p++)
            a[p] = _mm256_fmadd_ps(_mm256_load_ps(bp[p] + off), wt, a[p]);
        }
      for (int p = 0; p < cnt; p++)
        _mm256_store_ps(outv + (q0 + p) * 8, a[p]);
    }
    return;
  }
  for (int64_t oh = 0; oh < OH; oh++) {
    const float *tr = tile + oh * S * tw * 8;
    float *orow = outv + oh * OW * 8;
    int64_t ow = 0;
    for (; ow + 4 <= OW; ow += 4) {
      __m256 a[4] = {bias, bias, bias, bias};
SG_UNROLL(5)
      for (int kh = 0; kh < K; kh++)
SG_UNROLL(5)
        for (int kw = 0; kw < K; kw++)
SG_UNROLL(4)
          for (int p = 0; p < 4; p++)
            a[p] = _mm256_fmadd_ps(_mm256_load_ps(tr + ((int64_t)kh * tw + (ow + p) * S + kw) * 8),
                                   wv[kh * K + kw], a[p]);
      for (int p = 0; p < 4; p++)
        _mm256_store_ps(orow + (ow + p) * 8, a[p]);
    }
    for (; ow < OW; ow++) {
      __m256 a = bias;
SG_UNROLL(5)
      for (int kh = 0; kh < K; kh++)
SG_UNROLL(5)
        for (int kw = 0; kw < K; kw++)
          a = _mm256_fmadd_ps(_mm256_load_ps(tr + ((int64_t)kh * tw + ow * S + kw) * 8),
                              wv[kh * K + kw], a);
      _mm256_store_ps(orow + ow * 8, a);
    }
  }
}

/* Channels [c0, c0 + nc) (nc <= 8) of one image: x, y at channel c0. */
static SG256 void dw2_cv_block(const dw_job *j, const float *x, const float *w, float *y,
                               int64_t c0, int nc) {
  const nn_dwconv_shape *s = j->s;
  const int64_t IH = s->IH, IW = s->IW, OH = s->OH, OW = s->OW, S = s->SH, K = s->KH;
  const int64_t th = (OH - 1) * S + K, tw = (OW - 1) * S + K;   /* tile rows, columns */
  const int64_t in_sz = IH * IW, out_sz = OH * OW;
  float tile[DW_CV_TILE] __attribute__((aligned(32)));
  float outv[DW_CV_MAX_OUT * DW_CV_MAX_OUT * 8] __attribute__((aligned(32)));
  /* input: tile pixel (r, q) holds input (r - PT, q - PL), zero outside */
  memset(tile, 0, sizeof(float) * (size_t)(th * tw * 8));
  const int64_t r1 = dw_min(IH, th - s->PT), q1 = dw_min(IW, tw - s->PL);
  for (int64_t ih = 0; ih < r1; ih++) {
    float *trow = tile + ((ih + s->PT) * tw + s->PL) * 8;
    for (int64_t iw = 0; iw < q1; iw += 8) {
      const int64_t n = dw_min(8, q1 - iw);
      const __m256i m = dw2_first_lanes(n);
      __m256 r[8];
SG_UNROLL(8)
      for (int c = 0; c < 8; c++) {
        const float *src = x + c * in_sz + ih * IW + iw;
        r[c] = c >= nc ? _mm256_setzero_ps() : n == 8 ? _mm256_loadu_ps(src) : _mm256_maskload_ps(src, m);
      }
      sg_tr8(r);
      if (n == 8) {
SG_UNROLL(8)
        for (int p = 0; p < 8; p++)
          _mm256_store_ps(trow + (iw + p) * 8, r[p]);
      } else {
        for (int64_t p = 0; p < n; p++)
          _mm256_store_ps(trow + (iw + p) * 8, r[p]);
      }
    }
  }
  /* the bias, a lane per channel */
  __m256 bias = _mm256_setzero_ps();
  if (j->bias) {
    float tmp[8] = {0};
    for (int c = 0; c < nc; c++)
      tmp[c] = j->bias[c0 + c];
    bias = _mm256_loadu_ps(tmp);
  }
  if (K == 3)
    (S == 1 ? dw2_cv_taps(3, 1, j, tile, tw, w, bias, nc, outv)
            : dw2_cv_taps(3, 2, j, tile, tw, w, bias, nc, outv));
  else if (K == 5)
    (S == 1 ? dw2_cv_taps(5, 1, j, tile, tw, w, bias, nc, outv)
            : dw2_cv_taps(5, 2, j, tile, tw, w, bias, nc, outv));
  else
    (S == 1 ? dw2_cv_taps(7, 1, j, tile, tw, w, bias, nc, outv)
            : dw2_cv_taps(7, 2, j, tile, tw, w, bias, nc, outv));
  /* the activation over the block, still in L1 */
  if (j->act.act != NN_SGEMM_ACT_NONE)
    nn_sgemm_act_run(&j->act, outv, out_sz * 8);
  /* output: 8 pixels of the 8 channels a transpose, into the planes */
  for (int64_t p = 0; p < out_sz; p += 8) {
    const int64_t n = dw_min(8, out_sz - p);
    __m256 r[8];
SG_UNROLL(8)
    for (int q = 0; q < 8; q++)
      r[q] = q < n ? _mm256_load_ps(outv + (p + q) * 8) : _mm256_setzero_ps();
    sg_tr8(r);
    /* no masked stores: on Zen 4 one costs ~10 plain ones */
    for (int c = 0; c < nc; c++) {
      float *dst = y + c * out_sz + p;
      if (n == 8) {
        _mm256_storeu_ps(dst, r[c]);
      } else {
        float tmp[8] __attribute__((aligned(32)));
        _mm256_store_ps(tmp, r[c]);
        for (int64_t q = 0; q < n; q++)
          dst[q] = tmp[q];
      }
    }
  }
}

/* nn_parallel_for body: tasks of 8 channels of one image. */
static void dw_cv_range(void *arg, int64_t t0, int64_t t1) {
  const dw_job *j = arg;
  const nn_dwconv_shape *s = j->s;
  const int64_t nblk = (s->C + 7) / 8;
  for (int64_t t = t0; t < t1; t++) {
    int64_t n = t / nblk, c0 = (t % nblk) * 8;
    int nc = (int)dw_min(8, s->C - c0);
    dw2_cv_block(j, j->x + (n * s->C + c0) * s->IH * s->IW, j->w + c0 * s->KH * s->KW,
                 j->y + (n * s->C + c0) * s->OH * s->OW, c0, nc);
  }
}

/* ---- panel output: the depthwise half of a dw -> pw pair ---------------------- */

bool nn_dwconv2d_panel_ok(const nn_dwconv_shape *s) {
#if SG_X86
  return s && nn_cpu_isa_get() >= NN_CPU_AVX2 && s->mult == 1 && s->KH == 3 && s->KW == 3 &&
         s->SH == 1 && s->SW == 1 && s->DH <= 1 && s->DW <= 1 && s->OW >= 8 && s->OW % 8 == 0 &&
         s->IW <= DW_ZROW;
#else
  (void)s;
  return false;
#endif
}

/* One output of channel c at pixel (oh, ow), any geometry: the fallback. */
static float dw_one(const nn_dwconv_shape *s, const float *xc, const float *wc, float bias,
                    int64_t oh, int64_t ow) {
  int dh = s->DH > 0 ? s->DH : 1, dw = s->DW > 0 ? s->DW : 1;
  float acc = bias;
  for (int kh = 0; kh < s->KH; kh++) {
    int64_t ih = oh * s->SH - s->PT + (int64_t)kh * dh;
    if (ih < 0 || ih >= s->IH)
      continue;
    for (int kw = 0; kw < s->KW; kw++) {
      int64_t iw = ow * s->SW - s->PL + (int64_t)kw * dw;
      if (iw >= 0 && iw < s->IW)
        acc += wc[kh * s->KW + kw] * xc[ih * s->IW + iw];
    }
  }
  return acc;
}

/* Output pixels [j0, j0 + nb) of channels [k0, k0 + kc), channel k0 + kk
 * at dst + kk * ld: with nr > 0, pixel j0 + q at panel q / nr (pstride
 * apart), lane q % nr (the packer's layout, ld = nr; or with nr >= nb one
 * run of pixels per channel); with nr == 0, whole rows (j0 and nb multiples
 * of OW, nn_dwconv2d_panel_ok) through the plane kernel, its rows from
 * j0 / OW at dst + kk * ld (nn_dwconv2d_band). */
static void dw_panel_rows(const nn_dwconv_panel *pp, int64_t k0, int64_t kc, int64_t j0,
                          int64_t nb, int64_t nr, float *dst, int64_t ld, int64_t pstride) {
  const nn_dwconv_shape *s = &pp->s;
  dw_job j;
  memset(&j, 0, sizeof j);
  j.s = s;
  dw_job_act(&j, &pp->epi);
  const float *bias = pp->epi.bias_kind == NN_SGEMM_BIAS_ROW ? pp->epi.bias : NULL;
  const bool planes = nr == 0;
  const bool pow2 = nr > 0 && nr <= INT32_MAX && (nr & (nr - 1)) == 0;
  const bool simd = (planes || pow2) && nn_dwconv2d_panel_ok(s);
  j.pnr = (int)nr;
  j.pnr_log2 = pow2 ? __builtin_ctzll((unsigned long long)nr) : 0;
  j.pj0 = j0;
  j.pstride = pstride;
  j.yoh0 = planes ? j0 / s->OW : 0;
  const int64_t plane = s->IH * s->IW;
  for (int64_t kk = 0; kk < kc; kk++) {
    int64_t c = k0 + kk;
    const float *xc = pp->x + c * plane, *wc = pp->w + c * s->KH * s->KW;
    float b = bias ? bias[c] : 0.0f;
    float *d = dst + kk * ld;
    j.pan = planes ? NULL : d;
#if SG_X86
    if (simd) {
      dw2_k3s1_range(&j, xc, wc, planes ? d : NULL, NULL, b, j0, j0 + nb);
      continue;
    }
#endif
    for (int64_t q = 0; q < nb; q++) {
      int64_t pix = j0 + q;
      float v = sg_act1(&j.act, dw_one(s, xc, wc, b, pix / s->OW, pix % s->OW));
      d[planes ? q : (q / nr) * pstride + q % nr] = v;
    }
  }
}

void nn_dwconv2d_band(const nn_dwconv_panel *pp, int64_t p0, int64_t np, float *dst,
                      int64_t ld) {
  const nn_dwconv_shape *s = &pp->s;
  int64_t nr = 1;   /* one panel as wide as the range: a run of pixels per channel */
  while (nr < np)
    nr *= 2;
  if (nn_dwconv2d_panel_ok(s) && p0 % s->OW == 0 && np % s->OW == 0)
    nr = 0;         /* whole rows: the plane kernel */
  dw_panel_rows(pp, 0, s->C, p0, np, nr, dst, ld, 0);
}

void nn_dwconv2d_pack(void *user, int64_t k0, int64_t kc, int64_t j0, int64_t nb, int nr,
                      float *dst, int64_t pstride) {
  const nn_dwconv_panel *pp = user;
  dw_panel_rows(pp, k0, kc, j0, nb, nr, dst, nr, pstride);
  /* the columns of the last panel past the block are zeros */
  int64_t used = nb - (nb > 0 ? (nb - 1) / nr * nr : 0);
  if (nb > 0 && used < nr)
    for (int64_t kk = 0; kk < kc; kk++) {
      float *d = dst + ((nb - 1) / nr) * pstride + kk * nr;
      for (int64_t q = used; q < nr; q++)
        d[q] = 0.0f;
    }
}

/* Below this many multiply-adds a task is not worth a hand-off. */
#define DW_MIN_TASK_MACS ((int64_t)1 << 15)

nn_status nn_dwconv2d(nn_ctx *c, const nn_dwconv_shape *s, const float *x, const float *w,
                      float *y, const nn_sgemm_epi *epi) {
  if (!s || s->batch < 0 || s->C < 0 || s->mult < 1 || s->IH < 0 || s->IW < 0 || s->OH < 0 ||
      s->OW < 0 || s->KH < 1 || s->KW < 1 || s->SH < 1 || s->SW < 1 || s->PT < 0 ||
      s->PL < 0 || s->DH < 0 || s->DW < 0)
    return NN_ERR_INVALID_ARG;
  if (epi && epi->bias && epi->bias_kind == NN_SGEMM_BIAS_COL)
    return NN_ERR_INVALID_ARG;
  int64_t planes = s->batch * s->C * s->mult;
  if (planes == 0 || s->OH == 0 || s->OW == 0)
    return NN_OK;
  if (!x || !w || !y)
    return NN_ERR_INVALID_ARG;
  dw_job j;
  memset(&j, 0, sizeof j);
  j.s = s;
  j.x = x;
  j.w = w;
  j.y = y;
  dw_job_act(&j, epi);
  j.bias = epi && epi->bias_kind == NN_SGEMM_BIAS_ROW ? epi->bias : NULL;
  j.res = epi ? epi->res : NULL;
  j.dh = s->DH > 0 ? s->DH : 1;
  j.dw = s->DW > 0 ? s->DW : 1;
#if SG_X86
  int64_t len;
  j.simd = nn_cpu_isa_get() >= NN_CPU_AVX2 &&
           ((j.dh == 1 && j.dw == 1) || (s->SH == 1 && s->SW == 1)) &&
           (s->KW == 3 || s->KW == 5 || s->KW == 7) && (s->SW == 1 || s->SW == 2) &&
           dw_ring_slot_floats(s, &len) > 0;
  /* narrow maps keep the ring kernel, whose row blocking suits them */
  j.k3s1 = nn_cpu_isa_get() >= NN_CPU_AVX2 && j.dh == 1 && j.dw == 1 && s->KH == 3 &&
           s->KW == 3 && s->SH == 1 && s->SW == 1 && s->OW >= 24 && s->IW <= DW_ZROW;
  j.k3s2 = nn_cpu_isa_get() >= NN_CPU_AVX512 && j.dh == 1 && j.dw == 1 && s->KH == 3 &&
           s->KW == 3 && s->SH == 2 && s->SW == 2;
  j.k5s2 = nn_cpu_isa_get() >= NN_CPU_AVX512 && j.dh == 1 && j.dw == 1 && s->KH == 5 &&
           s->KW == 5 && s->SH == 2 && s->SW == 2;
  j.k3s2a = !j.k3s2 && nn_cpu_isa_get() >= NN_CPU_AVX2 && j.dh == 1 && j.dw == 1 &&
            s->KH == 3 && s->KW == 3 && s->SH == 2 && s->SW == 2 && s->OW >= 8 &&
            s->IW <= DW_ZROW;
#endif
  /* rows per task: whole planes unless there are too few planes for the
   * workers (a single-channel map on 2 threads still splits) */
  int threads = c && c->pool && c->threads > 1 ? c->threads : 1;
  j.rblk = s->OH;
  if (threads > 1 && planes < 4 * threads) {
    int64_t want = (4 * threads + planes - 1) / planes;
    j.rblk = dw_max(1, (s->OH + want - 1) / want);
  }
  j.nrblk = (s->OH + j.rblk - 1) / j.rblk;
#if SG_X86
  if (dw_cv_ok(s, j.res)) {
    int64_t blocks = s->batch * ((s->C + 7) / 8);   /* applies its activation itself */
    int64_t grain = dw_max(1, DW_MIN_TASK_MACS / dw_max(1, 8 * s->OH * s->OW * s->KH * s->KW));
    nn_parallel_for(c, blocks, grain, dw_cv_range, &j);
    return NN_OK;
  }
  /* a sigmoid, SiLU or GELU over the finished rows rather than per vector
   * in the vector kernels' stores */
  if ((j.simd || j.k3s1 || j.k3s2 || j.k5s2 || j.k3s2a) &&
      sg_act_costly(j.act.act)) {
    j.post = j.act;
    dw_job_act(&j, NULL);
  }
#endif
  int64_t task_macs = j.rblk * s->OW * s->KH * s->KW;
  int64_t grain = dw_max(1, DW_MIN_TASK_MACS / dw_max(1, task_macs));
  nn_parallel_for(c, planes * j.nrblk, grain, dw_range, &j);
  return NN_OK;
}

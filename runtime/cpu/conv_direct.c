/* conv_direct.c - direct convolution, stride 1 or 2 (see conv_direct.h):
 * blocks of MR output channels x NW pixels numbered in a row width,
 * accumulated in registers, read through masked loads from the input or
 * its phase planes (AVX-512) or from a padded copy of it.
 *
 * Work is split by bands of pixels (rows of the output), the channel
 * panels of a band's end blocks shared (dc_item_row), and the padded copy
 * by the same bands of rows: a worker reads mostly the rows it copied, and
 * the 1x1 conv after it (whose GEMM splits by columns, the same pixels)
 * reads mostly what it wrote.
 */
#include <string.h>

#include "cpu/conv_direct.h"
#include "cpu/kernel_util.h"
#include "cpu/sgemm_simd.h"

#define DC_MAX_C 256
#define DC_MAX_K 7
#define DC_GROUP_BYTES (512 * 1024)
#define DC_GROUP_MAX 32   /* and at most this many blocks: their masks on the stack */
#define DC_MK (DC_MAX_K * DC_MAX_K * 3)   /* masks of a block (dc5_masks) */
#define DC5_MR 14        /* output channels per block (AVX-512) ... */
#define DC5_NW 32        /* ... x padded-width pixels: two vectors */
#define DC5W_MR 8        /* the wide block: 8 channels x three vectors */
#define DC5W_NW 48
#define DC2_MR 6         /* the same, AVX2 */
#define DC2_NW 16
#define DC_WALIGN 16     /* output channels of the reordered weights rounded up to */
/* A block of NW pixels starting at the last used pixel reads up to NW - 1
 * floats past the last padded plane: zeros kept after it. */
#define DC_SLACK 64
/* Runs of a block's pixels that are one piece of an output row within one
 * vector: at most a run per row the block touches (NW + 1 rows when PW is
 * 1) plus a cut per vector boundary. */
#define DC_MAX_SEG (2 * DC5W_NW + 4)

typedef struct dc_geom {
  int64_t PH, PW, plane; /* padded planes (stride 1) */
  int64_t H2, W2, pplane; /* stride 2: the 4 phase planes of a channel, H2 x W2 each */
  int64_t mp;            /* output channels of the reordered weights */
  int kk;                /* KH * KW */
} dc_geom;

static dc_geom dc_geom_of(const nn_dconv_shape *s) {
  dc_geom g;
  const int d = s->D > 1 ? s->D : 1;
  g.PH = s->OH + (int64_t)(s->KH - 1) * d;
  g.PW = s->OW + (int64_t)(s->KW - 1) * d;
  g.plane = g.PH * g.PW;
  g.H2 = (s->IH + 1) / 2;
  g.W2 = (s->IW + 1) / 2;
  g.pplane = 4 * g.H2 * g.W2;
  g.mp = (s->M + DC_WALIGN - 1) / DC_WALIGN * DC_WALIGN;
  g.kk = s->KH * s->KW;
  return g;
}

bool nn_dconv_ok(const nn_dconv_shape *s) {
#if SG_X86
  if (!s || nn_cpu_isa_get() < NN_CPU_AVX2)
    return false;
  if (s->C < 1 || s->C > DC_MAX_C || s->M < 1 || s->M > (1 << 20) || s->OH < 1 || s->OW < 1)
    return false;
  const int d = s->D > 1 ? s->D : 1;
  /* the dilated window's extent */
  const int64_t EH = (int64_t)(s->KH - 1) * d + 1, EW = (int64_t)(s->KW - 1) * d + 1;
  if (s->KH < 1 || s->KH > DC_MAX_K || s->KW < 1 || s->KW > DC_MAX_K || s->PT < 0 ||
      s->PL < 0 || s->PT >= EH || s->PL >= EW || s->D < 0 || s->D > 64 || (d > 1 && s->S != 1))
    return false;
  if (s->IH < 1 || s->IW < 1 || s->IH > (1 << 20) || s->IW > (1 << 20) || s->OH > (1 << 20) ||
      s->OW > (1 << 20))
    return false;
  if (s->S == 2) {
    /* masked loads on the phase planes, whose width must hold a row of the
     * output; few enough pixels for dc5_masks' float division */
    dc_geom g = dc_geom_of(s);
    return nn_cpu_isa_get() >= NN_CPU_AVX512 && s->OW <= g.W2 &&
           (s->OH - 1) * 2 - s->PT < s->IH && (s->OW - 1) * 2 - s->PL < s->IW &&
           s->C * g.pplane <= ((int64_t)1 << 26) && s->OH * g.W2 + DC5W_NW < ((int64_t)1 << 24);
  }
  if (s->S != 1)
    return false;
  /* stride 1: the bottom / right padding the output implies */
  int64_t pb = s->OH + EH - 1 - s->IH - s->PT, pr = s->OW + EW - 1 - s->IW - s->PL;
  if (pb < 0 || pb >= EH || pr < 0 || pr >= EW)
    return false;
  dc_geom g = dc_geom_of(s);
  return s->C * g.plane <= ((int64_t)1 << 26);
#else
  (void)s;
  return false;
#endif
}

size_t nn_dconv_pack_floats(const nn_dconv_shape *s) {
  dc_geom g = dc_geom_of(s);
  return (size_t)(s->C * g.kk * g.mp);
}

void nn_dconv_pack(const nn_dconv_shape *s, const float *w, float *dst) {
  dc_geom g = dc_geom_of(s);
  memset(dst, 0, nn_dconv_pack_floats(s) * sizeof(float));
  for (int64_t m = 0; m < s->M; m++)
    for (int64_t ck = 0; ck < s->C * g.kk; ck++)
      dst[ck * g.mp + m] = w[m * s->C * g.kk + ck];
}

size_t nn_dconv_ws_floats(const nn_dconv_shape *s) {
  dc_geom g = dc_geom_of(s);
  if (s->S == 2)
    return (size_t)((s->C * g.pplane + 15) / 16 * 16);
  return (size_t)((s->C * g.plane + DC_SLACK + 15) / 16 * 16);
}

typedef struct dc_seg {
  int l0, len;           /* lanes of the block */
  int64_t yoff;          /* where they go in an output plane */
} dc_seg;

typedef struct dc_job {
  const nn_dconv_shape *s;
  dc_geom g;
  const float *x, *wp, *bias;
  float *y, *xp;
  sg_act act;
  int mr, nw;            /* block of the path in use */
  int64_t panels;        /* blocks of output channels */
  int64_t items;         /* pixel blocks x panels */
  int64_t gb;            /* pixel blocks per group of dc_range */
  bool masked;           /* AVX-512 masked loads (dc5_masks): on the input itself
                            (stride 1) or on its phase planes (stride 2) */
  int64_t rw;            /* the width pixels are numbered in: PW, IW or W2 */
  int64_t nuse;          /* pixels up to the last output: (OH - 1) * rw + OW */
  /* masked: the planes read (x, or the phase planes in the workspace), the
   * distance between two channels' and the rows and columns they have */
  const float *xin;
  int64_t cstride, bh, bw;
  /* tap t reads toff[t] further: kh * PW + kw (padded copy); when masked,
   * row dh[tdh[t]] and column dw[tdw[t]] further in its plane (the distinct
   * offsets listed once: dc5_masks tests each once per vector) */
  int64_t toff[DC_MAX_K * DC_MAX_K];
  int ndh, ndw;
  int dh[DC_MAX_K], dw[DC_MAX_K];
  unsigned char tdh[DC_MAX_K * DC_MAX_K], tdw[DC_MAX_K * DC_MAX_K];
} dc_job;

/* Work items: item i is channel panel i % panels of pixel block i / panels,
 * so that a range of items is a run of pixels (a band of output rows) with
 * the panels of its two end blocks split: two workers get equal shares
 * however few blocks the map has (a 27x27 map is 17 blocks of 48).  The
 * padded copy is split over the same items (dc_item_row), so that with the
 * same chunks on the same workers each core copies the rows it then reads,
 * and reads the rows of the previous layer's output it wrote: splitting the
 * copy by rows of its own put a third of each band on the other core, and
 * on 2 threads the copy took 4x and the products 1.25x their share of one
 * thread's time (10 3x3 64 -> 64 convs at 27x27, Zen 5 VM). */
static int64_t dc_item_row(const dc_job *j, int64_t i) {
  if (i >= j->items)
    return j->s->S == 2 ? j->g.H2 : j->g.PH;
  /* the padded row of the first pixel of the item's share of its block */
  return (i * j->nw / j->panels) / j->rw;
}

/* Padded rows of items [i0, i1), every channel. */
static void dc_pad_range(void *arg, int64_t i0, int64_t i1) {
  const dc_job *j = arg;
  const nn_dconv_shape *s = j->s;
  const int64_t PW = j->g.PW;
  const int64_t r0 = dc_item_row(j, i0), r1 = dc_item_row(j, i1);
  for (int64_t ch = 0; ch < s->C; ch++)
    for (int64_t r = r0; r < r1; r++) {
      float *dst = j->xp + ch * j->g.plane + r * PW;
      int64_t ih = r - s->PT;
      if (ih < 0 || ih >= s->IH)
        memset(dst, 0, (size_t)PW * sizeof(float));
      else
        ku_gather_row(dst, j->x + (ch * s->IH + ih) * s->IW, s->IW, -s->PL, 1, PW);
    }
}

#if SG_X86
/* d0[q] = xr[2q], d1[q] = xr[2q + 1] for q < W2, 0 past the row's IW:
 * 32 inputs at a time split by two permutes (the scalar stride-2 gather
 * was 7% of a 3x3 stride-2 layer). */
static SG512 void dc5_phase_row(float *d0, float *d1, const float *xr, int64_t IW, int64_t W2) {
  const __m512i ev = SG5_EVEN_IDX;
  const __m512i od = _mm512_add_epi32(ev, _mm512_set1_epi32(1));
  for (int64_t q = 0; q < W2; q += 16) {
    __mmask16 ml = sg5_cols_mask(IW, 2 * q), mh = sg5_cols_mask(IW, 2 * q + 16);
    __m512 a = _mm512_maskz_loadu_ps(ml, xr + 2 * q), b = _mm512_maskz_loadu_ps(mh, xr + 2 * q + 16);
    __m512 e = _mm512_permutex2var_ps(a, ev, b), o = _mm512_permutex2var_ps(a, od, b);
    if (W2 - q >= 16) {
      _mm512_storeu_ps(d0 + q, e);
      _mm512_storeu_ps(d1 + q, o);
    } else {
      __mmask16 m = (__mmask16)((1u << (W2 - q)) - 1u);
      _mm512_mask_storeu_ps(d0 + q, m, e);
      _mm512_mask_storeu_ps(d1 + q, m, o);
    }
  }
}

/* Stride 2: phase-plane rows of items [i0, i1), every channel.  Phase
 * plane (a, b) of channel c holds x[c][2i + a][2j + b] at (i, j), zero
 * past the input: output pixel (oh, ow)'s tap (kh, kw) is element
 * (oh + floor((kh - PT) / 2), ow + floor((kw - PL) / 2)) of phase plane
 * ((kh - PT) mod 2, (kw - PL) mod 2), so the stride-2 conv reads each
 * phase plane like a stride-1 one: 2.25x less to gather than an im2col
 * (each input once), and no GEMM tile wasted on the map's edges. */
static void dc_phase_range(void *arg, int64_t i0, int64_t i1) {
  const dc_job *j = arg;
  const nn_dconv_shape *s = j->s;
  const int64_t H2 = j->g.H2, W2 = j->g.W2;
  int64_t r0 = dc_item_row(j, i0), r1 = dc_item_row(j, i1);
  r1 = r1 < H2 ? r1 : H2;
  for (int64_t ch = 0; ch < s->C; ch++)
    for (int a = 0; a < 2; a++)
      for (int64_t r = r0; r < r1; r++) {
        float *d0 = j->xp + ch * j->g.pplane + (2 * a * H2 + r) * W2, *d1 = d0 + H2 * W2;
        int64_t ih = 2 * r + a;
        if (ih >= s->IH) {
          memset(d0, 0, (size_t)W2 * sizeof(float));
          memset(d1, 0, (size_t)W2 * sizeof(float));
          continue;
        }
        dc5_phase_row(d0, d1, j->x + (ch * s->IH + ih) * s->IW, s->IW, W2);
      }
}
#endif

/* The runs of output rows in pixels [n0, n0 + nw) of the numbering width,
 * each within one vector of vw lanes; the padding columns are skipped (a
 * width of OW has none: the runs go on across rows). */
static int dc_segments(const dc_job *j, int64_t n0, int nw, int vw, dc_seg *seg) {
  const int64_t PW = j->rw, OW = j->s->OW;
  int64_t end = n0 + nw < j->nuse ? n0 + nw : j->nuse;
  int ns = 0;
  for (int64_t n = n0; n < end;) {
    int64_t oh = n / PW, ow = n - oh * PW;
    if (ow >= OW) {
      n = (oh + 1) * PW;
      continue;
    }
    int64_t e = PW == OW ? end : oh * PW + OW < end ? oh * PW + OW : end;
    int64_t l0 = n - n0, vend = (l0 / vw + 1) * vw;
    if (e - n0 > vend)
      e = n0 + vend;
    seg[ns++] = (dc_seg){(int)l0, (int)(e - n), oh * OW + ow};
    n = e;
  }
  return ns;
}

#if SG_X86
/* Masked mode: the lanes of each tap that fall inside its plane, for NV
 * vectors of the pixels from n0 (numbered in the plane width rw):
 * mk[t * 3 + v].  A lane's row and column come from a float division
 * (exact after one correction below 2^24 pixels: nn_dconv_ok and
 * nn_dconv2d); a tap reads inside when both its row and its column do. */
static SG_ALWAYS_INLINE SG512 void dc5_masks(const dc_job *j, const int NV, int64_t n0,
                                             __mmask16 *mk) {
  const __m512i rw = _mm512_set1_epi32((int)j->rw), one = _mm512_set1_epi32(1);
  const __m512i bh = _mm512_set1_epi32((int)j->bh), bw = _mm512_set1_epi32((int)j->bw);
  const __m512i zero = _mm512_setzero_si512();
  const __m512i iota = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
  const __m512 inv = _mm512_set1_ps(1.0f / (float)j->rw);
  for (int v = 0; v < NV; v++) {
    __m512i n = _mm512_add_epi32(_mm512_set1_epi32((int)(n0 + 16 * v)), iota);
    __m512i oh = _mm512_cvttps_epi32(_mm512_mul_ps(_mm512_cvtepi32_ps(n), inv));
    __m512i ow = _mm512_sub_epi32(n, _mm512_mullo_epi32(oh, rw));
    __mmask16 lo = _mm512_cmplt_epi32_mask(ow, zero);
    oh = _mm512_mask_sub_epi32(oh, lo, oh, one);
    ow = _mm512_mask_add_epi32(ow, lo, ow, rw);
    __mmask16 hi = _mm512_cmpge_epi32_mask(ow, rw);
    oh = _mm512_mask_add_epi32(oh, hi, oh, one);
    ow = _mm512_mask_sub_epi32(ow, hi, ow, rw);
    __mmask16 cm[DC_MAX_K], rm[DC_MAX_K];
    for (int q = 0; q < j->ndw; q++) {   /* 0 <= ow + dw < bw */
      __m512i c = _mm512_add_epi32(ow, _mm512_set1_epi32(j->dw[q]));
      cm[q] = _mm512_cmpge_epi32_mask(c, zero) & _mm512_cmplt_epi32_mask(c, bw);
    }
    for (int q = 0; q < j->ndh; q++) {   /* 0 <= oh + dh < bh */
      __m512i r = _mm512_add_epi32(oh, _mm512_set1_epi32(j->dh[q]));
      rm[q] = _mm512_cmpge_epi32_mask(r, zero) & _mm512_cmplt_epi32_mask(r, bh);
    }
    for (int t = 0; t < j->g.kk; t++)
      mk[t * 3 + v] = cm[j->tdw[t]] & rm[j->tdh[t]];
  }
}

/* One tap of one channel: MR weights from wc times NV pixel vectors, into
 * the accumulators a0, a1, a2 of dc5_block (a macro: as an inline function
 * taking the accumulator arrays, the kernel ran 2% slower, Zen 5). */
#define DC5_FMA(MR, NV, wc, v0, v1, v2)                                                      \
  do {                                                                                       \
    SG_UNROLL(14)                                                                            \
    for (int r_ = 0; r_ < (MR); r_++) {                                                      \
      __m512 b_ = _mm512_set1_ps((wc)[r_]);                                                  \
      a0[r_] = _mm512_fmadd_ps(b_, (v0), a0[r_]);                                            \
      a1[r_] = _mm512_fmadd_ps(b_, (v1), a1[r_]);                                            \
      if ((NV) == 3)                                                                         \
        a2[r_] = _mm512_fmadd_ps(b_, (v2), a2[r_]);                                          \
    }                                                                                        \
  } while (0)

/* dc5_masks for the block width in use (48 pixels: three vectors, else
 * two). */
static SG512 void dc5_masks_any(const dc_job *j, int64_t n0, __mmask16 *mk) {
  if (j->nw == DC5W_NW)
    dc5_masks(j, 3, n0, mk);
  else
    dc5_masks(j, 2, n0, mk);
}

/* MR (<= 14, <= 8 with three) channels from m0 x NV (2 or 3) vectors of
 * pixels from n0, bias first, the activation at the store; lanes in the
 * padding dropped by compressing each run of a row to the front of a
 * masked store.  MASKED: read the input itself, each tap's lanes outside
 * it zeroed by a masked load (free on AVX-512, unlike AVX2's vmaskmovps on
 * AMD), tap by tap so that its masks stay in registers over the channels;
 * otherwise the padded copy, channel by channel. */
static SG_ALWAYS_INLINE SG512 void dc5_block(const int MR, const int NV, const int MASKED,
                                             const dc_job *j, int64_t n0, int64_t m0,
                                             const __mmask16 *mk) {
  const nn_dconv_shape *s = j->s;
  const int64_t mp = j->g.mp, plane = j->g.plane;
  const int kk = j->g.kk;
  __m512 a0[DC5_MR], a1[DC5_MR], a2[DC5_MR];
  SG_UNROLL(14)
  for (int r = 0; r < MR; r++)
    a0[r] = a1[r] = a2[r] = _mm512_set1_ps(j->bias ? j->bias[m0 + r] : 0.0f);
  if (MASKED) {
    const int64_t iplane = j->cstride, wstep = kk * mp;
    for (int t = 0; t < kk; t++) {
      const __mmask16 k0 = mk[t * 3], k1 = mk[t * 3 + 1], k2 = NV == 3 ? mk[t * 3 + 2] : 0;
      if (!(k0 | k1 | k2))
        continue;   /* the tap reads only padding (the top and bottom rows) */
      /* lanes outside the input may point outside it: masked off, never read */
      const float *src = j->xin + n0 + j->toff[t], *wc = j->wp + t * mp + m0;
      for (int64_t ch = 0; ch < s->C; ch++, src += iplane, wc += wstep) {
        __m512 v0 = _mm512_maskz_loadu_ps(k0, src), v1 = _mm512_maskz_loadu_ps(k1, src + 16);
        __m512 v2 = NV == 3 ? _mm512_maskz_loadu_ps(k2, src + 32) : v1;
        DC5_FMA(MR, NV, wc, v0, v1, v2);
      }
    }
  } else {
    const float *xc = j->xp + n0, *wc = j->wp + m0;
    for (int64_t ch = 0; ch < s->C; ch++, xc += plane) {
      for (int t = 0; t < kk; t++, wc += mp) {
        const float *src = xc + j->toff[t];
        __m512 v0 = _mm512_loadu_ps(src), v1 = _mm512_loadu_ps(src + 16);
        __m512 v2 = NV == 3 ? _mm512_loadu_ps(src + 32) : v1;
        DC5_FMA(MR, NV, wc, v0, v1, v2);
      }
    }
  }
  dc_seg seg[DC_MAX_SEG];
  int ns = dc_segments(j, n0, 16 * NV, 16, seg);
  const int64_t osz = s->OH * s->OW;
  SG_UNROLL(14)
  for (int r = 0; r < MR; r++) {
    __m512 v[3] = {sg5_act(&j->act, a0[r]), sg5_act(&j->act, a1[r]),
                   NV == 3 ? sg5_act(&j->act, a2[r]) : a1[r]};
    float *ym = j->y + (m0 + r) * osz;
    for (int q = 0; q < ns; q++) {
      __m512 u = v[seg[q].l0 >> 4];
      int sh = seg[q].l0 & 15;
      if (seg[q].len == 16) {
        _mm512_storeu_ps(ym + seg[q].yoff, u);
        continue;
      }
      __mmask16 run = (__mmask16)((1u << seg[q].len) - 1u);
      if (sh)
        u = _mm512_maskz_compress_ps((__mmask16)(run << sh), u);
      _mm512_mask_storeu_ps(ym + seg[q].yoff, run, u);
    }
  }
}

#define DC5_CASE(MR_)                                                                        \
  case MR_:                                                                                  \
    if (j->masked)                                                                           \
      dc5_block(MR_, 2, 1, j, n0, m0, mk);                                                       \
    else                                                                                     \
      dc5_block(MR_, 2, 0, j, n0, m0, mk);                                                       \
    break;
#define DC5W_CASE(MR_)                                                                       \
  case MR_:                                                                                  \
    if (j->masked)                                                                           \
      dc5_block(MR_, 3, 1, j, n0, m0, mk);                                                       \
    else                                                                                     \
      dc5_block(MR_, 3, 0, j, n0, m0, mk);                                                       \
    break;

static SG512 void dc5w_block_any(int mr, const dc_job *j, int64_t n0, int64_t m0,
                                 const __mmask16 *mk) {
  switch (mr) {
  DC5W_CASE(8)
  DC5W_CASE(7)
  DC5W_CASE(6)
  DC5W_CASE(5)
  DC5W_CASE(4)
  DC5W_CASE(3)
  DC5W_CASE(2)
  default: DC5W_CASE(1)
  }
}

static SG512 void dc5_block_any(int mr, const dc_job *j, int64_t n0, int64_t m0,
                                const __mmask16 *mk) {
  switch (mr) {
  DC5_CASE(14)
  DC5_CASE(13)
  DC5_CASE(12)
  DC5_CASE(11)
  DC5_CASE(10)
  DC5_CASE(9)
  DC5_CASE(8)
  DC5_CASE(7)
  DC5_CASE(6)
  DC5_CASE(5)
  DC5_CASE(4)
  DC5_CASE(3)
  DC5_CASE(2)
  default: DC5_CASE(1)
  }
}
#undef DC5_CASE
#undef DC5W_CASE

/* The AVX2 twin: MR (<= 6) channels x 16 pixels, stored through a block on
 * the stack (AMD's masked stores are slow), each run of a row copied out. */
static SG_ALWAYS_INLINE SG256 void dc2_block(const int MR, const dc_job *j, int64_t n0,
                                             int64_t m0) {
  const nn_dconv_shape *s = j->s;
  const int64_t mp = j->g.mp, plane = j->g.plane;
  const int kk = j->g.kk;
  __m256 a0[DC2_MR], a1[DC2_MR];
  SG_UNROLL(6)
  for (int r = 0; r < MR; r++)
    a0[r] = a1[r] = _mm256_set1_ps(j->bias ? j->bias[m0 + r] : 0.0f);
  const float *xc = j->xp + n0, *wc = j->wp + m0;
  for (int64_t ch = 0; ch < s->C; ch++, xc += plane) {
    for (int t = 0; t < kk; t++, wc += mp) {
      const float *src = xc + j->toff[t];
      __m256 v0 = _mm256_loadu_ps(src), v1 = _mm256_loadu_ps(src + 8);
      SG_UNROLL(6)
      for (int r = 0; r < MR; r++) {
        __m256 b = _mm256_broadcast_ss(wc + r);
        a0[r] = _mm256_fmadd_ps(b, v0, a0[r]);
        a1[r] = _mm256_fmadd_ps(b, v1, a1[r]);
      }
    }
  }
  dc_seg seg[DC_MAX_SEG];
  int ns = dc_segments(j, n0, DC2_NW, DC2_NW, seg);
  const int64_t osz = s->OH * s->OW;
  float blk[DC2_NW] __attribute__((aligned(32)));
  SG_UNROLL(6)
  for (int r = 0; r < MR; r++) {
    float *ym = j->y + (m0 + r) * osz;
    if (ns == 1 && seg[0].len == DC2_NW) {
      _mm256_storeu_ps(ym + seg[0].yoff, sg2_act(&j->act, a0[r]));
      _mm256_storeu_ps(ym + seg[0].yoff + 8, sg2_act(&j->act, a1[r]));
      continue;
    }
    _mm256_store_ps(blk, sg2_act(&j->act, a0[r]));
    _mm256_store_ps(blk + 8, sg2_act(&j->act, a1[r]));
    for (int q = 0; q < ns; q++)
      memcpy(ym + seg[q].yoff, blk + seg[q].l0, (size_t)seg[q].len * sizeof(float));
  }
}

static SG256 void dc2_block_any(int mr, const dc_job *j, int64_t n0, int64_t m0) {
  switch (mr) {
  case 6: dc2_block(6, j, n0, m0); break;
  case 5: dc2_block(5, j, n0, m0); break;
  case 4: dc2_block(4, j, n0, m0); break;
  case 3: dc2_block(3, j, n0, m0); break;
  case 2: dc2_block(2, j, n0, m0); break;
  default: dc2_block(1, j, n0, m0); break;
  }
}

/* The AVX-512 block: 8 x 48 where it wastes no more of the products than
 * 14 x 32 (padding channels of the last block, pixels past the last of the
 * map), credited 5% since it loads one vector less per 24 multiply-adds
 * (3x3 8 -> 32 at 64x64 and 5x5 32 -> 32 at 32x32 2-3% faster, Zen 5); 14
 * x 32 where M is near a multiple of 14 and the map small (7x7: 61
 * padded-width pixels, 64 in two blocks of 32 against 96). */
static void dc_block_pick(const nn_dconv_shape *s, int64_t nuse, int *mr, int *nw) {
  int64_t mw = (s->M + DC5W_MR - 1) / DC5W_MR * DC5W_MR, mn = (s->M + DC5_MR - 1) / DC5_MR * DC5_MR;
  int64_t nwide = (nuse + DC5W_NW - 1) / DC5W_NW * DC5W_NW;
  int64_t nnar = (nuse + DC5_NW - 1) / DC5_NW * DC5_NW;
  /* products computed per useful one, compared as mw * nwide vs mn * nnar,
   * the wide block credited 5% */
  bool wide = (double)(mw * nwide) <= 1.05 * (double)(mn * nnar);
  *mr = wide ? DC5W_MR : DC5_MR;
  *nw = wide ? DC5W_NW : DC5_NW;
}

/* Items [i0, i1) (dc_item_row), in groups of gb pixel blocks whose input
 * stays in L2 (nn_dconv2d), each group channel panel by channel panel, so
 * that a panel's weights stay in L1 while the blocks go by.  The masks of
 * a group's blocks are made once for all its panels: made per block and
 * panel they cost SqueezeNet 2.7% on 2 threads (its 16 -> 64 3x3 layers,
 * 144 multiply-add steps a block, Zen 5). */
static void dc_range(void *arg, int64_t i0, int64_t i1) {
  const dc_job *j = arg;
  const int64_t M = j->s->M, P = j->panels;
  const int64_t bl = i0 / P, bh = (i1 - 1) / P;
  __mmask16 gmk[DC_GROUP_MAX * DC_MK];
  for (int64_t g0 = bl; g0 <= bh; g0 += j->gb) {
    int64_t g1 = g0 + j->gb - 1 < bh ? g0 + j->gb - 1 : bh;
    if (j->masked)   /* once per block, not per panel */
      for (int64_t b = g0; b <= g1; b++)
        dc5_masks_any(j, b * j->nw, gmk + (b - g0) * DC_MK);
    for (int64_t pi = 0; pi < P; pi++) {
      int64_t m0 = pi * j->mr;
      int mr = M - m0 < j->mr ? (int)(M - m0) : j->mr;
      /* the range's end blocks hold only some of their panels */
      int64_t b0 = g0 + (g0 * P + pi < i0), b1 = g1 - (g1 * P + pi >= i1);
      for (int64_t b = b0; b <= b1; b++) {
        int64_t n0 = b * j->nw;
        const __mmask16 *mk = gmk + (b - g0) * DC_MK;
        if (j->nw == DC5W_NW)
          dc5w_block_any(mr, j, n0, m0, mk);
        else if (j->nw == DC5_NW)
          dc5_block_any(mr, j, n0, m0, mk);
        else
          dc2_block_any(mr, j, n0, m0);
      }
    }
  }
}
#endif

nn_status nn_dconv2d(nn_ctx *c, const nn_dconv_shape *s, const float *x, const float *wp,
                     float *y, const nn_sgemm_epi *epi, float *ws) {
  if (!nn_dconv_ok(s) || !x || !wp || !y || !ws)
    return NN_ERR_INVALID_ARG;
  if (!sg_epi_row_bias_act(epi))
    return NN_ERR_INVALID_ARG;
#if SG_X86
  dc_job j;
  memset(&j, 0, sizeof j);
  j.s = s;
  j.g = dc_geom_of(s);
  j.x = x;
  j.wp = wp;
  j.y = y;
  j.xp = ws;
  j.bias = epi && epi->bias ? epi->bias : NULL;
  j.act = sg_act_from(epi);
  const bool avx512 = nn_cpu_isa_get() >= NN_CPU_AVX512;
  const bool s2 = s->S == 2;   /* nn_dconv_ok: AVX-512 only */
  /* masked: pixels numbered in the width of the planes read, which must
   * hold a row of the output, and few enough for dc5_masks' float
   * division */
  j.masked = s2 || (avx512 && s->OW <= s->IW && s->OH * s->IW + DC5W_NW < ((int64_t)1 << 24));
  j.rw = s2 ? j.g.W2 : j.masked ? s->IW : j.g.PW;
  j.nuse = (s->OH - 1) * j.rw + s->OW;
  if (avx512) {
    dc_block_pick(s, j.nuse, &j.mr, &j.nw);
  } else {
    j.mr = DC2_MR;
    j.nw = DC2_NW;
  }
  j.panels = (s->M + j.mr - 1) / j.mr;
  j.xin = s2 ? ws : x;
  j.cstride = s2 ? j.g.pplane : s->IH * s->IW;
  j.bh = s2 ? j.g.H2 : s->IH;
  j.bw = j.rw;
  for (int t = 0; t < j.g.kk; t++) {
    const int d = s->D > 1 ? s->D : 1;   /* stride 2 has none (nn_dconv_ok) */
    int kh = t / s->KW * d, kw = t % s->KW * d;
    if (!j.masked) {
      j.toff[t] = kh * j.g.PW + kw;
      continue;
    }
    /* stride 2: the phase plane of kh - PT, kw - PL (floor division) */
    int ry = kh - s->PT, rx = kw - s->PL;
    int dy = s2 ? (ry - (ry & 1)) / 2 : ry, dx = s2 ? (rx - (rx & 1)) / 2 : rx;
    int64_t phase = s2 ? (int64_t)(2 * (ry & 1) + (rx & 1)) * j.g.H2 * j.g.W2 : 0;
    j.toff[t] = phase + (int64_t)dy * j.rw + dx;
    int q = 0;
    while (q < j.ndh && j.dh[q] != dy)
      q++;
    if (q == j.ndh)
      j.dh[j.ndh++] = dy;
    j.tdh[t] = (unsigned char)q;
    for (q = 0; q < j.ndw && j.dw[q] != dx;)
      q++;
    if (q == j.ndw)
      j.dw[j.ndw++] = dx;
    j.tdw[t] = (unsigned char)q;
  }
  /* groups of blocks whose input rows (with the window's) fit in half an
   * L2: a whole range channel panel by channel panel read a 56x56 stride-2
   * layer's 1.6 MiB of phase planes once per panel, from L3 */
  {
    /* floats of a row of the planes read, every channel; rows of gb blocks:
     * gb * nw / rw, plus the window's */
    int64_t per_row = s->C * (j.masked ? j.cstride / j.bh : j.g.PW);
    int64_t rows = DC_GROUP_BYTES / (int64_t)sizeof(float) / per_row -
                   (int64_t)(s->KH - 1) * (s->D > 1 ? s->D : 1) / s->S - 1;
    j.gb = rows * j.rw / j.nw;
    j.gb = j.gb < 1 ? 1 : j.gb > DC_GROUP_MAX ? DC_GROUP_MAX : j.gb;
  }
  /* an item is mr x nw x C x KH x KW multiply-adds: chunks of at least
   * ~64k; the copy over the same chunks (dc_item_row) */
  j.items = (j.nuse + j.nw - 1) / j.nw * j.panels;
  int64_t task = (int64_t)j.mr * j.nw * s->C * j.g.kk;
  int64_t grain = task >= 65536 ? 1 : 65536 / task;
  if (s2) {
    nn_parallel_for(c, j.items, grain, dc_phase_range, &j);
  } else if (!j.masked) {
    memset(ws + s->C * j.g.plane, 0, DC_SLACK * sizeof(float));
    nn_parallel_for(c, j.items, grain, dc_pad_range, &j);
  }
  nn_parallel_for(c, j.items, grain, dc_range, &j);
  return NN_OK;
#else
  (void)c;
  (void)epi;
  return NN_ERR_INVALID_ARG;
#endif
}

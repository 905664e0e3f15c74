/* conv_smallc.c - direct convolution of few-channel inputs (conv_smallc.h).
 *
 * Layout of the workspace: for each input channel c and column parity p
 * (p < SW), a plane of HP rows x QP columns holding the zero-padded input
 * at padded column q * SW + p, so that for output pixels ow..ow+15 the tap
 * (kh, kw) reads 16 contiguous floats of plane (c, kw % SW) at row
 * oh * SH + kh, column ow + kw / SW.  Every tap is then two unaligned loads
 * shared by the 6 output channels of the block, each a broadcast weight and
 * two FMAs: 12 accumulators, 8 loads for 12 FMAs.
 *
 * Tails: the last block of pixels starts at OW - 16, recomputing (and
 * rewriting, with the same values) what the previous block wrote, so there
 * is no narrow case (OW >= 16); the last block of channels has M % 6 of
 * them (a kernel per block width).
 *
 * AVX-512 (rows of OW >= 32): 32 pixels x 12 channels, 24 zmm accumulators,
 * 2 loads and 12 broadcasts for 24 FMAs per tap.  On Zen 5 the AVX2 block
 * ran at half the speed of the im2col GEMM's AVX-512 kernel (ResNet-50's
 * 7x7 first layer 4.6 ms against 2.4), so the wider block is not optional
 * there; rows narrower than 32 keep the AVX2 block.
 */
#include <string.h>

#include "cpu/conv_smallc.h"
#include "cpu/kernel_util.h"
#include "cpu/sgemm_simd.h"

#define SC_MB 6          /* output channels per block (AVX2) */
#define SC_PX 16         /* output pixels per block (AVX2) */
#define SC5_MB 12        /* the same, AVX-512 */
#define SC5_PX 32
#define SC_MAX_C 4
#define SC_MAX_K 7

typedef struct sc_geom {
  int64_t HP, QP;        /* padded plane: rows, columns per parity */
} sc_geom;

static sc_geom sc_geom_of(const nn_sconv_shape *s) {
  sc_geom g;
  g.HP = (s->OH - 1) * s->SH + s->KH;
  /* the widest read: pixel OW - 1 of the last block, tap KW - 1 */
  g.QP = (s->OW + (s->KW - 1) / s->SW + 7) / 8 * 8;
  return g;
}

bool nn_sconv_ok(const nn_sconv_shape *s) {
#if SG_X86
  if (!s || nn_cpu_isa_get() < NN_CPU_AVX2)
    return false;
  if (s->C < 2 || s->C > SC_MAX_C || s->M < 1 || s->OW < SC_PX || s->OH < 1)
    return false;
  if (s->KH < 1 || s->KH > SC_MAX_K || s->KW < 1 || s->KW > SC_MAX_K)
    return false;
  if ((s->SH != 1 && s->SH != 2) || (s->SW != 1 && s->SW != 2) || s->PT < 0 || s->PL < 0 ||
      s->PT >= s->KH || s->PL >= s->KW)
    return false;
  if (s->IH < 1 || s->IW < 1 || s->IH > (1 << 20) || s->IW > (1 << 20) || s->OH > (1 << 20) ||
      s->OW > (1 << 20) || s->M > (1 << 20))
    return false;
  sc_geom g = sc_geom_of(s);
  /* the padded copy stays a small fraction of what an im2col would be */
  return s->C * s->SW * g.HP * g.QP <= ((int64_t)1 << 28);
#else
  (void)s;
  return false;
#endif
}

size_t nn_sconv_ws_floats(const nn_sconv_shape *s) {
  sc_geom g = sc_geom_of(s);
  return (size_t)((s->C * s->SW * g.HP * g.QP + 15) / 16 * 16);
}

typedef struct sc_job {
  const nn_sconv_shape *s;
  sc_geom g;
  const float *x, *w, *bias;
  float *y, *xs;
  sg_act act;
  int mb, px;            /* channels and pixels per block of the path in use */
  int ntap;              /* C * KH * KW */
  /* tap t = (c, kh, kw) reads the padded planes at toff[t] floats from the
   * block's first pixel of row oh * SH: one flat loop over the taps, with no
   * division by the stride in it (an idiv per tap was 5 % of the kernel) */
  int64_t toff[SC_MAX_C * SC_MAX_K * SC_MAX_K];
  int64_t nmb;           /* channel blocks */
} sc_job;

/* Rows [r0, r1) of the padded planes, r counted over (c, p, row). */
static void sc_pad_range(void *arg, int64_t r0, int64_t r1) {
  const sc_job *j = arg;
  const nn_sconv_shape *s = j->s;
  const int64_t HP = j->g.HP, QP = j->g.QP;
  for (int64_t r = r0; r < r1; r++) {
    int64_t row = r % HP, cp = r / HP, p = cp % s->SW, c = cp / s->SW;
    float *dst = j->xs + r * QP;
    int64_t ih = row - s->PT;
    if (ih < 0 || ih >= s->IH) {
      memset(dst, 0, (size_t)QP * sizeof(float));
      continue;
    }
    /* padded column q is input column q * SW + p - PL */
    ku_gather_row(dst, j->x + (c * s->IH + ih) * s->IW, s->IW, p - s->PL, s->SW, QP);
  }
}

#if SG_X86
/* Stride 2: rows [r0, r1) counted over (c, row), both parities of a row in
 * one pass over it.  Where both of a column pair's inputs lie in the row,
 * the loop has a constant stride and the compiler deinterleaves it with
 * shuffles; the stride-2 gather one parity at a time, a float per step, was
 * 14% of SqueezeNet's first conv (Zen 5). */
static SG256 void sc_pad2_range(void *arg, int64_t r0, int64_t r1) {
  const sc_job *j = arg;
  const nn_sconv_shape *s = j->s;
  const int64_t HP = j->g.HP, QP = j->g.QP, IW = s->IW, PL = s->PL;
  /* column pair q reads inputs 2q - PL and 2q + 1 - PL: both in the row for
   * q in [lo, hi) */
  int64_t lo = (PL + 1) / 2, hi = (IW - 2 + PL) / 2 + 1;
  lo = lo < QP ? lo : QP;
  hi = hi < lo ? lo : hi < QP ? hi : QP;
  for (int64_t r = r0; r < r1; r++) {
    int64_t row = r % HP, c = r / HP;
    float *d0 = j->xs + (c * 2 * HP + row) * QP;
    float *d1 = d0 + HP * QP;
    int64_t ih = row - s->PT;
    if (ih < 0 || ih >= s->IH) {
      memset(d0, 0, (size_t)QP * sizeof(float));
      memset(d1, 0, (size_t)QP * sizeof(float));
      continue;
    }
    /* the edges as the one-parity rows are gathered, the middle in one
     * pass: pair lo + t reads xm[2t] and xm[2t + 1] */
    const float *xr = j->x + (c * s->IH + ih) * IW;
    ku_gather_row(d0, xr, IW, -PL, 2, lo);
    ku_gather_row(d1, xr, IW, 1 - PL, 2, lo);
    const float *restrict xm = xr + 2 * lo - PL;
    float *restrict m0 = d0 + lo, *restrict m1 = d1 + lo;
    for (int64_t t = 0; t < hi - lo; t++) {
      m0[t] = xm[2 * t];
      m1[t] = xm[2 * t + 1];
    }
    ku_gather_row(d0 + hi, xr, IW, 2 * hi - PL, 2, QP - hi);
    ku_gather_row(d1 + hi, xr, IW, 2 * hi + 1 - PL, 2, QP - hi);
  }
}
#endif

#if SG_X86
/* 16 pixels from ow x MB (<= 6) channels from m0 of output row oh. */
static SG_ALWAYS_INLINE SG256 void sc_block(const int MB, const sc_job *j, int64_t oh, int64_t m0,
                                            int64_t ow) {
  const nn_sconv_shape *s = j->s;
  const int64_t ckk = j->ntap;
  __m256 a0[SC_MB], a1[SC_MB];
  SG_UNROLL(6)
  for (int mi = 0; mi < MB; mi++)
    a0[mi] = a1[mi] = _mm256_setzero_ps();
  const float *wm = j->w + m0 * ckk;
  const float *base = j->xs + oh * s->SH * j->g.QP + ow;
  for (int t = 0; t < j->ntap; t++) {
    const float *src = base + j->toff[t];
    __m256 v0 = _mm256_loadu_ps(src), v1 = _mm256_loadu_ps(src + 8);
    SG_UNROLL(6)
    for (int mi = 0; mi < MB; mi++) {
      __m256 b = _mm256_broadcast_ss(wm + mi * ckk + t);
      a0[mi] = _mm256_fmadd_ps(b, v0, a0[mi]);
      a1[mi] = _mm256_fmadd_ps(b, v1, a1[mi]);
    }
  }
  SG_UNROLL(6)
  for (int mi = 0; mi < MB; mi++) {
    if (j->bias) {
      __m256 b = _mm256_broadcast_ss(j->bias + m0 + mi);
      a0[mi] = _mm256_add_ps(a0[mi], b);
      a1[mi] = _mm256_add_ps(a1[mi], b);
    }
    float *yo = j->y + ((m0 + mi) * s->OH + oh) * s->OW + ow;
    _mm256_storeu_ps(yo, sg2_act(&j->act, a0[mi]));
    _mm256_storeu_ps(yo + 8, sg2_act(&j->act, a1[mi]));
  }
}

/* One block of every width: 6 channels, and the last block's M % 6. */
static SG256 void sc_block_any(int mb, const sc_job *j, int64_t oh, int64_t m0, int64_t ow) {
  switch (mb) {
  case 6: sc_block(6, j, oh, m0, ow); break;
  case 5: sc_block(5, j, oh, m0, ow); break;
  case 4: sc_block(4, j, oh, m0, ow); break;
  case 3: sc_block(3, j, oh, m0, ow); break;
  case 2: sc_block(2, j, oh, m0, ow); break;
  default: sc_block(1, j, oh, m0, ow); break;
  }
}

/* 32 pixels from ow x MB (<= 12) channels from m0 of output row oh: the
 * AVX-512 twin of sc_block.  NV = 1: the 16 pixels from ow only, those of
 * mask mk (the row's last few: loads and stores masked, nothing past the
 * row read or written). */
static SG_ALWAYS_INLINE SG512 void sc5_block(const int MB, const int NV, const sc_job *j,
                                             int64_t oh, int64_t m0, int64_t ow, __mmask16 mk) {
  const nn_sconv_shape *s = j->s;
  const int64_t ckk = j->ntap;
  __m512 a0[SC5_MB], a1[SC5_MB];
  SG_UNROLL(12)
  for (int mi = 0; mi < MB; mi++)
    a0[mi] = a1[mi] = _mm512_setzero_ps();
  const float *wm = j->w + m0 * ckk;
  const float *base = j->xs + oh * s->SH * j->g.QP + ow;
  for (int t = 0; t < j->ntap; t++) {
    const float *src = base + j->toff[t];
    __m512 v0 = NV == 2 ? _mm512_loadu_ps(src) : _mm512_maskz_loadu_ps(mk, src);
    __m512 v1 = NV == 2 ? _mm512_loadu_ps(src + 16) : v0;
    SG_UNROLL(12)
    for (int mi = 0; mi < MB; mi++) {
      __m512 b = _mm512_set1_ps(wm[mi * ckk + t]);
      a0[mi] = _mm512_fmadd_ps(b, v0, a0[mi]);
      if (NV == 2)
        a1[mi] = _mm512_fmadd_ps(b, v1, a1[mi]);
    }
  }
  SG_UNROLL(12)
  for (int mi = 0; mi < MB; mi++) {
    if (j->bias) {
      __m512 b = _mm512_set1_ps(j->bias[m0 + mi]);
      a0[mi] = _mm512_add_ps(a0[mi], b);
      a1[mi] = _mm512_add_ps(a1[mi], b);
    }
    float *yo = j->y + ((m0 + mi) * s->OH + oh) * s->OW + ow;
    if (NV == 2) {
      _mm512_storeu_ps(yo, sg5_act(&j->act, a0[mi]));
      _mm512_storeu_ps(yo + 16, sg5_act(&j->act, a1[mi]));
    } else {
      _mm512_mask_storeu_ps(yo, mk, sg5_act(&j->act, a0[mi]));
    }
  }
}

#define SC5_CASE(MB_)                                                                       \
  case MB_:                                                                                 \
    if (nv == 2)                                                                            \
      sc5_block(MB_, 2, j, oh, m0, ow, mk);                                                 \
    else                                                                                    \
      sc5_block(MB_, 1, j, oh, m0, ow, mk);                                                 \
    break;

static SG512 void sc5_block_any(int mb, int nv, const sc_job *j, int64_t oh, int64_t m0,
                                int64_t ow, __mmask16 mk) {
  switch (mb) {
  SC5_CASE(12)
  SC5_CASE(11)
  SC5_CASE(10)
  SC5_CASE(9)
  SC5_CASE(8)
  SC5_CASE(7)
  SC5_CASE(6)
  SC5_CASE(5)
  SC5_CASE(4)
  SC5_CASE(3)
  SC5_CASE(2)
  default: SC5_CASE(1)
  }
}
#undef SC5_CASE

/* Tasks [t0, t1): task t is output row t / nmb, channel block t % nmb. */
static void sc_range(void *arg, int64_t t0, int64_t t1) {
  const sc_job *j = arg;
  const nn_sconv_shape *s = j->s;
  const int MBW = j->mb, PX = j->px;
  for (int64_t t = t0; t < t1; t++) {
    int64_t oh = t / j->nmb, m0 = t % j->nmb * MBW;
    int mb = s->M - m0 < MBW ? (int)(s->M - m0) : MBW;
    for (int64_t ow = 0;; ow += PX) {
      int64_t o = ow + PX <= s->OW ? ow : s->OW - PX;
      if (PX == SC5_PX && s->OW - ow <= 16) {
        /* 16 or fewer pixels left: one masked vector instead of a whole
         * block shifted back over pixels already written (ResNet-50's 112
         * = 3 x 32 + 16 computed 128) */
        sc5_block_any(mb, 1, j, oh, m0, ow, (__mmask16)((1u << (s->OW - ow)) - 1u));
        break;
      }
      if (PX == SC5_PX)
        sc5_block_any(mb, 2, j, oh, m0, o, (__mmask16)0xFFFF);
      else
        sc_block_any(mb, j, oh, m0, o);
      if (o + PX >= s->OW)
        break;
    }
  }
}
#endif

nn_status nn_sconv2d(nn_ctx *c, const nn_sconv_shape *s, const float *x, const float *w,
                     float *y, const nn_sgemm_epi *epi, float *ws) {
  if (!nn_sconv_ok(s) || !x || !w || !y || !ws)
    return NN_ERR_INVALID_ARG;
  if (!sg_epi_row_bias_act(epi))
    return NN_ERR_INVALID_ARG;
#if SG_X86
  sc_job j;
  memset(&j, 0, sizeof j);
  j.s = s;
  j.g = sc_geom_of(s);
  j.x = x;
  j.w = w;
  j.y = y;
  j.xs = ws;
  j.bias = epi && epi->bias ? epi->bias : NULL;
  j.act = sg_act_from(epi);
  bool wide = nn_cpu_isa_get() >= NN_CPU_AVX512 && s->OW >= SC5_PX;
  j.mb = wide ? SC5_MB : SC_MB;
  j.px = wide ? SC5_PX : SC_PX;
  j.nmb = (s->M + j.mb - 1) / j.mb;
  j.ntap = (int)(s->C * s->KH * s->KW);
  for (int t = 0; t < j.ntap; t++) {
    int kw = t % s->KW, kh = t / s->KW % s->KH, ch = t / (s->KW * s->KH);
    j.toff[t] = ((int64_t)(ch * s->SW + kw % s->SW) * j.g.HP + kh) * j.g.QP + kw / s->SW;
  }
  if (s->SW == 2)
    nn_parallel_for(c, s->C * j.g.HP, 32, sc_pad2_range, &j);
  else
    nn_parallel_for(c, s->C * s->SW * j.g.HP, 64, sc_pad_range, &j);
  /* a task is one output row of one channel block: OW * mb * C * KH * KW
   * multiply-adds; grain so that a chunk is at least ~64k of them */
  int64_t task = s->OW * j.mb * s->C * s->KH * s->KW;
  int64_t grain = task >= 65536 ? 1 : 65536 / task;
  nn_parallel_for(c, s->OH * j.nmb, grain, sc_range, &j);
  return NN_OK;
#else
  (void)c;
  (void)epi;
  return NN_ERR_INVALID_ARG;
#endif
}

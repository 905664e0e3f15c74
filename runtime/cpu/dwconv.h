/* dwconv.h - direct depthwise 2-D convolution (one input channel per group),
 * float32 NCHW, with the GEMM engine's fused bias + activation epilogue.
 *
 * y[n][c * mult + m] = act(bias[c * mult + m]
 *                          + sum_{kh,kw} w[c * mult + m][kh][kw] * x[n][c][ih][iw])
 * with ih = oh * SH - PT + kh * DH, iw = ow * SW - PL + kw * DW, and zero
 * outside the input (padding).  The bottom / right padding follows from OH
 * and OW, so any ONNX pads / auto_pad reduce to (PT, PL, OH, OW).
 *
 * Paths: AVX2+FMA (also used on AVX-512 machines) for 3x3 and 5x5 kernels,
 * strides 1 and 2, no dilation: register accumulation of 8-wide output
 * vectors over the interior, scalar edges.  Everything else (and NN_CPU=
 * portable) goes through a portable tap-major loop.  No workspace, no
 * allocation.
 */
#ifndef NN_CPU_DWCONV_H
#define NN_CPU_DWCONV_H

#include "cpu/sgemm.h"

typedef struct nn_dwconv_shape {
  int64_t batch;     /* images */
  int64_t C;         /* input channels (= groups) */
  int64_t mult;      /* output channels per input channel (depth multiplier), >= 1 */
  int64_t IH, IW;    /* input plane */
  int64_t OH, OW;    /* output plane */
  int KH, KW;        /* kernel */
  int SH, SW;        /* strides, >= 1 */
  int PT, PL;        /* top / left zero padding, >= 0 */
  int DH, DW;        /* dilations; 0 means 1 */
} nn_dwconv_shape;

/* x: [batch][C][IH][IW]; w: [C * mult][KH][KW] (ONNX's [M][1][KH][KW]);
 * y: [batch][C * mult][OH][OW], write-only, must not overlap x.
 * epi: activation, and bias with NN_SGEMM_BIAS_ROW = one value per output
 * channel (NULL = neither).  c: its pool splits the planes (NULL = serial).
 * Returns NN_OK or NN_ERR_INVALID_ARG (bad shape or pointer, column bias). */
nn_status nn_dwconv2d(nn_ctx *c, const nn_dwconv_shape *s, const float *x, const float *w,
                      float *y, const nn_sgemm_epi *epi);

/* ---- the depthwise half of a dw -> pw pair ----------------------------------
 * A depthwise conv whose output only a pointwise (1x1, stride 1, unpadded)
 * Conv reads runs inside that Conv's GEMM (cpu/conv.c): its outputs are
 * written straight into the engine's B panels, as an nn_sgemm_pack_fn, so
 * they are never stored as planes nor packed again, and the block the
 * engine asks for is still in cache when the micro-kernels read it.  op(B)
 * is the depthwise output of one image as K = C rows (channels) by
 * N = OH * OW columns (pixels, row-major). */
typedef struct nn_dwconv_panel {
  nn_dwconv_shape s;   /* batch and mult 1 */
  const float *x;      /* the image, [C][IH][IW]; borrowed */
  const float *w;      /* [C][KH][KW]; borrowed */
  nn_sgemm_epi epi;    /* the depthwise conv's own bias (BIAS_ROW) and activation */
} nn_dwconv_panel;

/* Whether nn_dwconv2d_pack has a vector path for this shape on this CPU
 * (AVX2, 3x3, stride 1, no dilation, OW a multiple of 8, OW >= 8); other
 * shapes are computed one output at a time (correct, slow: callers keep them
 * as a separate depthwise conv). */
bool nn_dwconv2d_panel_ok(const nn_dwconv_shape *s);

/* nn_sgemm_pack_fn: user is a const nn_dwconv_panel *.  No allocation;
 * safe to call concurrently on disjoint blocks. */
void nn_dwconv2d_pack(void *user, int64_t k0, int64_t kc, int64_t j0, int64_t nb, int nr,
                      float *dst, int64_t pstride);

/* Output pixels [p0, p0 + np) (row-major in the plane) of every channel,
 * channel c at dst + c * ld (ld >= np): a band of rows that the pointwise
 * conv after it reads while it is still in cache (cpu/conv.c's
 * DWPW_BANDS).  Serial; no allocation; the vector path where
 * nn_dwconv2d_panel_ok and p0, np are multiples of OW. */
void nn_dwconv2d_band(const nn_dwconv_panel *pp, int64_t p0, int64_t np, float *dst,
                      int64_t ld);

#endif

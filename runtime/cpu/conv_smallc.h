/* conv_smallc.h - direct 2-D convolution for inputs with few channels, float32
 * NCHW: the first layer of image models (RGB in, a 3x3 to 7x7 window,
 * stride 1 or 2), with the GEMM engine's fused bias + activation epilogue.
 *
 * Why: with 3 input channels the GEMM's depth is only C * KH * KW (27 to
 * 147) while its right-hand side, the im2col of the input, is that many times
 * the input: packing it costs as much as the product (BlazeFace back-256's
 * 5x5 stride-2 first layer: 9% of the model in the im2col packing alone).
 * Here the input is copied once, zero-padded and split by column parity
 * (stride 2), so every tap of 16 output pixels is two contiguous loads, and
 * the product accumulates 16 pixels x 6 output channels in registers (AVX2;
 * 32 x 12 on AVX-512 for rows of at least 32 pixels).
 *
 *   y[n][m][oh][ow] = act(bias[m] + sum_{c,kh,kw} w[m][c][kh][kw] *
 *                         x[n][c][oh * SH - PT + kh][ow * SW - PL + kw])
 * with zeros outside the input; the bottom / right padding follows from OH
 * and OW.  AVX2+FMA or AVX-512 (nn_sconv_ok says when it applies); the callers
 * keep the GEMM path for everything else.
 */
#ifndef NN_CPU_CONV_SMALLC_H
#define NN_CPU_CONV_SMALLC_H

#include "cpu/sgemm.h"

typedef struct nn_sconv_shape {
  int64_t C, M;      /* input and output channels (group 1) */
  int64_t IH, IW;    /* input plane */
  int64_t OH, OW;    /* output plane */
  int KH, KW;        /* window, no dilation */
  int SH, SW;        /* strides */
  int PT, PL;        /* top / left zero padding */
} nn_sconv_shape;

/* Whether this CPU and shape take the direct path: AVX2+FMA, 2 <= C <= 4,
 * windows up to 7x7, strides 1 or 2, OW >= 16, sizes below 2^20. */
bool nn_sconv_ok(const nn_sconv_shape *s);

/* Floats of workspace nn_sconv2d needs (the padded, split copy of one
 * image), a multiple of 16. */
size_t nn_sconv_ws_floats(const nn_sconv_shape *s);

/* One image.  x: [C][IH][IW]; w: [M][C][KH][KW]; y: [M][OH][OW], must not
 * overlap x; epi: activation and NN_SGEMM_BIAS_ROW bias (one per output
 * channel), NULL = neither; a residual is refused.  ws: nn_sconv_ws_floats
 * floats, 32-byte aligned.  c: its pool splits the output rows.  NN_OK, or
 * NN_ERR_INVALID_ARG for a shape nn_sconv_ok refuses or a bad argument.
 * No allocation. */
nn_status nn_sconv2d(nn_ctx *c, const nn_sconv_shape *s, const float *x, const float *w,
                     float *y, const nn_sgemm_epi *epi, float *ws);

#endif

/* conv_direct.h - direct 2-D convolution, stride 1 or 2, for a few to a few dozen
 * input channels, float32 NCHW, with the GEMM engine's fused bias +
 * activation epilogue.
 *
 * Why: Winograd F(2x2, 3x3) does 2.25x fewer multiply-adds, but with few
 * channels in or out its products are thin and its transformed blocks
 * (V, then the 16 products M, four times the output) pass through memory
 * three times.  On one core that still wins; on two it scaled 1.1-1.3x
 * (SqueezeNet's 16 -> 64 3x3 at 55x55: 0.29 ms on 1 thread and on 2, Zen 5
 * VM) where this kernel, which reads only the input and the weights and
 * writes each output once, scales as well as its share of the rows
 * (conv.c's conv_direct_beats_wino says where).
 *
 * How: output pixels are numbered in a row width W (n = oh * W + ow), so
 * that the pixels of a tap (kh, kw) of a run of n are one contiguous run of
 * the input, a fixed distance further on: a block of MR output channels x
 * NW such pixels accumulates in registers (14 x 32 or 8 x 48 on AVX-512,
 * 6 x 16 on AVX2) with one load per vector, tap and channel.  On AVX-512
 * W is the input width and the kernel reads the input itself: each tap's
 * lanes that fall outside it (the padding) are zeroed by masked loads,
 * free there, and no copy is made.  On AVX2 (whose masked loads are slow
 * on AMD), or when the output is wider than the input, the input is
 * first copied, zero-padded, into planes of W = OW + KW - 1 columns.
 * Stride 2 (AVX-512 only): the input is first split into its four phase
 * planes (even / odd rows x columns), each read like a stride-1 input,
 * masked: a tap (kh, kw) is a fixed offset in one of them.
 * Lanes in columns past OW are computed and dropped at the store.  The
 * weights are reordered once into [c][kh][kw][M rounded up to 16]
 * (nn_dconv_pack), the same for every path.
 *
 *   y[m][oh][ow] = act(bias[m] + sum_{c,kh,kw} w[m][c][kh][kw] *
 *                         x[c][oh - PT + kh][ow - PL + kw])
 * with zeros outside the input; the bottom / right padding follows from
 * OH and OW.  x86 with AVX2+FMA or AVX-512 only (nn_dconv_ok); the caller
 * keeps another path for everything else.
 */
#ifndef NN_CPU_CONV_DIRECT_H
#define NN_CPU_CONV_DIRECT_H

#include "cpu/sgemm.h"

typedef struct nn_dconv_shape {
  int64_t C, M;      /* input and output channels (group 1) */
  int64_t IH, IW;    /* input plane */
  int64_t OH, OW;    /* output plane */
  int KH, KW;        /* window */
  int S;             /* stride, both axes: 1, or 2 (AVX-512 only) */
  int PT, PL;        /* top / left zero padding */
  int D;             /* dilation, both axes, stride 1 only: 0 or 1 = none.  A
                        tap (kh, kw) is then a run kh * D rows and kw * D
                        columns further (U2-Net's RSU blocks, DeepLab's
                        backbone): the same kernel, other offsets */
} nn_dconv_shape;

/* Whether this CPU and shape take the direct path: AVX2+FMA, 1 <= C <= 256,
 * windows up to 7x7 with padding smaller than the (dilated) window, sizes
 * below 2^20;
 * stride 1: OH = IH + PT + PB - KH + 1 >= 1 for some PB in [0, KH) (the
 * same for the width) and a padded copy of at most 2^26 floats; stride 2:
 * AVX-512, OW <= ceil(IW / 2), every output window starting inside the
 * input, phase planes of at most 2^26 floats. */
bool nn_dconv_ok(const nn_dconv_shape *s);

/* Floats of reordered weights (nn_dconv_pack), a multiple of 16. */
size_t nn_dconv_pack_floats(const nn_dconv_shape *s);
/* w: [M][C][KH][KW] -> dst (nn_dconv_pack_floats floats). */
void nn_dconv_pack(const nn_dconv_shape *s, const float *w, float *dst);

/* Floats of workspace nn_dconv2d needs (the padded copy of one image), a
 * multiple of 16. */
size_t nn_dconv_ws_floats(const nn_dconv_shape *s);

/* One image.  x: [C][IH][IW]; wp: from nn_dconv_pack; y: [M][OH][OW], must
 * not overlap x; epi: activation and NN_SGEMM_BIAS_ROW bias (one per output
 * channel), NULL = neither; a residual is refused.  ws: nn_dconv_ws_floats
 * floats, 64-byte aligned (unused on AVX-512 unless OW > IW).  c: its pool
 * splits the products, and the copy where one is made, by bands of
 * pixels.  NN_OK, or NN_ERR_INVALID_ARG for a shape
 * nn_dconv_ok refuses or a bad argument.  No allocation. */
nn_status nn_dconv2d(nn_ctx *c, const nn_dconv_shape *s, const float *x, const float *wp,
                     float *y, const nn_sgemm_epi *epi, float *ws);

#endif

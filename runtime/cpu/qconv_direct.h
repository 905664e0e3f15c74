/* qconv_direct.h - direct 8-bit integer 2-D convolution (group 1, or
 * depthwise) over a channels-last copy of the input, for QLinearConv and
 * ConvInteger (cpu/conv.c) and QLinearMatMul (cpu/quant.c, as a 1x1
 * convolution of channels-last rows):
 *
 *   C[m][p] = sum_{c,kh,kw} (x[c][ih][iw] - zb) * w[m][c][kh][kw]    (int32)
 *
 * with ih, iw the input position of output pixel p and tap (kh, kw), the
 * zero point outside the input (difference 0), sums wrapping modulo 2^32.
 * The weights' zero points must all be 0 (symmetric int8 weights, or uint8
 * weights at 128 passed shifted by -128): cpu/qgemm.h takes the others.
 *
 * Why: cpu/qgemm.h puts output pixels in the vector lanes, so a 7x7 map's
 * 49 pixels fill 64 lanes (and the stride-1 "wide" columns 63 of them), and
 * every column of the implicit im2col matrix is packed once per block.
 * Here the output channels are the lanes (64 per panel on AVX-512 VNNI, 32
 * on AVX2) and the pixels are broadcast: any pixel count runs without
 * waste, and the input is read where it lies, four channels of one pixel at
 * a time, from a padded channels-last copy made once per image (the copy is
 * C x H x W bytes; im2col was K x OH x OW): ONNX Runtime's (MLAS's)
 * symmetric-convolution scheme, over NCHW tensors.
 *
 * Paths, chosen when the weights are packed and recorded with them:
 *   - AVX-512 VNNI: vpdpbusd, 6 pixels x 64 channels per tile;
 *   - AVX2: the copy's channels as int16, vpmaddwd + vpaddd (exact),
 *     3 pixels x 32 channels (4 vector ops per 32 products: ONNX Runtime's
 *     vpmaddubsw takes 3, but its int16 pair sums saturate);
 *   - portable C over the VNNI layout (tests cover it).
 *
 * Depthwise layers (group = C = M) take the same copy with the channels in
 * the lanes too: per pixel, two taps' values of 16 or 32 channels
 * interleaved as int16 pairs against the two taps' weights (vpdpwssd with
 * AVX-512 VNNI, vpmaddwd + vpaddd on AVX2 over the same panels with the
 * bytes widened as they are loaded; portable C), 64 channels per panel,
 * two pixels at a time; w is then C x 1 x KH x KW.
 */
#ifndef NN_CPU_QCONV_DIRECT_H
#define NN_CPU_QCONV_DIRECT_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "nn_internal.h"

typedef struct nn_qdc_shape {
  int64_t C, M;          /* input and output channels */
  int64_t IH, IW, OH, OW;
  int64_t KH, KW, SH, SW, DH, DW;
  int64_t PT, PL;        /* pads at the top and left; the bottom / right follow */
  bool channels_last;    /* the image comes as IH x IW x C (a matrix product's rows
                            x depth: QLinearMatMul), else C x IH x IW */
  int64_t group;         /* 1, or C = M: depthwise (0 counts as 1) */
} nn_qdc_shape;

/* Whether the shape's sizes stay within what the packed block records
 * (every product below 2^40): the caller keeps another path otherwise. */
bool nn_qdc_fits(const nn_qdc_shape *s);

/* Whether the kernel is worth taking for s on the path in use: it fits,
 * the output channels fill 3/4 of its panels at least (64 channels, 32 on
 * AVX2's group-1 kernel: MobileNetV2's 16- and 24-channel projections ran
 * 3x slower in 64-lane panels than on the GEMM). */
bool nn_qdc_worth(const nn_qdc_shape *s);

/* Bytes of a packed block for s: an upper bound over every path. */
size_t nn_qdc_pack_size(const nn_qdc_shape *s);

/* Pack w (M x C x KH x KW int8 values: ONNX's layout; uint8 weights shifted
 * by -128 by the caller) for the path in use into dst (nn_qdc_pack_size
 * bytes, any alignment; the caller owns it).  The block keeps s and the
 * weights' sums; it does not retain w. */
void nn_qdc_pack(const nn_qdc_shape *s, const int8_t *w, void *dst);

/* A matrix product rows x K by K x N as the kernel sees it: a 1x1
 * convolution of `rows` channels-last pixels of K channels into N
 * (QLinearMatMul, MatMulInteger, MatMulIntegerToFloat). */
void nn_qdc_matrix_shape(int64_t rows, int64_t K, int64_t N, nn_qdc_shape *s);

/* nn_qdc_pack for such a product's B, given as ONNX lays it out (K x N,
 * row-major, 8-bit; b_u8: uint8 with column zero points 128, else int8
 * with 0): transposed to N x K int8 first.  false when that transposed
 * copy (N x K bytes, freed before returning) cannot be allocated. */
bool nn_qdc_pack_matrix(const nn_qdc_shape *s, const uint8_t *b, bool b_u8, void *dst);

/* The sums of output channels m0 .. m0 + mr - 1 (mr <= 64) at output
 * pixels p0 .. p0 + np - 1 (np <= NN_QDC_COLS_MAX, pixels numbered
 * oh * OW + ow), pixel-major and before the zero point's term:
 * c[t * ldc + r] + off[m0 + r] is C[m0 + r][p0 + t] (mod 2^32), off from
 * nn_qdc_offsets (a requantizing caller folds it into its bias).
 * Concurrent calls get disjoint blocks; must not allocate. */
#define NN_QDC_COLS_MAX 48
typedef void (*nn_qdc_store_fn)(void *user, int64_t m0, int64_t mr, int64_t p0, int64_t np,
                                const int32_t *c, int64_t ldc);

/* off[m] = -zb * (the sum of output channel m's weights), mod 2^32, for
 * m < M: the term the store adds (see nn_qdc_store_fn). */
void nn_qdc_offsets(const void *packed, int32_t zb, int32_t *off);

/* Scratch bytes of a compute for shape s (its input copy): an upper bound
 * for every path, so a size taken at prepare stays valid. */
size_t nn_qdc_workspace(const nn_qdc_shape *s);

/* C of one image: x is the image (C x IH x IW, or IH x IW x C when
 * channels_last; 8-bit), each byte xor'd with
 * flip (0x80 turns int8 into uint8 order) and taken as uint8 with zero
 * point zb (0..255).  ws / ws_bytes: nn_qdc_workspace bytes at least.
 * NN_ERR_INVALID_ARG for a block that is not a packed one, or too little
 * scratch. */
nn_status nn_qdc_compute(nn_ctx *c, const void *packed, const uint8_t *x, uint8_t flip, int32_t zb,
                         nn_qdc_store_fn store, void *user, void *ws, size_t ws_bytes);

/* nn_qdc_compute requantized to 8 bits by the kernel, in registers where
 * its path allows (AVX-512 VNNI, group 1), before the store: element r of
 * pixel t becomes nn_vmath_requant_1(sum, bias[m0 + r], mult[m0 + r], zp,
 * u8) (cpu/vmath.h), with sum as nn_qdc_store_fn's c (the zero point's
 * term not added: fold nn_qdc_offsets into bias), the byte at
 * c8[t * ldc + r].  bias and mult hold M values each (read, not kept).
 * With dst set the bytes go straight to dst[p * ld + m] (a channels-last
 * output: pixel p, channel m) and store may be NULL. */
typedef struct nn_qdc_requant {
  const int32_t *bias;
  const float *mult;
  int32_t zp;
  bool u8;                 /* uint8 out, else int8 */
  uint8_t *dst;            /* NULL: through store */
  int64_t ld;
} nn_qdc_requant;
typedef void (*nn_qdc_store8_fn)(void *user, int64_t m0, int64_t mr, int64_t p0, int64_t np,
                                 const uint8_t *c8, int64_t ldc);
nn_status nn_qdc_compute_8(nn_ctx *c, const void *packed, const uint8_t *x, uint8_t flip, int32_t zb,
                           const nn_qdc_requant *rq, nn_qdc_store8_fn store, void *user, void *ws,
                           size_t ws_bytes);

#endif /* NN_CPU_QCONV_DIRECT_H */

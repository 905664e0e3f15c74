/* image_internal.h - what image.c shares with its SIMD row kernels
 * (image_avx2.c) and with the tests.  Not installed.
 *
 * A conversion is a sequence of row stages (image.c drives them):
 *   vpass    weighted sum of consecutive source rows, bytes -> floats
 *            (acc[j] = sum_k w[k] * src[k * stride + j], j < len);
 *   hpass1   horizontal taps of a one-byte-per-pixel plane (ps = 1);
 *   hpass4   horizontal taps of a group of components packed within 4
 *            consecutive bytes of a pixel (RGB, RGBx, UV pairs, YUY2):
 *            a 4-float vector per tap, de-interleaved into component rows;
 *   colour   per tensor channel: affine in the components, clamp, normalise;
 *   store    channel rows -> the tensor's layout and data type.
 * The portable versions are in image.c; image_avx2.c has the same entry
 * points with AVX2+FMA.  Both compute the same sums in the same order; FMA
 * rounding makes them differ by an ulp or so (the tests bound it).
 */
#ifndef NN_IMAGE_INTERNAL_H
#define NN_IMAGE_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "include/nn_image.h"

/* One axis' filter: output t (relative to the first content pixel) reads
 * the n[t] source samples first[t] .. first[t] + n[t] - 1 (all inside the
 * image, clamping already folded into the edge weights) with weights
 * w[woff[t] ..].  Each output's weights are zero-padded to a multiple of 4
 * so hpass1 can read them 4 at a time. */
typedef struct nn_image_taps {
  int32_t *first, *n, *woff;
  float *w;
  int count;        /* outputs */
  int max_n;        /* largest n[t] */
  int lo, hi;       /* first sample read, one past the last (over all t) */
} nn_image_taps;

/* A group for hpass4: output component c (c < n_out) is lane lane[c] of the
 * 4 floats at acc[bias + pixel * ps]. */
typedef struct nn_image_hgroup4 {
  int ps, bias, n_out;
  int lane[4];
  float *out[4];
} nn_image_hgroup4;

/* Colour of one tensor channel: v = o + sum_k m[k] * (comp[k][x] - b[k]) over
 * the K components used, clamped to [0, 255], then (v - mean) * inv_std. */
typedef struct nn_image_chan {
  float m[4], b[4];
  float o, mean, inv_std;
} nn_image_chan;

typedef struct nn_image_kernels {
  void (*vpass)(float *acc, const uint8_t *src, ptrdiff_t stride, const float *w, int n,
                int len);
  /* outputs 0 .. count-1 of the table */
  void (*hpass1)(float *out, const float *acc, int bias, const nn_image_taps *t, int count);
  void (*hpass4)(const nn_image_hgroup4 *g, const float *acc, const nn_image_taps *t, int count);
  /* K components (1, 3 or 4) -> n values of one channel */
  void (*colour)(float *out, const float *const *comp, int K, const nn_image_chan *ch, int n);
  /* C channel rows of n values -> dst (float or uint8 elements), NHWC:
   * element x * C + c; NCHW (C = 1 each call): element x */
  void (*store_f32_nhwc)(float *dst, const float *const *chan, int C, int n);
  void (*store_u8_nhwc)(uint8_t *dst, const float *const *chan, int C, int n);
  void (*store_u8)(uint8_t *dst, const float *src, int n);
} nn_image_kernels;

extern const nn_image_kernels nn_image_kernels_portable;
#if defined(__x86_64__) || defined(__i386__)
#define NN_IMAGE_HAVE_AVX2 1
extern const nn_image_kernels nn_image_kernels_avx2;
#else
#define NN_IMAGE_HAVE_AVX2 0
#endif

/* Test hook: force the portable kernels (simd = 0) or the best ones the CPU
 * has (1; what NN_CPU allows); returns the previous setting.  Not for use
 * while a conversion is running. */
int nn_image_simd_set(int simd);
/* 1 when conversions currently use SIMD kernels. */
int nn_image_simd_get(void);

#endif /* NN_IMAGE_INTERNAL_H */

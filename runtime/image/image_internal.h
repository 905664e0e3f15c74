/* image_internal.h - what image.c shares with its SIMD kernels
 * (image_avx2.c) and with the tests.  Not installed.
 *
 * A conversion runs in blocks of 8 destination rows (image.c drives them),
 * kept transposed between the passes (element j of the block's row r at
 * [j * 8 + r]) so that the horizontal taps, the colour conversion and the
 * normalisation each handle 8 rows per vector operation:
 *   vpass8       per plane: weighted sums of consecutive source rows, bytes
 *                -> floats, one sum per destination row, stored transposed;
 *   hpass8       horizontal taps of a group of components of one plane;
 *   colour8      per tensor channel: affine in the components, clamp,
 *                normalise, and back to 8 rows;
 *   store        channel rows -> the tensor's layout and data type.
 * A turned source rect (params.angle != 0) replaces vpass8 and hpass8 by
 * image.c's portable sampler, which writes the same transposed component
 * rows; colour8 and the stores follow as above.
 * The portable kernels are in image.c (hpass8, colour and the stores come
 * from the templates of image_tmpl.h); image_avx2.c has the same entry
 * points with AVX2+FMA.  Both sum in the same order; vpass8's FMA rounding
 * makes them differ by an ulp or so (the tests bound it).
 */
#ifndef NN_IMAGE_INTERNAL_H
#define NN_IMAGE_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "include/nn_image.h"

/* One axis' filter: output t (relative to the first content pixel) reads
 * the n[t] source samples first[t] .. first[t] + n[t] - 1 (all inside the
 * image: clamping is folded into the edge weights) with weights
 * w[woff[t] ..]. */
typedef struct nn_image_taps {
  int32_t *first, *n, *woff;
  float *w;
  int count;        /* outputs */
  int max_n;        /* largest n[t] */
  int lo, hi;       /* first sample read, one past the last (over all t) */
} nn_image_taps;

/* A group for hpass8: the components of one plane on one horizontal grid.
 * Component c (c < n_out) of pixel i is float (i * ps + bias + lane[c]) of
 * the plane's accumulator row. */
typedef struct nn_image_hgroup {
  int ps, bias, n_out;
  int lane[4];
  float *out[4];    /* n_out transposed rows of count x 8 */
} nn_image_hgroup;

/* Colour of one tensor channel: v = o + sum_k m[k] * (comp[k][x] - b[k]) over
 * the K components used, clamped to [0, 255], then (v - mean) * inv_std. */
typedef struct nn_image_chan {
  float m[4], b[4];
  float o, mean, inv_std;
} nn_image_chan;

/* Long sums go in blocks summed from zero, then added up (rows per block
 * in vpass8, taps per block in hpass8): the rounding error grows with the
 * block plus the number of blocks instead of the filter length (a
 * 2160-row column into one pixel). */
#define NN_IMAGE_VP_ROWS 12
#define NN_IMAGE_HP_TAPS 32
/* vpass8's scratch: 8 rows of a column chunk */
#define NN_IMAGE_VP_CHUNK 256
#define NN_IMAGE_VP_TMP (8 * NN_IMAGE_VP_CHUNK)

typedef struct nn_image_kernels {
  /* accT[j * 8 + r] = sum_k w[r][k] * src[r][k * stride + j], j < len;
   * tmp: NN_IMAGE_VP_TMP floats of scratch */
  void (*vpass8)(float *accT, const uint8_t *const *src, ptrdiff_t stride,
                 const float *const *w, const int *n, int len, float *tmp);
  /* outputs 0 .. count-1 of the table, 8 rows each */
  void (*hpass8)(const nn_image_hgroup *g, const float *accT, const nn_image_taps *t, int count);
  /* one channel of a block from its K (1, 3 or 4) transposed component
   * rows: rows[r][i] = colour of comp[.][i * 8 + r], i < n; tmp: n x 8
   * floats of scratch */
  void (*colour8)(float *const *rows, const float *const *comp, int K, const nn_image_chan *ch,
                  int n, float *tmp);
  /* C channel rows of n values -> dst, NHWC: element x * C + c */
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
 * has (1); returns the previous setting.  Not while a conversion runs. */
int nn_image_simd_set(int simd);
/* 1 when conversions use SIMD kernels (NN_CPU=portable: 0). */
int nn_image_simd_get(void);

#endif /* NN_IMAGE_INTERNAL_H */

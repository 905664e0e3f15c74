/* image_avx2.c - the row kernels of image.c with AVX2 + FMA, chosen at run
 * time (image.c's dispatch; NN_CPU=portable keeps the baseline).  Every
 * function carries the target attribute, so the file builds with the
 * project's baseline flags and runs only where the CPU has the ISA.
 *
 * vpass is the hot loop (every needed source byte, once per vertical tap):
 * 32 bytes of a row are widened to 4 x 8 floats and multiply-added into 4
 * register accumulators, over up to VP_ROWS rows before the accumulator row
 * is stored, so a 1080 -> 128 downscale (about 9 rows a tap set) loads and
 * stores each accumulator once.  The horizontal passes read their taps with
 * 4-float loads and de-interleave with a 4x4 transpose.
 */
#include "image/image_internal.h"

#if NN_IMAGE_HAVE_AVX2

#include <immintrin.h>
#include <math.h>
#include <string.h>

#include "image/image_tmpl.h"

#define AVX2 __attribute__((target("avx2,fma")))

/* Rows summed per pass over the accumulator: enough for typical strong
 * downscales in one pass, few enough that the rows' streams stay in the
 * prefetchers' reach. */
#define VP_ROWS 12

AVX2 static inline __m256 u8x8_to_ps(const uint8_t *p) {
  return _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)p)));
}

/* acc[j] (+)= the block's sum; each block of rows is summed from zero and
 * then added, so the rounding error grows with VP_ROWS + n / VP_ROWS rather
 * than n (a 2160-row column into one pixel stays within 1e-4). */
AVX2 static inline __m256 vp_add(int first, const float *acc, __m256 a) {
  return first ? a : _mm256_add_ps(_mm256_loadu_ps(acc), a);
}

AVX2 static void vpass_avx2(float *acc, const uint8_t *src, ptrdiff_t stride, const float *w,
                            int n, int len) {
  for (int k0 = 0; k0 < n; k0 += VP_ROWS) {
    const int kn = n - k0 < VP_ROWS ? n - k0 : VP_ROWS;
    const uint8_t *base = src + (ptrdiff_t)k0 * stride;
    const float *wk = w + k0;
    const int first = k0 == 0;
    int j = 0;
    for (; j + 32 <= len; j += 32) {
      __m256 a0 = _mm256_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
      const uint8_t *r = base + j;
      for (int k = 0; k < kn; k++, r += stride) {
        const __m256 wv = _mm256_broadcast_ss(wk + k);
        a0 = _mm256_fmadd_ps(u8x8_to_ps(r), wv, a0);
        a1 = _mm256_fmadd_ps(u8x8_to_ps(r + 8), wv, a1);
        a2 = _mm256_fmadd_ps(u8x8_to_ps(r + 16), wv, a2);
        a3 = _mm256_fmadd_ps(u8x8_to_ps(r + 24), wv, a3);
      }
      _mm256_storeu_ps(acc + j, vp_add(first, acc + j, a0));
      _mm256_storeu_ps(acc + j + 8, vp_add(first, acc + j + 8, a1));
      _mm256_storeu_ps(acc + j + 16, vp_add(first, acc + j + 16, a2));
      _mm256_storeu_ps(acc + j + 24, vp_add(first, acc + j + 24, a3));
    }
    for (; j + 8 <= len; j += 8) {
      __m256 a0 = _mm256_setzero_ps();
      const uint8_t *r = base + j;
      for (int k = 0; k < kn; k++, r += stride)
        a0 = _mm256_fmadd_ps(u8x8_to_ps(r), _mm256_broadcast_ss(wk + k), a0);
      _mm256_storeu_ps(acc + j, vp_add(first, acc + j, a0));
    }
    for (; j < len; j++) {
      float s = 0.0f;
      const uint8_t *r = base + j;
      for (int k = 0; k < kn; k++, r += stride)
        s = fmaf((float)*r, wk[k], s);
      acc[j] = first ? s : acc[j] + s;
    }
  }
}

/* Sum of the 4 lanes as ((0 + 1) + (2 + 3)), the order of the hadd tree
 * below. */
AVX2 static inline float hsum4(__m128 v) {
  __m128 s = _mm_add_ps(v, _mm_movehdup_ps(v));
  return _mm_cvtss_f32(_mm_add_ss(s, _mm_movehl_ps(s, s)));
}

/* One output's taps, 4 at a time (its weights are zero-padded to 4); long
 * filters in blocks of HP_TAPS summed from zero (see vp_add). */
#define HP_TAPS 32
AVX2 static inline __m128 dot_taps(const float *a, const float *w, int n4) {
  __m128 s = _mm_mul_ps(_mm_loadu_ps(a), _mm_loadu_ps(w));
  int k = 4;
  for (; k < n4 && k < HP_TAPS; k += 4)
    s = _mm_fmadd_ps(_mm_loadu_ps(a + k), _mm_loadu_ps(w + k), s);
  while (k < n4) {
    const int end = n4 - k < HP_TAPS ? n4 : k + HP_TAPS;
    __m128 b = _mm_mul_ps(_mm_loadu_ps(a + k), _mm_loadu_ps(w + k));
    for (k += 4; k < end; k += 4)
      b = _mm_fmadd_ps(_mm_loadu_ps(a + k), _mm_loadu_ps(w + k), b);
    s = _mm_add_ps(s, b);
  }
  return s;
}

AVX2 static void hpass1_avx2(float *out, const float *acc, int bias, const nn_image_taps *t,
                             int count) {
  const float *a = acc + bias;
  int i = 0;
  for (; i + 4 <= count; i += 4) {
    __m128 s[4];
    for (int q = 0; q < 4; q++)
      s[q] = dot_taps(a + t->first[i + q], t->w + t->woff[i + q], (t->n[i + q] + 3) & ~3);
    _mm_storeu_ps(out + i, _mm_hadd_ps(_mm_hadd_ps(s[0], s[1]), _mm_hadd_ps(s[2], s[3])));
  }
  for (; i < count; i++)
    out[i] = hsum4(dot_taps(a + t->first[i], t->w + t->woff[i], (t->n[i] + 3) & ~3));
}

AVX2 static inline __m128 taps4(const float *a, int ps, const float *w, int n) {
  __m128 s = _mm_mul_ps(_mm_loadu_ps(a), _mm_broadcast_ss(w));
  int k = 1;
  for (; k < n && k < HP_TAPS / 4; k++)
    s = _mm_fmadd_ps(_mm_loadu_ps(a + (ptrdiff_t)k * ps), _mm_broadcast_ss(w + k), s);
  while (k < n) {
    const int end = n - k < HP_TAPS / 4 ? n : k + HP_TAPS / 4;
    __m128 b = _mm_mul_ps(_mm_loadu_ps(a + (ptrdiff_t)k * ps), _mm_broadcast_ss(w + k));
    for (k++; k < end; k++)
      b = _mm_fmadd_ps(_mm_loadu_ps(a + (ptrdiff_t)k * ps), _mm_broadcast_ss(w + k), b);
    s = _mm_add_ps(s, b);
  }
  return s;
}

AVX2 static void hpass4_avx2(const nn_image_hgroup4 *g, const float *acc, const nn_image_taps *t,
                             int count) {
  const int ps = g->ps;
  const float *a = acc + g->bias;
  int i = 0;
  for (; i + 4 <= count; i += 4) {
    __m128 r0 = taps4(a + (ptrdiff_t)t->first[i] * ps, ps, t->w + t->woff[i], t->n[i]);
    __m128 r1 = taps4(a + (ptrdiff_t)t->first[i + 1] * ps, ps, t->w + t->woff[i + 1], t->n[i + 1]);
    __m128 r2 = taps4(a + (ptrdiff_t)t->first[i + 2] * ps, ps, t->w + t->woff[i + 2], t->n[i + 2]);
    __m128 r3 = taps4(a + (ptrdiff_t)t->first[i + 3] * ps, ps, t->w + t->woff[i + 3], t->n[i + 3]);
    /* rows become lanes: r_l = lane l of the 4 outputs */
    _MM_TRANSPOSE4_PS(r0, r1, r2, r3);
    const __m128 lanes[4] = {r0, r1, r2, r3};
    for (int c = 0; c < g->n_out; c++)
      _mm_storeu_ps(g->out[c] + i, lanes[g->lane[c]]);
  }
  for (; i < count; i++) {
    float s[4];
    _mm_storeu_ps(s, taps4(a + (ptrdiff_t)t->first[i] * ps, ps, t->w + t->woff[i], t->n[i]));
    for (int c = 0; c < g->n_out; c++)
      g->out[c][i] = s[g->lane[c]];
  }
}

AVX2 static void colour_avx2(float *out, const float *const *comp, int K, const nn_image_chan *ch,
                             int n) {
  nn_img_colour(out, comp, K, ch, n);
}
AVX2 static void store_f32_nhwc_avx2(float *dst, const float *const *chan, int C, int n) {
  nn_img_store_f32_nhwc(dst, chan, C, n);
}
AVX2 static void store_u8_nhwc_avx2(uint8_t *dst, const float *const *chan, int C, int n) {
  nn_img_store_u8_nhwc(dst, chan, C, n);
}
AVX2 static void store_u8_avx2(uint8_t *dst, const float *src, int n) { nn_img_store_u8(dst, src, n); }

const nn_image_kernels nn_image_kernels_avx2 = {
  vpass_avx2, hpass1_avx2, hpass4_avx2, colour_avx2,
  store_f32_nhwc_avx2, store_u8_nhwc_avx2, store_u8_avx2,
};

#else
typedef int nn_image_avx2_empty; /* ISO C wants a declaration */
#endif /* NN_IMAGE_HAVE_AVX2 */

/* image_tmpl.h - the portable colour, hpass8 and untranspose8 stages and
 * the stores, as always-inline templates.  image.c instantiates them all
 * for the baseline ISA; image_avx2.c instantiates the stores inside
 * target("avx2,fma") functions, where the compiler vectorizes the same
 * loops 8 wide (plain arithmetic; the build's ISO C mode keeps a*b+c
 * unfused, so both compute the same bits).  image_avx2.c's own colour8
 * follows nn_img_colour_k operation for operation, with FMA.
 */
#ifndef NN_IMAGE_TMPL_H
#define NN_IMAGE_TMPL_H

#include "image/image_internal.h"

#define NN_IMG_INLINE static inline __attribute__((always_inline))

NN_IMG_INLINE float nn_img_clamp255(float v) {
  v = v < 0.0f ? 0.0f : v;
  return v > 255.0f ? 255.0f : v;
}

/* K is a constant at every call site, so the unused terms vanish. */
NN_IMG_INLINE void nn_img_colour_k(float *restrict out, const float *const *comp, int K,
                                   const nn_image_chan *ch, int n) {
  const float *restrict c0 = comp[0];
  const float *restrict c1 = K > 1 ? comp[1] : comp[0];
  const float *restrict c2 = K > 2 ? comp[2] : comp[0];
  const float *restrict c3 = K > 3 ? comp[3] : comp[0];
  const float m0 = ch->m[0], m1 = ch->m[1], m2 = ch->m[2], m3 = ch->m[3];
  const float b0 = ch->b[0], b1 = ch->b[1], b2 = ch->b[2], b3 = ch->b[3];
  const float o = ch->o, mean = ch->mean, is = ch->inv_std;
  for (int x = 0; x < n; x++) {
    /* the order keeps exact values exact: limited-range white is
     * 0 + (255/219) * 219 = 255 and the zero chroma terms add nothing */
    float v = o + m0 * (c0[x] - b0);
    if (K > 1)
      v = v + m1 * (c1[x] - b1) + m2 * (c2[x] - b2);
    if (K > 3)
      v = v + m3 * (c3[x] - b3);
    out[x] = (nn_img_clamp255(v) - mean) * is;
  }
}

NN_IMG_INLINE void nn_img_colour(float *out, const float *const *comp, int K,
                                 const nn_image_chan *ch, int n) {
  switch (K) {
  case 1: nn_img_colour_k(out, comp, 1, ch, n); break;
  case 3: nn_img_colour_k(out, comp, 3, ch, n); break;
  default: nn_img_colour_k(out, comp, 4, ch, n); break;
  }
}

/* uint8: round half up after clamping (truncation of a non-negative value
 * is floor, on every ISA). */
NN_IMG_INLINE uint8_t nn_img_u8(float v) { return (uint8_t)(int)(nn_img_clamp255(v) + 0.5f); }

NN_IMG_INLINE void nn_img_store_f32_nhwc_c(float *restrict dst, const float *const *chan, int C,
                                           int n) {
  const float *restrict a = chan[0];
  const float *restrict b = C > 1 ? chan[1] : chan[0];
  const float *restrict c = C > 2 ? chan[2] : chan[0];
  const float *restrict d = C > 3 ? chan[3] : chan[0];
  for (int x = 0; x < n; x++) {
    dst[x * C] = a[x];
    if (C > 1) {
      dst[x * C + 1] = b[x];
      dst[x * C + 2] = c[x];
    }
    if (C > 3)
      dst[x * C + 3] = d[x];
  }
}

NN_IMG_INLINE void nn_img_store_f32_nhwc(float *dst, const float *const *chan, int C, int n) {
  switch (C) {
  case 1: nn_img_store_f32_nhwc_c(dst, chan, 1, n); break;
  case 3: nn_img_store_f32_nhwc_c(dst, chan, 3, n); break;
  default: nn_img_store_f32_nhwc_c(dst, chan, 4, n); break;
  }
}

NN_IMG_INLINE void nn_img_store_u8_nhwc_c(uint8_t *restrict dst, const float *const *chan, int C,
                                          int n) {
  const float *restrict a = chan[0];
  const float *restrict b = C > 1 ? chan[1] : chan[0];
  const float *restrict c = C > 2 ? chan[2] : chan[0];
  const float *restrict d = C > 3 ? chan[3] : chan[0];
  for (int x = 0; x < n; x++) {
    dst[x * C] = nn_img_u8(a[x]);
    if (C > 1) {
      dst[x * C + 1] = nn_img_u8(b[x]);
      dst[x * C + 2] = nn_img_u8(c[x]);
    }
    if (C > 3)
      dst[x * C + 3] = nn_img_u8(d[x]);
  }
}

NN_IMG_INLINE void nn_img_store_u8_nhwc(uint8_t *dst, const float *const *chan, int C, int n) {
  switch (C) {
  case 1: nn_img_store_u8_nhwc_c(dst, chan, 1, n); break;
  case 3: nn_img_store_u8_nhwc_c(dst, chan, 3, n); break;
  default: nn_img_store_u8_nhwc_c(dst, chan, 4, n); break;
  }
}

NN_IMG_INLINE void nn_img_store_u8(uint8_t *restrict dst, const float *restrict src, int n) {
  for (int x = 0; x < n; x++)
    dst[x] = nn_img_u8(src[x]);
}

/* Portable hpass8: per output, per component, the taps over 8 rows (the r
 * loops vectorize), in the block order of image_avx2.c. */
NN_IMG_INLINE void nn_img_hpass8(const nn_image_hgroup *g, const float *accT,
                                 const nn_image_taps *t, int count) {
  const ptrdiff_t ps8 = (ptrdiff_t)g->ps * 8;
  for (int i = 0; i < count; i++) {
    const float *w = t->w + t->woff[i];
    const int n = t->n[i];
    const float *base = accT + ((ptrdiff_t)t->first[i] * g->ps + g->bias) * 8;
    for (int c = 0; c < g->n_out; c++) {
      const float *a = base + g->lane[c] * 8;
      float s[8], b[8];
      for (int r = 0; r < 8; r++)
        s[r] = w[0] * a[r];
      int k = 1;
      for (; k < n && k < NN_IMAGE_HP_TAPS; k++)
        for (int r = 0; r < 8; r++)
          s[r] = s[r] + w[k] * a[k * ps8 + r];
      while (k < n) {
        const int end = n - k < NN_IMAGE_HP_TAPS ? n : k + NN_IMAGE_HP_TAPS;
        for (int r = 0; r < 8; r++)
          b[r] = w[k] * a[k * ps8 + r];
        for (k++; k < end; k++)
          for (int r = 0; r < 8; r++)
            b[r] = b[r] + w[k] * a[k * ps8 + r];
        for (int r = 0; r < 8; r++)
          s[r] = s[r] + b[r];
      }
      float *o = g->out[c] + (size_t)i * 8;
      for (int r = 0; r < 8; r++)
        o[r] = s[r];
    }
  }
}

NN_IMG_INLINE void nn_img_untranspose8(float *const *rows, const float *t, int n) {
  for (int r = 0; r < 8; r++) {
    float *restrict o = rows[r];
    for (int i = 0; i < n; i++)
      o[i] = t[(size_t)i * 8 + r];
  }
}

#endif /* NN_IMAGE_TMPL_H */

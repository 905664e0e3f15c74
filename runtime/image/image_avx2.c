/* image_avx2.c - the kernels of image.c with AVX2 + FMA, chosen at run time
 * (image.c's dispatch; NN_CPU=portable keeps the baseline).  Every function
 * carries the target attribute, so the file builds with the project's
 * baseline flags and runs only where the CPU has the ISA.
 *
 * vpass8 is the hot loop (every needed source byte, once per vertical
 * tap): per row of the block, 32 bytes are widened to 4 x 8 floats and
 * multiply-added into 4 register accumulators over its taps (the interior
 * rows of an area footprint, which share one weight, summed exactly in
 * 16-bit integers first), a chunk of columns parked in scratch, and the 8
 * rows' sums transposed 8x8 into the block's accumulator.  hpass8 then needs
 * one broadcast weight and one FMA per tap for 8 rows, and colour8 converts
 * 8 x 8 values in registers and transposes them straight into the rows of
 * the tensor.
 *
 * Profiled on 1080p -> 640x640 (AMD EPYC, Zen 3): vertical 45-65%,
 * horizontal 15-25%, colour and the stores into the tensor the rest.
 */
#include "image/image_internal.h"

#if NN_IMAGE_HAVE_AVX2

#include <immintrin.h>
#include <math.h>
#include <string.h>

#include "image/image_tmpl.h"

#define AVX2 __attribute__((target("avx2,fma")))
#define AVX2_INLINE static inline __attribute__((always_inline, target("avx2,fma")))

AVX2_INLINE __m256 u8x8_to_ps(const uint8_t *p) {
  return _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)p)));
}

/* 8x8 transpose of named registers in place: v_r lane j -> v_j lane r.  A
 * macro over variables, since GCC spills arrays of vectors (and turned
 * their stores into a memcpy). */
#define TRANSPOSE8(v0, v1, v2, v3, v4, v5, v6, v7)                                          \
  do {                                                                                     \
    const __m256 t0_ = _mm256_unpacklo_ps(v0, v1), t1_ = _mm256_unpackhi_ps(v0, v1);        \
    const __m256 t2_ = _mm256_unpacklo_ps(v2, v3), t3_ = _mm256_unpackhi_ps(v2, v3);        \
    const __m256 t4_ = _mm256_unpacklo_ps(v4, v5), t5_ = _mm256_unpackhi_ps(v4, v5);        \
    const __m256 t6_ = _mm256_unpacklo_ps(v6, v7), t7_ = _mm256_unpackhi_ps(v6, v7);        \
    const __m256 u0_ = _mm256_shuffle_ps(t0_, t2_, 0x44), u1_ = _mm256_shuffle_ps(t0_, t2_, 0xEE); \
    const __m256 u2_ = _mm256_shuffle_ps(t1_, t3_, 0x44), u3_ = _mm256_shuffle_ps(t1_, t3_, 0xEE); \
    const __m256 u4_ = _mm256_shuffle_ps(t4_, t6_, 0x44), u5_ = _mm256_shuffle_ps(t4_, t6_, 0xEE); \
    const __m256 u6_ = _mm256_shuffle_ps(t5_, t7_, 0x44), u7_ = _mm256_shuffle_ps(t5_, t7_, 0xEE); \
    v0 = _mm256_permute2f128_ps(u0_, u4_, 0x20);                                            \
    v1 = _mm256_permute2f128_ps(u1_, u5_, 0x20);                                            \
    v2 = _mm256_permute2f128_ps(u2_, u6_, 0x20);                                            \
    v3 = _mm256_permute2f128_ps(u3_, u7_, 0x20);                                            \
    v4 = _mm256_permute2f128_ps(u0_, u4_, 0x31);                                            \
    v5 = _mm256_permute2f128_ps(u1_, u5_, 0x31);                                            \
    v6 = _mm256_permute2f128_ps(u2_, u6_, 0x31);                                            \
    v7 = _mm256_permute2f128_ps(u3_, u7_, 0x31);                                            \
  } while (0)

/* Transpose 8 vectors at src (src + step * r) into 8 stores at dst. */
AVX2_INLINE void transpose8_mem(float *const *dst, const float *src, ptrdiff_t step) {
  __m256 v0 = _mm256_loadu_ps(src), v1 = _mm256_loadu_ps(src + step);
  __m256 v2 = _mm256_loadu_ps(src + 2 * step), v3 = _mm256_loadu_ps(src + 3 * step);
  __m256 v4 = _mm256_loadu_ps(src + 4 * step), v5 = _mm256_loadu_ps(src + 5 * step);
  __m256 v6 = _mm256_loadu_ps(src + 6 * step), v7 = _mm256_loadu_ps(src + 7 * step);
  TRANSPOSE8(v0, v1, v2, v3, v4, v5, v6, v7);
  _mm256_storeu_ps(dst[0], v0);
  _mm256_storeu_ps(dst[1], v1);
  _mm256_storeu_ps(dst[2], v2);
  _mm256_storeu_ps(dst[3], v3);
  _mm256_storeu_ps(dst[4], v4);
  _mm256_storeu_ps(dst[5], v5);
  _mm256_storeu_ps(dst[6], v6);
  _mm256_storeu_ps(dst[7], v7);
}

/* One row's sums over 32 columns at p (4 vectors) of its n taps, n up to
 * NN_IMAGE_VP_ROWS (one block; w0 * x is 0 + w0 * x exactly).  Named
 * registers, not arrays: GCC keeps array accumulators in memory.  Called
 * with n a constant for 1..3 taps, the short filters of mild scales (a
 * 1080 -> 640 row has 2 or 3), so those are straight-line code. */
AVX2_INLINE void vsum4_n(__m256 *out, const uint8_t *p, ptrdiff_t stride, const float *w, int n) {
  __m256 wv = _mm256_broadcast_ss(w);
  __m256 a0 = _mm256_mul_ps(u8x8_to_ps(p), wv), a1 = _mm256_mul_ps(u8x8_to_ps(p + 8), wv);
  __m256 a2 = _mm256_mul_ps(u8x8_to_ps(p + 16), wv), a3 = _mm256_mul_ps(u8x8_to_ps(p + 24), wv);
  for (int k = 1; k < n; k++) {
    const uint8_t *r = p + k * stride;
    wv = _mm256_broadcast_ss(w + k);
    /* a block's rows of a strong downscale are more streams than the
     * prefetchers follow (measured: 10% on 1080p BGRx -> 128x128) */
    if (n > 3)
      _mm_prefetch((const char *)(r + 512), _MM_HINT_T0);
    a0 = _mm256_fmadd_ps(u8x8_to_ps(r), wv, a0);
    a1 = _mm256_fmadd_ps(u8x8_to_ps(r + 8), wv, a1);
    a2 = _mm256_fmadd_ps(u8x8_to_ps(r + 16), wv, a2);
    a3 = _mm256_fmadd_ps(u8x8_to_ps(r + 24), wv, a3);
  }
  out[0] = a0;
  out[1] = a1;
  out[2] = a2;
  out[3] = a3;
}

/* Any n: longer filters in blocks of NN_IMAGE_VP_ROWS rows, each summed
 * from zero, then added (0 + the first block is that block exactly). */
AVX2_INLINE void vsum4(__m256 *out, const uint8_t *p, ptrdiff_t stride, const float *w, int n) {
  switch (n) {
  case 1: vsum4_n(out, p, stride, w, 1); return;
  case 2: vsum4_n(out, p, stride, w, 2); return;
  case 3: vsum4_n(out, p, stride, w, 3); return;
  default: break;
  }
  if (n <= NN_IMAGE_VP_ROWS) {
    vsum4_n(out, p, stride, w, n);
    return;
  }
  __m256 s0 = _mm256_setzero_ps(), s1 = s0, s2 = s0, s3 = s0;
  for (int k0 = 0; k0 < n; k0 += NN_IMAGE_VP_ROWS) {
    const int kn = n - k0 < NN_IMAGE_VP_ROWS ? n - k0 : NN_IMAGE_VP_ROWS;
    __m256 a0 = _mm256_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
    const uint8_t *r = p + (ptrdiff_t)k0 * stride;
    const float *wk = w + k0;
    for (int k = 0; k < kn; k++, r += stride) {
      const __m256 wv = _mm256_broadcast_ss(wk + k);
      a0 = _mm256_fmadd_ps(u8x8_to_ps(r), wv, a0);
      a1 = _mm256_fmadd_ps(u8x8_to_ps(r + 8), wv, a1);
      a2 = _mm256_fmadd_ps(u8x8_to_ps(r + 16), wv, a2);
      a3 = _mm256_fmadd_ps(u8x8_to_ps(r + 24), wv, a3);
    }
    s0 = _mm256_add_ps(s0, a0);
    s1 = _mm256_add_ps(s1, a1);
    s2 = _mm256_add_ps(s2, a2);
    s3 = _mm256_add_ps(s3, a3);
  }
  out[0] = s0;
  out[1] = s1;
  out[2] = s2;
  out[3] = s3;
}

/* A footprint's interior rows all have the same weight (each covered
 * whole): their bytes are summed exactly in 16 bits (up to 257 rows of
 * 255), four times cheaper than converting every row to float, and the sum
 * is scaled once.  Strong downscales (1080 -> 128: 7 of 9 rows) spend
 * most of their time here. */
#define VP_MID_MAX 257

static int mid_equal(const float *w, int n) {
  if (n < 4 || n - 2 > VP_MID_MAX)
    return 0;
  for (int k = 2; k < n - 1; k++)
    if (w[k] != w[1])
      return 0;
  return 1;
}

AVX2_INLINE __m256 u16x8_to_ps(__m128i v) { return _mm256_cvtepi32_ps(_mm256_cvtepu16_epi32(v)); }

AVX2_INLINE void vsum4_mid(__m256 *out, const uint8_t *p, ptrdiff_t stride, const float *w,
                           int n) {
  __m256i lo = _mm256_setzero_si256(), hi = lo;
  const uint8_t *r = p + stride;
  for (int k = 1; k < n - 1; k++, r += stride) {
    _mm_prefetch((const char *)(r + 512), _MM_HINT_T0);
    lo = _mm256_add_epi16(lo, _mm256_cvtepu8_epi16(_mm_loadu_si128((const __m128i *)r)));
    hi = _mm256_add_epi16(hi, _mm256_cvtepu8_epi16(_mm_loadu_si128((const __m128i *)(r + 16))));
  }
  const __m256 w0 = _mm256_broadcast_ss(w), wm = _mm256_broadcast_ss(w + 1);
  const __m256 wl = _mm256_broadcast_ss(w + n - 1);
  const uint8_t *last = p + (ptrdiff_t)(n - 1) * stride;
  const __m128i m[4] = {_mm256_castsi256_si128(lo), _mm256_extracti128_si256(lo, 1),
                        _mm256_castsi256_si128(hi), _mm256_extracti128_si256(hi, 1)};
  for (int q = 0; q < 4; q++) {
    __m256 a = _mm256_mul_ps(u8x8_to_ps(p + 8 * q), w0);
    a = _mm256_fmadd_ps(u16x8_to_ps(m[q]), wm, a);
    out[q] = _mm256_fmadd_ps(u8x8_to_ps(last + 8 * q), wl, a);
  }
}

AVX2_INLINE __m256 vsum1(const uint8_t *p, ptrdiff_t stride, const float *w, int n) {
  __m256 s0 = _mm256_setzero_ps();
  for (int k0 = 0; k0 < n; k0 += NN_IMAGE_VP_ROWS) {
    const int kn = n - k0 < NN_IMAGE_VP_ROWS ? n - k0 : NN_IMAGE_VP_ROWS;
    __m256 a0 = _mm256_setzero_ps();
    const uint8_t *r = p + (ptrdiff_t)k0 * stride;
    for (int k = 0; k < kn; k++, r += stride)
      a0 = _mm256_fmadd_ps(u8x8_to_ps(r), _mm256_broadcast_ss(w + k0 + k), a0);
    s0 = _mm256_add_ps(s0, a0);
  }
  return s0;
}

/* The block's rows sum a chunk of NN_IMAGE_VP_CHUNK columns each (row
 * after row, so each reads its source rows sequentially, which the
 * prefetchers follow) into tmp, then the chunk is transposed into accT. */
AVX2 static void vpass8_avx2(float *accT, const uint8_t *const *src, ptrdiff_t stride,
                             const float *const *w, const int *n, int len, float *tmp) {
  int mid[8];
  for (int r = 0; r < 8; r++)
    mid[r] = mid_equal(w[r], n[r]);
  int j = 0;
  for (; j + 32 <= len;) {
    const int m = (len - j) / 32 * 32 < NN_IMAGE_VP_CHUNK ? (len - j) / 32 * 32 : NN_IMAGE_VP_CHUNK;
    for (int r = 0; r < 8; r++)
      for (int q = 0; q < m; q += 32) {
        __m256 o[4];
        if (mid[r])
          vsum4_mid(o, src[r] + j + q, stride, w[r], n[r]);
        else
          vsum4(o, src[r] + j + q, stride, w[r], n[r]);
        float *t = tmp + (size_t)r * NN_IMAGE_VP_CHUNK + q;
        _mm256_storeu_ps(t, o[0]);
        _mm256_storeu_ps(t + 8, o[1]);
        _mm256_storeu_ps(t + 16, o[2]);
        _mm256_storeu_ps(t + 24, o[3]);
      }
    for (int q = 0; q < m; q += 8) {
      float *o = accT + (size_t)(j + q) * 8;
      float *const dst[8] = {o, o + 8, o + 16, o + 24, o + 32, o + 40, o + 48, o + 56};
      transpose8_mem(dst, tmp + q, NN_IMAGE_VP_CHUNK);
    }
    j += m;
  }
  __m256 buf[8];
  for (; j + 8 <= len; j += 8) {
    for (int r = 0; r < 8; r++)
      buf[r] = vsum1(src[r] + j, stride, w[r], n[r]);
    float *o = accT + (size_t)j * 8;
    float *const dst[8] = {o, o + 8, o + 16, o + 24, o + 32, o + 40, o + 48, o + 56};
    transpose8_mem(dst, (const float *)buf, 8);
  }
  /* the last columns one at a time, in the same block order */
  for (; j < len; j++)
    for (int r = 0; r < 8; r++) {
      float s = 0.0f;
      for (int k0 = 0; k0 < n[r]; k0 += NN_IMAGE_VP_ROWS) {
        const int kn = n[r] - k0 < NN_IMAGE_VP_ROWS ? n[r] - k0 : NN_IMAGE_VP_ROWS;
        float b = 0.0f;
        for (int k = k0; k < k0 + kn; k++)
          b = fmaf((float)src[r][(ptrdiff_t)k * stride + j], w[r][k], b);
        s = k0 == 0 ? b : s + b;
      }
      accT[(size_t)j * 8 + r] = s;
    }
}

/* NO components of one output, a filter longer than NN_IMAGE_HP_TAPS: in
 * blocks of that many taps, each from zero, then added. */
AVX2 static void htaps_long(float *const *out, size_t oi, const float *a, const int *lane, int NO,
                            ptrdiff_t ps8, const float *w, int n) {
  for (int c = 0; c < NO; c++) {
    __m256 s = _mm256_setzero_ps();
    for (int k0 = 0; k0 < n; k0 += NN_IMAGE_HP_TAPS) {
      const int end = n - k0 < NN_IMAGE_HP_TAPS ? n : k0 + NN_IMAGE_HP_TAPS;
      const float *ak = a + lane[c] * 8 + k0 * ps8;
      __m256 b = _mm256_mul_ps(_mm256_loadu_ps(ak), _mm256_broadcast_ss(w + k0));
      for (int k = k0 + 1; k < end; k++)
        b = _mm256_fmadd_ps(_mm256_loadu_ps(ak += ps8), _mm256_broadcast_ss(w + k), b);
      s = _mm256_add_ps(s, b);
    }
    _mm256_storeu_ps(out[c] + oi, s);
  }
}

/* NO (a constant at each call) components; the per-output work is the
 * taps and little else, since a 640-wide block has 640 x NO outputs of 2
 * or 3 taps each.  One component: two outputs at a time where their
 * filters are the same length, so two FMA chains overlap. */
AVX2_INLINE void hpass8_n(const nn_image_hgroup *g, const float *accT, const nn_image_taps *t,
                          int count, int NO) {
  const ptrdiff_t ps = g->ps, ps8 = ps * 8;
  const ptrdiff_t l0 = g->lane[0] * 8, l1 = NO > 1 ? g->lane[1] * 8 : 0,
                  l2 = NO > 2 ? g->lane[2] * 8 : 0, l3 = NO > 3 ? g->lane[3] * 8 : 0;
  float *o0 = g->out[0], *o1 = NO > 1 ? g->out[1] : o0, *o2 = NO > 2 ? g->out[2] : o0,
        *o3 = NO > 3 ? g->out[3] : o0;
  const float *base = accT + (ptrdiff_t)g->bias * 8;
  const int32_t *first = t->first, *tn = t->n, *woff = t->woff;
  const float *tw = t->w;
  for (int i = 0; i < count;) {
    const float *a = base + first[i] * ps8;
    const float *w = tw + woff[i];
    const int n = tn[i];
    if (n > NN_IMAGE_HP_TAPS) {
      htaps_long(g->out, (size_t)i * 8, a, g->lane, NO, ps8, w, n);
      i++;
      continue;
    }
    if (NO == 1 && i + 1 < count && tn[i + 1] == n) {
      const float *b = base + first[i + 1] * ps8 + l0, *wb = tw + woff[i + 1];
      a += l0;
      __m256 sa = _mm256_mul_ps(_mm256_loadu_ps(a), _mm256_broadcast_ss(w));
      __m256 sb = _mm256_mul_ps(_mm256_loadu_ps(b), _mm256_broadcast_ss(wb));
      for (int k = 1; k < n; k++) {
        sa = _mm256_fmadd_ps(_mm256_loadu_ps(a + k * ps8), _mm256_broadcast_ss(w + k), sa);
        sb = _mm256_fmadd_ps(_mm256_loadu_ps(b + k * ps8), _mm256_broadcast_ss(wb + k), sb);
      }
      _mm256_storeu_ps(o0 + (size_t)i * 8, sa);
      _mm256_storeu_ps(o0 + (size_t)i * 8 + 8, sb);
      i += 2;
      continue;
    }
    __m256 wv = _mm256_broadcast_ss(w);
    __m256 s0 = _mm256_mul_ps(_mm256_loadu_ps(a + l0), wv), s1 = s0, s2 = s0, s3 = s0;
    if (NO > 1)
      s1 = _mm256_mul_ps(_mm256_loadu_ps(a + l1), wv);
    if (NO > 2)
      s2 = _mm256_mul_ps(_mm256_loadu_ps(a + l2), wv);
    if (NO > 3)
      s3 = _mm256_mul_ps(_mm256_loadu_ps(a + l3), wv);
    for (int k = 1; k < n; k++) {
      a += ps8;
      wv = _mm256_broadcast_ss(w + k);
      s0 = _mm256_fmadd_ps(_mm256_loadu_ps(a + l0), wv, s0);
      if (NO > 1)
        s1 = _mm256_fmadd_ps(_mm256_loadu_ps(a + l1), wv, s1);
      if (NO > 2)
        s2 = _mm256_fmadd_ps(_mm256_loadu_ps(a + l2), wv, s2);
      if (NO > 3)
        s3 = _mm256_fmadd_ps(_mm256_loadu_ps(a + l3), wv, s3);
    }
    _mm256_storeu_ps(o0 + (size_t)i * 8, s0);
    if (NO > 1)
      _mm256_storeu_ps(o1 + (size_t)i * 8, s1);
    if (NO > 2)
      _mm256_storeu_ps(o2 + (size_t)i * 8, s2);
    if (NO > 3)
      _mm256_storeu_ps(o3 + (size_t)i * 8, s3);
    i++;
  }
}

AVX2 static void hpass8_avx2(const nn_image_hgroup *g, const float *accT, const nn_image_taps *t,
                             int count) {
  switch (g->n_out) {
  case 1: hpass8_n(g, accT, t, count, 1); break;
  case 2: hpass8_n(g, accT, t, count, 2); break;
  case 3: hpass8_n(g, accT, t, count, 3); break;
  default: hpass8_n(g, accT, t, count, 4); break;
  }
}

/* The colour of 8 x 8 values (transposed: 8 rows per vector) as
 * nn_img_colour_k defines it, over the NT components whose coefficient is
 * not 0 (RGB channels copy one component; R and B of YUV use two), with
 * FMA; max(0, v) and min(255, v) are its clamp (-0 included).  Transposed
 * back and stored to rows + i: no pass over a channel buffer. */
typedef struct colour_terms {
  const float *c[4];
  __m256 m[4], b[4];
} colour_terms;

AVX2_INLINE __m256 colour_at(const colour_terms *t, int NT, size_t off, __m256 o, __m256 mean,
                             __m256 is) {
  __m256 v = o;
  for (int k = 0; k < NT; k++)
    v = _mm256_fmadd_ps(t->m[k], _mm256_sub_ps(_mm256_loadu_ps(t->c[k] + off), t->b[k]), v);
  v = _mm256_min_ps(_mm256_set1_ps(255.0f), _mm256_max_ps(_mm256_setzero_ps(), v));
  return _mm256_mul_ps(_mm256_sub_ps(v, mean), is);
}

AVX2_INLINE void colour8_k(float *const *rows, const colour_terms *tp, int NT,
                           const nn_image_chan *ch, int n) {
  const __m256 o = _mm256_set1_ps(ch->o), mean = _mm256_set1_ps(ch->mean);
  const __m256 is = _mm256_set1_ps(ch->inv_std);
  /* locals: the stores below may alias anything reached through pointers */
  const colour_terms tl = *tp, *t = &tl;
  float *const r0 = rows[0], *const r1 = rows[1], *const r2 = rows[2], *const r3 = rows[3];
  float *const r4 = rows[4], *const r5 = rows[5], *const r6 = rows[6], *const r7 = rows[7];
  int i = 0;
  for (; i + 8 <= n; i += 8) {
    const size_t q = (size_t)i * 8;
    __m256 v0 = colour_at(t, NT, q, o, mean, is), v1 = colour_at(t, NT, q + 8, o, mean, is);
    __m256 v2 = colour_at(t, NT, q + 16, o, mean, is), v3 = colour_at(t, NT, q + 24, o, mean, is);
    __m256 v4 = colour_at(t, NT, q + 32, o, mean, is), v5 = colour_at(t, NT, q + 40, o, mean, is);
    __m256 v6 = colour_at(t, NT, q + 48, o, mean, is), v7 = colour_at(t, NT, q + 56, o, mean, is);
    TRANSPOSE8(v0, v1, v2, v3, v4, v5, v6, v7);
    _mm256_storeu_ps(r0 + i, v0);
    _mm256_storeu_ps(r1 + i, v1);
    _mm256_storeu_ps(r2 + i, v2);
    _mm256_storeu_ps(r3 + i, v3);
    _mm256_storeu_ps(r4 + i, v4);
    _mm256_storeu_ps(r5 + i, v5);
    _mm256_storeu_ps(r6 + i, v6);
    _mm256_storeu_ps(r7 + i, v7);
  }
  for (; i < n; i++) {
    float v[8];
    _mm256_storeu_ps(v, colour_at(t, NT, (size_t)i * 8, o, mean, is));
    for (int r = 0; r < 8; r++)
      rows[r][i] = v[r];
  }
}

AVX2 static void colour8_avx2(float *const *rows, const float *const *comp, int K,
                              const nn_image_chan *ch, int n, float *tmp) {
  (void)tmp;
  colour_terms t;
  int nt = 0;
  for (int k = 0; k < K; k++)
    if (ch->m[k] != 0.0f) {
      t.c[nt] = comp[k];
      t.m[nt] = _mm256_set1_ps(ch->m[k]);
      t.b[nt] = _mm256_set1_ps(ch->b[k]);
      nt++;
    }
  switch (nt) {
  case 0: colour8_k(rows, &t, 0, ch, n); break;
  case 1: colour8_k(rows, &t, 1, ch, n); break;
  case 2: colour8_k(rows, &t, 2, ch, n); break;
  case 3: colour8_k(rows, &t, 3, ch, n); break;
  default: colour8_k(rows, &t, 4, ch, n); break;
  }
}

AVX2 static void store_f32_nhwc_avx2(float *dst, const float *const *chan, int C, int n) {
  nn_img_store_f32_nhwc(dst, chan, C, n);
}
AVX2 static void store_u8_nhwc_avx2(uint8_t *dst, const float *const *chan, int C, int n) {
  nn_img_store_u8_nhwc(dst, chan, C, n);
}
AVX2 static void store_u8_avx2(uint8_t *dst, const float *src, int n) { nn_img_store_u8(dst, src, n); }

const nn_image_kernels nn_image_kernels_avx2 = {
  vpass8_avx2, hpass8_avx2, colour8_avx2,
  store_f32_nhwc_avx2, store_u8_nhwc_avx2, store_u8_avx2,
};

#else
typedef int nn_image_avx2_empty; /* ISO C wants a declaration */
#endif /* NN_IMAGE_HAVE_AVX2 */

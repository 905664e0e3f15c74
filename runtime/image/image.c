/* image.c - pixels -> tensor (nn_image.h): validation, geometry, filter
 * tables, the row driver and the portable row kernels.
 *
 * How a conversion runs.  Every image component (R, G, B, A or Y, U, V) is
 * described as (plane, byte offset, pixel stride, subsampling), so one
 * resampler serves packed RGB, semi-planar and planar YUV and packed 4:2:2
 * alike.  Per block of 8 destination rows:
 *   1. vertical pass, per plane: for each row, the weighted sum of the
 *      source rows its taps name, over the byte span the horizontal taps
 *      need, into a float accumulator row.  All components of a packed
 *      plane are summed together (the row of bytes is linear), so this
 *      touches every needed source byte once per tap with a u8->f32
 *      multiply-add: the hot loop of strong downscaling;
 *   2. horizontal taps from the accumulators into one float row per
 *      component;
 *   3. colour (YUV->RGB, gray, alpha), clamp, channel order, mean/std;
 *   4. store in the tensor's layout and data type.
 * Vertical first, because a downscale then does its horizontal work only
 * for the destination rows, and the vertical work is the contiguous,
 * FMA-friendly one.  The 8 rows of a block are kept transposed from the
 * end of step 1 to step 4 (image_internal.h): the horizontal taps of 8 rows
 * share their weight and read 8 contiguous floats, where one row's taps
 * would need a gather per output (profiled: 60% of a 1080p -> 640x640
 * conversion before this).
 *
 * Filters (the definition of nn_image.h): a tensor pixel's extent [x, x+1)
 * maps back to [a, b) on a component's grid.  b - a <= 1: bilinear between
 * the samples around the footprint's centre (centres at i + 0.5); b - a > 1:
 * exact area average.  Samples outside the image are the edge sample, which
 * the table builder folds into the edge weight, so every tap names an
 * in-image sample and the taps of one output are consecutive.
 *
 * A turned source rect (params.angle != 0) is not separable: its blocks
 * replace steps 1-2 by a sampler that maps each content pixel's n x m
 * sample points back into the image (the inverse affine of the geometry,
 * in double) and reads every component bilinearly on its own grid, straight
 * from the planes, into the same transposed component rows; steps 3-4 are
 * shared (block_finish).  No tables: its scratch is the rows alone.
 *
 * Memory: the converter owns the filter tables and the per-worker row
 * scratch; both grow only when a conversion needs more, so converting the
 * same sizes again allocates nothing (the tables of an identical
 * conversion are not even rebuilt).  Work items are the blocks (at fixed
 * rows: content row 8k onwards) and the padding rows; they are
 * independent, so threads split them and the result does not depend on
 * how.
 */
#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "image/image_internal.h"
#include "image/image_tmpl.h"
#include "knobs.h"
#include "nn_internal.h"

/* Limits: beyond them a conversion is refused (NN_ERR_INVALID_ARG), which
 * also keeps every index below in int range and every table bounded by
 * image + tensor size. */
#define IMG_MAX_SRC 65536        /* image width / height */
#define IMG_MAX_DST 32768        /* tensor width / height */
#define IMG_MAX_COORD 1073741824.0   /* |rect.x|, |rect.y|, rect size */
#define IMG_MIN_RECT (1.0 / 1024.0)  /* smallest rect side, pixels */
/* Taps whose weight is below this (relative) at either end of an output's
 * range are dropped and the rest renormalised: it keeps rounding noise from
 * adding taps (1:1 stays a copy), and changes results by < 255 * 1e-9. */
#define IMG_TRIM 1e-9
/* A turned rect averages n = ceil(f) samples per axis of a tensor pixel
 * covering f image pixels (nn_image.h), so that the samples are at most one
 * pixel apart and none of the footprint is skipped; the cap bounds the cost
 * at 64 samples a pixel (beyond 8x the samples thin out). */
#define IMG_ROT_MAX_SAMPLES 8
#define IMG_PI 3.14159265358979323846

/* ---- formats ----------------------------------------------------------------- */

enum { IMG_RGB, IMG_GRAY, IMG_YUV };

typedef struct img_comp {
  int8_t plane, off, ps, subx, suby;
} img_comp;

typedef struct img_fmt {
  const char *name;
  int8_t kind, nplanes, has_alpha;
  /* plane p holds rows of row_bytes[p] * ceil(width / row_sub[p]) bytes,
   * ceil(height / plane_suby[p]) of them */
  int8_t row_bytes[3], row_sub[3], plane_suby[3];
  /* slots: R, G, B, A (IMG_RGB); Y, U, V (IMG_YUV); gray (IMG_GRAY) */
  img_comp comp[4];
} img_fmt;

#define C1(o, ps) {0, o, ps, 1, 1}
static const img_fmt g_fmts[NN_PIX_COUNT] = {
  [NN_PIX_RGB] = {"RGB", IMG_RGB, 1, 0, {3}, {1}, {1}, {C1(0, 3), C1(1, 3), C1(2, 3)}},
  [NN_PIX_BGR] = {"BGR", IMG_RGB, 1, 0, {3}, {1}, {1}, {C1(2, 3), C1(1, 3), C1(0, 3)}},
  [NN_PIX_RGBA] = {"RGBA", IMG_RGB, 1, 1, {4}, {1}, {1}, {C1(0, 4), C1(1, 4), C1(2, 4), C1(3, 4)}},
  [NN_PIX_BGRA] = {"BGRA", IMG_RGB, 1, 1, {4}, {1}, {1}, {C1(2, 4), C1(1, 4), C1(0, 4), C1(3, 4)}},
  [NN_PIX_RGBX] = {"RGBx", IMG_RGB, 1, 0, {4}, {1}, {1}, {C1(0, 4), C1(1, 4), C1(2, 4)}},
  [NN_PIX_BGRX] = {"BGRx", IMG_RGB, 1, 0, {4}, {1}, {1}, {C1(2, 4), C1(1, 4), C1(0, 4)}},
  [NN_PIX_XRGB] = {"xRGB", IMG_RGB, 1, 0, {4}, {1}, {1}, {C1(1, 4), C1(2, 4), C1(3, 4)}},
  [NN_PIX_XBGR] = {"xBGR", IMG_RGB, 1, 0, {4}, {1}, {1}, {C1(3, 4), C1(2, 4), C1(1, 4)}},
  [NN_PIX_ARGB] = {"ARGB", IMG_RGB, 1, 1, {4}, {1}, {1}, {C1(1, 4), C1(2, 4), C1(3, 4), C1(0, 4)}},
  [NN_PIX_ABGR] = {"ABGR", IMG_RGB, 1, 1, {4}, {1}, {1}, {C1(3, 4), C1(2, 4), C1(1, 4), C1(0, 4)}},
  [NN_PIX_GRAY8] = {"GRAY8", IMG_GRAY, 1, 0, {1}, {1}, {1}, {C1(0, 1)}},
  [NN_PIX_NV12] = {"NV12", IMG_YUV, 2, 0, {1, 2}, {1, 2}, {1, 2},
                   {C1(0, 1), {1, 0, 2, 2, 2}, {1, 1, 2, 2, 2}}},
  [NN_PIX_NV21] = {"NV21", IMG_YUV, 2, 0, {1, 2}, {1, 2}, {1, 2},
                   {C1(0, 1), {1, 1, 2, 2, 2}, {1, 0, 2, 2, 2}}},
  [NN_PIX_I420] = {"I420", IMG_YUV, 3, 0, {1, 1, 1}, {1, 2, 2}, {1, 2, 2},
                   {C1(0, 1), {1, 0, 1, 2, 2}, {2, 0, 1, 2, 2}}},
  [NN_PIX_YV12] = {"YV12", IMG_YUV, 3, 0, {1, 1, 1}, {1, 2, 2}, {1, 2, 2},
                   {C1(0, 1), {2, 0, 1, 2, 2}, {1, 0, 1, 2, 2}}},
  [NN_PIX_YUY2] = {"YUY2", IMG_YUV, 1, 0, {4}, {2}, {1},
                   {C1(0, 2), {0, 1, 4, 2, 1}, {0, 3, 4, 2, 1}}},
  [NN_PIX_UYVY] = {"UYVY", IMG_YUV, 1, 0, {4}, {2}, {1},
                   {C1(1, 2), {0, 0, 4, 2, 1}, {0, 2, 4, 2, 1}}},
};
#undef C1

static bool fmt_valid(nn_pixel_format f) { return (int)f >= 0 && f < NN_PIX_COUNT; }

const char *nn_pixel_format_name(nn_pixel_format f) { return fmt_valid(f) ? g_fmts[f].name : "?"; }

int nn_pixel_format_planes(nn_pixel_format f) { return fmt_valid(f) ? g_fmts[f].nplanes : 0; }

void nn_image_params_init(nn_image_params *p) {
  if (!p)
    return;
  memset(p, 0, sizeof *p);
  p->mode = NN_RESIZE_STRETCH;
  for (int i = 0; i < 4; i++)
    p->std[i] = 1.0f;
}

static inline int ceil_div(int a, int b) { return (a + b - 1) / b; }
static inline int round16(int n) { return (n + 15) & ~15; }

/* ---- dispatch ------------------------------------------------------------------ */

static atomic_int g_simd = -1;   /* -1: not resolved yet */

static bool cpu_has_avx2(void) {
#if NN_IMAGE_HAVE_AVX2
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
#else
  return false;
#endif
}

int nn_image_simd_get(void) {
  int v = atomic_load_explicit(&g_simd, memory_order_acquire);
  if (v >= 0)
    return v;
  /* the runtime's one switch (as the CPU kernels read it): NN_CPU=portable
   * forces the baseline; any other value leaves the best path */
  const char *env = nn_knobs().cpu;
  v = cpu_has_avx2() && !(env && strcmp(env, "portable") == 0);
  atomic_store_explicit(&g_simd, v, memory_order_release);
  return v;
}

int nn_image_simd_set(int simd) {
  int prev = nn_image_simd_get();
  atomic_store_explicit(&g_simd, simd && cpu_has_avx2() ? 1 : 0, memory_order_release);
  return prev;
}

static const nn_image_kernels *kernels(void) {
#if NN_IMAGE_HAVE_AVX2
  if (nn_image_simd_get())
    return &nn_image_kernels_avx2;
#endif
  return &nn_image_kernels_portable;
}

/* ---- portable row kernels --------------------------------------------------------- */

/* Column chunk of the portable vpass8: one row's block sums stay in a small
 * local array that the compiler keeps vectorized for the baseline ISA. */
#define IMG_VP_COLS 64

static void vpass8_portable(float *accT, const uint8_t *const *src, ptrdiff_t stride,
                            const float *const *w, const int *n, int len, float *tmp) {
  (void)tmp;
  for (int j0 = 0; j0 < len; j0 += IMG_VP_COLS) {
    const int m = len - j0 < IMG_VP_COLS ? len - j0 : IMG_VP_COLS;
    for (int r = 0; r < 8; r++) {
      float a[IMG_VP_COLS], b[IMG_VP_COLS];
      for (int k0 = 0; k0 < n[r]; k0 += NN_IMAGE_VP_ROWS) {
        const int kn = n[r] - k0 < NN_IMAGE_VP_ROWS ? n[r] - k0 : NN_IMAGE_VP_ROWS;
        float *restrict d = k0 == 0 ? a : b;
        const uint8_t *restrict row = src[r] + (ptrdiff_t)k0 * stride + j0;
        const float *wr = w[r] + k0;
        for (int j = 0; j < m; j++)
          d[j] = wr[0] * (float)row[j];
        for (int k = 1; k < kn; k++) {
          const uint8_t *restrict rk = row + (ptrdiff_t)k * stride;
          const float wk = wr[k];
          for (int j = 0; j < m; j++)
            d[j] = d[j] + wk * (float)rk[j];
        }
        if (k0 > 0)
          for (int j = 0; j < m; j++)
            a[j] = a[j] + b[j];
      }
      for (int j = 0; j < m; j++)
        accT[(size_t)(j0 + j) * 8 + r] = a[j];
    }
  }
}

static void hpass8_portable(const nn_image_hgroup *g, const float *accT, const nn_image_taps *t,
                            int count) {
  nn_img_hpass8(g, accT, t, count);
}
static void colour8_portable(float *const *rows, const float *const *comp, int K,
                             const nn_image_chan *ch, int n, float *tmp) {
  nn_img_colour(tmp, comp, K, ch, n * 8);
  nn_img_untranspose8(rows, tmp, n);
}
static void store_f32_nhwc_portable(float *dst, const float *const *chan, int C, int n) {
  nn_img_store_f32_nhwc(dst, chan, C, n);
}
static void store_u8_nhwc_portable(uint8_t *dst, const float *const *chan, int C, int n) {
  nn_img_store_u8_nhwc(dst, chan, C, n);
}
static void store_u8_portable(uint8_t *dst, const float *src, int n) { nn_img_store_u8(dst, src, n); }

const nn_image_kernels nn_image_kernels_portable = {
  vpass8_portable, hpass8_portable, colour8_portable,
  store_f32_nhwc_portable, store_u8_nhwc_portable, store_u8_portable,
};

/* ---- validation and geometry ------------------------------------------------------ */

static const char *mode_name_ok(nn_resize_mode m) {
  switch (m) {
  case NN_RESIZE_STRETCH: return "stretch";
  case NN_RESIZE_LETTERBOX: return "letterbox";
  case NN_RESIZE_CROP: return "crop";
  }
  return NULL;
}

/* The image header (format, size); with `planes`, also the planes, strides
 * and colorimetry a conversion reads. */
static nn_status check_image(const nn_image *img, bool planes, nn_error *err) {
  if (!img)
    return nn_error_set(err, NN_ERR_INVALID_ARG, "nn_image: img is NULL");
  if (!fmt_valid(img->format))
    return nn_error_set(err, NN_ERR_INVALID_ARG, "nn_image: img.format %d is not a known format",
                        (int)img->format);
  if (img->width < 1 || img->width > IMG_MAX_SRC || img->height < 1 || img->height > IMG_MAX_SRC)
    return nn_error_set(err, NN_ERR_INVALID_ARG,
                        "nn_image: img.width x img.height %d x %d out of range 1..%d",
                        img->width, img->height, IMG_MAX_SRC);
  if (!planes)
    return NN_OK;
  const img_fmt *f = &g_fmts[img->format];
  for (int p = 0; p < f->nplanes; p++) {
    if (!img->planes[p])
      return nn_error_set(err, NN_ERR_INVALID_ARG, "nn_image: img.planes[%d] is NULL (%s has %d)",
                          p, f->name, f->nplanes);
    int row = f->row_bytes[p] * ceil_div(img->width, f->row_sub[p]);
    if (img->strides[p] < row)
      return nn_error_set(err, NN_ERR_INVALID_ARG,
                          "nn_image: img.strides[%d] = %d is shorter than a %s row (%d bytes)", p,
                          img->strides[p], f->name, row);
    /* the plane's extent must be addressable (32-bit builds) */
    const int64_t rows = ceil_div(img->height, f->plane_suby[p]);
    if ((double)img->strides[p] * (double)rows > (double)PTRDIFF_MAX)
      return nn_error_set(err, NN_ERR_INVALID_ARG,
                          "nn_image: img.strides[%d] x %lld rows exceeds the address space", p,
                          (long long)rows);
  }
  if (f->kind == IMG_YUV) {
    if ((int)img->matrix < NN_YUV_BT601 || img->matrix > NN_YUV_BT2020)
      return nn_error_set(err, NN_ERR_INVALID_ARG, "nn_image: img.matrix %d is not a known matrix",
                          (int)img->matrix);
    if ((int)img->range < NN_YUV_LIMITED || img->range > NN_YUV_FULL)
      return nn_error_set(err, NN_ERR_INVALID_ARG, "nn_image: img.range %d is not a known range",
                          (int)img->range);
  }
  return NN_OK;
}

/* The parameters; `channels` > 0 also checks mean/std of that many; the
 * content rect against the tensor size dw x dh. */
static nn_status check_params(const nn_image_params *p, int channels, int dw, int dh,
                              nn_error *err) {
  if (!mode_name_ok(p->mode))
    return nn_error_set(err, NN_ERR_INVALID_ARG, "nn_image: params.mode %d is not a resize mode",
                        (int)p->mode);
  const nn_rect *r = &p->src;
  if (!isfinite(r->x) || !isfinite(r->y) || !isfinite(r->width) || !isfinite(r->height))
    return nn_error_set(err, NN_ERR_INVALID_ARG, "nn_image: params.src is not finite");
  if (r->width > 0 && r->height > 0) {
    if (fabs(r->x) > IMG_MAX_COORD || fabs(r->y) > IMG_MAX_COORD || r->width > IMG_MAX_COORD ||
        r->height > IMG_MAX_COORD)
      return nn_error_set(err, NN_ERR_INVALID_ARG,
                          "nn_image: params.src (%g, %g, %g x %g) beyond +-2^30 pixels", r->x,
                          r->y, r->width, r->height);
    if (r->width < IMG_MIN_RECT || r->height < IMG_MIN_RECT)
      return nn_error_set(err, NN_ERR_INVALID_ARG,
                          "nn_image: params.src %g x %g is smaller than 1/1024 pixel", r->width,
                          r->height);
  }
  if (!isfinite(p->angle))
    return nn_error_set(err, NN_ERR_INVALID_ARG, "nn_image: params.angle is not finite");
  const nn_rect *ct = &p->content;
  if (!isfinite(ct->x) || !isfinite(ct->y) || !isfinite(ct->width) || !isfinite(ct->height))
    return nn_error_set(err, NN_ERR_INVALID_ARG, "nn_image: params.content is not finite");
  if (ct->width > 0 && ct->height > 0) {
    if (ct->width < IMG_MIN_RECT || ct->height < IMG_MIN_RECT)
      return nn_error_set(err, NN_ERR_INVALID_ARG,
                          "nn_image: params.content %g x %g is smaller than 1/1024 pixel",
                          ct->width, ct->height);
    /* inside, not merely overlapping: a content rect cut by the tensor's
     * edge would silently drop part of the source */
    if (ct->x < 0 || ct->y < 0 || ct->x + ct->width > dw || ct->y + ct->height > dh)
      return nn_error_set(err, NN_ERR_INVALID_ARG,
                          "nn_image: params.content (%g, %g, %g x %g) is not inside the %d x %d "
                          "tensor",
                          ct->x, ct->y, ct->width, ct->height, dw, dh);
  }
  if (!isfinite(p->pad_value))
    return nn_error_set(err, NN_ERR_INVALID_ARG, "nn_image: params.pad_value is not finite");
  for (int c = 0; c < channels; c++) {
    if (!isfinite(p->mean[c]))
      return nn_error_set(err, NN_ERR_INVALID_ARG, "nn_image: params.mean[%d] is not finite", c);
    /* 1/std must be a finite number too (a denormal std is as useless as 0) */
    if (!isfinite(p->std[c]) || p->std[c] == 0.0f || !isfinite(1.0f / p->std[c]))
      return nn_error_set(err, NN_ERR_INVALID_ARG,
                          "nn_image: params.std[%d] = %g (must be finite and not 0)", c,
                          (double)p->std[c]);
  }
  return NN_OK;
}

/* Geometry plus the inverse scales the tables use (source pixels per tensor
 * pixel): computed directly, so exact ratios (1920 -> 640) stay exact; and
 * the turn's cosine and sine. */
typedef struct img_geo {
  nn_image_geometry g;
  double inv_x, inv_y;
  double cos_a, sin_a;
} img_geo;

/* Degrees into [0, 360): fmod is exact, so 360 + 17.5 is 17.5 again; -0
 * and a tiny negative (which + 360 rounds to 360) become 0. */
static double angle_normalise(double a) {
  double r = fmod(a, 360.0);
  if (r < 0)
    r += 360.0;
  return r >= 360.0 || r == 0.0 ? 0.0 : r;
}

/* Quarter turns exactly: cos(pi / 2) is 6e-17 in double, which would move
 * a 1:1 turn by 90 degrees off the pixel centres. */
static void angle_cos_sin(double a, double *c, double *s) {
  if (a == 0.0 || a == 90.0 || a == 180.0 || a == 270.0) {
    const int q = (int)(a / 90.0);
    static const double cq[4] = {1, 0, -1, 0}, sq[4] = {0, 1, 0, -1};
    *c = cq[q];
    *s = sq[q];
  } else {
    *c = cos(a * (IMG_PI / 180.0));
    *s = sin(a * (IMG_PI / 180.0));
  }
}

static void compute_geo(const nn_image *img, const nn_image_params *p, int dw, int dh,
                        img_geo *out) {
  nn_image_geometry *g = &out->g;
  memset(out, 0, sizeof *out);
  if (p->src.width > 0 && p->src.height > 0) {
    g->src_x = p->src.x;
    g->src_y = p->src.y;
    g->src_width = p->src.width;
    g->src_height = p->src.height;
  } else {
    g->src_width = img->width;
    g->src_height = img->height;
  }
  g->angle = angle_normalise(p->angle);
  angle_cos_sin(g->angle, &out->cos_a, &out->sin_a);
  const nn_rect *ct = &p->content;
  if (ct->width > 0 && ct->height > 0) {
    /* an explicit content rect: stretch onto it, whatever the mode */
    g->content_x = g->offset_x = ct->x;
    g->content_y = g->offset_y = ct->y;
    g->content_width = ct->width;
    g->content_height = ct->height;
    g->scale_x = ct->width / g->src_width;
    g->scale_y = ct->height / g->src_height;
    out->inv_x = g->src_width / ct->width;
    out->inv_y = g->src_height / ct->height;
    return;
  }
  const double rx = g->src_width / dw, ry = g->src_height / dh;
  g->content_width = dw;
  g->content_height = dh;
  if (p->mode == NN_RESIZE_STRETCH) {
    out->inv_x = rx;
    out->inv_y = ry;
    g->scale_x = dw / g->src_width;
    g->scale_y = dh / g->src_height;
  } else {
    /* letterbox fits the larger ratio, crop covers with the smaller; the
     * axis that decides keeps its exact size and a zero offset */
    const bool x_binds = p->mode == NN_RESIZE_LETTERBOX ? rx >= ry : rx <= ry;
    const double inv = x_binds ? rx : ry;
    out->inv_x = out->inv_y = inv;
    g->scale_x = g->scale_y = x_binds ? dw / g->src_width : dh / g->src_height;
    if (x_binds)
      g->offset_y = (dh - g->src_height / inv) * 0.5;
    else
      g->offset_x = (dw - g->src_width / inv) * 0.5;
    if (p->mode == NN_RESIZE_LETTERBOX) {
      g->content_x = g->offset_x;
      g->content_y = g->offset_y;
      g->content_width = x_binds ? dw : g->src_width / inv;
      g->content_height = x_binds ? g->src_height / inv : dh;
    }
  }
}

/* Tensor pixels [*lo, *hi) whose centre lies in [c, c + len). */
static void content_range(double c, double len, int n, int *lo, int *hi) {
  double a = ceil(c - 0.5), b = ceil(c + len - 0.5);
  *lo = a < 0 ? 0 : a > n ? n : (int)a;
  *hi = b < 0 ? 0 : b > n ? n : (int)b;
  if (*hi < *lo)
    *hi = *lo;
}

nn_status nn_image_geometry_compute(const nn_image *img, const nn_image_params *p,
                                    int dst_width, int dst_height, nn_image_geometry *geo) {
  nn_image_params defaults;
  if (!p) {
    nn_image_params_init(&defaults);
    p = &defaults;
  }
  if (!geo || check_image(img, false, NULL) != NN_OK || dst_width < 1 || dst_width > IMG_MAX_DST ||
      dst_height < 1 || dst_height > IMG_MAX_DST ||
      check_params(p, 0, dst_width, dst_height, NULL) != NN_OK)
    return NN_ERR_INVALID_ARG;
  img_geo g;
  compute_geo(img, p, dst_width, dst_height, &g);
  *geo = g.g;
  return NN_OK;
}

/* ---- filter tables ------------------------------------------------------------------ */

typedef struct img_tab {
  nn_image_taps t;
  void *mem;
  size_t cap;       /* bytes at mem */
  /* what the table was built for: the same conversion again reuses it */
  double key[4];
  int ikey[4];
  int valid;
} img_tab;

/* One output's footprint [a, b) on a grid of n samples, as the samples
 * first .. last it touches and the weight of each (unnormalised). */
typedef struct img_fp {
  double a, b, c, f;
  int first, last, bilinear;
} img_fp;

static void fp_init(img_fp *fp, double a, double b, int n) {
  fp->a = a;
  fp->b = b;
  fp->bilinear = b - a <= 1.0;
  if (fp->bilinear) {
    /* between the two samples around the centre; beyond the first or last
     * centre both taps clamp to that sample */
    fp->c = 0.5 * (a + b) - 0.5;
    if (!(fp->c > 0.0)) {
      fp->first = fp->last = 0;
    } else if (fp->c >= n - 1) {
      fp->first = fp->last = n - 1;
    } else {
      fp->first = (int)floor(fp->c);
      fp->last = fp->first + 1;
    }
    fp->f = fp->last > fp->first ? fp->c - fp->first : 0.0;
  } else {
    /* doubles clamped before the conversion: a rect far outside the image
     * gives huge coordinates */
    const double lo = floor(a), hi = ceil(b) - 1.0;
    fp->first = lo < 0 ? 0 : lo > n - 1 ? n - 1 : (int)lo;
    fp->last = hi < 0 ? 0 : hi > n - 1 ? n - 1 : (int)hi;
  }
}

/* Weight of sample s: the tent for bilinear, else the overlap of the
 * footprint with the sample, the edge samples extending to infinity (clamp
 * to edge). */
static double fp_weight(const img_fp *fp, int s, int n) {
  if (fp->bilinear)
    return s == fp->first ? 1.0 - fp->f : fp->f;
  const double l = s == 0 ? -INFINITY : s;
  const double r = s == n - 1 ? INFINITY : s + 1.0;
  const double ov = (fp->b < r ? fp->b : r) - (fp->a > l ? fp->a : l);
  return ov > 0 ? ov : 0.0;
}

/* Build the taps of `count` outputs on a grid of n_src samples: output i
 * covers image coordinates [s0 + (x0 + i - off) * inv, ... + inv) divided by
 * sub.  Both ends of a footprint come from the same expression, so
 * neighbouring footprints meet exactly and the tap ranges of neighbours
 * overlap in at most one sample: the weights fit n_src + 2 * count floats
 * (bilinear: at most 2 a tap). */
static nn_status taps_build(img_tab *tab, double s0, double off, double inv, int sub, int x0,
                            int count, int n_src, nn_error *err) {
  if (tab->valid && tab->key[0] == s0 && tab->key[1] == off && tab->key[2] == inv &&
      tab->ikey[0] == sub && tab->ikey[1] == x0 && tab->ikey[2] == count &&
      tab->ikey[3] == n_src)
    return NN_OK;
  tab->valid = 0;
  const size_t cap_w = (size_t)n_src + 2 * (size_t)count + 4;
  const size_t need = cap_w * sizeof(float) + 3 * (size_t)count * sizeof(int32_t);
  if (need > tab->cap) {
    /* grow only: conversions up to these sizes reuse the block */
    void *m = nn_malloc(need);
    if (!m)
      return nn_error_set(err, NN_ERR_NOMEM, "nn_image: out of memory for %zu bytes of filter",
                          need);
    nn_free(tab->mem);
    tab->mem = m;
    tab->cap = need;
  }
  nn_image_taps *t = &tab->t;
  t->w = tab->mem;   /* floats first: the block is max-aligned */
  t->first = (int32_t *)(t->w + cap_w);
  t->n = t->first + count;
  t->woff = t->n + count;
  t->count = count;
  t->max_n = 0;
  t->lo = n_src;
  t->hi = 0;

  size_t wpos = 0;
  for (int i = 0; i < count; i++) {
    img_fp fp;
    fp_init(&fp, (s0 + (x0 + i - off) * inv) / sub, (s0 + (x0 + i + 1 - off) * inv) / sub, n_src);
    double sum = 0.0;
    for (int s = fp.first; s <= fp.last; s++)
      sum += fp_weight(&fp, s, n_src);
    /* drop negligible ends (rounding noise of the footprint), renormalise
     * what is left in double, then round to float */
    int s0i = fp.first, s1i = fp.last;
    while (s1i > s0i && fp_weight(&fp, s0i, n_src) <= IMG_TRIM * sum)
      s0i++;
    while (s1i > s0i && fp_weight(&fp, s1i, n_src) <= IMG_TRIM * sum)
      s1i--;
    double kept = 0.0;
    for (int s = s0i; s <= s1i; s++)
      kept += fp_weight(&fp, s, n_src);
    const int n = s1i - s0i + 1;
    if (wpos + (size_t)n > cap_w)   /* cannot happen (see above): refuse, never overrun */
      return nn_error_set(err, NN_ERR_INVALID_ARG, "nn_image: filter table overflow");
    float *w = t->w + wpos;
    for (int k = 0; k < n; k++)
      w[k] = kept > 0.0 ? (float)(fp_weight(&fp, s0i + k, n_src) / kept) : (k == 0 ? 1.0f : 0.0f);
    t->first[i] = s0i;
    t->n[i] = n;
    t->woff[i] = (int32_t)wpos;
    wpos += (size_t)n;
    if (n > t->max_n)
      t->max_n = n;
    if (s0i < t->lo)
      t->lo = s0i;
    if (s0i + n > t->hi)
      t->hi = s0i + n;
  }
  tab->key[0] = s0;
  tab->key[1] = off;
  tab->key[2] = inv;
  tab->ikey[0] = sub;
  tab->ikey[1] = x0;
  tab->ikey[2] = count;
  tab->ikey[3] = n_src;
  tab->valid = 1;
  return NN_OK;
}

/* ---- converter ----------------------------------------------------------------------- */

struct nn_image_converter {
  img_tab tx[2], ty[2];   /* horizontal / vertical tables, by subsampling 1, 2 */
  float *scratch;         /* per-worker rows (nn_aligned_alloc) */
  size_t scratch_cap;     /* floats */
};

nn_status nn_image_converter_new(nn_image_converter **out) {
  if (!out)
    return NN_ERR_INVALID_ARG;
  *out = nn_calloc(1, sizeof **out);
  return *out ? NN_OK : NN_ERR_NOMEM;
}

void nn_image_converter_free(nn_image_converter *c) {
  if (!c)
    return;
  for (int i = 0; i < 2; i++) {
    nn_free(c->tx[i].mem);
    nn_free(c->ty[i].mem);
  }
  nn_aligned_free(c->scratch);
  nn_free(c);
}

/* ---- the plan of one conversion ------------------------------------------------------- */

typedef struct img_plane {
  const uint8_t *base;    /* first byte of the span in row 0 */
  ptrdiff_t stride;
  const nn_image_taps *ty;
  int len;                /* span bytes */
  size_t acc_off;         /* floats into a worker's scratch: len x 8 */
} img_plane;

typedef struct img_group {
  int plane;
  const nn_image_taps *tx;
  int ps, bias, n_out;
  int lane[4], slot[4];   /* float of the pixel, component slot */
} img_group;

/* One component as the turned-rect sampler reads it: sample (i, j) of its
 * grid is base[j * stride + i * ps]. */
typedef struct img_rcomp {
  const uint8_t *base;
  ptrdiff_t stride;
  int ps, grid;
} img_rcomp;

/* A turned rect (nn_image.h, 1. and 2.): image point of tensor point t,
 *   p = c + R(angle) ((t - off) * inv - half),
 * and the component grids the points are read on. */
typedef struct img_rot {
  double cx, cy, cos_a, sin_a, half_x, half_y, off_x, off_y, inv_x, inv_y;
  int n, m; /* samples per tensor pixel along x, y */
  int n_grids;
  double scale_x[4], scale_y[4]; /* a grid's samples per image pixel (1, 0.5) */
  int size_x[4], size_y[4];      /* and its size */
  img_rcomp comp[4];
} img_rot;

typedef struct img_plan {
  const nn_image_kernels *k;
  int W, H, C, K;         /* tensor size, channels, components */
  int cx0, cx1, cy0, cy1; /* content pixels */
  int n_blocks;           /* blocks of 8 content rows */
  int n_planes, n_groups;
  img_plane planes[3];
  img_group groups[3];
  nn_image_chan chan[4];
  float pad[4];           /* normalised padding per channel */
  /* a worker's scratch, floats: component rows of a block and colour8's
   * scratch (transposed, ncx x 8), row buffers (C x 8 rows of W; when not
   * storing in place), a row for a block's rows past the content */
  size_t comp_off[4], tmp_off, vtmp_off, rows_off, spare_off;
  size_t per_worker;
  int width;              /* workers' slots in scratch */
  float *scratch;
  /* destination */
  void *data;             /* batch slot start */
  nn_dtype dtype;
  nn_tensor_layout layout;
  int direct;             /* float planar: rows untransposed into the tensor */
  int turned;             /* params.angle != 0: the blocks sample through rot */
  img_rot rot;
} img_plan;

static void fill_f32(float *p, float v, int n) {
  for (int i = 0; i < n; i++)
    p[i] = v;
}

/* Row y of channel c as the rows are built: the tensor's own (float NCHW)
 * or row r of a block's buffers. */
static float *chan_row(const img_plan *P, float *ws, int c, int y, int r) {
  if (P->direct)
    return (float *)P->data + ((size_t)c * P->H + y) * P->W;
  return ws + P->rows_off + ((size_t)c * 8 + r) * P->W;
}

/* Built rows (r of the block) -> the tensor when not built in place. */
static void row_store(const img_plan *P, float *ws, int y, int r) {
  if (P->direct)
    return;
  const nn_image_kernels *k = P->k;
  const int W = P->W, C = P->C;
  const float *rows[4];
  for (int c = 0; c < C; c++)
    rows[c] = chan_row(P, ws, c, y, r);
  if (P->dtype == NN_DTYPE_FLOAT)
    k->store_f32_nhwc((float *)P->data + (size_t)y * W * C, rows, C, W);
  else if (P->layout == NN_LAYOUT_NHWC)
    k->store_u8_nhwc((uint8_t *)P->data + (size_t)y * W * C, rows, C, W);
  else
    for (int c = 0; c < C; c++)
      k->store_u8((uint8_t *)P->data + ((size_t)c * P->H + y) * W, rows[c], W);
}

static void pad_row_run(const img_plan *P, int y, float *ws) {
  for (int c = 0; c < P->C; c++)
    fill_f32(chan_row(P, ws, c, y, 0), P->pad[c], P->W);
  row_store(P, ws, y, 0);
}

static void block_finish(const img_plan *P, int y0, int nr, float *ws);

static void block_run(const img_plan *P, int b, float *ws) {
  const nn_image_kernels *k = P->k;
  const int y0 = P->cy0 + 8 * b;
  const int nr = P->cy1 - y0 < 8 ? P->cy1 - y0 : 8;
  const int ncx = P->cx1 - P->cx0;
  for (int p = 0; p < P->n_planes; p++) {
    const img_plane *pl = &P->planes[p];
    const nn_image_taps *ty = pl->ty;
    const uint8_t *src[8];
    const float *w[8];
    int n[8];
    for (int r = 0; r < 8; r++) {
      /* rows past the content repeat the last one; they are not stored */
      const int t = (r < nr ? y0 + r : P->cy1 - 1) - P->cy0;
      src[r] = pl->base + (ptrdiff_t)ty->first[t] * pl->stride;
      w[r] = ty->w + ty->woff[t];
      n[r] = ty->n[t];
    }
    k->vpass8(ws + pl->acc_off, src, pl->stride, w, n, pl->len, ws + P->vtmp_off);
  }
  for (int g = 0; g < P->n_groups; g++) {
    const img_group *gr = &P->groups[g];
    nn_image_hgroup h = {gr->ps, gr->bias, gr->n_out, {0}, {NULL}};
    for (int c = 0; c < gr->n_out; c++) {
      h.lane[c] = gr->lane[c];
      h.out[c] = ws + P->comp_off[gr->slot[c]];
    }
    k->hpass8(&h, ws + P->planes[gr->plane].acc_off, gr->tx, ncx);
  }
  block_finish(P, y0, nr, ws);
}

/* Bilinear taps of grid coordinate g (the sample centres at i + 0.5
 * already subtracted) on a grid of n samples: the two samples, clamped to
 * the edge, and the weight of the second. */
static inline void rot_taps(double g, int n, int *i0, int *i1, double *f) {
  /* far outside: both taps on the edge sample (and floor stays in range) */
  if (!(g > -1.0))
    g = -1.0;
  else if (g > n)
    g = n;
  const double fl = floor(g);
  const int k = (int)fl;
  *f = g - fl;
  *i0 = k < 0 ? 0 : k > n - 1 ? n - 1 : k;
  *i1 = k + 1 > n - 1 ? n - 1 : k + 1;
}

/* Steps 1-2 of a block of a turned rect: every content pixel the mean of
 * its n x m bilinear samples, per component on its grid, into the
 * transposed component rows; then the shared steps 3-4.  Each pixel is
 * computed from its own coordinates (no running sums), so the result does
 * not depend on which worker runs which block. */
static void rot_block_run(const img_plan *P, int b, float *ws) {
  const img_rot *R = &P->rot;
  const int y0 = P->cy0 + 8 * b;
  const int nr = P->cy1 - y0 < 8 ? P->cy1 - y0 : 8;
  const int ncx = P->cx1 - P->cx0, K = P->K, n = R->n, m = R->m;
  float *comp[4];
  for (int s = 0; s < K; s++)
    comp[s] = ws + P->comp_off[s];
  const double norm = 1.0 / (n * m);
  double ox[IMG_ROT_MAX_SAMPLES], oy[IMG_ROT_MAX_SAMPLES]; /* sample points in a pixel */
  for (int i = 0; i < n; i++)
    ox[i] = (i + 0.5) / n;
  for (int j = 0; j < m; j++)
    oy[j] = (j + 0.5) / m;
  for (int r = 0; r < nr; r++) {
    double uy[IMG_ROT_MAX_SAMPLES]; /* rect frame, relative to its centre */
    for (int j = 0; j < m; j++)
      uy[j] = (y0 + r + oy[j] - R->off_y) * R->inv_y - R->half_y;
    for (int x = P->cx0; x < P->cx1; x++) {
      double ux[IMG_ROT_MAX_SAMPLES];
      for (int i = 0; i < n; i++)
        ux[i] = (x + ox[i] - R->off_x) * R->inv_x - R->half_x;
      double acc[4] = {0, 0, 0, 0};
      for (int j = 0; j < m; j++)
        for (int i = 0; i < n; i++) {
          const double px = R->cx + R->cos_a * ux[i] - R->sin_a * uy[j];
          const double py = R->cy + R->sin_a * ux[i] + R->cos_a * uy[j];
          int xa[4], xb[4], ya[4], yb[4];
          double fx[4], fy[4];
          for (int g = 0; g < R->n_grids; g++) {
            rot_taps(px * R->scale_x[g] - 0.5, R->size_x[g], &xa[g], &xb[g], &fx[g]);
            rot_taps(py * R->scale_y[g] - 0.5, R->size_y[g], &ya[g], &yb[g], &fy[g]);
          }
          for (int s = 0; s < K; s++) {
            const img_rcomp *c = &R->comp[s];
            const int g = c->grid;
            const uint8_t *r0 = c->base + (ptrdiff_t)ya[g] * c->stride;
            const uint8_t *r1 = c->base + (ptrdiff_t)yb[g] * c->stride;
            const double a0 = r0[xa[g] * c->ps], a1 = r0[xb[g] * c->ps];
            const double b0 = r1[xa[g] * c->ps], b1 = r1[xb[g] * c->ps];
            /* a + f (b - a): exact at f = 0 and 1, so 1:1 quarter turns copy */
            const double top = a0 + fx[g] * (a1 - a0), bot = b0 + fx[g] * (b1 - b0);
            acc[s] += top + fy[g] * (bot - top);
          }
        }
      for (int s = 0; s < K; s++)
        comp[s][(size_t)(x - P->cx0) * 8 + r] = (float)(acc[s] * norm);
    }
  }
  /* rows past the content repeat the last one; they are not stored */
  for (int s = 0; s < K; s++)
    for (int i = 0; i < ncx; i++)
      for (int r = nr; r < 8; r++)
        comp[s][(size_t)i * 8 + r] = comp[s][(size_t)i * 8 + nr - 1];
  block_finish(P, y0, nr, ws);
}

/* The turned rect's mapping and the grids its components are read on. */
static void rot_setup(img_plan *P, const img_fmt *f, const nn_image *img, const img_geo *g) {
  img_rot *R = &P->rot;
  R->half_x = 0.5 * g->g.src_width;
  R->half_y = 0.5 * g->g.src_height;
  R->cx = g->g.src_x + R->half_x;
  R->cy = g->g.src_y + R->half_y;
  R->cos_a = g->cos_a;
  R->sin_a = g->sin_a;
  R->off_x = g->g.offset_x;
  R->off_y = g->g.offset_y;
  R->inv_x = g->inv_x;
  R->inv_y = g->inv_y;
  /* ceil(image pixels per tensor pixel), 1 when upscaling, at most 8 */
  R->n = g->inv_x <= 1.0                   ? 1
         : g->inv_x >= IMG_ROT_MAX_SAMPLES ? IMG_ROT_MAX_SAMPLES
                                           : (int)ceil(g->inv_x);
  R->m = g->inv_y <= 1.0                   ? 1
         : g->inv_y >= IMG_ROT_MAX_SAMPLES ? IMG_ROT_MAX_SAMPLES
                                           : (int)ceil(g->inv_y);
  R->n_grids = 0;
  for (int s = 0; s < P->K; s++) {
    const img_comp *d = &f->comp[s];
    /* 1 / subsampling: powers of two, so exactly the division */
    const double sx = 1.0 / d->subx, sy = 1.0 / d->suby;
    int gi = 0;
    while (gi < R->n_grids && (R->scale_x[gi] != sx || R->scale_y[gi] != sy))
      gi++;
    if (gi == R->n_grids) {
      R->scale_x[gi] = sx;
      R->scale_y[gi] = sy;
      R->size_x[gi] = ceil_div(img->width, d->subx);
      R->size_y[gi] = ceil_div(img->height, d->suby);
      R->n_grids++;
    }
    R->comp[s].base = img->planes[d->plane] + d->off;
    R->comp[s].stride = img->strides[d->plane];
    R->comp[s].ps = d->ps;
    R->comp[s].grid = gi;
  }
}

/* Steps 3-4 of a block whose component rows are built (transposed, all 8
 * rows finite): colour into the channel rows, the padding columns, the
 * store. */
static void block_finish(const img_plan *P, int y0, int nr, float *ws) {
  const nn_image_kernels *k = P->k;
  const int ncx = P->cx1 - P->cx0;
  const float *comp[4];
  for (int s = 0; s < P->K; s++)
    comp[s] = ws + P->comp_off[s];
  for (int c = 0; c < P->C; c++) {
    float *rows[8];
    for (int r = 0; r < 8; r++)
      rows[r] = r < nr ? chan_row(P, ws, c, y0 + r, r) + P->cx0 : ws + P->spare_off;
    k->colour8(rows, comp, P->K, &P->chan[c], ncx, ws + P->tmp_off);
  }
  for (int r = 0; r < nr; r++) {
    for (int c = 0; c < P->C; c++) {
      float *row = chan_row(P, ws, c, y0 + r, r);
      fill_f32(row, P->pad[c], P->cx0);
      fill_f32(row + P->cx1, P->pad[c], P->W - P->cx1);
    }
    row_store(P, ws, y0 + r, r);
  }
}

/* Work items: the blocks of content rows, then the padding rows. */
static void item_run(const img_plan *P, int64_t i, float *ws) {
  if (i < P->n_blocks) {
    if (P->turned)
      rot_block_run(P, (int)i, ws);
    else
      block_run(P, (int)i, ws);
  } else {
    const int k = (int)(i - P->n_blocks);
    pad_row_run(P, k < P->cy0 ? k : P->cy1 + (k - P->cy0), ws);
  }
}

static void items_task(void *arg, int64_t begin, int64_t end) {
  const img_plan *P = arg;
  /* the calling thread's slot; serial runs (no workers, or a call from a
   * thread of some other pool, which nn_session_parallel_for runs inline)
   * may see any index: slot 0 is theirs alone then */
  int wi = P->width > 1 ? nn_session_worker_index() : 0;
  if (wi < 0 || wi >= P->width)
    wi = 0;
  float *ws = P->scratch + (size_t)wi * P->per_worker;
  for (int64_t i = begin; i < end; i++)
    item_run(P, i, ws);
}

/* Colour of every tensor channel (see nn_image_chan). */
static void setup_channels(img_plan *P, const img_fmt *f, const nn_image *img,
                           const nn_image_params *p) {
  /* tensor channel -> colour: 0 R, 1 G, 2 B, 3 A, 4 gray */
  int want[4];
  if (P->C == 1) {
    want[0] = 4;
  } else {
    want[0] = p->bgr ? 2 : 0;
    want[1] = 1;
    want[2] = p->bgr ? 0 : 2;
    want[3] = 3;
  }
  /* YUV -> R'G'B' (Kr, Kb of the matrix; limited range expands Y by
   * 255/219 about 16 and chroma by 255/224 about 128) */
  double kr = 0.299, kb = 0.114;
  if (img->matrix == NN_YUV_BT709) {
    kr = 0.2126;
    kb = 0.0722;
  } else if (img->matrix == NN_YUV_BT2020) {
    kr = 0.2627;
    kb = 0.0593;
  }
  const double kg = 1.0 - kr - kb;
  const bool full = img->range == NN_YUV_FULL;
  const float ys = full ? 1.0f : 255.0f / 219.0f, yb = full ? 0.0f : 16.0f;
  const double cs = full ? 1.0 : 255.0 / 224.0;

  for (int c = 0; c < P->C; c++) {
    nn_image_chan *ch = &P->chan[c];
    memset(ch, 0, sizeof *ch);
    ch->mean = p->mean[c];
    ch->inv_std = 1.0f / p->std[c];
    P->pad[c] = (p->pad_value - ch->mean) * ch->inv_std;
    const int col = want[c];
    if (col == 3) {
      if (f->kind == IMG_RGB && f->has_alpha)
        ch->m[3] = 1.0f;
      else
        ch->o = 255.0f;   /* opaque */
      continue;
    }
    switch (f->kind) {
    case IMG_GRAY:
      ch->m[0] = 1.0f;
      break;
    case IMG_RGB:
      if (col == 4) {
        ch->m[0] = 0.299f;
        ch->m[1] = 0.587f;
        ch->m[2] = 0.114f;
      } else {
        ch->m[col] = 1.0f;
      }
      break;
    default:
      ch->m[0] = ys;
      ch->b[0] = yb;
      ch->b[1] = ch->b[2] = 128.0f;
      if (col == 0) {
        ch->m[2] = (float)(cs * 2.0 * (1.0 - kr));
      } else if (col == 1) {
        ch->m[1] = (float)(-cs * 2.0 * kb * (1.0 - kb) / kg);
        ch->m[2] = (float)(-cs * 2.0 * kr * (1.0 - kr) / kg);
      } else if (col == 2) {
        ch->m[1] = (float)(cs * 2.0 * (1.0 - kb));
      }
      break;
    }
  }
}

nn_status nn_image_convert(nn_image_converter *cv, const nn_image *img,
                           const nn_image_params *p, const nn_image_dest *dst,
                           nn_session *workers, nn_image_geometry *geo, nn_error *err) {
  nn_image_params defaults;
  nn_status st;
  if (!p) {
    nn_image_params_init(&defaults);
    p = &defaults;
  }
  if (!cv)
    return nn_error_set(err, NN_ERR_INVALID_ARG, "nn_image: converter is NULL");
  if (!dst)
    return nn_error_set(err, NN_ERR_INVALID_ARG, "nn_image: dst is NULL");
  if ((st = check_image(img, true, err)) != NN_OK)
    return st;

  /* destination */
  if (dst->dtype != NN_DTYPE_FLOAT && dst->dtype != NN_DTYPE_UINT8)
    return nn_error_set(err, NN_ERR_INVALID_ARG,
                        "nn_image: dst.dtype %s not supported (float32 or uint8)",
                        nn_dtype_name(dst->dtype));
  if (dst->layout != NN_LAYOUT_NCHW && dst->layout != NN_LAYOUT_NHWC)
    return nn_error_set(err, NN_ERR_INVALID_ARG, "nn_image: dst.layout %d is not NCHW or NHWC",
                        (int)dst->layout);
  if (dst->channels != 1 && dst->channels != 3 && dst->channels != 4)
    return nn_error_set(err, NN_ERR_INVALID_ARG, "nn_image: dst.channels %d (must be 1, 3 or 4)",
                        dst->channels);
  if (dst->width < 1 || dst->width > IMG_MAX_DST || dst->height < 1 || dst->height > IMG_MAX_DST)
    return nn_error_set(err, NN_ERR_INVALID_ARG,
                        "nn_image: dst.width x dst.height %d x %d out of range 1..%d", dst->width,
                        dst->height, IMG_MAX_DST);
  if (dst->batch_index < 0)
    return nn_error_set(err, NN_ERR_INVALID_ARG, "nn_image: dst.batch_index %d is negative",
                        dst->batch_index);
  if (!dst->data)
    return nn_error_set(err, NN_ERR_INVALID_ARG, "nn_image: dst.data is NULL");
  const size_t slot = (size_t)dst->channels * (size_t)dst->width * (size_t)dst->height *
                      nn_dtype_size(dst->dtype);
  size_t end;
  if (nn_mul_overflow_size(slot, (size_t)dst->batch_index + 1, &end) || end > dst->nbytes)
    return nn_error_set(err, NN_ERR_INVALID_ARG,
                        "nn_image: dst.nbytes %zu too small for batch slot %d of %zu bytes",
                        dst->nbytes, dst->batch_index, slot);
  if ((st = check_params(p, dst->channels, dst->width, dst->height, err)) != NN_OK)
    return st;
  int width = 1;
  if (workers) {
    width = nn_session_parallel_width(workers);
    if (width < 1)
      return nn_error_set(err, NN_ERR_DISPOSED, "nn_image: the workers' session is disposed");
  }

  const img_fmt *f = &g_fmts[img->format];
  img_geo g;
  compute_geo(img, p, dst->width, dst->height, &g);
  img_plan P;
  memset(&P, 0, sizeof P);
  P.k = kernels();
  P.W = dst->width;
  P.H = dst->height;
  P.C = dst->channels;
  P.dtype = dst->dtype;
  P.layout = dst->layout;
  P.direct = dst->dtype == NN_DTYPE_FLOAT && (dst->layout == NN_LAYOUT_NCHW || P.C == 1);
  P.data = (uint8_t *)dst->data + slot * (size_t)dst->batch_index;
  content_range(g.g.content_x, g.g.content_width, P.W, &P.cx0, &P.cx1);
  content_range(g.g.content_y, g.g.content_height, P.H, &P.cy0, &P.cy1);
  if (P.cx1 == P.cx0 || P.cy1 == P.cy0)   /* no content pixel: all padding */
    P.cx0 = P.cx1 = P.cy0 = P.cy1 = 0;
  const int ncx = P.cx1 - P.cx0, ncy = P.cy1 - P.cy0;
  if (f->kind == IMG_YUV)
    P.K = P.C == 1 ? 1 : 3;
  else if (f->kind == IMG_RGB)
    P.K = P.C == 4 && f->has_alpha ? 4 : 3;
  else
    P.K = 1;
  setup_channels(&P, f, img, p);

  size_t ws = 0;   /* floats per worker */
  P.turned = g.g.angle != 0.0;
  if (ncx > 0 && ncy > 0 && P.turned) {
    /* no tables, no accumulators: the sampler reads the planes */
    rot_setup(&P, f, img, &g);
  } else if (ncx > 0 && ncy > 0) {
    /* tables: horizontal by subx, vertical by suby, those the slots use */
    bool need_x[2] = {false, false}, need_y[2] = {false, false};
    for (int s = 0; s < P.K; s++) {
      need_x[f->comp[s].subx - 1] = true;
      need_y[f->comp[s].suby - 1] = true;
    }
    for (int i = 0; i < 2 && st == NN_OK; i++) {
      if (need_x[i])
        st = taps_build(&cv->tx[i], g.g.src_x, g.g.offset_x, g.inv_x, i + 1, P.cx0, ncx,
                        ceil_div(img->width, i + 1), err);
      if (need_y[i] && st == NN_OK)
        st = taps_build(&cv->ty[i], g.g.src_y, g.g.offset_y, g.inv_y, i + 1, P.cy0, ncy,
                        ceil_div(img->height, i + 1), err);
    }
    if (st != NN_OK)
      return st;

    /* groups: the slots of one plane with one horizontal grid */
    int plane_of[3] = {-1, -1, -1};
    for (int s = 0; s < P.K; s++) {
      const img_comp *d = &f->comp[s];
      if (plane_of[d->plane] < 0) {
        plane_of[d->plane] = P.n_planes;
        P.planes[P.n_planes].ty = &cv->ty[f->plane_suby[d->plane] - 1].t;
        P.n_planes++;
      }
      img_group *gr = NULL;
      for (int i = 0; i < P.n_groups; i++)
        if (P.groups[i].plane == plane_of[d->plane] && P.groups[i].tx == &cv->tx[d->subx - 1].t)
          gr = &P.groups[i];
      if (!gr) {
        gr = &P.groups[P.n_groups++];
        gr->plane = plane_of[d->plane];
        gr->tx = &cv->tx[d->subx - 1].t;
        gr->ps = d->ps;
        gr->bias = d->off;   /* the group's lowest offset, for now */
      }
      gr->lane[gr->n_out] = d->off;
      gr->slot[gr->n_out] = s;
      gr->n_out++;
      if (d->off < gr->bias)
        gr->bias = d->off;
    }
    /* byte span of each plane: the union over its groups */
    int lo[3] = {INT32_MAX, INT32_MAX, INT32_MAX}, hi[3] = {0, 0, 0};
    for (int i = 0; i < P.n_groups; i++) {
      img_group *gr = &P.groups[i];
      int maxlane = 0;
      for (int c = 0; c < gr->n_out; c++) {
        gr->lane[c] -= gr->bias;
        if (gr->lane[c] > maxlane)
          maxlane = gr->lane[c];
      }
      const int l = gr->tx->lo * gr->ps + gr->bias;
      const int h = (gr->tx->hi - 1) * gr->ps + gr->bias + maxlane + 1;
      if (l < lo[gr->plane])
        lo[gr->plane] = l;
      if (h > hi[gr->plane])
        hi[gr->plane] = h;
    }
    for (int i = 0; i < P.n_groups; i++)
      P.groups[i].bias -= lo[P.groups[i].plane];
    for (int s = 0; s < 3; s++) {
      if (plane_of[s] < 0)
        continue;
      img_plane *pl = &P.planes[plane_of[s]];
      pl->stride = img->strides[s];
      pl->base = img->planes[s] + lo[plane_of[s]];
      pl->len = hi[plane_of[s]] - lo[plane_of[s]];
      pl->acc_off = ws;
      ws += (size_t)round16(pl->len) * 8;
    }
    P.vtmp_off = ws;
    ws += NN_IMAGE_VP_TMP;
  }
  if (ncx > 0 && ncy > 0) {
    for (int s = 0; s < P.K; s++) {
      P.comp_off[s] = ws;
      ws += (size_t)ncx * 8;
    }
    P.tmp_off = ws;
    ws += (size_t)ncx * 8;
    P.n_blocks = (ncy + 7) / 8;
  }
  if (!P.direct) {
    P.rows_off = ws;
    ws += (size_t)P.C * 8 * round16(P.W);
  }
  P.spare_off = ws;
  ws += round16(P.W);
  P.per_worker = ws;
  const size_t total = ws * (size_t)width;
  if (total > cv->scratch_cap) {
    float *m = nn_aligned_alloc(total * sizeof(float));
    if (!m)
      return nn_error_set(err, NN_ERR_NOMEM, "nn_image: out of memory for %zu bytes of rows",
                          total * sizeof(float));
    nn_aligned_free(cv->scratch);
    cv->scratch = m;
    cv->scratch_cap = total;
  }
  P.scratch = cv->scratch;
  P.width = width;

  const int64_t items = (int64_t)P.n_blocks + (P.H - ncy);
  if (workers && width > 1) {
    /* blocks are the costly items; padding rows are cheap fill */
    st = nn_session_parallel_for(workers, items, 1, items_task, &P);
    if (st != NN_OK)
      return nn_error_set(err, st, "nn_image: %s", nn_session_last_error(workers));
  } else {
    items_task(&P, 0, items);
  }
  if (geo)
    *geo = g.g;
  return NN_OK;
}

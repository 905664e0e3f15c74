/* test_image.c - pixels -> tensor (nn_image.h) on cases whose expected
 * values can be worked out by hand: 1:1 copies of every packed format,
 * known YUV -> RGB values per matrix and range, linear gradients (whose
 * area average and bilinear interpolation are both the value at the
 * footprint's centre), letterbox padding and the geometry it reports, crop,
 * rectangles partly or wholly outside the image, padded strides, layouts,
 * data types, mean/std, channel order, channel counts, batch slots, every
 * error (nothing written), no allocation on a repeated conversion, the
 * portable and SIMD kernels agreeing, and 2 threads equal to 1 bit for bit.
 * Turned source rects (params.angle): quarter turns at 1:1 against the
 * axis-aligned result turned, arbitrary angles and strong downscales
 * against a double-precision reference of the definition written out
 * here, every format; an explicit content rect (params.content) against
 * a stretch of its size, its padding and geometry.
 *
 * tests/image/reference.py compares against an independent numpy version
 * of the definition on random cases.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "image/image_internal.h"
#include "model_builder.h"
#include "nn.h"
#include "nn_image.h"

static int g_failed, g_passed;
static int t_failed;

#define CHECK(cond)                                                                   \
  do {                                                                                \
    if (!(cond)) {                                                                    \
      fprintf(stderr, "  %s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond);       \
      t_failed = 1;                                                                   \
    }                                                                                 \
  } while (0)
#define CHECK_ST(expr, want)                                                          \
  do {                                                                                \
    nn_status _st = (expr);                                                           \
    if (_st != (want)) {                                                              \
      fprintf(stderr, "  %s:%d: %s returned %s, expected %s\n", __FILE__, __LINE__,   \
              #expr, nn_status_str(_st), nn_status_str(want));                        \
      t_failed = 1;                                                                   \
    }                                                                                 \
  } while (0)
#define CHECK_NEAR(a, b, tol)                                                         \
  do {                                                                                \
    double _a = (a), _b = (b);                                                        \
    if (!(fabs(_a - _b) <= (tol))) {                                                  \
      fprintf(stderr, "  %s:%d: %s = %.9g, expected %.9g (tol %g)\n", __FILE__,       \
              __LINE__, #a, _a, _b, (double)(tol));                                   \
      t_failed = 1;                                                                   \
    }                                                                                 \
  } while (0)

/* ---- counting allocator --------------------------------------------------------- */
static long g_allocs;
static void *count_malloc(size_t n, void *ud) { (void)ud; g_allocs++; return malloc(n); }
static void *count_realloc(void *p, size_t n, void *ud) { (void)ud; g_allocs++; return realloc(p, n); }
static void count_free(void *p, void *ud) { (void)ud; free(p); }

/* ---- random numbers ----------------------------------------------------------------- */
static uint64_t g_rng = 0x9E3779B97F4A7C15ull;
static uint32_t rnd(void) {
  g_rng ^= g_rng << 13;
  g_rng ^= g_rng >> 7;
  g_rng ^= g_rng << 17;
  return (uint32_t)(g_rng >> 32);
}
static int rnd_range(int lo, int hi) { return lo + (int)(rnd() % (uint32_t)(hi - lo + 1)); }

/* ---- test images --------------------------------------------------------------------- */

/* What the test knows about each format, restated independently of the
 * library: bytes per row unit, row subsampling, row subsampling of the
 * plane's height, per plane. */
typedef struct fmt_info {
  nn_pixel_format f;
  int planes;
  int row_bytes[3], row_sub[3], h_sub[3];
  int yuv;
  int r, g, b, a;   /* packed RGB: byte offsets, -1 none */
  int bpp;
} fmt_info;

static const fmt_info g_info[] = {
  {NN_PIX_RGB, 1, {3}, {1}, {1}, 0, 0, 1, 2, -1, 3},
  {NN_PIX_BGR, 1, {3}, {1}, {1}, 0, 2, 1, 0, -1, 3},
  {NN_PIX_RGBA, 1, {4}, {1}, {1}, 0, 0, 1, 2, 3, 4},
  {NN_PIX_BGRA, 1, {4}, {1}, {1}, 0, 2, 1, 0, 3, 4},
  {NN_PIX_RGBX, 1, {4}, {1}, {1}, 0, 0, 1, 2, -1, 4},
  {NN_PIX_BGRX, 1, {4}, {1}, {1}, 0, 2, 1, 0, -1, 4},
  {NN_PIX_XRGB, 1, {4}, {1}, {1}, 0, 1, 2, 3, -1, 4},
  {NN_PIX_XBGR, 1, {4}, {1}, {1}, 0, 3, 2, 1, -1, 4},
  {NN_PIX_ARGB, 1, {4}, {1}, {1}, 0, 1, 2, 3, 0, 4},
  {NN_PIX_ABGR, 1, {4}, {1}, {1}, 0, 3, 2, 1, 0, 4},
  {NN_PIX_GRAY8, 1, {1}, {1}, {1}, 0, 0, 0, 0, -1, 1},
  {NN_PIX_NV12, 2, {1, 2}, {1, 2}, {1, 2}, 1, -1, -1, -1, -1, 0},
  {NN_PIX_NV21, 2, {1, 2}, {1, 2}, {1, 2}, 1, -1, -1, -1, -1, 0},
  {NN_PIX_I420, 3, {1, 1, 1}, {1, 2, 2}, {1, 2, 2}, 1, -1, -1, -1, -1, 0},
  {NN_PIX_YV12, 3, {1, 1, 1}, {1, 2, 2}, {1, 2, 2}, 1, -1, -1, -1, -1, 0},
  {NN_PIX_YUY2, 1, {4}, {2}, {1}, 1, -1, -1, -1, -1, 0},
  {NN_PIX_UYVY, 1, {4}, {2}, {1}, 1, -1, -1, -1, -1, 0},
};
#define N_FMTS ((int)(sizeof g_info / sizeof g_info[0]))

static const fmt_info *info_of(nn_pixel_format f) {
  for (int i = 0; i < N_FMTS; i++)
    if (g_info[i].f == f)
      return &g_info[i];
  return NULL;
}

typedef struct timg {
  nn_image im;
  uint8_t *buf[3];
  int rows[3], row[3];
} timg;

/* Random bytes everywhere (padding included), rows `pad` bytes longer than
 * needed. */
static void timg_make(timg *t, nn_pixel_format f, int w, int h, int pad) {
  const fmt_info *fi = info_of(f);
  memset(t, 0, sizeof *t);
  t->im.format = f;
  t->im.width = w;
  t->im.height = h;
  for (int p = 0; p < fi->planes; p++) {
    t->row[p] = fi->row_bytes[p] * ((w + fi->row_sub[p] - 1) / fi->row_sub[p]);
    t->rows[p] = (h + fi->h_sub[p] - 1) / fi->h_sub[p];
    t->im.strides[p] = t->row[p] + pad;
    size_t n = (size_t)t->im.strides[p] * t->rows[p];
    t->buf[p] = malloc(n);
    for (size_t i = 0; i < n; i++)
      t->buf[p][i] = (uint8_t)rnd();
    t->im.planes[p] = t->buf[p];
  }
}

static void timg_free(timg *t) {
  for (int p = 0; p < 3; p++)
    free(t->buf[p]);
}

/* Set every Y, U, V sample (or every byte of a packed RGB plane) of a YUV
 * image to one value each. */
static void timg_fill_yuv(timg *t, int Y, int U, int V) {
  const nn_pixel_format f = t->im.format;
  for (int p = 0; p < 3; p++) {
    if (!t->buf[p])
      continue;
    for (int r = 0; r < t->rows[p]; r++) {
      uint8_t *row = t->buf[p] + (size_t)r * t->im.strides[p];
      for (int i = 0; i < t->row[p]; i++) {
        int v = 0;
        switch (f) {
        case NN_PIX_NV12: v = p == 0 ? Y : (i & 1) ? V : U; break;
        case NN_PIX_NV21: v = p == 0 ? Y : (i & 1) ? U : V; break;
        case NN_PIX_I420: v = p == 0 ? Y : p == 1 ? U : V; break;
        case NN_PIX_YV12: v = p == 0 ? Y : p == 1 ? V : U; break;
        case NN_PIX_YUY2: v = (i & 1) == 0 ? Y : (i & 3) == 1 ? U : V; break;
        case NN_PIX_UYVY: v = (i & 1) == 1 ? Y : (i & 3) == 0 ? U : V; break;
        default: break;
        }
        row[i] = (uint8_t)v;
      }
    }
  }
}

/* ---- conversion helpers ------------------------------------------------------------- */

static nn_image_converter *g_cv;

typedef struct tdst {
  nn_image_dest d;
  void *mem;
} tdst;

static void tdst_make(tdst *t, nn_dtype dt, nn_tensor_layout lay, int C, int w, int h, int batch) {
  memset(t, 0, sizeof *t);
  t->d.dtype = dt;
  t->d.layout = lay;
  t->d.channels = C;
  t->d.width = w;
  t->d.height = h;
  t->d.nbytes = (size_t)C * w * h * nn_dtype_size(dt) * (size_t)batch;
  t->mem = malloc(t->d.nbytes ? t->d.nbytes : 1);
  memset(t->mem, 0xA5, t->d.nbytes);
  t->d.data = t->mem;
}

/* Element (c, y, x) of batch slot 0 as float. */
static float tval(const tdst *t, int c, int y, int x) {
  size_t i = t->d.layout == NN_LAYOUT_NCHW
                 ? ((size_t)c * t->d.height + y) * t->d.width + x
                 : ((size_t)y * t->d.width + x) * t->d.channels + c;
  i += (size_t)t->d.batch_index * t->d.channels * t->d.width * t->d.height;
  return t->d.dtype == NN_DTYPE_FLOAT ? ((float *)t->mem)[i] : (float)((uint8_t *)t->mem)[i];
}

static nn_status conv(const timg *im, const nn_image_params *p, tdst *d, nn_image_geometry *geo) {
  nn_error err;
  nn_status st = nn_image_convert(g_cv, &im->im, p, &d->d, NULL, geo, &err);
  if (st != NN_OK)
    fprintf(stderr, "  convert: %s\n", err.msg);
  return st;
}

/* ---- tests -------------------------------------------------------------------------- */

static void test_names(void) {
  CHECK(strcmp(nn_pixel_format_name(NN_PIX_NV12), "NV12") == 0);
  CHECK(strcmp(nn_pixel_format_name(NN_PIX_BGRX), "BGRx") == 0);
  CHECK(strcmp(nn_pixel_format_name(NN_PIX_COUNT), "?") == 0);
  CHECK(strcmp(nn_pixel_format_name((nn_pixel_format)-1), "?") == 0);
  for (int i = 0; i < N_FMTS; i++)
    CHECK(nn_pixel_format_planes(g_info[i].f) == g_info[i].planes);
  CHECK(nn_pixel_format_planes(NN_PIX_COUNT) == 0);
  nn_image_params p;
  memset(&p, 0x55, sizeof p);
  nn_image_params_init(&p);
  CHECK(p.mode == NN_RESIZE_STRETCH && p.src.width == 0 && p.bgr == 0 && p.pad_value == 0);
  CHECK(p.angle == 0 && p.content.x == 0 && p.content.y == 0 && p.content.width == 0 &&
        p.content.height == 0);
  for (int c = 0; c < 4; c++)
    CHECK(p.mean[c] == 0 && p.std[c] == 1);
}

/* 1:1 stretch of every packed format is a copy, in every layout, type,
 * channel count and order; odd sizes and padded strides included. */
static void test_identity(void) {
  const int sizes[][2] = {{1, 1}, {7, 5}, {127, 93}, {64, 3}};
  for (int fi = 0; fi < N_FMTS; fi++) {
    const fmt_info *f = &g_info[fi];
    if (f->yuv)
      continue;
    for (int si = 0; si < 4; si++) {
      const int w = sizes[si][0], h = sizes[si][1];
      timg im;
      timg_make(&im, f->f, w, h, si * 5);
      for (int C = 1; C <= 4; C++) {
        if (C == 2 || (C == 1 && f->f != NN_PIX_GRAY8))
          continue;
        for (int v = 0; v < 4; v++) {
          const nn_dtype dt = v & 1 ? NN_DTYPE_UINT8 : NN_DTYPE_FLOAT;
          const nn_tensor_layout lay = v & 2 ? NN_LAYOUT_NHWC : NN_LAYOUT_NCHW;
          for (int bgr = 0; bgr < 2; bgr++) {
            nn_image_params p;
            nn_image_params_init(&p);
            p.bgr = bgr;
            tdst d;
            tdst_make(&d, dt, lay, C, w, h, 1);
            CHECK_ST(conv(&im, &p, &d, NULL), NN_OK);
            int bad = 0;
            for (int y = 0; y < h; y++)
              for (int x = 0; x < w; x++) {
                const uint8_t *px = im.buf[0] + (size_t)y * im.im.strides[0] + (size_t)x * f->bpp;
                int want[4] = {px[f->r], px[f->g], px[f->b], f->a >= 0 ? px[f->a] : 255};
                if (bgr) {
                  int tmp = want[0];
                  want[0] = want[2];
                  want[2] = tmp;
                }
                for (int c = 0; c < C; c++)
                  bad += tval(&d, c, y, x) != (float)want[c];
              }
            if (bad)
              fprintf(stderr, "  identity %s %dx%d C=%d v=%d bgr=%d: %d wrong\n",
                      nn_pixel_format_name(f->f), w, h, C, v, bgr, bad);
            CHECK(bad == 0);
            free(d.mem);
          }
        }
      }
      timg_free(&im);
    }
  }
}

/* R, G, B of one YUV sample by the textbook formulas, in double. */
static void yuv_ref(int Y, int U, int V, nn_yuv_matrix m, nn_yuv_range r, double rgb[3]) {
  double kr = m == NN_YUV_BT601 ? 0.299 : m == NN_YUV_BT709 ? 0.2126 : 0.2627;
  double kb = m == NN_YUV_BT601 ? 0.114 : m == NN_YUV_BT709 ? 0.0722 : 0.0593;
  double y, pb, pr;   /* y in 0..1, pb/pr in -0.5..0.5 */
  if (r == NN_YUV_LIMITED) {
    y = (Y - 16) / 219.0;
    pb = (U - 128) / 224.0;
    pr = (V - 128) / 224.0;
  } else {
    y = Y / 255.0;
    pb = (U - 128) / 255.0;
    pr = (V - 128) / 255.0;
  }
  double R = y + 2 * (1 - kr) * pr;
  double B = y + 2 * (1 - kb) * pb;
  double G = (y - kr * R - kb * B) / (1 - kr - kb);
  double v[3] = {R, G, B};
  for (int i = 0; i < 3; i++) {
    v[i] *= 255.0;
    rgb[i] = v[i] < 0 ? 0 : v[i] > 255 ? 255 : v[i];
  }
}

static void test_yuv_values(void) {
  const nn_pixel_format yuv[] = {NN_PIX_NV12, NN_PIX_NV21, NN_PIX_I420, NN_PIX_YV12,
                                 NN_PIX_YUY2, NN_PIX_UYVY};
  const int samples[][3] = {{235, 128, 128}, {16, 128, 128}, {255, 128, 128}, {0, 128, 128},
                            {81, 90, 240},   {145, 54, 34},  {41, 240, 110},  {63, 102, 240},
                            {126, 128, 128}, {200, 16, 16},  {30, 240, 240}};
  for (int fi = 0; fi < 6; fi++)
    for (int m = 0; m < 3; m++)
      for (int r = 0; r < 2; r++)
        for (int si = 0; si < 11; si++) {
          /* uniform images of a few sizes (1x1: one chroma sample): every
           * output pixel is that sample's colour */
          const int w = si % 3 == 0 ? 1 : 6 + si, h = si % 3 == 0 ? 1 : 3 + si;
          timg im;
          timg_make(&im, yuv[fi], w, h, si & 1);
          im.im.matrix = (nn_yuv_matrix)m;
          im.im.range = (nn_yuv_range)r;
          const int *s = samples[si];
          timg_fill_yuv(&im, s[0], s[1], s[2]);
          double want[3];
          yuv_ref(s[0], s[1], s[2], (nn_yuv_matrix)m, (nn_yuv_range)r, want);
          nn_image_params p;
          nn_image_params_init(&p);
          tdst d, g, a;
          tdst_make(&d, NN_DTYPE_FLOAT, NN_LAYOUT_NHWC, 3, 5, 4, 1);
          tdst_make(&g, NN_DTYPE_FLOAT, NN_LAYOUT_NCHW, 1, 3, 2, 1);
          tdst_make(&a, NN_DTYPE_UINT8, NN_LAYOUT_NCHW, 4, 2, 2, 1);
          CHECK_ST(conv(&im, &p, &d, NULL), NN_OK);
          CHECK_ST(conv(&im, &p, &g, NULL), NN_OK);
          CHECK_ST(conv(&im, &p, &a, NULL), NN_OK);
          for (int c = 0; c < 3; c++)
            CHECK_NEAR(tval(&d, c, 3, 4), want[c], 2e-3);
          double yl = r == NN_YUV_LIMITED ? (s[0] - 16) * 255.0 / 219.0 : s[0];
          yl = yl < 0 ? 0 : yl > 255 ? 255 : yl;
          CHECK_NEAR(tval(&g, 0, 1, 2), yl, 2e-3);
          for (int c = 0; c < 3; c++)
            CHECK_NEAR(tval(&a, c, 1, 1), floor(want[c] + 0.5), 1.0);
          CHECK(tval(&a, 3, 0, 1) == 255);
          free(d.mem);
          free(g.mem);
          free(a.mem);
          timg_free(&im);
        }
  /* exact anchors: limited white and black, full-range white */
  timg im;
  timg_make(&im, NN_PIX_NV12, 2, 2, 0);
  tdst d;
  tdst_make(&d, NN_DTYPE_FLOAT, NN_LAYOUT_NCHW, 3, 2, 2, 1);
  for (int m = 0; m < 3; m++) {
    im.im.matrix = (nn_yuv_matrix)m;
    im.im.range = NN_YUV_LIMITED;
    timg_fill_yuv(&im, 235, 128, 128);
    CHECK_ST(conv(&im, NULL, &d, NULL), NN_OK);
    for (int c = 0; c < 3; c++)
      CHECK(tval(&d, c, 1, 1) == 255.0f);
    timg_fill_yuv(&im, 16, 128, 128);
    CHECK_ST(conv(&im, NULL, &d, NULL), NN_OK);
    for (int c = 0; c < 3; c++)
      CHECK(tval(&d, c, 0, 1) == 0.0f);
    im.im.range = NN_YUV_FULL;
    timg_fill_yuv(&im, 255, 128, 128);
    CHECK_ST(conv(&im, NULL, &d, NULL), NN_OK);
    for (int c = 0; c < 3; c++)
      CHECK(tval(&d, c, 1, 0) == 255.0f);
  }
  free(d.mem);
  timg_free(&im);
}

/* A GRAY8 image whose value is the column index (a linear function): the
 * area average over a footprint inside the image and the bilinear sample
 * are both the value at the footprint's centre, minus the half pixel of the
 * sample centres. */
static void make_ramp(timg *im, int w, int h, int vertical) {
  timg_make(im, NN_PIX_GRAY8, w, h, 3);
  for (int y = 0; y < h; y++)
    for (int x = 0; x < w; x++)
      im->buf[0][(size_t)y * im->im.strides[0] + x] = (uint8_t)(vertical ? y : x);
}

/* Mean of the staircase f(t) = floor(t) (the ramp's pixels, sample i
 * covering [i, i+1)) over [a, b) inside [0, w), from the closed form of its
 * integral F(t) = n(n-1)/2 + n(t-n), n = floor(t). */
static double stair_mean(double a, double b) {
  double na = floor(a), nb = floor(b);
  double Fa = na * (na - 1) / 2 + na * (a - na), Fb = nb * (nb - 1) / 2 + nb * (b - nb);
  return (Fb - Fa) / (b - a);
}

/* The ramp's value over the footprint [a, b) by the definition: area mean
 * when wider than a pixel, else linear between centres (exact on a ramp). */
static double ramp_at(double a, double b) {
  return b - a > 1 ? stair_mean(a, b) : (a + b) / 2 - 0.5;
}

static void test_ramps(void) {
  /* downscale (area), upscale (bilinear), fractional ratios */
  const int cases[][4] = {{200, 10, 50, 4}, {200, 10, 37, 5}, {60, 7, 150, 3}, {9, 9, 40, 40},
                          {255, 1, 3, 1}};
  for (int ci = 0; ci < 5; ci++) {
    const int w = cases[ci][0], h = cases[ci][1], dw = cases[ci][2], dh = cases[ci][3];
    timg im;
    make_ramp(&im, w, h, 0);
    tdst d;
    tdst_make(&d, NN_DTYPE_FLOAT, NN_LAYOUT_NCHW, 1, dw, dh, 1);
    nn_image_geometry geo;
    CHECK_ST(conv(&im, NULL, &d, &geo), NN_OK);
    CHECK(geo.scale_x == (double)dw / w && geo.offset_x == 0 && geo.content_width == dw);
    const double inv = (double)w / dw;
    for (int x = 0; x < dw; x++) {
      double a = x * inv, b = a + inv;
      if (inv <= 1 ? (a + b) / 2 < 0.5 || (a + b) / 2 > w - 0.5 : a < 0 || b > w)
        continue;
      CHECK_NEAR(tval(&d, 0, dh - 1, x), ramp_at(a, b), 2e-3);
    }
    free(d.mem);
    timg_free(&im);
  }
  /* vertical too */
  timg im;
  make_ramp(&im, 5, 240, 1);
  tdst d;
  tdst_make(&d, NN_DTYPE_FLOAT, NN_LAYOUT_NHWC, 3, 2, 70, 1);
  CHECK_ST(conv(&im, NULL, &d, NULL), NN_OK);
  for (int y = 0; y < 70; y++)
    for (int c = 0; c < 3; c++)
      CHECK_NEAR(tval(&d, c, y, 1), ramp_at(y * 240.0 / 70, (y + 1) * 240.0 / 70), 2e-3);
  free(d.mem);
  timg_free(&im);
}

static void test_letterbox_crop(void) {
  timg im;
  make_ramp(&im, 200, 100, 0);
  nn_image_params p;
  nn_image_params_init(&p);
  p.mode = NN_RESIZE_LETTERBOX;
  p.pad_value = 114;
  p.mean[0] = p.mean[1] = p.mean[2] = 100;
  p.std[0] = p.std[1] = p.std[2] = 2;
  tdst d;
  tdst_make(&d, NN_DTYPE_FLOAT, NN_LAYOUT_NCHW, 3, 64, 64, 1);
  nn_image_geometry geo, geo2;
  CHECK_ST(conv(&im, &p, &d, &geo), NN_OK);
  CHECK(geo.src_x == 0 && geo.src_y == 0 && geo.src_width == 200 && geo.src_height == 100);
  CHECK(geo.scale_x == 0.32 && geo.scale_y == 0.32);
  CHECK(geo.offset_x == 0 && geo.offset_y == 16);
  CHECK(geo.content_x == 0 && geo.content_y == 16 && geo.content_width == 64 &&
        geo.content_height == 32);
  CHECK_ST(nn_image_geometry_compute(&im.im, &p, 64, 64, &geo2), NN_OK);
  CHECK(memcmp(&geo, &geo2, sizeof geo) == 0);
  for (int y = 0; y < 64; y++) {
    const int pad = y < 16 || y >= 48;
    for (int c = 0; c < 3; c++) {
      if (pad)
        CHECK(tval(&d, c, y, 10) == 7.0f);   /* (114 - 100) / 2 */
      else
        CHECK_NEAR(tval(&d, c, y, 10), (ramp_at(10 / 0.32, 11 / 0.32) - 100) / 2, 1e-3);
    }
  }
  /* letterbox with a non-integer offset: content pixels are those whose
   * centre is inside; geometry maps image -> tensor */
  p.src = (nn_rect){0, 0, 200, 99};
  CHECK_ST(nn_image_geometry_compute(&im.im, &p, 64, 41, &geo), NN_OK);
  CHECK_NEAR(geo.content_height, 31.68, 1e-12);
  CHECK_NEAR(geo.offset_y, 4.66, 1e-12);
  CHECK(geo.scale_y == 0.32 && geo.content_y == geo.offset_y);
  tdst d2;
  tdst_make(&d2, NN_DTYPE_UINT8, NN_LAYOUT_NHWC, 3, 64, 41, 1);
  p.mean[0] = p.mean[1] = p.mean[2] = 0;
  p.std[0] = p.std[1] = p.std[2] = 1;
  CHECK_ST(conv(&im, &p, &d2, NULL), NN_OK);
  /* rows 0..4 pad (centres up to 4.5 < 4.66), 5..35 content (35.5 < 36.34), 36.. pad */
  CHECK(tval(&d2, 0, 4, 3) == 114 && tval(&d2, 0, 5, 3) != 114 && tval(&d2, 0, 35, 3) != 114 &&
        tval(&d2, 0, 36, 3) == 114);
  p.src = (nn_rect){0, 0, 0, 0};
  free(d2.mem);

  /* crop: covers, centred; the tensor's column x shows image column
   * (x + 0.5 - offset) / scale */
  p.mode = NN_RESIZE_CROP;
  CHECK_ST(conv(&im, &p, &d, &geo), NN_OK);
  CHECK(geo.scale_x == 0.64 && geo.scale_y == 0.64 && geo.offset_y == 0);
  CHECK_NEAR(geo.offset_x, -32, 1e-12);
  CHECK(geo.content_x == 0 && geo.content_width == 64 && geo.content_height == 64);
  for (int x = 0; x < 64; x++)
    CHECK_NEAR(tval(&d, 1, 30, x), ramp_at((x + 32) / 0.64, (x + 33) / 0.64), 2e-3);
  /* crop of a source rect equals stretch of its visible part */
  p.src = (nn_rect){20, 10, 120, 60};
  CHECK_ST(conv(&im, &p, &d, &geo), NN_OK);
  tdst d3;
  tdst_make(&d3, NN_DTYPE_FLOAT, NN_LAYOUT_NCHW, 3, 64, 64, 1);
  nn_image_params q = p;
  q.mode = NN_RESIZE_STRETCH;
  q.src = (nn_rect){20 + 30, 10, 60, 60};
  CHECK_ST(conv(&im, &q, &d3, NULL), NN_OK);
  float md = 0;
  for (size_t i = 0; i < 3 * 64 * 64; i++)
    md = fmaxf(md, fabsf(((float *)d.mem)[i] - ((float *)d3.mem)[i]));
  CHECK(md <= 1e-3f);
  free(d3.mem);
  free(d.mem);
  timg_free(&im);
}

/* Rectangles partly and wholly outside the image read the edge. */
static void test_outside(void) {
  timg im;
  make_ramp(&im, 100, 20, 0);
  nn_image_params p;
  nn_image_params_init(&p);
  tdst d;
  tdst_make(&d, NN_DTYPE_FLOAT, NN_LAYOUT_NCHW, 1, 40, 8, 1);
  p.src = (nn_rect){-50, -5, 100, 30};   /* left half outside */
  CHECK_ST(conv(&im, &p, &d, NULL), NN_OK);
  for (int x = 0; x < 20; x++)   /* footprints [-50 + 2.5x, +2.5) < 0: edge column 0 */
    CHECK(tval(&d, 0, 3, x) == 0.0f);
  CHECK_NEAR(tval(&d, 0, 3, 30), ramp_at(25.0, 27.5), 2e-3);
  p.src = (nn_rect){500, 100, 10, 10};   /* wholly outside: the corner pixel */
  CHECK_ST(conv(&im, &p, &d, NULL), NN_OK);
  for (int x = 0; x < 40; x++)
    CHECK(tval(&d, 0, 7, x) == 99.0f);
  /* huge and tiny rects work */
  p.src = (nn_rect){-5e8, -5e8, 1e9, 1e9};
  CHECK_ST(conv(&im, &p, &d, NULL), NN_OK);
  p.src = (nn_rect){50.25, 10.5, 1.0 / 1024, 1.0 / 1024};
  CHECK_ST(conv(&im, &p, &d, NULL), NN_OK);
  CHECK_NEAR(tval(&d, 0, 0, 0), 49.75 + 1.0 / 2048, 1e-3);
  free(d.mem);
  timg_free(&im);
}

/* Uniform images of odd and large sizes stay uniform. */
static void test_sizes(void) {
  const int sizes[][4] = {{127, 93, 64, 64}, {1, 1, 17, 9}, {4096, 2160, 300, 200},
                          {3, 1000, 5, 7}, {1000, 3, 11, 2}, {4096, 2160, 1, 1}};
  for (int si = 0; si < 6; si++)
    for (int fi = 0; fi < N_FMTS; fi++) {
      const fmt_info *f = &g_info[fi];
      if (si >= 2 && f->f != NN_PIX_NV12 && f->f != NN_PIX_BGRX && f->f != NN_PIX_I420 &&
          f->f != NN_PIX_YUY2)
        continue;
      timg im;
      timg_make(&im, f->f, sizes[si][0], sizes[si][1], 1);
      if (f->yuv) {
        timg_fill_yuv(&im, 235, 128, 128);
      } else {
        for (int p = 0; p < 3; p++)
          if (im.buf[p])
            memset(im.buf[p], 77, (size_t)im.im.strides[p] * im.rows[p]);
      }
      const float want = f->yuv ? 255.0f : 77.0f;
      tdst d;
      tdst_make(&d, NN_DTYPE_FLOAT, NN_LAYOUT_NHWC, 3, sizes[si][2], sizes[si][3], 1);
      CHECK_ST(conv(&im, NULL, &d, NULL), NN_OK);
      float md = 0;
      size_t at = 0;
      for (size_t i = 0; i < d.d.nbytes / 4; i++)
        if (fabsf(((float *)d.mem)[i] - want) > md) {
          md = fabsf(((float *)d.mem)[i] - want);
          at = i;
        }
      if (md > 1e-3f)
        fprintf(stderr, "  %s %dx%d: max err %g at element %zu\n", nn_pixel_format_name(f->f),
                sizes[si][0], sizes[si][1], md, at);
      CHECK(md <= 1e-3f);
      free(d.mem);
      timg_free(&im);
    }
}

/* Strides, layouts, types, normalisation, channel order and batch slots,
 * each checked against the plain case. */
static void test_variants(void) {
  for (int fi = 0; fi < N_FMTS; fi++) {
    const fmt_info *f = &g_info[fi];
    timg a, b;
    g_rng = 1234 + fi;
    timg_make(&a, f->f, 45, 31, 0);
    g_rng = 1234 + fi;
    timg_make(&b, f->f, 45, 31, 0);
    /* b: the same pixels with padded strides */
    timg c;
    timg_make(&c, f->f, 45, 31, 17);
    for (int p = 0; p < 3; p++)
      if (a.buf[p])
        for (int r = 0; r < a.rows[p]; r++)
          memcpy(c.buf[p] + (size_t)r * c.im.strides[p], a.buf[p] + (size_t)r * a.im.strides[p],
                 a.row[p]);
    nn_image_params p;
    nn_image_params_init(&p);
    p.src = (nn_rect){3.5, 2.25, 37, 25};
    tdst base, t;
    tdst_make(&base, NN_DTYPE_FLOAT, NN_LAYOUT_NCHW, 3, 23, 17, 1);
    CHECK_ST(conv(&a, &p, &base, NULL), NN_OK);
    /* padded strides: identical */
    tdst_make(&t, NN_DTYPE_FLOAT, NN_LAYOUT_NCHW, 3, 23, 17, 1);
    CHECK_ST(conv(&c, &p, &t, NULL), NN_OK);
    CHECK(memcmp(base.mem, t.mem, base.d.nbytes) == 0);
    free(t.mem);
    /* NHWC: the same values transposed */
    tdst_make(&t, NN_DTYPE_FLOAT, NN_LAYOUT_NHWC, 3, 23, 17, 1);
    CHECK_ST(conv(&a, &p, &t, NULL), NN_OK);
    int bad = 0;
    for (int ch = 0; ch < 3; ch++)
      for (int y = 0; y < 17; y++)
        for (int x = 0; x < 23; x++)
          bad += tval(&t, ch, y, x) != tval(&base, ch, y, x);
    CHECK(bad == 0);
    free(t.mem);
    /* uint8: rounded half up, clamped */
    for (int lay = 0; lay < 2; lay++) {
      tdst_make(&t, NN_DTYPE_UINT8, (nn_tensor_layout)lay, 3, 23, 17, 1);
      CHECK_ST(conv(&a, &p, &t, NULL), NN_OK);
      bad = 0;
      for (int ch = 0; ch < 3; ch++)
        for (int y = 0; y < 17; y++)
          for (int x = 0; x < 23; x++)
            bad += tval(&t, ch, y, x) != floorf(tval(&base, ch, y, x) + 0.5f);
      CHECK(bad == 0);
      free(t.mem);
    }
    /* mean/std per channel, BGR order */
    nn_image_params q = p;
    q.bgr = 1;
    const float mean[3] = {10, 128, 250}, sd[3] = {2, 0.5f, -4};
    for (int ch = 0; ch < 3; ch++) {
      q.mean[ch] = mean[ch];
      q.std[ch] = sd[ch];
    }
    tdst_make(&t, NN_DTYPE_FLOAT, NN_LAYOUT_NCHW, 3, 23, 17, 1);
    CHECK_ST(conv(&a, &q, &t, NULL), NN_OK);
    double md = 0;
    for (int ch = 0; ch < 3; ch++)
      for (int y = 0; y < 17; y++)
        for (int x = 0; x < 23; x++) {
          double want = (tval(&base, 2 - ch, y, x) - mean[ch]) / sd[ch];
          md = fmax(md, fabs(tval(&t, ch, y, x) - want) * fabs(sd[ch]));
        }
    CHECK(md <= 1e-4);
    free(t.mem);
    /* batch slot 2 of 3: the other slots untouched */
    tdst_make(&t, NN_DTYPE_UINT8, NN_LAYOUT_NHWC, 4, 23, 17, 3);
    t.d.batch_index = 2;
    CHECK_ST(conv(&a, &p, &t, NULL), NN_OK);
    const size_t slot = 4 * 23 * 17;
    bad = 0;
    for (size_t i = 0; i < 2 * slot; i++)
      bad += ((uint8_t *)t.mem)[i] != 0xA5;
    CHECK(bad == 0);
    for (int y = 0; y < 17; y++)
      for (int x = 0; x < 23; x++) {
        bad += tval(&t, 0, y, x) != floorf(tval(&base, 0, y, x) + 0.5f);
        if (f->a < 0)
          bad += tval(&t, 3, y, x) != 255;
      }
    CHECK(bad == 0);
    free(t.mem);
    /* gray */
    tdst_make(&t, NN_DTYPE_FLOAT, NN_LAYOUT_NCHW, 1, 23, 17, 1);
    CHECK_ST(conv(&a, &p, &t, NULL), NN_OK);
    md = 0;
    for (int y = 0; y < 17; y++)
      for (int x = 0; x < 23; x++) {
        double want;
        if (f->yuv)
          want = tval(&t, 0, y, x);   /* checked by the reference script */
        else
          want = 0.299 * tval(&base, 0, y, x) + 0.587 * tval(&base, 1, y, x) +
                 0.114 * tval(&base, 2, y, x);
        md = fmax(md, fabs(tval(&t, 0, y, x) - want));
      }
    CHECK(md <= 1e-3);
    free(t.mem);
    free(base.mem);
    timg_free(&a);
    timg_free(&b);
    timg_free(&c);
  }
}

/* Every refused input: NN_ERR_INVALID_ARG, a message, nothing written. */
static void test_errors(void) {
  timg im;
  timg_make(&im, NN_PIX_NV12, 16, 8, 0);
  nn_image_params p;
  nn_image_params_init(&p);
  tdst d;
  tdst_make(&d, NN_DTYPE_FLOAT, NN_LAYOUT_NCHW, 3, 8, 8, 2);
  nn_image_geometry geo;
  memset(&geo, 0x3C, sizeof geo);
  const nn_image_geometry geo0 = geo;
  int n_cases = 0;
#define EXPECT_BAD(what, ...)                                                              \
  do {                                                                                     \
    nn_image ii = im.im;                                                                   \
    nn_image_params pp = p;                                                                \
    nn_image_dest dd = d.d;                                                                \
    nn_image_converter *cc = g_cv;                                                         \
    nn_error err = {0, ""};                                                                \
    __VA_ARGS__;                                                                           \
    nn_status st = nn_image_convert(cc, &ii, &pp, &dd, NULL, &geo, &err);                  \
    n_cases++;                                                                             \
    if (st != NN_ERR_INVALID_ARG || !strstr(err.msg, what)) {                              \
      fprintf(stderr, "  %s:%d: case '%s': %s '%s'\n", __FILE__, __LINE__, what,          \
              nn_status_str(st), err.msg);                                                 \
      t_failed = 1;                                                                        \
    }                                                                                      \
    for (size_t i = 0; i < d.d.nbytes; i++)                                                \
      if (((uint8_t *)d.mem)[i] != 0xA5) {                                                 \
        fprintf(stderr, "  case '%s' wrote the tensor\n", what);                          \
        t_failed = 1;                                                                      \
        break;                                                                             \
      }                                                                                    \
    CHECK(memcmp(&geo, &geo0, sizeof geo) == 0);                                           \
  } while (0)
  EXPECT_BAD("converter", cc = NULL);
  EXPECT_BAD("format", ii.format = NN_PIX_COUNT);
  EXPECT_BAD("format", ii.format = (nn_pixel_format)-3);
  EXPECT_BAD("width", ii.width = 0);
  EXPECT_BAD("width", ii.height = -5);
  EXPECT_BAD("width", ii.width = 1 << 20);
  EXPECT_BAD("width", ii.height = 70000);
  EXPECT_BAD("planes[0]", ii.planes[0] = NULL);
  EXPECT_BAD("planes[1]", ii.planes[1] = NULL);
  EXPECT_BAD("strides[0]", ii.strides[0] = 15);
  EXPECT_BAD("strides[1]", ii.strides[1] = 15);
  EXPECT_BAD("strides[0]", ii.strides[0] = -16);
  EXPECT_BAD("strides[0]", ii.strides[0] = 0);
  EXPECT_BAD("matrix", ii.matrix = (nn_yuv_matrix)7);
  EXPECT_BAD("range", ii.range = (nn_yuv_range)-1);
  EXPECT_BAD("dtype", dd.dtype = NN_DTYPE_INT32);
  EXPECT_BAD("dtype", dd.dtype = (nn_dtype)99);
  EXPECT_BAD("layout", dd.layout = (nn_tensor_layout)2);
  EXPECT_BAD("channels", dd.channels = 2);
  EXPECT_BAD("channels", dd.channels = 0);
  EXPECT_BAD("channels", dd.channels = 5);
  EXPECT_BAD("dst.width", dd.width = 0);
  EXPECT_BAD("dst.width", dd.height = -1);
  EXPECT_BAD("dst.width", dd.width = 1 << 30);
  EXPECT_BAD("dst.width", dd.width = INT32_MAX, dd.height = INT32_MAX);
  EXPECT_BAD("batch_index", dd.batch_index = -1);
  EXPECT_BAD("nbytes", dd.batch_index = 2);
  EXPECT_BAD("nbytes", dd.batch_index = INT32_MAX);
  EXPECT_BAD("nbytes", dd.nbytes = 8 * 8 * 3 * 4 - 1);
  EXPECT_BAD("nbytes", dd.nbytes = 0);
  EXPECT_BAD("nbytes", dd.width = 32768, dd.height = 32768, dd.channels = 4);
  EXPECT_BAD("dst.data", dd.data = NULL);
  EXPECT_BAD("mode", pp.mode = (nn_resize_mode)3);
  EXPECT_BAD("std[1]", pp.std[1] = 0);
  EXPECT_BAD("std[2]", pp.std[2] = NAN);
  EXPECT_BAD("std[0]", pp.std[0] = INFINITY);
  EXPECT_BAD("std[0]", pp.std[0] = 1e-45f);
  EXPECT_BAD("mean[2]", pp.mean[2] = -INFINITY);
  EXPECT_BAD("pad_value", pp.pad_value = NAN);
  EXPECT_BAD("src", pp.src.x = NAN);
  EXPECT_BAD("src", pp.src.y = INFINITY);
  EXPECT_BAD("src", pp.src.width = NAN, pp.src.height = 4);
  EXPECT_BAD("src", pp.src.height = -INFINITY);
  EXPECT_BAD("src", pp.src = (nn_rect){1e10, 0, 4, 4});
  EXPECT_BAD("src", pp.src = (nn_rect){0, 0, 4, 1e12});
  EXPECT_BAD("src", pp.src = (nn_rect){0, 0, 1e-4, 4});
  EXPECT_BAD("params.angle", pp.angle = NAN);
  EXPECT_BAD("params.angle", pp.angle = INFINITY);
  EXPECT_BAD("params.angle", pp.angle = -INFINITY, pp.src = (nn_rect){1, 1, 4, 4});
  EXPECT_BAD("params.content", pp.content.x = NAN);
  EXPECT_BAD("params.content", pp.content.height = INFINITY);
  EXPECT_BAD("params.content", pp.content = (nn_rect){0, 0, 9, 8});
  EXPECT_BAD("params.content", pp.content = (nn_rect){0, 0.5, 8, 8}, pp.angle = 30);
  EXPECT_BAD("params.content", pp.content = (nn_rect){-1, 0, 4, 4});
  EXPECT_BAD("params.content", pp.content = (nn_rect){0, 0, 1e-4, 4});
#undef EXPECT_BAD
  CHECK(n_cases > 40);
  /* std of a channel the tensor does not have is not looked at */
  p.std[3] = 0;
  CHECK_ST(conv(&im, &p, &d, NULL), NN_OK);
  /* NULL arguments elsewhere */
  CHECK_ST(nn_image_convert(g_cv, NULL, &p, &d.d, NULL, NULL, NULL), NN_ERR_INVALID_ARG);
  nn_error e2;
  CHECK_ST(nn_image_convert(g_cv, &im.im, &p, NULL, NULL, NULL, &e2), NN_ERR_INVALID_ARG);
  CHECK(strstr(e2.msg, "dst") != NULL);
  CHECK_ST(nn_image_converter_new(NULL), NN_ERR_INVALID_ARG);
  nn_image_converter_free(NULL);
  CHECK_ST(nn_image_geometry_compute(NULL, &p, 8, 8, &geo), NN_ERR_INVALID_ARG);
  CHECK_ST(nn_image_geometry_compute(&im.im, &p, 0, 8, &geo), NN_ERR_INVALID_ARG);
  CHECK_ST(nn_image_geometry_compute(&im.im, &p, 8, 8, NULL), NN_ERR_INVALID_ARG);
  p.src.x = NAN;
  CHECK_ST(nn_image_geometry_compute(&im.im, &p, 8, 8, &geo), NN_ERR_INVALID_ARG);
  p.src.x = 0;
  p.angle = NAN;
  CHECK_ST(nn_image_geometry_compute(&im.im, &p, 8, 8, &geo), NN_ERR_INVALID_ARG);
  p.angle = 0;
  p.content = (nn_rect){4, 4, 4, 5};
  CHECK_ST(nn_image_geometry_compute(&im.im, &p, 8, 8, &geo), NN_ERR_INVALID_ARG);
  free(d.mem);
  timg_free(&im);
}

/* Extremes that must work without huge tables: a 1x1 source rect into a
 * 4096x4096 tensor, an 8192x8192 image into 1x1. */
static void test_extremes(void) {
  timg im;
  make_ramp(&im, 100, 4, 0);
  nn_image_params p;
  nn_image_params_init(&p);
  p.src = (nn_rect){10, 1, 1, 1};
  tdst d;
  tdst_make(&d, NN_DTYPE_FLOAT, NN_LAYOUT_NCHW, 1, 4096, 4096, 1);
  CHECK_ST(conv(&im, &p, &d, NULL), NN_OK);
  /* bilinear from sample position 10 + (x + 0.5) / 4096 - 0.5 */
  for (int x = 0; x < 4096; x += 273)
    CHECK_NEAR(tval(&d, 0, 4095 - x, x), 9.5 + (x + 0.5) / 4096, 1e-4);
  free(d.mem);
  timg_free(&im);

  timg_make(&im, NN_PIX_GRAY8, 8192, 8192, 0);
  for (int y = 0; y < 8192; y++)
    memset(im.buf[0] + (size_t)y * 8192, y & 1 ? 200 : 100, 8192);
  tdst_make(&d, NN_DTYPE_FLOAT, NN_LAYOUT_NCHW, 3, 1, 1, 1);
  CHECK_ST(conv(&im, NULL, &d, NULL), NN_OK);
  CHECK_NEAR(tval(&d, 0, 0, 0), 150.0, 1e-2);
  free(d.mem);
  timg_free(&im);
}

/* The second identical conversion (and any smaller one) allocates nothing;
 * a threaded one neither. */
static void test_no_alloc(nn_session *s2) {
  timg im;
  timg_make(&im, NN_PIX_NV12, 1920, 1080, 0);
  nn_image_params p;
  nn_image_params_init(&p);
  p.mode = NN_RESIZE_LETTERBOX;
  tdst d;
  tdst_make(&d, NN_DTYPE_FLOAT, NN_LAYOUT_NHWC, 3, 320, 320, 1);
  nn_image_converter *cv = NULL;
  CHECK_ST(nn_image_converter_new(&cv), NN_OK);
  nn_error err;
  CHECK_ST(nn_image_convert(cv, &im.im, &p, &d.d, s2, NULL, &err), NN_OK);
  long before = g_allocs;
  CHECK_ST(nn_image_convert(cv, &im.im, &p, &d.d, s2, NULL, &err), NN_OK);
  CHECK_ST(nn_image_convert(cv, &im.im, &p, &d.d, NULL, NULL, &err), NN_OK);
  /* smaller tables and rows: reused */
  p.mode = NN_RESIZE_STRETCH;
  d.d.width = 200;
  d.d.height = 100;
  CHECK_ST(nn_image_convert(cv, &im.im, &p, &d.d, s2, NULL, &err), NN_OK);
  if (g_allocs != before)
    fprintf(stderr, "  %ld allocations on repeated conversions\n", g_allocs - before);
  CHECK(g_allocs == before);
  nn_image_converter_free(cv);
  free(d.mem);
  timg_free(&im);
}

/* ---- turned rects and explicit content ------------------------------------------- */

static const double k_pi = 3.14159265358979323846;

/* Element (c, y, x) of a 1:1 copy turned by a quarter turn q (1: 90
 * degrees) of the axis-aligned result b (bw x bh): the rect's centre stays,
 * its frame turns, so the tensor of a 90 degree turn shows b transposed
 * and flipped. */
static float quarter_of(const tdst *b, int q, int c, int y, int x) {
  const int bw = b->d.width, bh = b->d.height;
  switch (q) {
  case 1: return tval(b, c, x, bw - 1 - y); /* b is h x w: B[tx][h-1-ty] */
  case 2: return tval(b, c, bh - 1 - y, bw - 1 - x);
  default: return tval(b, c, bh - 1 - x, y); /* 270: B[w-1-tx][ty] */
  }
}

/* angle 180 at 1:1 is the axis-aligned result turned by 180 degrees, and
 * 90 / 270 the transposed-and-flipped result of the swapped rect: every
 * format (chroma on its own grid), odd and even sizes, rects inside, at
 * fractional positions and reaching outside the image. */
static void test_turn_quarters(void) {
  const int sizes[][2] = {{37, 23}, {40, 24}};
  const nn_rect rects[] = {{3, 2, 21, 13},
                           {4, 2, 20, 12},
                           {2.5, 1.25, 17, 11},
                           {-3, -2, 19, 14},
                           {0, 0, 0, 0}};
  double worst = 0;
  for (int fi = 0; fi < N_FMTS; fi++)
    for (int si = 0; si < 2; si++) {
      const fmt_info *f = &g_info[fi];
      timg im;
      timg_make(&im, f->f, sizes[si][0], sizes[si][1], si * 3);
      im.im.matrix = (nn_yuv_matrix)(fi % 3);
      im.im.range = (nn_yuv_range)(si & 1);
      for (int ri = 0; ri < 5; ri++) {
        const nn_rect r = rects[ri];
        const int w = r.width > 0 ? (int)r.width : im.im.width;
        const int h = r.width > 0 ? (int)r.height : im.im.height;
        const double cx = r.width > 0 ? r.x + r.width / 2 : w / 2.0;
        const double cy = r.width > 0 ? r.y + r.height / 2 : h / 2.0;
        const int C = ri == 2 ? 1 : 4;
        nn_image_params p;
        nn_image_params_init(&p);
        p.src = r;
        tdst base, turned;
        tdst_make(&base, NN_DTYPE_FLOAT, NN_LAYOUT_NCHW, C, w, h, 1);
        CHECK_ST(conv(&im, &p, &base, NULL), NN_OK);
        /* 180, and -180 (the same after normalising) */
        for (int k = 0; k < 2; k++) {
          p.angle = k ? -180.0 : 180.0;
          tdst_make(&turned, NN_DTYPE_FLOAT, k ? NN_LAYOUT_NHWC : NN_LAYOUT_NCHW, C, w, h, 1);
          nn_image_geometry geo;
          CHECK_ST(conv(&im, &p, &turned, &geo), NN_OK);
          CHECK(geo.angle == 180.0);
          for (int c = 0; c < C; c++)
            for (int y = 0; y < h; y++)
              for (int x = 0; x < w; x++)
                worst = fmax(worst, fabs(tval(&turned, c, y, x) - quarter_of(&base, 2, c, y, x)));
          free(turned.mem);
        }
        /* 90 and 270 (= -90) against the swapped rect, h x w */
        nn_image_params q;
        nn_image_params_init(&q);
        q.src = (nn_rect){cx - h / 2.0, cy - w / 2.0, h, w};
        tdst swapped;
        tdst_make(&swapped, NN_DTYPE_FLOAT, NN_LAYOUT_NCHW, C, h, w, 1);
        CHECK_ST(conv(&im, &q, &swapped, NULL), NN_OK);
        p.src = (nn_rect){cx - w / 2.0, cy - h / 2.0, w, h};
        for (int k = 0; k < 2; k++) {
          p.angle = k ? -90.0 : 90.0;
          tdst_make(&turned, NN_DTYPE_FLOAT, NN_LAYOUT_NCHW, C, w, h, 1);
          nn_image_geometry geo;
          CHECK_ST(conv(&im, &p, &turned, &geo), NN_OK);
          CHECK(geo.angle == (k ? 270.0 : 90.0));
          for (int c = 0; c < C; c++)
            for (int y = 0; y < h; y++)
              for (int x = 0; x < w; x++)
                worst = fmax(worst, fabs(tval(&turned, c, y, x) -
                                         quarter_of(&swapped, k ? 3 : 1, c, y, x)));
          free(turned.mem);
        }
        free(swapped.mem);
        free(base.mem);
      }
      timg_free(&im);
    }
  if (worst > 1e-3)
    fprintf(stderr, "  quarter turns: max |diff| %g\n", worst);
  CHECK(worst <= 1e-3);
  /* a full turn is no turn: the axis-aligned path, bit for bit */
  timg im;
  timg_make(&im, NN_PIX_NV12, 50, 30, 0);
  nn_image_params p;
  nn_image_params_init(&p);
  p.src = (nn_rect){3.25, 1.5, 31, 17};
  tdst a, b;
  tdst_make(&a, NN_DTYPE_FLOAT, NN_LAYOUT_NCHW, 3, 20, 9, 1);
  tdst_make(&b, NN_DTYPE_FLOAT, NN_LAYOUT_NCHW, 3, 20, 9, 1);
  CHECK_ST(conv(&im, &p, &a, NULL), NN_OK);
  p.angle = -720.0;
  nn_image_geometry geo;
  CHECK_ST(conv(&im, &p, &b, &geo), NN_OK);
  CHECK(geo.angle == 0.0 && !signbit(geo.angle));
  CHECK(memcmp(a.mem, b.mem, a.d.nbytes) == 0);
  free(a.mem);
  free(b.mem);
  timg_free(&im);
}

/* Bilinear sample of byte `off` of the bpp-byte pixels of a packed image
 * at image point (px, py), pixel centres at i + 0.5, out-of-image indices
 * clamped to the edge: the textbook definition, in double. */
static double ref_bilinear(const timg *im, int off, int bpp, double px, double py) {
  const int w = im->im.width, h = im->im.height;
  const double gx = px - 0.5, gy = py - 0.5;
  const double x0 = floor(gx), y0 = floor(gy), fx = gx - x0, fy = gy - y0;
  double v[2][2];
  for (int j = 0; j < 2; j++)
    for (int i = 0; i < 2; i++) {
      const double xi = x0 + i, yj = y0 + j;
      const int xc = xi < 0 ? 0 : xi > w - 1 ? w - 1 : (int)xi;
      const int yc = yj < 0 ? 0 : yj > h - 1 ? h - 1 : (int)yj;
      v[j][i] = im->buf[0][(size_t)yc * im->im.strides[0] + (size_t)xc * bpp + off];
    }
  return (1 - fy) * ((1 - fx) * v[0][0] + fx * v[0][1]) + fy * ((1 - fx) * v[1][0] + fx * v[1][1]);
}

/* Tensor pixel (tx, ty) of rect r turned by deg degrees, stretched onto
 * the content rect at (ox, oy) of cw x ch, by the definition of nn_image.h
 * written out independently: from the turned rect's first corner along its
 * own axes, the mean of n x m bilinear samples spread over the pixel. */
static double ref_turned(const timg *im, int off, int bpp, nn_rect r, double deg, double ox,
                         double oy, double cw, double ch, int tx, int ty) {
  const double a = deg * k_pi / 180.0, ca = cos(a), sa = sin(a);
  const double fx = r.width / cw, fy = r.height / ch; /* image pixels a tensor pixel */
  const int n = fx > 1 ? (int)fmin(ceil(fx), 8) : 1, m = fy > 1 ? (int)fmin(ceil(fy), 8) : 1;
  /* corner (0, 0) of the rect's frame: the centre minus half of each axis */
  const double kx = r.x + r.width / 2 - ca * r.width / 2 + sa * r.height / 2;
  const double ky = r.y + r.height / 2 - sa * r.width / 2 - ca * r.height / 2;
  double s = 0;
  for (int j = 0; j < m; j++)
    for (int i = 0; i < n; i++) {
      const double ux = (tx + (i + 0.5) / n - ox) * fx, uy = (ty + (j + 0.5) / m - oy) * fy;
      s += ref_bilinear(im, off, bpp, kx + ux * ca - uy * sa, ky + ux * sa + uy * ca);
    }
  return s / (n * m);
}

/* Arbitrary angles against ref_turned on RGB: up- and downscaling, the
 * strong downscale that averages 8 x 8 samples, mean/std and BGR, uint8,
 * and 2 threads equal to 1 bit for bit. */
static void test_turn_reference(nn_session *s2) {
  typedef struct {
    int iw, ih;
    nn_rect r;
    double deg;
    int dw, dh;
  } tcase;
  const tcase cases[] = {
    {120, 80, {30.3, 20.7, 50, 18}, 17.5, 60, 22}, /* upscale: n = m = 1 */
    {120, 80, {30.3, 20.7, 50, 18}, 17.5, 25, 9},  /* 2 x 2 samples */
    {120, 80, {10, 30, 70, 21}, -33.25, 23, 6},    /* 4 x 4, reaching outside */
    {480, 300, {40, 120, 400, 60}, 20.0, 40, 6},   /* f = 10: 8 x 8 */
    {64, 64, {-20, 50, 40, 30}, 123.0, 13, 37},    /* mostly outside: edge pixels */
    {200, 100, {60, 30, 70, 7}, 359.0, 70, 48},    /* anisotropic up, near 0 */
  };
  double worst = 0;
  for (int ci = 0; ci < 6; ci++) {
    const tcase *t = &cases[ci];
    timg im;
    timg_make(&im, NN_PIX_RGB, t->iw, t->ih, ci);
    nn_image_params p;
    nn_image_params_init(&p);
    p.src = t->r;
    p.angle = t->deg;
    p.bgr = ci & 1;
    const float mean[3] = {10, 127.5f, 200}, sd[3] = {1, 127.5f, -2};
    for (int c = 0; c < 3; c++) {
      p.mean[c] = ci >= 2 ? mean[c] : 0;
      p.std[c] = ci >= 2 ? sd[c] : 1;
    }
    tdst d, d2, u;
    tdst_make(&d, NN_DTYPE_FLOAT, (nn_tensor_layout)(ci & 1), 3, t->dw, t->dh, 1);
    tdst_make(&d2, NN_DTYPE_FLOAT, (nn_tensor_layout)(ci & 1), 3, t->dw, t->dh, 1);
    nn_image_geometry geo;
    CHECK_ST(conv(&im, &p, &d, &geo), NN_OK);
    CHECK_NEAR(geo.angle, t->deg < 0 ? t->deg + 360 : t->deg, 1e-12);
    CHECK(geo.scale_x == t->dw / t->r.width && geo.scale_y == t->dh / t->r.height);
    CHECK(geo.offset_x == 0 && geo.offset_y == 0 && geo.src_x == t->r.x);
    nn_error err;
    CHECK_ST(nn_image_convert(g_cv, &im.im, &p, &d2.d, s2, NULL, &err), NN_OK);
    CHECK(memcmp(d.mem, d2.mem, d.d.nbytes) == 0);
    double md = 0;
    for (int y = 0; y < t->dh; y++)
      for (int x = 0; x < t->dw; x++)
        for (int c = 0; c < 3; c++) {
          const int col = p.bgr ? 2 - c : c; /* R, G, B at bytes 0, 1, 2 */
          double v = ref_turned(&im, col, 3, t->r, t->deg, 0, 0, t->dw, t->dh, x, y);
          /* in 0..255 units: the tensor holds (v - mean) / std */
          md = fmax(md, fabs(tval(&d, c, y, x) * p.std[c] + p.mean[c] - v));
        }
    if (md > 1e-3)
      fprintf(stderr, "  turned case %d: max |err| %g\n", ci, md);
    worst = fmax(worst, md);
    /* uint8: the float result rounded */
    p.mean[0] = p.mean[1] = p.mean[2] = 0;
    p.std[0] = p.std[1] = p.std[2] = 1;
    tdst_make(&u, NN_DTYPE_UINT8, NN_LAYOUT_NHWC, 3, t->dw, t->dh, 1);
    CHECK_ST(conv(&im, &p, &u, NULL), NN_OK);
    int bad = 0;
    for (int y = 0; y < t->dh; y++)
      for (int x = 0; x < t->dw; x++)
        for (int c = 0; c < 3; c++) {
          const double v = ref_turned(&im, p.bgr ? 2 - c : c, 3, t->r, t->deg, 0, 0, t->dw, t->dh,
                                      x, y);
          bad += fabs(tval(&u, c, y, x) - floor(v + 0.5)) > (fabs(v - floor(v) - 0.5) < 1e-3);
        }
    CHECK(bad == 0);
    free(u.mem);
    free(d.mem);
    free(d2.mem);
    timg_free(&im);
  }
  printf("  turned rects vs reference: max |diff| %.3g (0..255 units)\n", worst);
  CHECK(worst <= 1e-3);
}

/* A turned rect of a uniform image is that colour everywhere, in every
 * format and channel count, even reaching far outside the image. */
static void test_turn_formats(void) {
  for (int fi = 0; fi < N_FMTS; fi++) {
    const fmt_info *f = &g_info[fi];
    timg im;
    timg_make(&im, f->f, 33, 19, fi & 3);
    if (f->yuv) {
      timg_fill_yuv(&im, 235, 128, 128);
    } else {
      for (int p = 0; p < 3; p++)
        if (im.buf[p])
          memset(im.buf[p], 77, (size_t)im.im.strides[p] * im.rows[p]);
    }
    const float want = f->yuv ? 255.0f : 77.0f;
    nn_image_params p;
    nn_image_params_init(&p);
    p.src = (nn_rect){-10.5, 4, 50, 9};
    p.angle = 41.0 + fi;
    for (int C = 1; C <= 4; C++) {
      if (C == 2)
        continue;
      tdst d;
      tdst_make(&d, NN_DTYPE_FLOAT, NN_LAYOUT_NHWC, C, 17, 11, 1);
      CHECK_ST(conv(&im, &p, &d, NULL), NN_OK);
      float md = 0;
      for (size_t i = 0; i < d.d.nbytes / 4; i++) {
        const int c = (int)(i % C);
        const float w = C == 4 && c == 3 ? (f->a >= 0 ? 77.0f : 255.0f) : want;
        md = fmaxf(md, fabsf(((float *)d.mem)[i] - w));
      }
      if (md > 1e-3f)
        fprintf(stderr, "  turned %s C=%d: max err %g\n", nn_pixel_format_name(f->f), C, md);
      CHECK(md <= 1e-3f);
      free(d.mem);
    }
    timg_free(&im);
  }
}

/* params.content: the PaddleOCR fit (height 48, width from the aspect
 * ratio, left-aligned, padding on the right). */
static void test_content(void) {
  timg im;
  timg_make(&im, NN_PIX_RGB, 100, 20, 2);
  nn_image_params p;
  nn_image_params_init(&p);
  p.content = (nn_rect){0, 0, 240, 48};
  p.mode = NN_RESIZE_LETTERBOX; /* ignored */
  p.pad_value = 0;
  for (int c = 0; c < 3; c++) {
    p.mean[c] = 127.5f;
    p.std[c] = 127.5f;
  }
  const float pad = (0.0f - 127.5f) * (1.0f / 127.5f);
  nn_image_params q = p;
  q.content = (nn_rect){0, 0, 0, 0};
  q.mode = NN_RESIZE_STRETCH;
  for (int turned = 0; turned < 2; turned++) {
    p.angle = q.angle = turned ? 7.5 : 0;
    for (int lay = 0; lay < 2; lay++) {
      tdst d, s;
      tdst_make(&d, NN_DTYPE_FLOAT, (nn_tensor_layout)lay, 3, 320, 48, 1);
      tdst_make(&s, NN_DTYPE_FLOAT, NN_LAYOUT_NCHW, 3, 240, 48, 1);
      nn_image_geometry geo, geo2;
      CHECK_ST(conv(&im, &p, &d, &geo), NN_OK);
      CHECK_ST(conv(&im, &q, &s, NULL), NN_OK);
      CHECK(geo.scale_x == 2.4 && geo.scale_y == 2.4 && geo.offset_x == 0 && geo.offset_y == 0);
      CHECK(geo.content_x == 0 && geo.content_y == 0 && geo.content_width == 240 &&
            geo.content_height == 48 && geo.angle == p.angle);
      CHECK(geo.src_x == 0 && geo.src_width == 100 && geo.src_height == 20);
      CHECK_ST(nn_image_geometry_compute(&im.im, &p, 320, 48, &geo2), NN_OK);
      CHECK(memcmp(&geo, &geo2, sizeof geo) == 0);
      int bad_pad = 0;
      double md = 0;
      for (int c = 0; c < 3; c++)
        for (int y = 0; y < 48; y++)
          for (int x = 0; x < 320; x++) {
            if (x >= 240)
              bad_pad += tval(&d, c, y, x) != pad;
            else
              md = fmax(md, fabs(tval(&d, c, y, x) - tval(&s, c, y, x)));
          }
      CHECK(bad_pad == 0);
      CHECK(md <= 1e-6);
      free(d.mem);
      free(s.mem);
    }
  }
  /* an offset, fractional content rect on a ramp: the pixels whose centre
   * is inside are content, bilinear at the mapped centre; geometry says so */
  timg ramp;
  make_ramp(&ramp, 100, 20, 0);
  nn_image_params r;
  nn_image_params_init(&r);
  r.content = (nn_rect){10.5, 4, 200, 40.25};
  r.pad_value = 9;
  tdst d;
  tdst_make(&d, NN_DTYPE_FLOAT, NN_LAYOUT_NCHW, 1, 230, 48, 1);
  nn_image_geometry geo;
  CHECK_ST(conv(&ramp, &r, &d, &geo), NN_OK);
  CHECK(geo.scale_x == 2 && geo.scale_y == 40.25 / 20 && geo.offset_x == 10.5 &&
        geo.offset_y == 4 && geo.content_x == 10.5 && geo.content_height == 40.25);
  for (int x = 0; x < 230; x++) {
    const int inside = x + 0.5 >= 10.5 && x + 0.5 < 210.5;
    for (int y = 0; y < 48; y++) {
      const int in = inside && y >= 4 && y + 0.5 < 44.25;
      if (!in)
        CHECK(tval(&d, 0, y, x) == 9.0f);
    }
    /* centre x + 0.5 -> image (x + 0.5 - 10.5) / 2, sample (x - 10) / 2 - 0.5 */
    const double v = (x - 10) / 2.0 - 0.5;
    if (inside && v >= 0 && v <= 99)
      CHECK_NEAR(tval(&d, 0, 20, x), v, 2e-3);
  }
  /* width <= 0: off (the mode decides, x and y ignored) */
  tdst e;
  tdst_make(&e, NN_DTYPE_FLOAT, NN_LAYOUT_NCHW, 1, 230, 48, 1);
  r.content = (nn_rect){0, 0, 0, 0};
  CHECK_ST(conv(&ramp, &r, &d, NULL), NN_OK);
  r.content = (nn_rect){500, -7, -1, 10};
  CHECK_ST(conv(&ramp, &r, &e, &geo), NN_OK);
  CHECK(memcmp(d.mem, e.mem, d.d.nbytes) == 0);
  CHECK(geo.content_width == 230 && geo.offset_x == 0);
  /* the whole tensor is allowed; beyond it is not */
  r.content = (nn_rect){0, 0, 230, 48};
  CHECK_ST(conv(&ramp, &r, &e, NULL), NN_OK);
  CHECK(memcmp(d.mem, e.mem, d.d.nbytes) == 0);
  const nn_rect outside[] = {{0, 0, 231, 48},
                             {-0.5, 0, 10, 10},
                             {0, 40, 10, 8.5},
                             {225, 0, 5.001, 1}};
  for (int i = 0; i < 4; i++) {
    r.content = outside[i];
    nn_error err = {0, ""};
    memset(e.mem, 0xA5, e.d.nbytes);
    CHECK_ST(nn_image_convert(g_cv, &ramp.im, &r, &e.d, NULL, NULL, &err), NN_ERR_INVALID_ARG);
    CHECK(strstr(err.msg, "params.content") != NULL && strstr(err.msg, "inside") != NULL);
    CHECK(((uint8_t *)e.mem)[0] == 0xA5);
    CHECK_ST(nn_image_geometry_compute(&ramp.im, &r, 230, 48, &geo), NN_ERR_INVALID_ARG);
  }
  free(d.mem);
  free(e.mem);
  timg_free(&ramp);
  timg_free(&im);
}

/* A repeated turned conversion allocates nothing (no tables; the rows are
 * the converter's scratch), threaded or not. */
static void test_turn_no_alloc(nn_session *s2) {
  timg im;
  timg_make(&im, NN_PIX_NV12, 1280, 720, 0);
  nn_image_params p;
  nn_image_params_init(&p);
  p.src = (nn_rect){300.5, 200.25, 600, 90};
  p.angle = -12.5;
  p.content = (nn_rect){0, 0, 300, 48};
  tdst d;
  tdst_make(&d, NN_DTYPE_FLOAT, NN_LAYOUT_NCHW, 3, 320, 48, 1);
  nn_image_converter *cv = NULL;
  CHECK_ST(nn_image_converter_new(&cv), NN_OK);
  nn_error err;
  CHECK_ST(nn_image_convert(cv, &im.im, &p, &d.d, s2, NULL, &err), NN_OK);
  long before = g_allocs;
  CHECK_ST(nn_image_convert(cv, &im.im, &p, &d.d, s2, NULL, &err), NN_OK);
  CHECK_ST(nn_image_convert(cv, &im.im, &p, &d.d, NULL, NULL, &err), NN_OK);
  /* another angle and a smaller content: reused */
  p.angle = 200;
  p.content.width = 100;
  CHECK_ST(nn_image_convert(cv, &im.im, &p, &d.d, s2, NULL, &err), NN_OK);
  if (g_allocs != before)
    fprintf(stderr, "  %ld allocations on repeated turned conversions\n", g_allocs - before);
  CHECK(g_allocs == before);
  nn_image_converter_free(cv);
  free(d.mem);
  timg_free(&im);
}

/* A random conversion into a random destination. */
typedef struct rcase {
  nn_pixel_format f;
  int w, h, dw, dh, C;
  nn_image_params p;
  nn_dtype dt;
  nn_tensor_layout lay;
} rcase;

static void rcase_make(rcase *c) {
  c->f = g_info[rnd() % N_FMTS].f;
  c->w = rnd_range(1, rnd() % 4 ? 300 : 2000);
  c->h = rnd_range(1, rnd() % 4 ? 200 : 1200);
  c->dw = rnd_range(1, 400);
  c->dh = rnd_range(1, 300);
  const int cs[3] = {1, 3, 4};
  c->C = cs[rnd() % 3];
  nn_image_params_init(&c->p);
  c->p.mode = (nn_resize_mode)(rnd() % 3);
  if (rnd() % 2)
    c->p.src = (nn_rect){rnd_range(-50, c->w) * 0.75, rnd_range(-50, c->h) * 0.75,
                         rnd_range(1, 2 * c->w) * 0.6, rnd_range(1, 2 * c->h) * 0.6};
  c->p.pad_value = (float)rnd_range(0, 255);
  c->p.bgr = rnd() % 2;
  for (int i = 0; i < 4; i++) {
    c->p.mean[i] = (float)rnd_range(0, 255);
    c->p.std[i] = (float)rnd_range(1, 100);
  }
  c->dt = rnd() % 2 ? NN_DTYPE_FLOAT : NN_DTYPE_UINT8;
  c->lay = (nn_tensor_layout)(rnd() % 2);
  /* now and then a turned rect, an explicit content rect, or both */
  if (rnd() % 4 == 0)
    c->p.angle = rnd_range(-1000, 1000) * 0.37;
  if (rnd() % 4 == 0) {
    const double x = rnd_range(0, c->dw - 1) * 0.5, y = rnd_range(0, c->dh - 1) * 0.5;
    c->p.content = (nn_rect){x, y, (c->dw - x) * rnd_range(1, 100) / 100.0,
                             (c->dh - y) * rnd_range(1, 100) / 100.0};
  }
}

static void test_paths_and_threads(nn_session *s2) {
  nn_image_converter *cv2 = NULL;
  CHECK_ST(nn_image_converter_new(&cv2), NN_OK);
  const int had_simd = nn_image_simd_get();
  nn_image_simd_set(1);
  const int have_simd = nn_image_simd_get();   /* whatever NN_CPU says */
  double worst_simd = 0;
  int worst_u8 = 0;
  for (int it = 0; it < 120; it++) {
    rcase c;
    rcase_make(&c);
    timg im;
    timg_make(&im, c.f, c.w, c.h, rnd() % 9);
    im.im.matrix = (nn_yuv_matrix)(rnd() % 3);
    im.im.range = (nn_yuv_range)(rnd() % 2);
    tdst a, b, t;
    tdst_make(&a, c.dt, c.lay, c.C, c.dw, c.dh, 1);
    tdst_make(&b, c.dt, c.lay, c.C, c.dw, c.dh, 1);
    tdst_make(&t, c.dt, c.lay, c.C, c.dw, c.dh, 1);
    nn_error err;
    nn_image_simd_set(1);
    CHECK_ST(nn_image_convert(g_cv, &im.im, &c.p, &a.d, NULL, NULL, &err), NN_OK);
    /* 2 threads, another converter: the same bits */
    CHECK_ST(nn_image_convert(cv2, &im.im, &c.p, &t.d, s2, NULL, &err), NN_OK);
    CHECK(memcmp(a.mem, t.mem, a.d.nbytes) == 0);
    nn_image_simd_set(0);
    CHECK_ST(nn_image_convert(g_cv, &im.im, &c.p, &b.d, NULL, NULL, &err), NN_OK);
    CHECK_ST(nn_image_convert(cv2, &im.im, &c.p, &t.d, s2, NULL, &err), NN_OK);
    CHECK(memcmp(b.mem, t.mem, b.d.nbytes) == 0);
    /* portable vs SIMD: FMA rounding only (in 0..255 units) */
    const size_t n = a.d.nbytes / nn_dtype_size(c.dt);
    for (size_t i = 0; i < n; i++) {
      if (c.dt == NN_DTYPE_FLOAT) {
        const int ch = c.lay == NN_LAYOUT_NCHW ? (int)(i / ((size_t)c.dw * c.dh)) : (int)(i % c.C);
        double e = fabs(((float *)a.mem)[i] - ((float *)b.mem)[i]) * c.p.std[ch];
        worst_simd = fmax(worst_simd, e);
      } else {
        int e = abs((int)((uint8_t *)a.mem)[i] - (int)((uint8_t *)b.mem)[i]);
        worst_u8 = e > worst_u8 ? e : worst_u8;
      }
    }
    free(a.mem);
    free(b.mem);
    free(t.mem);
    timg_free(&im);
  }
  nn_image_simd_set(had_simd);
  printf("  portable vs %s: max |diff| %.3g (float, 0..255 units), %d (uint8)\n",
         have_simd ? "avx2" : "portable (no SIMD kernels here)", worst_simd, worst_u8);
  CHECK(worst_simd <= 1e-3);
  CHECK(worst_u8 <= 1);
  nn_image_converter_free(cv2);
}

/* The disposed worker session is an error, not a crash. */
static void test_disposed(nn_session *s) {
  timg im;
  timg_make(&im, NN_PIX_RGB, 8, 8, 0);
  tdst d;
  tdst_make(&d, NN_DTYPE_FLOAT, NN_LAYOUT_NCHW, 3, 4, 4, 1);
  nn_session_dispose(s);
  nn_error err;
  CHECK_ST(nn_image_convert(g_cv, &im.im, NULL, &d.d, s, NULL, &err), NN_ERR_DISPOSED);
  CHECK(((uint8_t *)d.mem)[0] == 0xA5);
  free(d.mem);
  timg_free(&im);
}

static nn_session *threaded_session(int threads) {
  nn_error err;
  nn_session *s = mb_worker_session(threads, &err);
  if (!s)
    fprintf(stderr, "  session: %s\n", err.msg);
  return s;
}

#define RUN(fn, ...)                                                                  \
  do {                                                                                \
    t_failed = 0;                                                                     \
    fn(__VA_ARGS__);                                                                  \
    printf("%s %s\n", t_failed ? "FAIL" : "ok  ", #fn);                                \
    if (t_failed)                                                                     \
      g_failed++;                                                                     \
    else                                                                              \
      g_passed++;                                                                     \
  } while (0)

int main(void) {
  nn_allocator a = {count_malloc, count_realloc, count_free, NULL};
  if (nn_set_allocator(&a) != NN_OK) {
    fprintf(stderr, "cannot install the counting allocator\n");
    return 1;
  }
  size_t live0;
  nn_memory_usage(&live0, NULL);
  if (nn_image_converter_new(&g_cv) != NN_OK)
    return 1;
  nn_session *s2 = threaded_session(2);
  if (!s2 || nn_session_parallel_width(s2) != 2) {
    fprintf(stderr, "no 2-thread session\n");
    return 1;
  }
  printf("image kernels: %s\n", nn_image_simd_get() ? "avx2" : "portable");
  RUN(test_names);
  RUN(test_identity);
  RUN(test_yuv_values);
  RUN(test_ramps);
  RUN(test_letterbox_crop);
  RUN(test_outside);
  RUN(test_sizes);
  RUN(test_variants);
  RUN(test_errors);
  RUN(test_extremes);
  RUN(test_no_alloc, s2);
  RUN(test_turn_quarters);
  RUN(test_turn_reference, s2);
  RUN(test_turn_formats);
  RUN(test_content);
  RUN(test_turn_no_alloc, s2);
  RUN(test_paths_and_threads, s2);
  RUN(test_disposed, s2);
  nn_session_free(s2);
  nn_image_converter_free(g_cv);
  size_t live1;
  nn_memory_usage(&live1, NULL);
  t_failed = live1 != live0;
  printf("%s no leak (%zu bytes live)\n", t_failed ? "FAIL" : "ok  ", live1 - live0);
  g_failed += t_failed;
  g_passed += !t_failed;
  printf("%d passed, %d failed\n", g_passed, g_failed);
  return g_failed ? 1 : 0;
}

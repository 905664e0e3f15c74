/* draw.c - boxes, polygons, dots and text labels on raw video frames.
 *
 * Shapes are drawn straight into the frame's planes (no conversion of the
 * frame), so one code path serves the packed RGB family and the two 4:2:0
 * YUV layouts.  YUV colors use BT.601 limited range, what videoconvert
 * produces for SD/web content by default.  In 4:2:0 a chroma sample is
 * written when its 2x2 block touches the shape, so 1-pixel lines may bleed
 * color by one pixel; roioverlay draws 2+ pixel lines.
 *
 * Text goes through pango (layout, shaping, font fallback) rendered by
 * cairo into a small ARGB32 surface per distinct label, cached, then
 * alpha-blended.  On RGBA/BGRA frames drawing is "over": the alpha channel
 * becomes opaque where shapes are drawn, so an overlay drawn on a
 * transparent canvas can be composited on another stream.
 */
#include <stdio.h>
#include <stdlib.h>

#include <cairo.h>
#include <pango/pangocairo.h>

#include "decode_internal.h"

/* ---- pixel layouts ---------------------------------------------------------- */

typedef struct {
  int bpp;                     /* bytes per pixel; 0 for planar YUV */
  int r, g, b, a;              /* byte offsets, a = -1 when there is no alpha */
} rgb_layout;

static int layout_of(nd_pixfmt f, rgb_layout *l) {
  switch (f) {
    case ND_FMT_RGB: *l = (rgb_layout){3, 0, 1, 2, -1}; return 1;
    case ND_FMT_BGR: *l = (rgb_layout){3, 2, 1, 0, -1}; return 1;
    case ND_FMT_RGBA: *l = (rgb_layout){4, 0, 1, 2, 3}; return 1;
    case ND_FMT_BGRA: *l = (rgb_layout){4, 2, 1, 0, 3}; return 1;
    case ND_FMT_RGBX: *l = (rgb_layout){4, 0, 1, 2, -1}; return 1;
    case ND_FMT_BGRX: *l = (rgb_layout){4, 2, 1, 0, -1}; return 1;
    default: return 0;
  }
}

static int frame_ok(const nd_frame *f) {
  if (!f || f->width < 1 || f->height < 1 || !f->planes[0])
    return 0;
  if (f->format == ND_FMT_I420)
    return f->planes[1] && f->planes[2];
  if (f->format == ND_FMT_NV12)
    return f->planes[1] != NULL;
  rgb_layout l;
  return layout_of(f->format, &l);
}

/* BT.601 limited range, 8-bit fixed point (x256). */
static void rgb_to_yuv(int r, int g, int b, int *y, int *u, int *v) {
  *y = ((66 * r + 129 * g + 25 * b + 128) >> 8) + 16;
  *u = ((-38 * r - 74 * g + 112 * b + 128) >> 8) + 128;
  *v = ((112 * r - 94 * g - 18 * b + 128) >> 8) + 128;
}

static inline uint8_t mix(int src, int dst, int a) {
  return (uint8_t)((src * a + dst * (255 - a) + 127) / 255);
}

/* ---- shapes ------------------------------------------------------------------ */

/* One row of pixels [x0, x1) of row y (already clipped) in a packed RGB
 * layout, alpha-blended. */
static void span_rgb(nd_frame *f, const rgb_layout *l, int y, int x0, int x1, nd_color c) {
  const int a = c.a;
  uint8_t *p = f->planes[0] + (size_t)y * f->strides[0] + (size_t)x0 * l->bpp;
  for (int x = x0; x < x1; x++, p += l->bpp) {
    p[l->r] = mix(c.r, p[l->r], a);
    p[l->g] = mix(c.g, p[l->g], a);
    p[l->b] = mix(c.b, p[l->b], a);
    if (l->a >= 0)
      p[l->a] = (uint8_t)(a + p[l->a] * (255 - a) / 255);
  }
}

/* Luma samples [x0, x1) of row y (clipped). */
static void span_luma(nd_frame *f, int y, int x0, int x1, int Y, int a) {
  uint8_t *p = f->planes[0] + (size_t)y * f->strides[0];
  for (int x = x0; x < x1; x++)
    p[x] = mix(Y, p[x], a);
}

/* Chroma samples [cx0, cx1) of chroma row cy (clipped to the chroma plane). */
static void span_chroma(nd_frame *f, int cy, int cx0, int cx1, int U, int V, int a) {
  if (f->format == ND_FMT_I420) {
    uint8_t *pu = f->planes[1] + (size_t)cy * f->strides[1];
    uint8_t *pv = f->planes[2] + (size_t)cy * f->strides[2];
    for (int x = cx0; x < cx1; x++) {
      pu[x] = mix(U, pu[x], a);
      pv[x] = mix(V, pv[x], a);
    }
  } else {
    uint8_t *puv = f->planes[1] + (size_t)cy * f->strides[1];
    for (int x = cx0; x < cx1; x++) {
      puv[2 * x] = mix(U, puv[2 * x], a);
      puv[2 * x + 1] = mix(V, puv[2 * x + 1], a);
    }
  }
}

void nd_fill_rect(nd_frame *f, int x0, int y0, int x1, int y1, nd_color c) {
  if (!frame_ok(f) || c.a == 0)
    return;
  if (x0 < 0) x0 = 0;
  if (y0 < 0) y0 = 0;
  if (x1 > f->width) x1 = f->width;
  if (y1 > f->height) y1 = f->height;
  if (x0 >= x1 || y0 >= y1)
    return;
  const int a = c.a;
  rgb_layout l;
  if (layout_of(f->format, &l)) {
    for (int y = y0; y < y1; y++)
      span_rgb(f, &l, y, x0, x1, c);
    return;
  }
  int Y, U, V;
  rgb_to_yuv(c.r, c.g, c.b, &Y, &U, &V);
  for (int y = y0; y < y1; y++)
    span_luma(f, y, x0, x1, Y, a);
  /* chroma samples whose 2x2 block the rectangle touches */
  int cw = (f->width + 1) / 2, chh = (f->height + 1) / 2;
  int cx0 = x0 / 2, cy0 = y0 / 2, cx1 = (x1 + 1) / 2, cy1 = (y1 + 1) / 2;
  if (cx1 > cw) cx1 = cw;
  if (cy1 > chh) cy1 = chh;
  for (int y = cy0; y < cy1; y++)
    span_chroma(f, y, cx0, cx1, U, V, a);
}

void nd_draw_rect(nd_frame *f, int x0, int y0, int x1, int y1, int t, nd_color c) {
  if (x1 <= x0 || y1 <= y0)
    return;
  if (t < 1)
    t = 1;
  /* thicker than half the box: it is a filled box */
  if (2 * t >= x1 - x0 || 2 * t >= y1 - y0) {
    nd_fill_rect(f, x0, y0, x1, y1, c);
    return;
  }
  /* four bands that do not overlap, so a translucent color blends once */
  nd_fill_rect(f, x0, y0, x1, y0 + t, c);
  nd_fill_rect(f, x0, y1 - t, x1, y1, c);
  nd_fill_rect(f, x0, y0 + t, x0 + t, y1 - t, c);
  nd_fill_rect(f, x1 - t, y0 + t, x1, y1 - t, c);
}

void nd_draw_point(nd_frame *f, int cx, int cy, int radius, nd_color c) {
  if (radius < 1)
    radius = 1;
  for (int dy = -radius; dy <= radius; dy++) {
    int dx = (int)sqrtf((float)(radius * radius - dy * dy));
    nd_fill_rect(f, cx - dx, cy + dy, cx + dx + 1, cy + dy + 1, c);
  }
}

/* ---- polygons ----------------------------------------------------------------
 * A thick outline is the set of pixel centres within r = thickness / 2 of an
 * edge.  Per edge that is a capsule (the band swept along the edge plus a disc
 * at each end), which is convex, so it meets a row in one interval.  A row's
 * intervals are merged before anything is blended, so each pixel is written
 * once; in 4:2:0 a chroma row takes the union of its two luma rows (a chroma
 * sample is written when its 2x2 block touches the outline, as nd_fill_rect).
 * Everything is in double: float coordinates of any magnitude neither
 * overflow nor reach the integer conversions unclipped. */

typedef struct {
  double ax, ay, bx, by; /* the edge */
  double qx[4], qy[4];   /* its band: the edge moved by +-r along its normal */
  double ylo, yhi;       /* the lines y it touches: [ylo, yhi) */
  int band;              /* 0: zero length, the discs only */
} poly_edge;

static void disc_span(double cx, double cy, double r, double y, double *lo, double *hi) {
  double dy = y - cy;
  if (fabs(dy) >= r)
    return;
  double dx = sqrt(r * r - dy * dy);
  if (cx - dx < *lo)
    *lo = cx - dx;
  if (cx + dx > *hi)
    *hi = cx + dx;
}

/* The interval [lo, hi) of e's capsule on the line y; 0 when it misses. */
static int edge_span(const poly_edge *e, double r, double y, double *lo, double *hi) {
  if (y < e->ylo || y >= e->yhi)
    return 0;
  double l = INFINITY, h = -INFINITY;
  disc_span(e->ax, e->ay, r, y, &l, &h);
  disc_span(e->bx, e->by, r, y, &l, &h);
  for (int k = 0; e->band && k < 4; k++) {
    double x0 = e->qx[k], y0 = e->qy[k], x1 = e->qx[(k + 1) & 3], y1 = e->qy[(k + 1) & 3];
    if (y0 == y1 || y < fmin(y0, y1) || y >= fmax(y0, y1))
      continue;
    double x = x0 + (y - y0) * (x1 - x0) / (y1 - y0);
    l = fmin(l, x);
    h = fmax(h, x);
  }
  if (!(l < h))
    return 0;
  *lo = l;
  *hi = h;
  return 1;
}

/* Sort the spans [xs, xe) by start and merge those that overlap or touch;
 * returns how many remain. */
static int merge_spans(int *xs, int *xe, int n) {
  for (int i = 1; i < n; i++)
    for (int j = i; j > 0 && xs[j] < xs[j - 1]; j--) {
      int t = xs[j];
      xs[j] = xs[j - 1];
      xs[j - 1] = t;
      t = xe[j];
      xe[j] = xe[j - 1];
      xe[j - 1] = t;
    }
  int m = 0;
  for (int i = 0; i < n; i++) {
    if (m > 0 && xs[i] <= xe[m - 1]) {
      if (xe[i] > xe[m - 1])
        xe[m - 1] = xe[i];
    } else {
      xs[m] = xs[i];
      xe[m] = xe[i];
      m++;
    }
  }
  return m;
}

/* The outline's pixels of row y as disjoint spans [xs, xe) within the frame
 * width (at most one per edge). */
static int row_spans(const poly_edge *edges, int ne, double r, int y, int width, int *xs, int *xe) {
  const double yc = y + 0.5;
  int n = 0;
  for (int i = 0; i < ne; i++) {
    double lo, hi;
    if (!edge_span(&edges[i], r, yc, &lo, &hi))
      continue;
    /* pixel x is on it when lo <= x + 0.5 < hi */
    double a = fmax(ceil(lo - 0.5), 0.0), b = fmin(ceil(hi - 0.5), (double)width);
    if (!(a < b))
      continue;
    xs[n] = (int)a;
    xe[n] = (int)b;
    n++;
  }
  return merge_spans(xs, xe, n);
}

void nd_draw_polygon(nd_frame *f, const float *xy, int n, int thickness, nd_color c) {
  if (!frame_ok(f) || !xy || n < 1 || c.a == 0)
    return;
  if (n > ND_POLYGON_MAX)
    n = ND_POLYGON_MAX;
  for (int i = 0; i < 2 * n; i++)
    if (!isfinite(xy[i]))
      return;
  if (thickness < 1)
    thickness = 1;
  const double r = thickness * 0.5;
  /* a closed polygon has n edges; a line (n = 2) one, a dot one of length 0 */
  const int ne = n <= 2 ? 1 : n;
  poly_edge edges[ND_POLYGON_MAX];
  double ymin = INFINITY, ymax = -INFINITY;
  for (int i = 0; i < ne; i++) {
    poly_edge *e = &edges[i];
    int j = (i + 1) % n;
    e->ax = xy[2 * i];
    e->ay = xy[2 * i + 1];
    e->bx = xy[2 * j];
    e->by = xy[2 * j + 1];
    double dx = e->bx - e->ax, dy = e->by - e->ay, len = hypot(dx, dy);
    e->band = len > 0.0;
    if (e->band) {
      double nx = -dy / len * r, ny = dx / len * r;
      e->qx[0] = e->ax + nx;
      e->qy[0] = e->ay + ny;
      e->qx[1] = e->bx + nx;
      e->qy[1] = e->by + ny;
      e->qx[2] = e->bx - nx;
      e->qy[2] = e->by - ny;
      e->qx[3] = e->ax - nx;
      e->qy[3] = e->ay - ny;
    }
    e->ylo = fmin(e->ay, e->by) - r;
    e->yhi = fmax(e->ay, e->by) + r;
    ymin = fmin(ymin, e->ylo);
    ymax = fmax(ymax, e->yhi);
  }
  /* rows whose centre y + 0.5 lies in [ymin, ymax), clipped to the frame */
  double r0 = fmax(ceil(ymin - 0.5), 0.0), r1 = fmin(ceil(ymax - 0.5), (double)f->height);
  if (!(r0 < r1))
    return;
  const int y0 = (int)r0, y1 = (int)r1;
  int xs[ND_POLYGON_MAX], xe[ND_POLYGON_MAX];
  rgb_layout l;
  if (layout_of(f->format, &l)) {
    for (int y = y0; y < y1; y++) {
      int k = row_spans(edges, ne, r, y, f->width, xs, xe);
      for (int s = 0; s < k; s++)
        span_rgb(f, &l, y, xs[s], xe[s], c);
    }
    return;
  }
  int Y, U, V;
  rgb_to_yuv(c.r, c.g, c.b, &Y, &U, &V);
  const int cw = (f->width + 1) / 2;
  int cxs[2 * ND_POLYGON_MAX], cxe[2 * ND_POLYGON_MAX];
  for (int cy = y0 / 2; cy <= (y1 - 1) / 2; cy++) {
    int nc = 0;
    for (int y = 2 * cy; y < 2 * cy + 2; y++) {
      if (y < y0 || y >= y1)
        continue;
      int k = row_spans(edges, ne, r, y, f->width, xs, xe);
      for (int s = 0; s < k; s++) {
        span_luma(f, y, xs[s], xe[s], Y, c.a);
        cxs[nc] = xs[s] / 2;
        cxe[nc] = (xe[s] + 1) / 2 < cw ? (xe[s] + 1) / 2 : cw;
        nc++;
      }
    }
    nc = merge_spans(cxs, cxe, nc);
    for (int s = 0; s < nc; s++)
      span_chroma(f, cy, cxs[s], cxe[s], U, V, c.a);
  }
}

nd_color nd_palette_color(int class_id) {
  /* Ultralytics' 20-color palette: saturated, tells neighbours apart. */
  static const uint32_t pal[20] = {
      0xFF3838, 0xFF9D97, 0xFF701F, 0xFFB21D, 0xCFD231, 0x48F90A, 0x92CC17,
      0x3DDB86, 0x1A9334, 0x00D4BB, 0x2C99A8, 0x00C2FF, 0x344593, 0x6473FF,
      0x0018EC, 0x8438FF, 0x520085, 0xCB38FF, 0xFF95C8, 0xFF37C7,
  };
  uint32_t v = pal[(unsigned)(class_id < 0 ? 0 : class_id) % 20];
  return (nd_color){(uint8_t)(v >> 16), (uint8_t)(v >> 8), (uint8_t)v, 255};
}

/* ---- text -------------------------------------------------------------------- */

#define LABEL_MAX ND_LABEL_MAX
#define LABEL_PAD 2

typedef struct {
  char text[LABEL_MAX];
  uint32_t fg, bg;
  cairo_surface_t *surface;    /* ARGB32, premultiplied */
  int width, height;
  uint64_t used;               /* LRU clock */
} label_entry;

struct nd_text_renderer {
  PangoFontMap *fontmap;       /* own map: renderers in different threads share nothing */
  PangoContext *context;
  PangoLayout *layout;
  label_entry *entries;
  int n_entries;
  uint64_t clock, renders, hits;
};

static uint32_t pack(nd_color c) {
  return (uint32_t)c.r << 24 | (uint32_t)c.g << 16 | (uint32_t)c.b << 8 | c.a;
}

void nd_text_renderer_free(nd_text_renderer *r) {
  if (!r)
    return;
  for (int i = 0; i < r->n_entries; i++)
    if (r->entries[i].surface)
      cairo_surface_destroy(r->entries[i].surface);
  free(r->entries);
  if (r->layout)
    g_object_unref(r->layout);
  if (r->context)
    g_object_unref(r->context);
  if (r->fontmap)
    g_object_unref(r->fontmap);
  free(r);
}

nd_status nd_text_renderer_new(const char *font, int cache_entries, nd_text_renderer **out,
                               nd_error *err) {
  if (!out)
    return nd_set_error(err, ND_ERR_INVALID_ARG, "text: out is NULL");
  *out = NULL;
  if (cache_entries <= 0)
    cache_entries = 64;
  nd_text_renderer *r = calloc(1, sizeof *r);
  if (!r)
    return nd_set_error(err, ND_ERR_NOMEM, "out of memory");
  r->entries = calloc((size_t)cache_entries, sizeof *r->entries);
  r->n_entries = cache_entries;
  r->fontmap = pango_cairo_font_map_new();
  r->context = r->fontmap ? pango_font_map_create_context(r->fontmap) : NULL;
  r->layout = r->context ? pango_layout_new(r->context) : NULL;
  if (!r->entries || !r->layout) {
    nd_text_renderer_free(r);
    return nd_set_error(err, ND_ERR_TEXT, "text: cannot create a pango layout");
  }
  PangoFontDescription *desc = pango_font_description_from_string(font ? font : "Sans Bold 12");
  if (pango_font_description_get_size(desc) <= 0)
    pango_font_description_set_size(desc, 12 * PANGO_SCALE);
  pango_layout_set_font_description(r->layout, desc);
  pango_font_description_free(desc);
  /* grayscale antialiasing: subpixel (LCD) rendering is wrong on video */
  cairo_font_options_t *fo = cairo_font_options_create();
  cairo_font_options_set_antialias(fo, CAIRO_ANTIALIAS_GRAY);
  cairo_font_options_set_hint_style(fo, CAIRO_HINT_STYLE_SLIGHT);
  pango_cairo_context_set_font_options(r->context, fo);
  cairo_font_options_destroy(fo);
  pango_layout_context_changed(r->layout);
  *out = r;
  return ND_OK;
}

static void copy_label(char *dst, const char *src) {
  size_t n = strlen(src);
  if (n >= LABEL_MAX)
    n = LABEL_MAX - 1;
  /* do not cut a UTF-8 sequence in half (pango would reject the text) */
  while (n > 0 && ((unsigned char)src[n] & 0xC0) == 0x80)
    n--;
  memcpy(dst, src, n);
  dst[n] = '\0';
}

/* The cached rendering of (text, fg, bg), rendering it on a miss. */
static nd_status get_label(nd_text_renderer *r, const char *text, nd_color fg, nd_color bg,
                           label_entry **out, nd_error *err) {
  char key[LABEL_MAX];
  copy_label(key, text);
  uint32_t pf = pack(fg), pb = pack(bg);
  label_entry *victim = &r->entries[0];
  r->clock++;
  for (int i = 0; i < r->n_entries; i++) {
    label_entry *e = &r->entries[i];
    if (e->surface && e->fg == pf && e->bg == pb && strcmp(e->text, key) == 0) {
      e->used = r->clock;
      r->hits++;
      *out = e;
      return ND_OK;
    }
    if (!e->surface || (victim->surface && e->used < victim->used))
      victim = e;
  }

  pango_layout_set_text(r->layout, key, -1);
  PangoRectangle ink, logical;
  pango_layout_get_pixel_extents(r->layout, &ink, &logical);
  int w = logical.width + 2 * LABEL_PAD, h = logical.height + 2 * LABEL_PAD;
  if (w < 1 || h < 1 || w > 4096 || h > 1024)
    return nd_set_error(err, ND_ERR_TEXT, "text: label '%s' measures %dx%d", key, w, h);
  cairo_surface_t *s = cairo_image_surface_create(CAIRO_FORMAT_ARGB32, w, h);
  if (cairo_surface_status(s) != CAIRO_STATUS_SUCCESS) {
    cairo_surface_destroy(s);
    return nd_set_error(err, ND_ERR_TEXT, "text: cannot create a %dx%d surface", w, h);
  }
  cairo_t *cr = cairo_create(s);
  cairo_set_source_rgba(cr, bg.r / 255.0, bg.g / 255.0, bg.b / 255.0, bg.a / 255.0);
  cairo_set_operator(cr, CAIRO_OPERATOR_SOURCE);
  cairo_paint(cr);
  cairo_set_operator(cr, CAIRO_OPERATOR_OVER);
  cairo_set_source_rgba(cr, fg.r / 255.0, fg.g / 255.0, fg.b / 255.0, fg.a / 255.0);
  cairo_move_to(cr, LABEL_PAD - logical.x, LABEL_PAD - logical.y);
  pango_cairo_show_layout(cr, r->layout);
  cairo_status_t cst = cairo_status(cr);
  cairo_destroy(cr);
  cairo_surface_flush(s);
  if (cst != CAIRO_STATUS_SUCCESS) {
    cairo_surface_destroy(s);
    return nd_set_error(err, ND_ERR_TEXT, "text: cairo: %s", cairo_status_to_string(cst));
  }
  if (victim->surface)
    cairo_surface_destroy(victim->surface);
  memcpy(victim->text, key, sizeof key);
  victim->fg = pf;
  victim->bg = pb;
  victim->surface = s;
  victim->width = w;
  victim->height = h;
  victim->used = r->clock;
  r->renders++;
  *out = victim;
  return ND_OK;
}

nd_status nd_text_size(nd_text_renderer *r, const char *text, int *width, int *height,
                       nd_error *err) {
  if (!r || !text)
    return nd_set_error(err, ND_ERR_INVALID_ARG, "text: NULL argument");
  char key[LABEL_MAX];
  copy_label(key, text);
  pango_layout_set_text(r->layout, key, -1);
  PangoRectangle logical;
  pango_layout_get_pixel_extents(r->layout, NULL, &logical);
  if (width)
    *width = logical.width + 2 * LABEL_PAD;
  if (height)
    *height = logical.height + 2 * LABEL_PAD;
  return ND_OK;
}

/* Blend a premultiplied ARGB32 surface with its top-left at (ox, oy). */
static void blend_surface(nd_frame *f, cairo_surface_t *s, int sw, int sh, int ox, int oy) {
  const uint8_t *sdata = cairo_image_surface_get_data(s);
  const int sstride = cairo_image_surface_get_stride(s);
  int x0 = ox < 0 ? 0 : ox, y0 = oy < 0 ? 0 : oy;
  int x1 = ox + sw > f->width ? f->width : ox + sw;
  int y1 = oy + sh > f->height ? f->height : oy + sh;
  if (x0 >= x1 || y0 >= y1)
    return;
#define SPX(x, y) (*(const uint32_t *)(sdata + (size_t)((y) - oy) * sstride + (size_t)((x) - ox) * 4))
  rgb_layout l;
  if (layout_of(f->format, &l)) {
    for (int y = y0; y < y1; y++) {
      uint8_t *p = f->planes[0] + (size_t)y * f->strides[0] + (size_t)x0 * l.bpp;
      for (int x = x0; x < x1; x++, p += l.bpp) {
        uint32_t px = SPX(x, y);
        int a = (int)(px >> 24);
        if (a == 0)
          continue;
        int ia = 255 - a;
        p[l.r] = (uint8_t)(((px >> 16) & 0xff) + (p[l.r] * ia + 127) / 255);
        p[l.g] = (uint8_t)(((px >> 8) & 0xff) + (p[l.g] * ia + 127) / 255);
        p[l.b] = (uint8_t)((px & 0xff) + (p[l.b] * ia + 127) / 255);
        if (l.a >= 0)
          p[l.a] = (uint8_t)(a + (p[l.a] * ia + 127) / 255);
      }
    }
    return;
  }
  /* YUV: the conversion is affine, so premultiplied values convert directly:
   * Y_src*a = 16a + M*rgb_premultiplied. */
  for (int y = y0; y < y1; y++) {
    uint8_t *py = f->planes[0] + (size_t)y * f->strides[0];
    for (int x = x0; x < x1; x++) {
      uint32_t px = SPX(x, y);
      int a = (int)(px >> 24);
      if (a == 0)
        continue;
      int r = (px >> 16) & 0xff, g = (px >> 8) & 0xff, b = px & 0xff;
      int ys = ((66 * r + 129 * g + 25 * b + 128) >> 8) + (16 * a + 127) / 255;
      py[x] = (uint8_t)(ys + (py[x] * (255 - a) + 127) / 255);
    }
  }
  int cw = (f->width + 1) / 2, chh = (f->height + 1) / 2;
  int cx1 = (x1 + 1) / 2, cy1 = (y1 + 1) / 2;
  if (cx1 > cw) cx1 = cw;
  if (cy1 > chh) cy1 = chh;
  for (int cy = y0 / 2; cy < cy1; cy++) {
    for (int cx = x0 / 2; cx < cx1; cx++) {
      /* average the block's premultiplied samples that lie on the label */
      int sa = 0, sr = 0, sg = 0, sb = 0, cnt = 0;
      for (int dy = 0; dy < 2; dy++)
        for (int dx = 0; dx < 2; dx++) {
          int x = 2 * cx + dx, y = 2 * cy + dy;
          if (x < x0 || x >= x1 || y < y0 || y >= y1)
            continue;
          uint32_t px = SPX(x, y);
          sa += (int)(px >> 24);
          sr += (px >> 16) & 0xff;
          sg += (px >> 8) & 0xff;
          sb += px & 0xff;
          cnt++;
        }
      if (cnt == 0 || sa == 0)
        continue;
      int a = sa / 4, r = sr / 4, g = sg / 4, b = sb / 4;
      if (a == 0)
        continue;
      int us = ((-38 * r - 74 * g + 112 * b + 128) >> 8) + (128 * a + 127) / 255;
      int vs = ((112 * r - 94 * g - 18 * b + 128) >> 8) + (128 * a + 127) / 255;
      uint8_t *pu, *pv;
      if (f->format == ND_FMT_I420) {
        pu = f->planes[1] + (size_t)cy * f->strides[1] + cx;
        pv = f->planes[2] + (size_t)cy * f->strides[2] + cx;
      } else {
        pu = f->planes[1] + (size_t)cy * f->strides[1] + 2 * cx;
        pv = pu + 1;
      }
      int u = us + (*pu * (255 - a) + 127) / 255;
      int v = vs + (*pv * (255 - a) + 127) / 255;
      *pu = (uint8_t)(u < 0 ? 0 : u > 255 ? 255 : u);
      *pv = (uint8_t)(v < 0 ? 0 : v > 255 ? 255 : v);
    }
  }
#undef SPX
}

nd_status nd_draw_text(nd_text_renderer *r, nd_frame *f, int x, int y, const char *text,
                       nd_color fg, nd_color bg, nd_error *err) {
  if (!r || !text)
    return nd_set_error(err, ND_ERR_INVALID_ARG, "text: NULL argument");
  if (!frame_ok(f))
    return nd_set_error(err, ND_ERR_UNSUPPORTED, "text: bad frame (format %d)",
                        f ? (int)f->format : -1);
  if (!*text)
    return ND_OK;
  label_entry *e = NULL;
  nd_status st = get_label(r, text, fg, bg, &e, err);
  if (st != ND_OK)
    return st;
  blend_surface(f, e->surface, e->width, e->height, x, y);
  return ND_OK;
}

void nd_text_renderer_stats(const nd_text_renderer *r, uint64_t *renders, uint64_t *hits) {
  if (renders)
    *renders = r ? r->renders : 0;
  if (hits)
    *hits = r ? r->hits : 0;
}

/* A pixel coordinate as an int, clamped far outside any frame so that the
 * shapes' arithmetic (x0 + t, x1 - x0) cannot overflow. */
#define COORD_LIMIT 16777216.0f
static int pixel_coord(float v) {
  if (v < -COORD_LIMIT)
    v = -COORD_LIMIT;
  if (v > COORD_LIMIT)
    v = COORD_LIMIT;
  return (int)lrintf(v);
}

/* The label of a box or polygon whose top-left corner is (x, y) and whose
 * bounds are [bx0, bx1) x [by0, by1): above the corner when it fits, else
 * below it (inside a box's top edge), moved to stay inside the frame; none
 * for a shape outside the frame.  Background `color`, black text on light
 * colors, white on dark. */
static nd_status draw_label(nd_text_renderer *r, nd_frame *f, int x, int y, int bx0, int by0,
                            int bx1, int by1, const char *text, nd_color color, nd_error *err) {
  if (bx1 <= 0 || by1 <= 0 || bx0 >= f->width || by0 >= f->height)
    return ND_OK;
  int tw = 0, th = 0;
  nd_status st = nd_text_size(r, text, &tw, &th, err);
  if (st != ND_OK)
    return st;
  int ty = y - th >= 0 ? y - th : y;
  if (ty > f->height - th)
    ty = f->height - th;
  if (ty < 0)
    ty = 0;
  int tx = x;
  if (tx > f->width - tw)
    tx = f->width - tw;
  if (tx < 0)
    tx = 0;
  /* Rec.601 luma */
  int luma = (299 * color.r + 587 * color.g + 114 * color.b) / 1000;
  nd_color fg = luma > 140 ? (nd_color){0, 0, 0, 255} : (nd_color){255, 255, 255, 255};
  return nd_draw_text(r, f, tx, ty, text, fg, color, err);
}

static void draw_keypoints(nd_frame *f, const nd_detection *d, int thickness, nd_color color) {
  int kr = thickness + 1;
  for (int k = 0; k < d->n_keypoints && k < ND_MAX_KEYPOINTS; k++) {
    if (!isfinite(d->keypoints[k].x) || !isfinite(d->keypoints[k].y))
      continue;
    nd_draw_point(f, pixel_coord(d->keypoints[k].x), pixel_coord(d->keypoints[k].y), kr, color);
  }
}

nd_status nd_draw_detection(nd_text_renderer *r, nd_frame *f, const nd_detection *d,
                            const char *text, nd_color color, int thickness, nd_error *err) {
  if (!d)
    return nd_set_error(err, ND_ERR_INVALID_ARG, "draw: NULL detection");
  if (!frame_ok(f))
    return nd_set_error(err, ND_ERR_UNSUPPORTED, "draw: bad frame (format %d)",
                        f ? (int)f->format : -1);
  if (thickness < 1)
    thickness = 1;
  if (!isfinite(d->x0) || !isfinite(d->y0) || !isfinite(d->x1) || !isfinite(d->y1))
    return ND_OK;
  int x0 = pixel_coord(d->x0), y0 = pixel_coord(d->y0);
  int x1 = pixel_coord(d->x1), y1 = pixel_coord(d->y1);
  nd_draw_rect(f, x0, y0, x1, y1, thickness, color);
  draw_keypoints(f, d, thickness, color);
  if (!r || !text || !*text)
    return ND_OK;
  return draw_label(r, f, x0, y0, x0, y0, x1, y1, text, color, err);
}

nd_status nd_draw_detection_polygon(nd_text_renderer *r, nd_frame *f, const nd_detection *d,
                                    const float *xy, int n, const char *text, nd_color color,
                                    int thickness, nd_error *err) {
  if (!d || !xy || n < 1)
    return nd_set_error(err, ND_ERR_INVALID_ARG, "draw: NULL detection or polygon");
  if (!frame_ok(f))
    return nd_set_error(err, ND_ERR_UNSUPPORTED, "draw: bad frame (format %d)",
                        f ? (int)f->format : -1);
  if (thickness < 1)
    thickness = 1;
  nd_draw_polygon(f, xy, n, thickness, color);
  draw_keypoints(f, d, thickness, color);
  if (!r || !text || !*text)
    return ND_OK;
  if (n > ND_POLYGON_MAX)
    n = ND_POLYGON_MAX;
  float x0 = INFINITY, y0 = INFINITY, x1 = -INFINITY, y1 = -INFINITY;
  for (int i = 0; i < n; i++) {
    if (!isfinite(xy[2 * i]) || !isfinite(xy[2 * i + 1]))
      return ND_OK; /* not drawn either */
    x0 = fminf(x0, xy[2 * i]);
    x1 = fmaxf(x1, xy[2 * i]);
    y0 = fminf(y0, xy[2 * i + 1]);
    y1 = fmaxf(y1, xy[2 * i + 1]);
  }
  const int m = thickness < 65536 ? thickness : 65536; /* the outline's reach, and more */
  return draw_label(r, f, pixel_coord(xy[0]), pixel_coord(xy[1]), pixel_coord(x0) - m,
                    pixel_coord(y0) - m, pixel_coord(x1) + m, pixel_coord(y1) + m, text, color,
                    err);
}

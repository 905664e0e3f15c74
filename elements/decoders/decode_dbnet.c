/* decode_dbnet.c - DBNet text detection: probability map -> rotated boxes.
 *
 * PaddleOCR's DBPostProcess (box_type 'quad', score_mode 'fast'), see
 * decode.h.  The steps and how they differ from PaddleOCR's OpenCV calls:
 *
 *   labelling  runs of foreground pixels per row, joined with the runs of
 *              the row above that touch them (8-connectivity: diagonally
 *              too) by union-find with path halving: no recursion, no
 *              per-pixel label image.  findContours(RETR_LIST) also returns
 *              hole contours; a hole's box lies inside its region's and is
 *              not reported here (holes in text strokes are not text).
 *   hull       the two end pixels of every run are the only candidates for
 *              the convex hull of the region's pixel centers; Andrew's
 *              monotone chain on them (they come sorted by (y, x)).
 *   rectangle  the minimum-area enclosing rectangle has a side on a hull
 *              edge: every edge is tried (O(h^2), h the hull size, which is
 *              small for text blobs), as cv2.minAreaRect.
 *   score      mean of the map over the pixels whose centers lie inside the
 *              rectangle (cv2.fillPoly of the truncated corners in
 *              PaddleOCR; the difference is at most the boundary pixels).
 *   unclip     pyclipper's offset of a rectangle by d with round joins has
 *              the rectangle grown by 2d as its minimum-area rectangle, so
 *              the rectangle is grown directly.
 *
 * Memory: the runs, their parents, the per-region point offsets, the points
 * and the hull scratch are sized by the number of foreground runs (at most
 * H * ceil(W/2)), grown when a map has more than any before and kept; the
 * boxes array holds max_candidates.  Maps with no more text than earlier
 * ones allocate nothing.
 */
#include <stdio.h>
#include <stdlib.h>

#include "decode_internal.h"

typedef struct {
  int y, x0, x1;
  int region;                  /* root run, then region number */
} db_run;

struct nd_dbnet {
  nd_dbnet_config cfg;
  /* Scratch, all sized by the number of foreground runs (not the map
   * size: a huge mostly empty map costs little), grown on demand and kept */
  db_run *runs;
  int *parent;                 /* union-find over runs; then region numbers */
  size_t runs_cap;
  int *region_start;           /* points of region r: [region_start[r], region_start[r+1]) */
  int *region_fill;
  nd_point *points;            /* 1 or 2 per run, grouped by region */
  nd_point *hull;              /* points + 1 */
  size_t region_cap;           /* region_start/fill (runs + 1), points, hull (2 * runs + 2) */
  nd_rbox *boxes;
  int n_boxes;
};

void nd_dbnet_config_init(nd_dbnet_config *cfg) {
  if (!cfg)
    return;
  cfg->threshold = 0.3f;
  cfg->box_threshold = 0.6f;
  cfg->unclip_ratio = 1.5f;
  cfg->min_size = 3.0f;
  cfg->max_candidates = 1000;
  cfg->connectivity = 8;
}

nd_status nd_dbnet_new(const nd_dbnet_config *cfg, nd_dbnet **out, nd_error *err) {
  if (!cfg || !out)
    return nd_set_error(err, ND_ERR_INVALID_ARG, "dbnet: NULL argument");
  *out = NULL;
  if (!(cfg->threshold > 0.0f && cfg->threshold < 1.0f))
    return nd_set_error(err, ND_ERR_INVALID_ARG, "dbnet: threshold %g is not in (0,1)",
                        cfg->threshold);
  if (!(cfg->box_threshold >= 0.0f && cfg->box_threshold <= 1.0f))
    return nd_set_error(err, ND_ERR_INVALID_ARG, "dbnet: box threshold %g is not in [0,1]",
                        cfg->box_threshold);
  if (!(cfg->unclip_ratio >= 0.0f && cfg->unclip_ratio <= 10.0f))
    return nd_set_error(err, ND_ERR_INVALID_ARG, "dbnet: unclip ratio %g is not in [0,10]",
                        cfg->unclip_ratio);
  if (!(cfg->min_size >= 0.0f && cfg->min_size <= 4096.0f))
    return nd_set_error(err, ND_ERR_INVALID_ARG, "dbnet: min size %g is not in [0,4096]",
                        cfg->min_size);
  if (cfg->max_candidates < 1 || cfg->max_candidates > 100000)
    return nd_set_error(err, ND_ERR_INVALID_ARG, "dbnet: max candidates %d is not in [1,100000]",
                        cfg->max_candidates);
  if (cfg->connectivity != 4 && cfg->connectivity != 8)
    return nd_set_error(err, ND_ERR_INVALID_ARG, "dbnet: connectivity %d is not 4 or 8",
                        cfg->connectivity);
  nd_dbnet *db = calloc(1, sizeof *db);
  if (!db)
    return nd_set_error(err, ND_ERR_NOMEM, "out of memory");
  db->cfg = *cfg;
  db->boxes = calloc((size_t)cfg->max_candidates, sizeof *db->boxes);
  if (!db->boxes) {
    free(db);
    return nd_set_error(err, ND_ERR_NOMEM, "out of memory");
  }
  *out = db;
  return ND_OK;
}

static void db_free_scratch(nd_dbnet *db) {
  free(db->runs);
  free(db->parent);
  free(db->region_start);
  free(db->region_fill);
  free(db->points);
  free(db->hull);
  db->runs = NULL;
  db->parent = db->region_start = db->region_fill = NULL;
  db->points = db->hull = NULL;
  db->runs_cap = db->region_cap = 0;
}

void nd_dbnet_free(nd_dbnet *db) {
  if (!db)
    return;
  db_free_scratch(db);
  free(db->boxes);
  free(db);
}

/* Room for n runs (doubling; realloc keeps the runs made so far). */
static int db_grow_runs(nd_dbnet *db, size_t n) {
  if (n <= db->runs_cap)
    return 1;
  size_t cap = db->runs_cap ? db->runs_cap : 1024;
  while (cap < n)
    cap *= 2;
  db_run *r = realloc(db->runs, cap * sizeof *r);
  if (!r)
    return 0;
  db->runs = r;
  int *p = realloc(db->parent, cap * sizeof *p);
  if (!p)
    return 0;
  db->parent = p;
  db->runs_cap = cap;
  return 1;
}

/* Room for the region arrays of n runs. */
static int db_grow_regions(nd_dbnet *db, size_t n) {
  if (n <= db->region_cap && db->region_start)
    return 1;
  size_t cap = db->runs_cap > n ? db->runs_cap : n;
  free(db->region_start);
  free(db->region_fill);
  free(db->points);
  free(db->hull);
  db->region_start = malloc((cap + 1) * sizeof *db->region_start);
  db->region_fill = malloc((cap + 1) * sizeof *db->region_fill);
  db->points = malloc(2 * cap * sizeof *db->points);
  db->hull = malloc((2 * cap + 2) * sizeof *db->hull);
  if (!db->region_start || !db->region_fill || !db->points || !db->hull) {
    free(db->region_start);
    free(db->region_fill);
    free(db->points);
    free(db->hull);
    db->region_start = db->region_fill = NULL;
    db->points = db->hull = NULL;
    db->region_cap = 0;
    return 0;
  }
  db->region_cap = cap;
  return 1;
}

static int uf_find(int *parent, int i) {
  while (parent[i] != i) {
    parent[i] = parent[parent[i]];
    i = parent[i];
  }
  return i;
}

static void uf_union(int *parent, int a, int b) {
  a = uf_find(parent, a);
  b = uf_find(parent, b);
  if (a == b)
    return;
  /* the older run is the root: regions keep the raster order of their first run */
  if (a < b)
    parent[b] = a;
  else
    parent[a] = b;
}

static double cross(nd_point o, nd_point a, nd_point b) {
  return (double)(a.x - o.x) * (b.y - o.y) - (double)(a.y - o.y) * (b.x - o.x);
}

/* Andrew's monotone chain; pts sorted by (y, x), n >= 1.  Returns the hull
 * size (collinear points dropped). */
static int convex_hull(const nd_point *pts, int n, nd_point *hull) {
  if (n < 3) {
    for (int i = 0; i < n; i++)
      hull[i] = pts[i];
    return n;
  }
  int k = 0;
  for (int i = 0; i < n; i++) {
    while (k >= 2 && cross(hull[k - 2], hull[k - 1], pts[i]) <= 0)
      k--;
    hull[k++] = pts[i];
  }
  for (int i = n - 2, t = k + 1; i >= 0; i--) {
    while (k >= t && cross(hull[k - 2], hull[k - 1], pts[i]) <= 0)
      k--;
    hull[k++] = pts[i];
  }
  return k - 1;
}

/* Corners in PaddleOCR's order (get_mini_boxes): sort by x, the left two
 * ordered by y are top-left and bottom-left, the right two top-right and
 * bottom-right; then width, height, angle from them. */
static void rbox_from_corners(nd_rbox *b, const nd_point c[4]) {
  nd_point p[4];
  memcpy(p, c, sizeof p);
  for (int i = 1; i < 4; i++) /* insertion sort by x (then y) */
    for (int j = i; j > 0 && (p[j].x < p[j - 1].x || (p[j].x == p[j - 1].x && p[j].y < p[j - 1].y));
         j--) {
      nd_point t = p[j];
      p[j] = p[j - 1];
      p[j - 1] = t;
    }
  nd_point tl, bl, tr, br;
  if (p[1].y > p[0].y) {
    tl = p[0];
    bl = p[1];
  } else {
    tl = p[1];
    bl = p[0];
  }
  if (p[3].y > p[2].y) {
    tr = p[2];
    br = p[3];
  } else {
    tr = p[3];
    br = p[2];
  }
  b->points[0] = tl;
  b->points[1] = tr;
  b->points[2] = br;
  b->points[3] = bl;
  b->cx = (tl.x + tr.x + br.x + bl.x) * 0.25f;
  b->cy = (tl.y + tr.y + br.y + bl.y) * 0.25f;
  b->width = hypotf(tr.x - tl.x, tr.y - tl.y);
  b->height = hypotf(bl.x - tl.x, bl.y - tl.y);
  float a = (float)(atan2((double)(tr.y - tl.y), (double)(tr.x - tl.x)) * 180.0 / M_PI);
  if (a <= -90.0f)
    a += 180.0f;
  else if (a > 90.0f)
    a -= 180.0f;
  b->angle = a;
}

/* Corners of the rectangle of center c, side vectors u (unit) * w and
 * v (unit, perpendicular) * h. */
static void rect_corners(double cx, double cy, double ux, double uy, double w, double h,
                         nd_point c[4]) {
  double vx = -uy, vy = ux;
  double hw = w / 2, hh = h / 2;
  c[0] = (nd_point){(float)(cx - ux * hw - vx * hh), (float)(cy - uy * hw - vy * hh)};
  c[1] = (nd_point){(float)(cx + ux * hw - vx * hh), (float)(cy + uy * hw - vy * hh)};
  c[2] = (nd_point){(float)(cx + ux * hw + vx * hh), (float)(cy + uy * hw + vy * hh)};
  c[3] = (nd_point){(float)(cx - ux * hw + vx * hh), (float)(cy - uy * hw + vy * hh)};
}

/* Minimum-area rectangle of a hull: center, unit direction of one side,
 * its length (w) and the other (h). */
static void min_area_rect(const nd_point *hull, int n, double *cx, double *cy, double *ux,
                          double *uy, double *w, double *h) {
  *cx = n > 0 ? hull[0].x : 0;
  *cy = n > 0 ? hull[0].y : 0;
  *ux = 1;
  *uy = 0;
  *w = *h = 0;
  if (n <= 1) {
    *cx = hull[0].x;
    *cy = hull[0].y;
    *ux = 1;
    *uy = 0;
    *w = *h = 0;
    return;
  }
  double best = INFINITY;
  for (int i = 0; i < n; i++) {
    nd_point a = hull[i], b = hull[(i + 1) % n];
    double ex = (double)b.x - a.x, ey = (double)b.y - a.y;
    double len = sqrt(ex * ex + ey * ey);
    if (len <= 0)
      continue;
    ex /= len;
    ey /= len;
    double umin = INFINITY, umax = -INFINITY, vmin = INFINITY, vmax = -INFINITY;
    for (int j = 0; j < n; j++) {
      double px = (double)hull[j].x - a.x, py = (double)hull[j].y - a.y;
      double u = px * ex + py * ey, v = -px * ey + py * ex;
      if (u < umin) umin = u;
      if (u > umax) umax = u;
      if (v < vmin) vmin = v;
      if (v > vmax) vmax = v;
    }
    double area = (umax - umin) * (vmax - vmin);
    if (area < best - 1e-9) {
      best = area;
      double mu = (umin + umax) / 2, mv = (vmin + vmax) / 2;
      *cx = a.x + mu * ex - mv * ey;
      *cy = a.y + mu * ey + mv * ex;
      *ux = ex;
      *uy = ey;
      *w = umax - umin;
      *h = vmax - vmin;
    }
  }
}

/* Mean of the map over the pixels whose centers are inside the convex quad
 * c (PaddleOCR's box_score_fast). */
static float box_score(const nd_tensor *map, int64_t H, int64_t W, const nd_point c[4]) {
  float fx0 = c[0].x, fx1 = c[0].x, fy0 = c[0].y, fy1 = c[0].y;
  for (int i = 1; i < 4; i++) {
    fx0 = fminf(fx0, c[i].x);
    fx1 = fmaxf(fx1, c[i].x);
    fy0 = fminf(fy0, c[i].y);
    fy1 = fmaxf(fy1, c[i].y);
  }
  int64_t x0 = (int64_t)floorf(fx0), x1 = (int64_t)ceilf(fx1);
  int64_t y0 = (int64_t)floorf(fy0), y1 = (int64_t)ceilf(fy1);
  if (x0 < 0) x0 = 0;
  if (y0 < 0) y0 = 0;
  if (x1 > W - 1) x1 = W - 1;
  if (y1 > H - 1) y1 = H - 1;
  /* orientation of the quad, so "inside" is cross >= 0 for every edge */
  double orient = cross(c[0], c[1], c[2]) >= 0 ? 1.0 : -1.0;
  const double eps = 1e-3;
  double sum = 0;
  int64_t cnt = 0;
  int f32 = map->dtype == ND_DTYPE_FLOAT32;
  for (int64_t y = y0; y <= y1; y++) {
    for (int64_t x = x0; x <= x1; x++) {
      nd_point p = {(float)x, (float)y};
      int in = 1;
      for (int i = 0; i < 4 && in; i++)
        if (orient * cross(c[i], c[(i + 1) % 4], p) < -eps * 4)
          in = 0;
      if (!in)
        continue;
      int64_t idx = y * W + x;
      float v;
      if (f32)
        memcpy(&v, (const unsigned char *)map->data + idx * 4, 4);
      else
        v = nd_tget(map, idx);
      sum += v;
      cnt++;
    }
  }
  return cnt ? (float)(sum / (double)cnt) : 0.0f;
}

nd_status nd_dbnet_decode(nd_dbnet *db, const nd_tensor *map, const nd_rbox **boxes, int *n,
                          nd_error *err) {
  if (n)
    *n = 0;
  if (boxes)
    *boxes = NULL;
  if (!db || !map || !boxes || !n)
    return nd_set_error(err, ND_ERR_INVALID_ARG, "dbnet: NULL argument");
  char d[96];
  nd_dims_str(map, d, sizeof d);
  const char *name = map->name ? map->name : "?";
  if (map->n_dims != 4)
    return nd_set_error(err, ND_ERR_RANK,
                        "dbnet: probability map '%s': expected dims [1,1,H,W], got %s", name, d);
  if (map->dims[0] != 1 || map->dims[1] != 1)
    return nd_set_error(err, ND_ERR_DIMS,
                        "dbnet: probability map '%s': expected dims [1,1,H,W] (one image, one "
                        "channel), got %s",
                        name, d);
  int64_t H = map->dims[2], W = map->dims[3];
  if (H < 1 || W < 1)
    return nd_set_error(err, ND_ERR_DIMS, "dbnet: probability map '%s' %s is empty", name, d);
  if (H > ND_DBNET_MAX_DIM || W > ND_DBNET_MAX_DIM || H * W > ND_DBNET_MAX_PIXELS)
    return nd_set_error(err, ND_ERR_DIMS,
                        "dbnet: probability map '%s' %s is larger than the limit (%d per side, "
                        "%lld pixels)",
                        name, d, ND_DBNET_MAX_DIM, (long long)ND_DBNET_MAX_PIXELS);
  nd_status st = nd_tensor_validate(map, "dbnet: probability map", err);
  if (st != ND_OK)
    return st;

  const float thr = db->cfg.threshold;
  const int diag = db->cfg.connectivity == 8 ? 1 : 0;
  const int f32 = map->dtype == ND_DTYPE_FLOAT32;
  const unsigned char *base = map->data;

  /* 1. runs per row, joined with the touching runs of the row above */
  int nr = 0, prev_begin = 0, prev_end = 0;
  for (int64_t y = 0; y < H; y++) {
    int row_begin = nr;
    int64_t x = 0;
    int pr = prev_begin;
    while (x < W) {
      /* skip background */
      for (;;) {
        if (x >= W)
          break;
        float v;
        if (f32)
          memcpy(&v, base + (y * W + x) * 4, 4);
        else
          v = nd_tget(map, y * W + x);
        if (v > thr)
          break;
        x++;
      }
      if (x >= W)
        break;
      int64_t x0 = x;
      for (;;) {
        x++;
        if (x >= W)
          break;
        float v;
        if (f32)
          memcpy(&v, base + (y * W + x) * 4, 4);
        else
          v = nd_tget(map, y * W + x);
        if (!(v > thr))
          break;
      }
      int64_t x1 = x - 1;
      if (!db_grow_runs(db, (size_t)nr + 1))
        return nd_set_error(err, ND_ERR_NOMEM, "dbnet: out of memory for %d text runs", nr + 1);
      db->runs[nr] = (db_run){(int)y, (int)x0, (int)x1, 0};
      db->parent[nr] = nr;
      /* runs of the previous row overlapping [x0 - diag, x1 + diag] */
      while (pr < prev_end && db->runs[pr].x1 < x0 - diag)
        pr++;
      for (int q = pr; q < prev_end && db->runs[q].x0 <= x1 + diag; q++)
        uf_union(db->parent, q, nr);
      nr++;
    }
    prev_begin = row_begin;
    prev_end = nr;
  }

  if (!db_grow_regions(db, (size_t)nr))
    return nd_set_error(err, ND_ERR_NOMEM, "dbnet: out of memory for %d text runs", nr);

  /* 2. regions: the root of a set is its first run (unions keep the
   * smaller index), so numbering roots in run order numbers the regions in
   * raster order of their first pixel; parent[] is reused for the numbers */
  for (int i = 0; i < nr; i++)
    db->runs[i].region = uf_find(db->parent, i);
  int n_regions = 0;
  for (int i = 0; i < nr; i++) {
    int root = db->runs[i].region;
    if (root == i) {
      db->region_fill[n_regions] = 0;
      db->parent[i] = n_regions++;
    }
    int r = db->parent[root]; /* root <= i: numbered already */
    db->runs[i].region = r;
    db->region_fill[r] += db->runs[i].x0 == db->runs[i].x1 ? 1 : 2;
  }
  int total = 0;
  for (int r = 0; r < n_regions; r++) {
    db->region_start[r] = total;
    total += db->region_fill[r];
    db->region_fill[r] = db->region_start[r];
  }
  db->region_start[n_regions] = total;
  for (int i = 0; i < nr; i++) {
    const db_run *ru = &db->runs[i];
    int r = ru->region;
    db->points[db->region_fill[r]++] = (nd_point){(float)ru->x0, (float)ru->y};
    if (ru->x1 != ru->x0)
      db->points[db->region_fill[r]++] = (nd_point){(float)ru->x1, (float)ru->y};
  }

  /* 3. one box per region */
  int nb = 0;
  int n_cand = n_regions < db->cfg.max_candidates ? n_regions : db->cfg.max_candidates;
  const float min_size = db->cfg.min_size;
  for (int r = 0; r < n_cand; r++) {
    const nd_point *pts = db->points + db->region_start[r];
    int np = db->region_start[r + 1] - db->region_start[r];
    int nh = convex_hull(pts, np, db->hull);
    double cx = 0, cy = 0, ux = 1, uy = 0, w = 0, h = 0;
    min_area_rect(db->hull, nh, &cx, &cy, &ux, &uy, &w, &h);
    if (fmin(w, h) < min_size)
      continue;
    nd_point c[4];
    rect_corners(cx, cy, ux, uy, w, h, c);
    float score = box_score(map, H, W, c);
    if (score < db->cfg.box_threshold)
      continue;
    double perim = 2 * (w + h);
    double off = perim > 0 ? w * h * db->cfg.unclip_ratio / perim : 0;
    w += 2 * off;
    h += 2 * off;
    if (fmin(w, h) < min_size + 2)
      continue;
    rect_corners(cx, cy, ux, uy, w, h, c);
    nd_rbox *b = &db->boxes[nb++];
    rbox_from_corners(b, c);
    b->score = score;
  }
  db->n_boxes = nb;
  *boxes = db->boxes;
  *n = nb;
  return ND_OK;
}

void nd_transform_rbox(const nd_transform *t, nd_rbox *b, nd_detection *aabb) {
  nd_point c[4];
  for (int i = 0; i < 4; i++) {
    c[i] = b->points[i];
    nd_transform_point(t, &c[i].x, &c[i].y);
    c[i].x = fminf(fmaxf(c[i].x, 0.0f), (float)t->frame_width);
    c[i].y = fminf(fmaxf(c[i].y, 0.0f), (float)t->frame_height);
  }
  float score = b->score;
  rbox_from_corners(b, c);
  b->score = score;
  if (aabb) {
    memset(aabb, 0, sizeof *aabb);
    aabb->x0 = aabb->x1 = c[0].x;
    aabb->y0 = aabb->y1 = c[0].y;
    for (int i = 1; i < 4; i++) {
      aabb->x0 = fminf(aabb->x0, c[i].x);
      aabb->x1 = fmaxf(aabb->x1, c[i].x);
      aabb->y0 = fminf(aabb->y0, c[i].y);
      aabb->y1 = fmaxf(aabb->y1, c[i].y);
    }
    aabb->score = score;
  }
}

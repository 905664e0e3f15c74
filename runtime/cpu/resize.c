/* resize.c - Resize (opsets 10, 11, 13, 18, 19) and Upsample (7, 9).
 *
 * Every mode is separable, so prepare compiles one table per resized axis:
 *   nearest        a source index per output coordinate (-1 = outside the
 *                  crop of tf_crop_and_resize), run by the shp_map gather of
 *                  shp_common.h on raw bytes: any dtype, no arithmetic;
 *   linear, cubic  per output coordinate, weights over a window of
 *                  consecutive source elements (edge clamping, antialias and
 *                  exclude_outside already folded in); run as one pass per
 *                  resized axis in float32, in the cheapest order (shrinking
 *                  axes first), ping-ponging through the workspace.
 * Axes whose table is the identity are skipped.  Coordinates follow the ONNX
 * reference implementation (onnx/reference/ops/op_resize.py), including its
 * use of the fractional output length scale * in_len in align_corners,
 * pytorch_half_pixel, half_pixel_symmetric and tf_crop_and_resize (ONNX
 * Runtime uses the integer length there: the two differ only when
 * scale * in_len is not an integer, and the ONNX conformance cases follow the
 * reference).  Integer outputs of linear/cubic are truncated, as both do. */
#include "cpu/shp_common.h"
#include "ops/resize.h"

/* The node's parameters, read once by the op layer (ops/resize.h). */
typedef nn_resize_params rsz_cfg;

/* One interpolation pass: [outer, in_len, inner] -> [outer, out_len, inner]. */
typedef struct rsz_pass {
  int axis;
  int taps;                         /* window of consecutive source indices */
  int64_t outer, in_len, out_len, inner;
  size_t lo_off, w_off, flag_off;   /* byte offsets of the tables in priv */
} rsz_pass;

typedef struct rsz_priv {
  int mode;                         /* NN_RESIZE_NEAREST: a shp_map follows at map_off */
  size_t map_off;
  nn_dtype dt;
  bool float_in, float_out;
  int npass;
  rsz_pass pass[NN_MAX_RANK];
  float extrap;
  size_t conv_bytes, buf_bytes;     /* workspace layout */
} rsz_priv;

/* ---- coordinates ------------------------------------------------------------ */

/* Source coordinate of output index x along axis d.  Computed in float32,
 * as ONNX Runtime does: nearest rounding of ties such as (11 + 0.5) / 2.3f
 * - 0.5 = 4.5 depends on it, and double arithmetic would pick the other
 * neighbour. */
static double rsz_coord(const rsz_cfg *g, int d, int64_t x) {
  float s = (float)g->scale[d], in = (float)g->in[d];
  float ow = s * in;                     /* the reference's output_width */
  float xr = (float)x;
  switch (g->coord) {
  case NN_RESIZE_ALIGN_CORNERS:
    return ow == 1 ? 0.0f : xr * (in - 1) / (ow - 1);
  case NN_RESIZE_ASYMMETRIC:
    return xr / s;
  case NN_RESIZE_TF_HALF_PIXEL_FOR_NN:
    return (xr + 0.5f) / s;
  case NN_RESIZE_TF_CROP_AND_RESIZE: {
    float r0 = (float)g->roi0[d], r1 = (float)g->roi1[d];
    float v = ow == 1 ? (r1 - r0) * (in - 1) / 2 : xr * (r1 - r0) * (in - 1) / (ow - 1);
    return v + r0 * (in - 1);
  }
  case NN_RESIZE_PYTORCH_HALF_PIXEL:
    return ow == 1 ? -0.5f : (xr + 0.5f) / s - 0.5f;
  case NN_RESIZE_HALF_PIXEL_SYMMETRIC: {
    float adj = (float)g->out[d] / ow;
    float center = in / 2;
    return center * (1 - adj) + (xr + 0.5f) / s - 0.5f;
  }
  default:
    return (xr + 0.5f) / s - 0.5f;
  }
}

static bool rsz_outside(const rsz_cfg *g, int d, double xo) {
  return g->coord == NN_RESIZE_TF_CROP_AND_RESIZE && (xo < 0 || xo > (double)(g->in[d] - 1));
}

static int64_t rsz_clamp(int64_t v, int64_t len) {
  return v < 0 ? 0 : v >= len ? len - 1 : v;
}

static int64_t rsz_nearest_index(const rsz_cfg *g, int d, int64_t x) {
  double xo = rsz_coord(g, d, x);
  if (rsz_outside(g, d, xo))
    return -1;
  double f = floor(xo);
  int64_t k;
  if (xo == f) {
    k = (int64_t)f;
  } else {
    double ratio = xo - f;
    switch (g->nearest) {
    case NN_RESIZE_ROUND_PREFER_CEIL: k = (int64_t)f + (ratio >= 0.5); break;
    case NN_RESIZE_FLOOR: k = (int64_t)f; break;
    case NN_RESIZE_CEIL: k = (int64_t)f + 1; break;
    /* ONNX Runtime's rule for Upsample and Resize-10 */
    case NN_RESIZE_NEAREST_LEGACY: k = g->scale[d] < 1 ? (int64_t)ceil(xo) : (int64_t)xo; break;
    default: k = (int64_t)f + (ratio > 0.5); break;
    }
  }
  return rsz_clamp(k, g->in[d]);
}

static double rsz_cubic(double t, double a) {
  t = fabs(t);
  if (t <= 1)
    return ((a + 2) * t - (a + 3)) * t * t + 1;
  if (t < 2)
    return ((a * t - 5 * a) * t + 8 * a) * t - 4 * a;
  return 0;
}

/* Taps per output coordinate and the offset of the first one relative to
 * the reference's base index; false when a tiny antialias scale would need
 * more than 2^24 taps. */
static bool rsz_footprint(const rsz_cfg *g, int d, int *taps, int64_t *start, double *ks) {
  double s = g->antialias && g->scale[d] < 1 ? g->scale[d] : 1.0;
  double st = g->mode == NN_RESIZE_LINEAR ? floor(-1.0 / s) + 1 : floor(-2.0 / s) + 1;
  if (!(st > -(double)(1 << 23)))
    return false;
  *start = (int64_t)st;
  *taps = (int)(2 - 2 * *start);
  *ks = s;
  return true;
}

/* Weights for output coordinate x of axis d, folded onto a window of `win`
 * consecutive source indices starting at *lo: the taps are consecutive
 * indices, and the ones clamped at the edges merge into the border
 * elements, so a pass reads contiguous memory.  `raw` is scratch for `taps`
 * doubles.  Returns false when the coordinate lies outside a
 * tf_crop_and_resize crop. */
static bool rsz_weights(const rsz_cfg *g, int d, int64_t x, int taps, int64_t start, double ks,
                        int win, double *raw, int64_t *lo, float *w) {
  double xo = rsz_coord(g, d, x);
  if (rsz_outside(g, d, xo))
    return false;
  const int64_t in = g->in[d];
  /* the reference prefers the neighbour left of xo: ratio in (0, 1] */
  double f = floor(xo);
  double base = xo == f ? f - 1 : f;
  double ratio = xo - base;
  int64_t first = (int64_t)base + start;
  double sum = 0;
  for (int i = 0; i < taps; i++) {
    double t = ((double)(start + i) - ratio) * ks;
    double v = g->mode == NN_RESIZE_LINEAR ? (fabs(t) < 1 ? 1 - fabs(t) : 0)
                                           : rsz_cubic(t, g->cubic_a);
    if (g->exclude_outside && (first + i < 0 || first + i >= in))
      v = 0;
    raw[i] = v;
    sum += v;
  }
  int64_t a = rsz_clamp(first, in);
  *lo = a < in - win ? a : in - win;
  for (int i = 0; i < win; i++)
    w[i] = 0;
  /* antialias footprints and exclude_outside renormalize, as the reference */
  for (int i = 0; i < taps; i++)
    w[rsz_clamp(first + i, in) - *lo] += sum != 0 ? (float)(raw[i] / sum) : 0.0f;
  return true;
}

/* ---- prepare ---------------------------------------------------------------------------- */

static nn_status rsz_build_nearest(nn_ctx *c, nn_node *n, const rsz_cfg *g, size_t es,
                                   size_t head) {
  int r = g->rank;
  int64_t total = 0;
  for (int d = 0; d < r; d++)
    total += g->out[d];
  int64_t *buf = nn_malloc((size_t)(total ? total : 1) * sizeof(int64_t));
  if (!buf)
    return nn_fail(c, NN_ERR_NOMEM, "out of memory");
  int64_t *maps[NN_MAX_RANK], off = 0;
  for (int d = 0; d < r; d++) {
    maps[d] = buf + off;
    off += g->out[d];
    for (int64_t j = 0; j < g->out[d]; j++)
      maps[d][j] = rsz_nearest_index(g, d, j);
  }
  int64_t one = 1, zero = 0, *zmap = &zero;
  const int64_t *od = g->out, *id = g->in;
  int rr = r;
  if (r == 0) {
    rr = 1;
    od = id = &one;
    maps[0] = zmap;
  }
  int64_t nseg = shp_map_count_segs(maps[rr - 1], od[rr - 1]);
  rsz_priv *p = nn_calloc(1, head + shp_map_bytes(rr, od, nseg));
  if (!p) {
    nn_free(buf);
    return nn_fail(c, NN_ERR_NOMEM, "out of memory");
  }
  n->priv = p;
  p->mode = NN_RESIZE_NEAREST;
  p->map_off = head;
  unsigned char cval[16];
  shp_store_double(n->x[0]->dtype, g->extrapolation, cval);
  shp_map *m = (shp_map *)((unsigned char *)p + head);
  shp_map_init(m, es, rr, od, id, maps[rr - 1], cval);
  int64_t *mm = shp_map_maps(m);
  for (int d = 0; d + 1 < rr; d++)
    memcpy(mm + m->map_off[d], maps[d], (size_t)od[d] * sizeof(int64_t));
  nn_free(buf);
  return NN_OK;
}

/* Multiply-adds of running passes tab[0..nt) in that order; a pass over the
 * innermost axis is a strided reduction per output and costs more per tap
 * than a pass whose rows are whole contiguous vectors. */
static double rsz_cost(const rsz_cfg *g, const rsz_pass *tab, const int *order, int nt) {
  int64_t cur[NN_MAX_RANK];
  memcpy(cur, g->in, sizeof cur);
  double cost = 0;
  for (int i = 0; i < nt; i++) {
    int d = tab[order[i]].axis;
    double inner = (double)nn_dims_numel(g->rank - d - 1, cur + d + 1);
    double work = (double)nn_dims_numel(d, cur) * (double)g->out[d] * inner * tab[order[i]].taps;
    cost += inner < 8 ? 4 * work : work;
    cur[d] = g->out[d];
  }
  return cost;
}

/* Separable passes commute (up to rounding), so run them in the cheapest
 * order: typically shrinking axes first and growing ones last. */
static void rsz_order(const rsz_cfg *g, rsz_pass *tab, int nt) {
  if (nt < 2 || nt > 5)
    return;
  int perm[5], best[5];
  for (int i = 0; i < nt; i++)
    perm[i] = best[i] = i;
  double best_cost = rsz_cost(g, tab, perm, nt);
  /* Heap's algorithm over at most 120 orders */
  int cnt[5] = {0};
  for (int i = 1; i < nt;) {
    if (cnt[i] < i) {
      int k = i % 2 ? cnt[i] : 0, t = perm[k];
      perm[k] = perm[i];
      perm[i] = t;
      double cst = rsz_cost(g, tab, perm, nt);
      if (cst < best_cost * 0.999) {
        best_cost = cst;
        memcpy(best, perm, sizeof perm);
      }
      cnt[i]++;
      i = 1;
    } else {
      cnt[i++] = 0;
    }
  }
  rsz_pass tmp[5];
  for (int i = 0; i < nt; i++)
    tmp[i] = tab[best[i]];
  memcpy(tab, tmp, (size_t)nt * sizeof *tab);
}

static nn_status rsz_build_interp(nn_ctx *c, nn_node *n, const rsz_cfg *g) {
  nn_value *x = n->x[0];
  nn_dtype dt = x->dtype;
  if (!nn_dtype_is_float(dt) && !nn_dtype_is_int(dt))
    return nn_fail(c, NN_ERR_UNSUPPORTED, "interpolating %s is not supported", nn_dtype_name(dt));
  int r = g->rank;
  /* footprints and table sizes first: priv is one block */
  int taps[NN_MAX_RANK], win[NN_MAX_RANK], max_taps = 1;
  int64_t start[NN_MAX_RANK];
  double ks[NN_MAX_RANK];
  size_t bytes = nn_align_up(sizeof(rsz_priv), 8);
  for (int d = 0; d < r; d++) {
    if (!rsz_footprint(g, d, &taps[d], &start[d], &ks[d]))
      return nn_fail(c, NN_ERR_LIMIT, "antialias scale %g needs too many taps", g->scale[d]);
    win[d] = g->in[d] < taps[d] ? (int)g->in[d] : taps[d];
    max_taps = taps[d] > max_taps ? taps[d] : max_taps;
    size_t cnt = (size_t)g->out[d] * (size_t)win[d];
    bytes += nn_align_up((size_t)g->out[d] * sizeof(int64_t), 8) + nn_align_up(cnt * sizeof(float), 8) +
             nn_align_up((size_t)g->out[d], 8);
  }
  rsz_priv *p = nn_calloc(1, bytes);
  double *raw = nn_malloc((size_t)max_taps * sizeof(double));
  if (!p || !raw) {
    nn_free(p);
    nn_free(raw);
    return nn_fail(c, NN_ERR_NOMEM, "out of memory");
  }
  n->priv = p;
  p->mode = g->mode;
  p->dt = dt;
  p->float_in = p->float_out = dt == NN_DTYPE_FLOAT;
  p->extrap = (float)g->extrapolation;
  size_t off = nn_align_up(sizeof(rsz_priv), 8);
  /* tables of every axis; identity axes get no pass */
  rsz_pass tab[NN_MAX_RANK];
  int nt = 0;
  for (int d = r - 1; d >= 0; d--) {
    const int wn = win[d];
    int64_t *lo = (int64_t *)((unsigned char *)p + off);
    float *w = (float *)((unsigned char *)lo + nn_align_up((size_t)g->out[d] * sizeof(int64_t), 8));
    unsigned char *flag = (unsigned char *)w + nn_align_up((size_t)g->out[d] * (size_t)wn * sizeof(float), 8);
    bool ident = g->out[d] == g->in[d];
    for (int64_t j = 0; j < g->out[d]; j++) {
      float *wj = w + j * wn;
      flag[j] = !rsz_weights(g, d, j, taps[d], start[d], ks[d], wn, raw, &lo[j], wj);
      /* identity: all the weight on source j */
      for (int t = 0; t < wn && ident && !flag[j]; t++)
        ident = lo[j] + t == j ? fabsf(wj[t] - 1.0f) < 1e-6f : fabsf(wj[t]) < 1e-7f;
      ident = ident && !flag[j];
    }
    if (ident)
      continue;
    rsz_pass *ps = &tab[nt++];
    ps->axis = d;
    ps->taps = wn;
    ps->lo_off = off;
    ps->w_off = (size_t)((unsigned char *)w - (unsigned char *)p);
    ps->flag_off = (size_t)(flag - (unsigned char *)p);
    off = ps->flag_off + nn_align_up((size_t)g->out[d], 8);
  }
  rsz_order(g, tab, nt);
  int64_t cur[NN_MAX_RANK];
  memcpy(cur, g->in, sizeof cur);
  /* ping-pong buffers hold the passes' results except the last one's, which
   * goes straight to y when y is float: only the passes that write a buffer
   * size it (the last of a 32x32 -> 512x512 upscale is the whole output) */
  int64_t maxbuf = 0;
  int nwrite = 0;
  for (int i = 0; i < nt; i++) {
    rsz_pass *ps = &p->pass[p->npass++];
    *ps = tab[i];
    int d = ps->axis;
    ps->outer = nn_dims_numel(d, cur);
    ps->in_len = cur[d];
    ps->out_len = g->out[d];
    ps->inner = nn_dims_numel(r - d - 1, cur + d + 1);
    cur[d] = g->out[d];
    int64_t ne = nn_dims_numel(r, cur);
    if (i == nt - 1 && p->float_out)
      break;
    nwrite++;
    if (ne > maxbuf)
      maxbuf = ne;
  }
  nn_free(raw);
  p->conv_bytes = p->float_in || p->npass == 0 ? 0 : nn_align_up((size_t)x->numel * sizeof(float), NN_ALIGN);
  int nbuf = nwrite < 2 ? nwrite : 2;
  p->buf_bytes = nn_align_up((size_t)maxbuf * sizeof(float), NN_ALIGN);
  n->ws_bytes = p->conv_bytes + (size_t)nbuf * p->buf_bytes;
  return NN_OK;
}

static nn_status resize_prepare(nn_ctx *c, nn_node *n) {
  nn_value *x = n->x[0];
  size_t es;
  nn_status st = shp_elem_size(c, x, &es);
  if (st != NN_OK)
    return st;
  if (x->dtype == NN_DTYPE_STRING) /* views are not numbers to interpolate */
    return nn_fail(c, NN_ERR_UNSUPPORTED, "data type string is not supported");
  /* the op layer's parameters, from which its inference set Y */
  rsz_cfg g;
  if ((st = nn_resize_params_init(c, n, &g)) != NN_OK)
    return st;
  if (n->y[0]->numel == 0) {
    /* nothing to write; the tables would be sized by the other output dims,
     * which an empty output leaves unbounded ([0, 2^31] from hostile sizes) */
    memset(g.out, 0, sizeof g.out);
    return rsz_build_nearest(c, n, &g, es, nn_align_up(sizeof(rsz_priv), 8));
  }
  if (g.mode == NN_RESIZE_NEAREST)
    return rsz_build_nearest(c, n, &g, es, nn_align_up(sizeof(rsz_priv), 8));
  return rsz_build_interp(c, n, &g);
}

/* ---- run ------------------------------------------------------------------------------------- */

typedef struct rsz_job {
  const rsz_pass *ps;
  const int64_t *lo;
  const float *w;
  const unsigned char *flag;
  const float *src;
  float *dst;
  float extrap;
} rsz_job;

#if defined(__GNUC__)
/* Portable 4-lane vectors (GCC/Clang extension, lowered to whatever the
 * target has): at -O2 GCC does not vectorize loops with unknown trip counts
 * by itself. */
typedef float rsz_v4 __attribute__((vector_size(16)));
static inline rsz_v4 rsz_ld(const float *p) {
  rsz_v4 v;
  memcpy(&v, p, sizeof v);
  return v;
}
static inline void rsz_st(float *p, rsz_v4 v) { memcpy(p, &v, sizeof v); }
#endif

/* d[i] = sum_t w[t] * s[t * stride + i] for i < n. */
static inline void rsz_rows(float *restrict d, const float *restrict s, const float *restrict w,
                            int T, int64_t stride, int64_t n) {
  int64_t i = 0;
#if defined(__GNUC__)
  for (; i + 8 <= n; i += 8) {
    rsz_v4 a0 = {0, 0, 0, 0}, a1 = {0, 0, 0, 0};
    for (int t = 0; t < T; t++) {
      const float *st = s + t * stride + i;
      a0 += w[t] * rsz_ld(st);
      a1 += w[t] * rsz_ld(st + 4);
    }
    rsz_st(d + i, a0);
    rsz_st(d + i + 4, a1);
  }
#endif
  for (; i < n; i++) {
    float a = 0;
    for (int t = 0; t < T; t++)
      a += w[t] * s[t * stride + i];
    d[i] = a;
  }
}

/* sum_t w[t] * s[t] */
static inline float rsz_dot(const float *restrict s, const float *restrict w, int T) {
  int t = 0;
  float a = 0;
#if defined(__GNUC__)
  if (T >= 8) {
    rsz_v4 acc = {0, 0, 0, 0};
    for (; t + 4 <= T; t += 4)
      acc += rsz_ld(w + t) * rsz_ld(s + t);
    a = (acc[0] + acc[1]) + (acc[2] + acc[3]);
  }
#endif
  for (; t < T; t++)
    a += w[t] * s[t];
  return a;
}

static void rsz_pass_range(void *arg, int64_t begin, int64_t end) {
  const rsz_job *j = arg;
  const rsz_pass *ps = j->ps;
  const int T = ps->taps;
  const int64_t inner = ps->inner, lin = ps->in_len, lout = ps->out_len;
  for (int64_t row = begin; row < end; row++) {
    int64_t o = row / lout, l = row % lout;
    float *d = j->dst + row * inner;
    if (j->flag[l]) {
      for (int64_t i = 0; i < inner; i++)
        d[i] = j->extrap;
      continue;
    }
    const float *wt = j->w + l * T;
    const float *s = j->src + (o * lin + j->lo[l]) * inner;
    if (inner == 1)
      *d = rsz_dot(s, wt, T);
    else
      rsz_rows(d, s, wt, T, inner, inner);
  }
}

static nn_status resize_run(nn_ctx *c, nn_node *n) {
  const rsz_priv *p = n->priv;
  nn_value *x = n->x[0], *y = n->y[0];
  if (p->mode == NN_RESIZE_NEAREST) {
    shp_map_run(c, (const shp_map *)((const unsigned char *)p + p->map_off), y->data, x->data);
    return NN_OK;
  }
  if (y->numel == 0)
    return NN_OK;
  if (p->npass == 0) {
    if (y->data != x->data)
      memcpy(y->data, x->data, y->nbytes);
    return NN_OK;
  }
  unsigned char *ws = n->ws;
  const float *src = x->data;
  if (!p->float_in) {
    float *conv = (float *)ws;
    for (int64_t i = 0; i < x->numel; i++)
      conv[i] = (float)nn_value_get_double(x, i);
    src = conv;
  }
  float *bufs[2] = {NULL, NULL};
  if (ws) {
    bufs[0] = (float *)(ws + p->conv_bytes);
    if (p->npass - (p->float_out ? 1 : 0) > 1) /* a second buffer only when two passes write one */
      bufs[1] = (float *)(ws + p->conv_bytes + p->buf_bytes);
  }
  for (int i = 0; i < p->npass; i++) {
    const rsz_pass *ps = &p->pass[i];
    bool last = i == p->npass - 1;
    float *dst = last && p->float_out ? (float *)y->data : bufs[i % 2];
    rsz_job j = {ps,
                 (const int64_t *)((const unsigned char *)p + ps->lo_off),
                 (const float *)((const unsigned char *)p + ps->w_off),
                 (const unsigned char *)p + ps->flag_off,
                 src, dst, p->extrap};
    nn_parallel_for(c, ps->outer * ps->out_len,
                    shp_grain_rows((size_t)(ps->inner * ps->taps) * sizeof(float)), rsz_pass_range, &j);
    src = dst;
  }
  if (!p->float_out) {
    size_t es = nn_dtype_size(p->dt);
    unsigned char *out = y->data;
    bool is_int = nn_dtype_is_int(p->dt);
    for (int64_t i = 0; i < y->numel; i++)
      shp_store_double(p->dt, is_int ? trunc((double)src[i]) : (double)src[i], out + (size_t)i * es);
  }
  return NN_OK;
}

const nn_kernel nn_kernels_resize[] = {
  {.name = "Resize", .prepare = resize_prepare, .run = resize_run},
  {.name = "Upsample", .prepare = resize_prepare, .run = resize_run},
  {0},
};

/* sampling.c - CPU kernels of the ops that sample a tensor at computed
 * spatial positions or fold patches back onto its grid: GridSample (16/20),
 * AffineGrid (20), Col2Im (18) and RoiAlign (10/16; GridSample-22 and
 * RoiAlign-22 are type-only and need no entry).  Resize is in resize.c.
 * The shapes, attributes and geometry are the op layer's (ops/sampling.h,
 * ops/sampling.c). */
#include "cpu/kernel_util.h"
#include "ops/sampling.h"

/* ---- GridSample ----------------------------------------------------------------
 * Follows the ONNX reference (itself PyTorch's grid_sampler): unnormalize,
 * fold out-of-range coordinates by the padding mode, then interpolate from
 * per-dimension taps whose indices are folded again when fetched. */

#define GS_MAX_DIMS 3

typedef struct gs_params {
  int mode, pad, align, r;
  int64_t N, C, P;              /* P: output points per batch */
  int64_t dims[GS_MAX_DIMS];    /* spatial dims of X */
  int64_t xstride[GS_MAX_DIMS]; /* element strides of X's spatial dims */
  int64_t plane;                /* elements of one X channel */
} gs_params;

static nn_status gs_prepare(nn_ctx *c, nn_node *n) {
  nn_value *x = n->x[0], *g = n->x[1];
  if (!ku_is_real(x->dtype))
    return nn_fail(c, NN_ERR_UNSUPPORTED, "unsupported type %s", nn_dtype_name(x->dtype));
  gs_params p;
  memset(&p, 0, sizeof p);
  p.r = x->rank - 2;
  if (p.r > GS_MAX_DIMS)
    return nn_fail(c, NN_ERR_UNSUPPORTED, "input rank %d not supported (3..5-D)", x->rank);
  nn_gridsample_attrs a;
  nn_status st = nn_gridsample_attrs_init(c, n, &a);
  if (st != NN_OK)
    return st;
  p.mode = a.mode;
  p.pad = a.pad;
  p.align = a.align;
  p.N = x->dims[0];
  p.C = x->dims[1];
  p.P = nn_dims_numel(p.r, g->dims + 1);
  int64_t s = 1;
  for (int i = p.r - 1; i >= 0; i--) {
    p.dims[i] = x->dims[2 + i];
    p.xstride[i] = s;
    s *= p.dims[i];
  }
  p.plane = s;
  gs_params *pp = nn_malloc(sizeof *pp);
  if (!pp)
    return nn_fail(c, NN_ERR_NOMEM, "out of memory");
  *pp = p;
  n->priv = pp;
  return NN_OK;
}

/* Fold x into [lo, hi] by mirroring at the borders as often as needed. */
static double gs_reflect(double x, double lo, double hi) {
  double rng = hi - lo;
  if (!(rng > 0.0))
    return lo;
  if (x < lo) {
    double dx = lo - x, k = floor(dx / rng), r = dx - k * rng;
    return fmod(k, 2.0) == 0.0 ? lo + r : hi - r;
  }
  if (x > hi) {
    double dx = x - hi, k = floor(dx / rng), r = dx - k * rng;
    return fmod(k, 2.0) == 0.0 ? hi - r : lo + r;
  }
  return x;
}

/* Index to fetch for tap i along a dim of size d; -1 reads as zero. */
static inline int64_t gs_tap(const gs_params *p, int64_t i, int64_t d) {
  if (p->pad == NN_GS_ZEROS)
    return (i >= 0 && i < d) ? i : -1;
  if (p->pad == NN_GS_BORDER)
    return i < 0 ? 0 : i >= d ? d - 1 : i;
  double lo = p->align ? 0.0 : -0.5, hi = p->align ? (double)d - 1.0 : (double)d - 0.5;
  int64_t k = (int64_t)trunc(gs_reflect((double)i, lo, hi));
  return k < 0 ? 0 : k >= d ? d - 1 : k;
}

static inline void gs_cubic_coeffs(double t, double w[4]) {
  const double A = -0.75;
  double t1 = t + 1.0, u = 1.0 - t, u1 = 2.0 - t;
  w[0] = ((A * t1 - 5.0 * A) * t1 + 8.0 * A) * t1 - 4.0 * A;
  w[1] = ((A + 2.0) * t - (A + 3.0)) * t * t + 1.0;
  w[2] = ((A + 2.0) * u - (A + 3.0)) * u * u + 1.0;
  w[3] = ((A * u1 - 5.0 * A) * u1 + 8.0 * A) * u1 - 4.0 * A;
}

typedef struct gs_job {
  const gs_params *p;
  nn_node *n;
} gs_job;

static void gs_range(void *arg, int64_t begin, int64_t end) {
  gs_job *job = arg;
  const gs_params *p = job->p;
  nn_value *X = job->n->x[0], *G = job->n->x[1], *Y = job->n->y[0];
  for (int64_t np = begin; np < end; np++) {
    int64_t b = np / p->P, pt = np % p->P;
    int64_t idx[GS_MAX_DIMS][4];
    double wt[GS_MAX_DIMS][4];
    int ntap = p->mode == NN_GS_LINEAR ? 2 : p->mode == NN_GS_CUBIC ? 4 : 1;
    for (int i = 0; i < p->r; i++) {
      double d = (double)p->dims[i];
      /* grid's last axis lists coordinates innermost dim first (x, y, z) */
      double g = ku_ldd(G->data, G->dtype, np * p->r + (p->r - 1 - i));
      double x = p->align ? (g + 1.0) / 2.0 * (d - 1.0) : ((g + 1.0) * d - 1.0) / 2.0;
      /* NaN and huge coordinates land far outside, where every mode is defined */
      if (!(x >= -4e9))
        x = -4e9;
      if (x > 4e9)
        x = 4e9;
      if (p->mode == NN_GS_NEAREST)
        x = nearbyint(x);
      double lo = p->align ? 0.0 : -0.5, hi = p->align ? d - 1.0 : d - 0.5;
      if (x < lo || x > hi) {
        if (p->pad == NN_GS_BORDER)
          x = x < 0.0 ? 0.0 : x > d - 1.0 ? d - 1.0 : x;
        else if (p->pad == NN_GS_REFLECTION)
          x = gs_reflect(x, lo, hi);
      }
      if (p->mode == NN_GS_NEAREST) {
        idx[i][0] = gs_tap(p, (int64_t)x, p->dims[i]);
        wt[i][0] = 1.0;
      } else {
        double x0 = floor(x), t = x - x0;
        int64_t i0 = (int64_t)x0;
        if (p->mode == NN_GS_LINEAR) {
          idx[i][0] = gs_tap(p, i0, p->dims[i]);
          idx[i][1] = gs_tap(p, i0 + 1, p->dims[i]);
          wt[i][0] = 1.0 - t;
          wt[i][1] = t;
        } else {
          gs_cubic_coeffs(t, wt[i]);
          for (int k = 0; k < 4; k++)
            idx[i][k] = gs_tap(p, i0 - 1 + k, p->dims[i]);
        }
      }
    }
    /* expand the per-dim taps into (offset, weight) pairs once per point */
    int64_t off[64];
    double w[64];
    int ncomb = 0, total = 1;
    for (int i = 0; i < p->r; i++)
      total *= ntap;
    for (int k = 0; k < total; k++) {
      int rem = k;
      int64_t o = 0;
      double ww = 1.0;
      for (int i = p->r - 1; i >= 0; i--) {
        int t = rem % ntap;
        rem /= ntap;
        if (idx[i][t] < 0) {
          ww = 0.0;
          break;
        }
        o += idx[i][t] * p->xstride[i];
        ww *= wt[i][t];
      }
      if (ww != 0.0) {
        off[ncomb] = o;
        w[ncomb++] = ww;
      }
    }
    for (int64_t ch = 0; ch < p->C; ch++) {
      int64_t xb = (b * p->C + ch) * p->plane;
      double acc = 0.0;
      for (int k = 0; k < ncomb; k++)
        acc += w[k] * ku_ldd(X->data, X->dtype, xb + off[k]);
      ku_std(Y->data, Y->dtype, (b * p->C + ch) * p->P + pt, acc);
    }
  }
}

static nn_status gs_run(nn_ctx *c, nn_node *n) {
  const gs_params *p = n->priv;
  gs_job job = {p, n};
  nn_parallel_for(c, p->N * p->P, 64, gs_range, &job);
  return NN_OK;
}

/* ---- AffineGrid ------------------------------------------------------------------- */

static inline double affine_base(int64_t i, int64_t len, bool align) {
  if (align)
    return len > 1 ? -1.0 + 2.0 * (double)i / (double)(len - 1) : -1.0;
  return -1.0 + (2.0 * (double)i + 1.0) / (double)len;
}

static nn_status affine_run(nn_ctx *c, nn_node *n) {
  (void)c;
  nn_value *th = n->x[0], *y = n->y[0];
  bool align = nn_attr_int(n, "align_corners", 0) != 0;
  int r = y->rank - 2;
  int64_t N = y->dims[0];
  int64_t D = r == 3 ? y->dims[1] : 1, H = y->dims[r == 3 ? 2 : 1], W = y->dims[r == 3 ? 3 : 2];
  int64_t o = 0;
  for (int64_t b = 0; b < N; b++) {
    double t[12];
    for (int k = 0; k < r * (r + 1); k++)
      t[k] = ku_ldd(th->data, th->dtype, b * r * (r + 1) + k);
    for (int64_t dz = 0; dz < D; dz++)
      for (int64_t hy = 0; hy < H; hy++)
        for (int64_t wx = 0; wx < W; wx++) {
          double v[4] = {affine_base(wx, W, align), affine_base(hy, H, align),
                         r == 3 ? affine_base(dz, D, align) : 1.0, 1.0};
          for (int row = 0; row < r; row++) {
            double acc = 0.0;
            for (int k = 0; k <= r; k++)
              acc += t[row * (r + 1) + k] * v[k];
            ku_std(y->data, y->dtype, o++, acc);
          }
        }
  }
  return NN_OK;
}

/* ---- Col2Im ------------------------------------------------------------------------- */

static nn_status col2im_prepare(nn_ctx *c, nn_node *n) {
  nn_value *x = n->x[0];
  if (!ku_is_real(x->dtype))
    return nn_fail(c, NN_ERR_UNSUPPORTED, "unsupported type %s", nn_dtype_name(x->dtype));
  nn_col2im_geom p;
  nn_status st = nn_col2im_geom_init(c, n, &p);
  if (st != NN_OK)
    return st;
  /* one image plane accumulated in double */
  n->ws_bytes = n->y[0]->numel ? (size_t)nn_dims_numel(p.r, p.img) * sizeof(double) : 0;
  nn_col2im_geom *pp = nn_malloc(sizeof *pp);
  if (!pp)
    return nn_fail(c, NN_ERR_NOMEM, "out of memory");
  *pp = p;
  n->priv = pp;
  return NN_OK;
}

static nn_status col2im_run(nn_ctx *c, nn_node *n) {
  (void)c;
  const nn_col2im_geom *p = n->priv;
  nn_value *x = n->x[0], *y = n->y[0];
  nn_dtype dt = x->dtype;
  int64_t plane = nn_dims_numel(p->r, p->img);
  double *acc = n->ws;
  for (int64_t nc = 0; nc < p->N * p->C; nc++) {
    for (int64_t i = 0; i < plane; i++)
      acc[i] = 0.0;
    for (int64_t k = 0; k < p->K; k++) {
      int64_t koff[NN_MAX_RANK];
      int64_t rem = k;
      for (int i = p->r - 1; i >= 0; i--) {
        koff[i] = rem % p->blk[i];
        rem /= p->blk[i];
      }
      for (int64_t l = 0; l < p->L; l++) {
        int64_t rl = l, yo = 0;
        bool inside = true;
        int64_t pos[NN_MAX_RANK];
        for (int i = p->r - 1; i >= 0; i--) {
          pos[i] = (rl % p->nb[i]) * p->str[i] - p->pad[i] + koff[i] * p->dil[i];
          rl /= p->nb[i];
          if (pos[i] < 0 || pos[i] >= p->img[i])
            inside = false;
        }
        if (!inside)
          continue;
        for (int i = 0; i < p->r; i++)
          yo = yo * p->img[i] + pos[i];
        acc[yo] += ku_ldd(x->data, dt, (nc * p->K + k) * p->L + l);
      }
    }
    for (int64_t i = 0; i < plane; i++)
      ku_std(y->data, dt, nc * plane + i, acc[i]);
  }
  return NN_OK;
}

/* ---- RoiAlign ------------------------------------------------------------------------ */

static nn_status roi_prepare(nn_ctx *c, nn_node *n) {
  nn_roialign_attrs p;
  nn_status st = nn_roialign_attrs_init(c, n, &p);
  if (st != NN_OK)
    return st;
  /* per-channel accumulators of one output bin */
  n->ws_bytes = (size_t)n->x[0]->dims[1] * sizeof(double);
  nn_roialign_attrs *pp = nn_malloc(sizeof *pp);
  if (!pp)
    return nn_fail(c, NN_ERR_NOMEM, "out of memory");
  *pp = p;
  n->priv = pp;
  return NN_OK;
}

/* Adaptive sampling asks ceil(roi / bin) points per bin; a hostile roi would
 * make that unbounded.  A roi inside the map never needs more points per bin
 * than the map has pixels along that axis, so the grid is capped at twice
 * the map size (and the bound on sampling_ratio, NN_ROI_MAX_GRID). */
static inline int64_t roi_grid(double len, int64_t bins, int64_t H, int64_t W) {
  double g = ceil(len / (double)bins);
  double cap = 2.0 * (double)(H > W ? H : W) + 2.0;
  if (cap > NN_ROI_MAX_GRID)
    cap = NN_ROI_MAX_GRID;
  if (!(g >= 1.0))
    return 1;
  return g > cap ? (int64_t)cap : (int64_t)g;
}

static nn_status roi_run(nn_ctx *c, nn_node *n) {
  const nn_roialign_attrs *p = n->priv;
  nn_value *x = n->x[0], *rois = n->x[1], *bi = n->x[2], *y = n->y[0];
  nn_dtype dt = x->dtype;
  int64_t N = x->dims[0], C = x->dims[1], H = x->dims[2], W = x->dims[3];
  int64_t R = rois->dims[0];
  double off = p->half_pixel ? 0.5 : 0.0;
  double *acc = n->ws;
  if (H == 0 || W == 0) {
    for (int64_t i = 0; i < y->numel; i++)
      ku_std(y->data, dt, i, 0.0);
    R = 0;
  }
  for (int64_t r = 0; r < R; r++) {
    int64_t b = nn_value_get_int(bi, r);
    if (b < 0 || b >= N)
      return nn_fail(c, NN_ERR_RUNTIME, "batch index %lld outside [0, %lld)", (long long)b,
                     (long long)N);
    double x0 = ku_ldd(rois->data, dt, r * 4) * p->scale - off;
    double y0 = ku_ldd(rois->data, dt, r * 4 + 1) * p->scale - off;
    double x1 = ku_ldd(rois->data, dt, r * 4 + 2) * p->scale - off;
    double y1 = ku_ldd(rois->data, dt, r * 4 + 3) * p->scale - off;
    double rw = x1 - x0, rh = y1 - y0;
    if (!p->half_pixel) {
      /* legacy mode forces malformed rois to 1x1 */
      rw = rw > 1.0 ? rw : 1.0;
      rh = rh > 1.0 ? rh : 1.0;
    }
    double bh = rh / (double)p->oh, bw = rw / (double)p->ow;
    int64_t gh = p->sampling > 0 ? p->sampling : roi_grid(rh, p->oh, H, W);
    int64_t gw = p->sampling > 0 ? p->sampling : roi_grid(rw, p->ow, H, W);
    double count = (double)(gh * gw > 0 ? gh * gw : 1);
    int64_t xbase = b * C * H * W;
    int64_t ybase = r * C * p->oh * p->ow;
    for (int64_t ph = 0; ph < p->oh; ph++)
      for (int64_t pw = 0; pw < p->ow; pw++) {
        for (int64_t ch = 0; ch < C; ch++)
          acc[ch] = 0.0;
        bool first = true;
        for (int64_t iy = 0; iy < gh; iy++) {
          double yy = y0 + (double)ph * bh + ((double)iy + 0.5) * bh / (double)gh;
          for (int64_t ix = 0; ix < gw; ix++) {
            double xx = x0 + (double)pw * bw + ((double)ix + 0.5) * bw / (double)gw;
            int64_t pos[4] = {0, 0, 0, 0};
            double w[4] = {0, 0, 0, 0};
            /* samples beyond one pixel outside the map contribute zero */
            if (!(yy < -1.0 || yy > (double)H || xx < -1.0 || xx > (double)W)) {
              double sy = yy > 0.0 ? yy : 0.0, sx = xx > 0.0 ? xx : 0.0;
              int64_t ylo = (int64_t)sy, xlo = (int64_t)sx, yhi, xhi;
              if (ylo >= H - 1) {
                yhi = ylo = H - 1;
                sy = (double)ylo;
              } else {
                yhi = ylo + 1;
              }
              if (xlo >= W - 1) {
                xhi = xlo = W - 1;
                sx = (double)xlo;
              } else {
                xhi = xlo + 1;
              }
              double ly = sy - (double)ylo, lx = sx - (double)xlo, hy = 1.0 - ly, hx = 1.0 - lx;
              pos[0] = ylo * W + xlo;
              pos[1] = ylo * W + xhi;
              pos[2] = yhi * W + xlo;
              pos[3] = yhi * W + xhi;
              w[0] = hy * hx;
              w[1] = hy * lx;
              w[2] = ly * hx;
              w[3] = ly * lx;
            }
            for (int64_t ch = 0; ch < C; ch++) {
              int64_t xb = xbase + ch * H * W;
              double v0 = w[0] * ku_ldd(x->data, dt, xb + pos[0]);
              double v1 = w[1] * ku_ldd(x->data, dt, xb + pos[1]);
              double v2 = w[2] * ku_ldd(x->data, dt, xb + pos[2]);
              double v3 = w[3] * ku_ldd(x->data, dt, xb + pos[3]);
              if (p->max_mode) {
                /* max of the weighted corners, as the reference does */
                double m = v0 > v1 ? v0 : v1;
                m = m > v2 ? m : v2;
                m = m > v3 ? m : v3;
                if (first || m > acc[ch])
                  acc[ch] = m;
              } else {
                acc[ch] += v0 + v1 + v2 + v3;
              }
            }
            first = false;
          }
        }
        int64_t yo = ybase + ph * p->ow + pw, ystride = p->oh * p->ow;
        for (int64_t ch = 0; ch < C; ch++)
          ku_std(y->data, dt, yo + ch * ystride, p->max_mode ? acc[ch] : acc[ch] / count);
      }
  }
  return NN_OK;
}

const nn_kernel nn_kernels_sampling[] = {
  {.name = "GridSample", .prepare = gs_prepare, .run = gs_run},
  {.name = "AffineGrid", .run = affine_run},
  {.name = "Col2Im", .prepare = col2im_prepare, .run = col2im_run},
  {.name = "RoiAlign", .prepare = roi_prepare, .run = roi_run},
  {0},
};

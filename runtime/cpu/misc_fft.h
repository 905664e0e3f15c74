/* misc_fft.h - DFT (17/20) and STFT (17).  Included only from misc.c.
 *
 * Signals carry a trailing dim of 1 (real) or 2 (real, imaginary).  Each
 * transform line is gathered into double buffers and transformed with an
 * iterative radix-2 FFT when the length is a power of two, a direct O(n^2)
 * sum otherwise.  Twiddles are computed per run into the workspace (n
 * sin/cos pairs, negligible next to the transforms). */
#ifndef NN_MISC_FFT_H
#define NN_MISC_FFT_H

#include "misc_common.h"

typedef struct dft_params {
  int64_t n;                 /* transform length */
  int64_t outer, inner;      /* elements before / after the axis (trailing dim excluded) */
  int64_t in_len, out_len;   /* along the axis */
  int64_t cin, cout;         /* trailing dims: 1 real, 2 complex */
  bool inverse, irfft;
  /* STFT framing */
  int64_t frames, step;
} dft_params;

/* Workspace of a transform of length up to n: re, im, tmp (2n), twiddles (2n). */
static nn_status fft_ws(nn_ctx *c, nn_node *n, int64_t len) {
  if (len > ((int64_t)1 << 30))
    return nn_fail(c, NN_ERR_LIMIT, "transform length %lld too large", (long long)len);
  n->ws_bytes = (size_t)len * 6 * sizeof(double);
  return NN_OK;
}

static void fft_twiddles(double *tw, int64_t n) {
  for (int64_t k = 0; k < n; k++) {
    double a = 2.0 * MISC_PI * (double)k / (double)n;
    tw[k] = cos(a);
    tw[n + k] = sin(a);
  }
}

/* In-place DFT of (re, im) of length n; sign -1 forward, +1 inverse (no
 * scaling).  tmp holds 2n doubles for the direct method, tw the twiddles. */
static void fft_line(int64_t n, const double *tw, double *re, double *im, int sign, double *tmp) {
  const double *cs = tw, *sn = tw + n;
  if (n <= 1)
    return;
  if ((n & (n - 1)) == 0) {
    for (int64_t i = 1, j = 0; i < n; i++) {
      int64_t bit = n >> 1;
      for (; j & bit; bit >>= 1)
        j ^= bit;
      j ^= bit;
      if (i < j) {
        double t = re[i]; re[i] = re[j]; re[j] = t;
        t = im[i]; im[i] = im[j]; im[j] = t;
      }
    }
    for (int64_t len = 2; len <= n; len <<= 1) {
      int64_t half = len / 2, step = n / len;
      for (int64_t s = 0; s < n; s += len)
        for (int64_t k = 0; k < half; k++) {
          double wr = cs[k * step], wi = sign * sn[k * step];
          double *ar = re + s + k, *ai = im + s + k;
          double *br = ar + half, *bi = ai + half;
          double tr = *br * wr - *bi * wi, ti = *br * wi + *bi * wr;
          *br = *ar - tr;
          *bi = *ai - ti;
          *ar += tr;
          *ai += ti;
        }
    }
    return;
  }
  double *tr = tmp, *ti = tmp + n;
  for (int64_t k = 0; k < n; k++) {
    double sr = 0.0, si = 0.0;
    int64_t idx = 0;
    for (int64_t j = 0; j < n; j++) {
      double wr = cs[idx], wi = sign * sn[idx];
      sr += re[j] * wr - im[j] * wi;
      si += re[j] * wi + im[j] * wr;
      idx += k;
      if (idx >= n)
        idx -= n;
    }
    tr[k] = sr;
    ti[k] = si;
  }
  memcpy(re, tr, (size_t)n * sizeof(double));
  memcpy(im, ti, (size_t)n * sizeof(double));
}

/* ---- DFT ------------------------------------------------------------------------
 * dft_length (input 1) and, from opset 20, axis (input 2) are shape inputs:
 * their values are known at prepare. */

static nn_status dft_axis(nn_ctx *c, const nn_node *n, const nn_value *x, int *ax) {
  int64_t a;
  const nn_value *av = n->version >= 20 ? misc_in(n, 2) : NULL;
  if (av) {
    if (!misc_is_index(av->dtype) || av->numel != 1 || !av->data)
      return nn_fail(c, NN_ERR_SHAPE, "axis must be a known int scalar");
    a = nn_value_get_int(av, 0);
  } else {
    a = n->version >= 20 ? -2 : nn_attr_int(n, "axis", 1);
  }
  int r = x->rank;
  /* the trailing (real, imaginary) dim is not a signal axis */
  if (a < -r || a >= r)
    return nn_fail(c, NN_ERR_INVALID_MODEL, "axis %lld out of range for rank %d", (long long)a, r);
  a = a < 0 ? a + r : a;
  if (a > r - 2)
    return nn_fail(c, NN_ERR_INVALID_MODEL, "axis %lld is the complex dim", (long long)a);
  *ax = (int)a;
  return NN_OK;
}

static nn_status dft_prepare(nn_ctx *c, nn_node *n) {
  nn_value *x = n->x[0], *lenv = misc_in(n, 1);
  if (!misc_is_real(x->dtype))
    return nn_fail(c, NN_ERR_UNSUPPORTED, "unsupported type %s", nn_dtype_name(x->dtype));
  if (x->rank < 2 || (x->dims[x->rank - 1] != 1 && x->dims[x->rank - 1] != 2))
    return nn_fail(c, NN_ERR_SHAPE, "input must end with a dim of 1 (real) or 2 (complex)");
  int64_t inv = nn_attr_int(n, "inverse", 0), one = nn_attr_int(n, "onesided", 0);
  if ((inv != 0 && inv != 1) || (one != 0 && one != 1))
    return nn_fail(c, NN_ERR_UNSUPPORTED, "inverse and onesided must be 0 or 1");
  if (lenv && (!misc_is_index(lenv->dtype) || lenv->numel != 1 || !lenv->data))
    return nn_fail(c, NN_ERR_SHAPE, "dft_length must be a known int scalar");
  int ax = 0;
  nn_status st = dft_axis(c, n, x, &ax);
  if (st != NN_OK)
    return st;
  int64_t in_len = x->dims[ax];
  bool irfft = inv && one;
  int64_t len = lenv ? nn_value_get_int(lenv, 0) : irfft ? 2 * (in_len - 1) : in_len;
  if (len < 1)
    return nn_fail(c, NN_ERR_INVALID_MODEL, "dft_length %lld must be positive", (long long)len);
  if (irfft && x->dims[x->rank - 1] != 2)
    return nn_fail(c, NN_ERR_SHAPE, "an inverse one-sided DFT needs a complex input");
  dft_params *p = nn_calloc(1, sizeof *p);
  if (!p)
    return nn_fail(c, NN_ERR_NOMEM, "out of memory");
  n->priv = p;
  p->n = len;
  p->inverse = inv;
  p->irfft = irfft;
  p->in_len = in_len;
  p->out_len = irfft ? len : one ? len / 2 + 1 : len;
  p->cin = x->dims[x->rank - 1];
  p->cout = irfft ? 1 : 2;
  p->outer = nn_dims_numel(ax, x->dims);
  p->inner = nn_dims_numel(x->rank - 2 - ax, x->dims + ax + 1);
  int64_t od[NN_MAX_RANK];
  memcpy(od, x->dims, sizeof(int64_t) * (size_t)x->rank);
  od[ax] = p->out_len;
  od[x->rank - 1] = p->cout;
  if ((st = fft_ws(c, n, len)) != NN_OK)
    return st;
  return nn_set_output(c, n->y[0], x->dtype, x->rank, od);
}

static nn_status dft_run(nn_ctx *c, nn_node *n) {
  (void)c;
  const dft_params *p = n->priv;
  nn_value *x = n->x[0], *y = n->y[0];
  int64_t N = p->n;
  double *re = n->ws, *im = re + N, *tmp = im + N, *tw = tmp + 2 * N;
  fft_twiddles(tw, N);
  for (int64_t o = 0; o < p->outer; o++)
    for (int64_t i = 0; i < p->inner; i++) {
      for (int64_t j = 0; j < N; j++) {
        /* irfft reads the first n/2+1 bins; the rest follow by symmetry */
        int64_t avail = p->irfft ? (N / 2 + 1 < p->in_len ? N / 2 + 1 : p->in_len) : p->in_len;
        if (j < avail) {
          int64_t e = ((o * p->in_len + j) * p->inner + i) * p->cin;
          re[j] = misc_ldd(x->data, x->dtype, e);
          im[j] = p->cin == 2 ? misc_ldd(x->data, x->dtype, e + 1) : 0.0;
        } else {
          re[j] = im[j] = 0.0;
        }
      }
      if (p->irfft) {
        im[0] = 0.0;
        if (N % 2 == 0)
          im[N / 2] = 0.0;
        for (int64_t k = 1; k < (N + 1) / 2; k++) {
          re[N - k] = re[k];
          im[N - k] = -im[k];
        }
      }
      fft_line(N, tw, re, im, p->inverse ? 1 : -1, tmp);
      double s = p->inverse ? 1.0 / (double)N : 1.0;
      for (int64_t k = 0; k < p->out_len; k++) {
        int64_t e = ((o * p->out_len + k) * p->inner + i) * p->cout;
        misc_std(y->data, y->dtype, e, re[k] * s);
        if (p->cout == 2)
          misc_std(y->data, y->dtype, e + 1, im[k] * s);
      }
    }
  return NN_OK;
}

/* ---- STFT ------------------------------------------------------------------------ */

static nn_status stft_prepare(nn_ctx *c, nn_node *n) {
  nn_value *x = n->x[0], *stepv = misc_in(n, 1), *win = misc_in(n, 2), *flv = misc_in(n, 3);
  if (!misc_is_real(x->dtype))
    return nn_fail(c, NN_ERR_UNSUPPORTED, "unsupported type %s", nn_dtype_name(x->dtype));
  if (x->rank != 3 || (x->dims[2] != 1 && x->dims[2] != 2))
    return nn_fail(c, NN_ERR_SHAPE, "signal must be (batch, length, 1 or 2)");
  if (!stepv || !stepv->data || !misc_is_index(stepv->dtype) || stepv->numel != 1)
    return nn_fail(c, NN_ERR_INVALID_MODEL, "frame_step must be a known int scalar");
  if (flv && (!flv->data || !misc_is_index(flv->dtype) || flv->numel != 1))
    return nn_fail(c, NN_ERR_INVALID_MODEL, "frame_length must be a known int scalar");
  if (win && (win->dtype != x->dtype || win->rank != 1))
    return nn_fail(c, NN_ERR_SHAPE, "window must be 1-D of the signal's type");
  int64_t step = nn_value_get_int(stepv, 0);
  int64_t fl = flv ? nn_value_get_int(flv, 0) : win ? win->dims[0] : x->dims[1];
  if (win && win->dims[0] != fl)
    return nn_fail(c, NN_ERR_SHAPE, "window length %lld differs from frame_length %lld",
                   (long long)win->dims[0], (long long)fl);
  if (step < 1 || fl < 1 || fl > x->dims[1])
    return nn_fail(c, NN_ERR_INVALID_MODEL, "need frame_step >= 1 and 1 <= frame_length <= %lld",
                   (long long)x->dims[1]);
  int64_t one = nn_attr_int(n, "onesided", 1);
  if (one != 0 && one != 1)
    return nn_fail(c, NN_ERR_UNSUPPORTED, "unsupported onesided %lld", (long long)one);
  dft_params *p = nn_calloc(1, sizeof *p);
  if (!p)
    return nn_fail(c, NN_ERR_NOMEM, "out of memory");
  n->priv = p;
  nn_status st = fft_ws(c, n, fl);
  if (st != NN_OK)
    return st;
  p->n = fl;
  p->step = step;
  p->frames = 1 + (x->dims[1] - fl) / step;
  p->out_len = one ? fl / 2 + 1 : fl;
  p->cin = x->dims[2];
  int64_t od[4] = {x->dims[0], p->frames, p->out_len, 2};
  return nn_set_output(c, n->y[0], x->dtype, 4, od);
}

static nn_status stft_run(nn_ctx *c, nn_node *n) {
  (void)c;
  const dft_params *p = n->priv;
  nn_value *x = n->x[0], *win = misc_in(n, 2), *y = n->y[0];
  int64_t N = p->n, L = x->dims[1];
  double *re = n->ws, *im = re + N, *tmp = im + N, *tw = tmp + 2 * N;
  fft_twiddles(tw, N);
  for (int64_t b = 0; b < x->dims[0]; b++)
    for (int64_t f = 0; f < p->frames; f++) {
      for (int64_t j = 0; j < N; j++) {
        int64_t e = (b * L + f * p->step + j) * p->cin;
        double w = win ? misc_ldd(win->data, win->dtype, j) : 1.0;
        re[j] = w * misc_ldd(x->data, x->dtype, e);
        im[j] = p->cin == 2 ? w * misc_ldd(x->data, x->dtype, e + 1) : 0.0;
      }
      fft_line(N, tw, re, im, -1, tmp);
      for (int64_t k = 0; k < p->out_len; k++) {
        int64_t e = ((b * p->frames + f) * p->out_len + k) * 2;
        misc_std(y->data, y->dtype, e, re[k]);
        misc_std(y->data, y->dtype, e + 1, im[k]);
      }
    }
  return NN_OK;
}

#endif

/* signal.c - CPU kernels of the signal-processing ops (audio front ends):
 * HannWindow, HammingWindow, BlackmanWindow, MelWeightMatrix (all 17),
 * DFT (17/20) and STFT (17).
 *
 * The window size, MelWeightMatrix's num_mel_bins and dft_length, DFT's
 * dft_length and axis, and STFT's frame_step and frame_length are input
 * values that decide output shapes, so those inputs are shape inputs (known
 * at prepare). */
#include "cpu/kernel_util.h"

#define SIGNAL_PI 3.14159265358979323846

/* A scalar (or 1-element) integer input, known at prepare. */
static nn_status signal_scalar(nn_ctx *c, const nn_value *v, const char *what, int64_t *out) {
  if (!v || !v->data)
    return nn_fail(c, NN_ERR_INVALID_MODEL, "%s must be a known input", what);
  if (!ku_is_index(v->dtype) || v->numel != 1 || v->rank > 1)
    return nn_fail(c, NN_ERR_SHAPE, "%s must be an int32/int64 scalar", what);
  *out = nn_value_get_int(v, 0);
  return NN_OK;
}

static nn_status signal_out_dtype(nn_ctx *c, const nn_node *n, nn_dtype *dt) {
  int64_t od = nn_attr_int(n, "output_datatype", NN_DTYPE_FLOAT);
  if (od <= 0 || od > NN_DTYPE_BFLOAT16 || !ku_dtype_storable((nn_dtype)od) ||
      od == NN_DTYPE_BOOL)
    return nn_fail(c, NN_ERR_UNSUPPORTED, "unsupported output_datatype %lld", (long long)od);
  *dt = (nn_dtype)od;
  return NN_OK;
}

static nn_status window_prepare(nn_ctx *c, nn_node *n) {
  int64_t size;
  nn_dtype dt;
  nn_status st = signal_scalar(c, n->x[0], "size", &size);
  if (st != NN_OK)
    return st;
  if (size < 0)
    return nn_fail(c, NN_ERR_INVALID_MODEL, "window size %lld is negative", (long long)size);
  if ((st = signal_out_dtype(c, n, &dt)) != NN_OK)
    return st;
  int64_t per = nn_attr_int(n, "periodic", 1);
  if (per != 0 && per != 1)
    return nn_fail(c, NN_ERR_UNSUPPORTED, "unsupported periodic %lld", (long long)per);
  return nn_set_output(c, n->y[0], dt, 1, &size);
}

/* w[k] = a0 - a1 cos(2 pi k / N) + a2 cos(4 pi k / N), N = size (periodic)
 * or size - 1 (symmetric). */
static nn_status window_run_cos(nn_node *n, double a0, double a1, double a2) {
  nn_value *y = n->y[0];
  int64_t size = y->dims[0];
  bool periodic = nn_attr_int(n, "periodic", 1) != 0;
  double N = (double)(periodic ? size : size - 1);
  for (int64_t k = 0; k < size; k++) {
    /* a one-point symmetric window has N = 0: its single value is the peak */
    double v = N > 0.0 ? a0 - a1 * cos(2.0 * SIGNAL_PI * (double)k / N) +
                             a2 * cos(4.0 * SIGNAL_PI * (double)k / N)
                       : 1.0;
    ku_std(y->data, y->dtype, k, v);
  }
  return NN_OK;
}

static nn_status hann_run(nn_ctx *c, nn_node *n) {
  (void)c;
  return window_run_cos(n, 0.5, 0.5, 0.0);
}
static nn_status hamming_run(nn_ctx *c, nn_node *n) {
  (void)c;
  return window_run_cos(n, 25.0 / 46.0, 21.0 / 46.0, 0.0);
}
static nn_status blackman_run(nn_ctx *c, nn_node *n) {
  (void)c;
  return window_run_cos(n, 0.42, 0.5, 0.08);
}

/* ---- MelWeightMatrix -------------------------------------------------------------- */

static nn_status mel_prepare(nn_ctx *c, nn_node *n) {
  int64_t bins, dft;
  nn_dtype dt;
  nn_status st = signal_scalar(c, n->x[0], "num_mel_bins", &bins);
  if (st == NN_OK)
    st = signal_scalar(c, ku_in(n, 1), "dft_length", &dft);
  if (st != NN_OK)
    return st;
  if (n->n_in < 5 || !n->x[2] || !n->x[3] || !n->x[4])
    return nn_fail(c, NN_ERR_INVALID_MODEL, "five inputs are required");
  if (bins <= 0 || dft <= 0)
    return nn_fail(c, NN_ERR_INVALID_MODEL, "num_mel_bins and dft_length must be positive");
  if (!ku_is_index(n->x[2]->dtype) || n->x[2]->numel != 1 || !ku_is_real(n->x[3]->dtype) ||
      n->x[3]->numel != 1 || !ku_is_real(n->x[4]->dtype) || n->x[4]->numel != 1)
    return nn_fail(c, NN_ERR_SHAPE, "sample_rate must be an int scalar, the edges float scalars");
  if ((st = signal_out_dtype(c, n, &dt)) != NN_OK)
    return st;
  int64_t od[2] = {dft / 2 + 1, bins};
  return nn_set_output(c, n->y[0], dt, 2, od);
}

static nn_status mel_run(nn_ctx *c, nn_node *n) {
  nn_value *y = n->y[0];
  int64_t nspec = y->dims[0], bins = y->dims[1];
  int64_t dft = nn_value_get_int(n->x[1], 0);
  int64_t rate = nn_value_get_int(n->x[2], 0);
  double lo = ku_ldd(n->x[3]->data, n->x[3]->dtype, 0);
  double hi = ku_ldd(n->x[4]->data, n->x[4]->dtype, 0);
  if (rate <= 0)
    return nn_fail(c, NN_ERR_RUNTIME, "sample_rate %lld must be positive", (long long)rate);
  for (int64_t i = 0; i < y->numel; i++)
    ku_std(y->data, y->dtype, i, 0.0);
  double lmel = 2595.0 * log10(1.0 + lo / 700.0), hmel = 2595.0 * log10(1.0 + hi / 700.0);
  double step = (hmel - lmel) / (double)(bins + 2);
  /* triangle corners as spectrogram bins; anything landing outside the
   * matrix (nonsensical edges) is simply not drawn */
#define MEL_BIN(k)                                                                      \
  ((int64_t)ku_clampd(floor((double)(dft + 1) *                                       \
                              (700.0 * (pow(10.0, ((double)(k)*step + lmel) / 2595.0) - 1.0)) / \
                              (double)rate),                                            \
                        -1e15, 1e15))
  for (int64_t i = 0; i < bins; i++) {
    int64_t l = MEL_BIN(i), m = MEL_BIN(i + 1), r = MEL_BIN(i + 2);
    if (m - l == 0) {
      if (m >= 0 && m < nspec)
        ku_std(y->data, y->dtype, m * bins + i, 1.0);
    } else {
      for (int64_t j = l > 0 ? l : 0; j <= m && j < nspec; j++)
        ku_std(y->data, y->dtype, j * bins + i, (double)(j - l) / (double)(m - l));
    }
    if (r - m > 0)
      for (int64_t j = m > 0 ? m : 0; j < r && j < nspec; j++)
        ku_std(y->data, y->dtype, j * bins + i, (double)(r - j) / (double)(r - m));
  }
#undef MEL_BIN
  return NN_OK;
}

/* ---- the FFT of DFT and STFT ------------------------------------------------------
 * Signals carry a trailing dim of 1 (real) or 2 (real, imaginary).  Each
 * transform line is gathered into double buffers and transformed with an
 * iterative radix-2 FFT when the length is a power of two, a direct O(n^2)
 * sum otherwise.  Twiddles are computed per run into the workspace (n
 * sin/cos pairs, negligible next to the transforms). */

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
    double a = 2.0 * SIGNAL_PI * (double)k / (double)n;
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
  const nn_value *av = n->version >= 20 ? ku_in(n, 2) : NULL;
  if (av) {
    if (!ku_is_index(av->dtype) || av->numel != 1 || !av->data)
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
  nn_value *x = n->x[0], *lenv = ku_in(n, 1);
  if (!ku_is_real(x->dtype))
    return nn_fail(c, NN_ERR_UNSUPPORTED, "unsupported type %s", nn_dtype_name(x->dtype));
  if (x->rank < 2 || (x->dims[x->rank - 1] != 1 && x->dims[x->rank - 1] != 2))
    return nn_fail(c, NN_ERR_SHAPE, "input must end with a dim of 1 (real) or 2 (complex)");
  int64_t inv = nn_attr_int(n, "inverse", 0), one = nn_attr_int(n, "onesided", 0);
  if ((inv != 0 && inv != 1) || (one != 0 && one != 1))
    return nn_fail(c, NN_ERR_UNSUPPORTED, "inverse and onesided must be 0 or 1");
  if (lenv && (!ku_is_index(lenv->dtype) || lenv->numel != 1 || !lenv->data))
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
          re[j] = ku_ldd(x->data, x->dtype, e);
          im[j] = p->cin == 2 ? ku_ldd(x->data, x->dtype, e + 1) : 0.0;
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
        ku_std(y->data, y->dtype, e, re[k] * s);
        if (p->cout == 2)
          ku_std(y->data, y->dtype, e + 1, im[k] * s);
      }
    }
  return NN_OK;
}

/* ---- STFT ------------------------------------------------------------------------ */

static nn_status stft_prepare(nn_ctx *c, nn_node *n) {
  nn_value *x = n->x[0], *stepv = ku_in(n, 1), *win = ku_in(n, 2), *flv = ku_in(n, 3);
  if (!ku_is_real(x->dtype))
    return nn_fail(c, NN_ERR_UNSUPPORTED, "unsupported type %s", nn_dtype_name(x->dtype));
  if (x->rank != 3 || (x->dims[2] != 1 && x->dims[2] != 2))
    return nn_fail(c, NN_ERR_SHAPE, "signal must be (batch, length, 1 or 2)");
  if (!stepv || !stepv->data || !ku_is_index(stepv->dtype) || stepv->numel != 1)
    return nn_fail(c, NN_ERR_INVALID_MODEL, "frame_step must be a known int scalar");
  if (flv && (!flv->data || !ku_is_index(flv->dtype) || flv->numel != 1))
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
  nn_value *x = n->x[0], *win = ku_in(n, 2), *y = n->y[0];
  int64_t N = p->n, L = x->dims[1];
  double *re = n->ws, *im = re + N, *tmp = im + N, *tw = tmp + 2 * N;
  fft_twiddles(tw, N);
  for (int64_t b = 0; b < x->dims[0]; b++)
    for (int64_t f = 0; f < p->frames; f++) {
      for (int64_t j = 0; j < N; j++) {
        int64_t e = (b * L + f * p->step + j) * p->cin;
        double w = win ? ku_ldd(win->data, win->dtype, j) : 1.0;
        re[j] = w * ku_ldd(x->data, x->dtype, e);
        im[j] = p->cin == 2 ? w * ku_ldd(x->data, x->dtype, e + 1) : 0.0;
      }
      fft_line(N, tw, re, im, -1, tmp);
      for (int64_t k = 0; k < p->out_len; k++) {
        int64_t e = ((b * p->frames + f) * p->out_len + k) * 2;
        ku_std(y->data, y->dtype, e, re[k]);
        ku_std(y->data, y->dtype, e + 1, im[k]);
      }
    }
  return NN_OK;
}

const nn_kernel nn_kernels_signal[] = {
  {.name = "HannWindow", .prepare = window_prepare, .run = hann_run},
  {.name = "HammingWindow", .prepare = window_prepare, .run = hamming_run},
  {.name = "BlackmanWindow", .prepare = window_prepare, .run = blackman_run},
  {.name = "DFT", .prepare = dft_prepare, .run = dft_run},
  {.name = "STFT", .prepare = stft_prepare, .run = stft_run},
  {.name = "MelWeightMatrix", .prepare = mel_prepare, .run = mel_run},
  {0},
};

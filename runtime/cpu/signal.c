/* signal.c - CPU kernels of the signal-processing ops (audio front ends):
 * HannWindow, HammingWindow, BlackmanWindow, MelWeightMatrix (all 17),
 * DFT (17/20) and STFT (17).  The shapes and the transforms' geometry
 * are the op layer's (ops/signal.h, ops/signal.c). */
#include "cpu/kernel_util.h"
#include "ops/signal.h"

#define SIGNAL_PI 3.14159265358979323846

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

/* ---- DFT ------------------------------------------------------------------------ */

static nn_status dft_prepare(nn_ctx *c, nn_node *n) {
  nn_dft_geom g;
  nn_status st = nn_dft_geom_init(c, n, &g);
  if (st != NN_OK || (st = fft_ws(c, n, g.n)) != NN_OK)
    return st;
  nn_dft_geom *p = nn_malloc(sizeof *p);
  if (!p)
    return nn_fail(c, NN_ERR_NOMEM, "out of memory");
  *p = g;
  n->priv = p;
  return NN_OK;
}

static nn_status dft_run(nn_ctx *c, nn_node *n) {
  (void)c;
  const nn_dft_geom *p = n->priv;
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
  nn_dft_geom g;
  nn_status st = nn_stft_geom_init(c, n, &g);
  if (st != NN_OK || (st = fft_ws(c, n, g.n)) != NN_OK)
    return st;
  nn_dft_geom *p = nn_malloc(sizeof *p);
  if (!p)
    return nn_fail(c, NN_ERR_NOMEM, "out of memory");
  *p = g;
  n->priv = p;
  return NN_OK;
}

static nn_status stft_run(nn_ctx *c, nn_node *n) {
  (void)c;
  const nn_dft_geom *p = n->priv;
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
  {.name = "HannWindow", .run = hann_run},
  {.name = "HammingWindow", .run = hamming_run},
  {.name = "BlackmanWindow", .run = blackman_run},
  {.name = "DFT", .prepare = dft_prepare, .run = dft_run},
  {.name = "STFT", .prepare = stft_prepare, .run = stft_run},
  {.name = "MelWeightMatrix", .run = mel_run},
  {0},
};

/* misc_signal.h - HannWindow, HammingWindow, BlackmanWindow, MelWeightMatrix
 * (all 17).  Included only from misc.c.  Their sizes are input values, so
 * those inputs are shape inputs. */
#ifndef NN_MISC_SIGNAL_H
#define NN_MISC_SIGNAL_H

#include "misc_common.h"

/* A scalar (or 1-element) integer input, known at prepare. */
static nn_status signal_scalar(nn_ctx *c, const nn_value *v, const char *what, int64_t *out) {
  if (!v || !v->data)
    return nn_fail(c, NN_ERR_INVALID_MODEL, "%s must be a known input", what);
  if (!misc_is_index(v->dtype) || v->numel != 1 || v->rank > 1)
    return nn_fail(c, NN_ERR_SHAPE, "%s must be an int32/int64 scalar", what);
  *out = nn_value_get_int(v, 0);
  return NN_OK;
}

static nn_status signal_out_dtype(nn_ctx *c, const nn_node *n, nn_dtype *dt) {
  int64_t od = nn_attr_int(n, "output_datatype", NN_DTYPE_FLOAT);
  if (od <= 0 || od > NN_DTYPE_BFLOAT16 || !misc_dtype_storable((nn_dtype)od) ||
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
    double v = N > 0.0 ? a0 - a1 * cos(2.0 * MISC_PI * (double)k / N) +
                             a2 * cos(4.0 * MISC_PI * (double)k / N)
                       : 1.0;
    misc_std(y->data, y->dtype, k, v);
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
    st = signal_scalar(c, misc_in(n, 1), "dft_length", &dft);
  if (st != NN_OK)
    return st;
  if (n->n_in < 5 || !n->x[2] || !n->x[3] || !n->x[4])
    return nn_fail(c, NN_ERR_INVALID_MODEL, "five inputs are required");
  if (bins <= 0 || dft <= 0)
    return nn_fail(c, NN_ERR_INVALID_MODEL, "num_mel_bins and dft_length must be positive");
  if (!misc_is_index(n->x[2]->dtype) || n->x[2]->numel != 1 || !misc_is_real(n->x[3]->dtype) ||
      n->x[3]->numel != 1 || !misc_is_real(n->x[4]->dtype) || n->x[4]->numel != 1)
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
  double lo = misc_ldd(n->x[3]->data, n->x[3]->dtype, 0);
  double hi = misc_ldd(n->x[4]->data, n->x[4]->dtype, 0);
  if (rate <= 0)
    return nn_fail(c, NN_ERR_RUNTIME, "sample_rate %lld must be positive", (long long)rate);
  for (int64_t i = 0; i < y->numel; i++)
    misc_std(y->data, y->dtype, i, 0.0);
  double lmel = 2595.0 * log10(1.0 + lo / 700.0), hmel = 2595.0 * log10(1.0 + hi / 700.0);
  double step = (hmel - lmel) / (double)(bins + 2);
  /* triangle corners as spectrogram bins; anything landing outside the
   * matrix (nonsensical edges) is simply not drawn */
#define MEL_BIN(k)                                                                      \
  ((int64_t)misc_clampd(floor((double)(dft + 1) *                                       \
                              (700.0 * (pow(10.0, ((double)(k)*step + lmel) / 2595.0) - 1.0)) / \
                              (double)rate),                                            \
                        -1e15, 1e15))
  for (int64_t i = 0; i < bins; i++) {
    int64_t l = MEL_BIN(i), m = MEL_BIN(i + 1), r = MEL_BIN(i + 2);
    if (m - l == 0) {
      if (m >= 0 && m < nspec)
        misc_std(y->data, y->dtype, m * bins + i, 1.0);
    } else {
      for (int64_t j = l > 0 ? l : 0; j <= m && j < nspec; j++)
        misc_std(y->data, y->dtype, j * bins + i, (double)(j - l) / (double)(m - l));
    }
    if (r - m > 0)
      for (int64_t j = m > 0 ? m : 0; j < r && j < nspec; j++)
        misc_std(y->data, y->dtype, j * bins + i, (double)(r - j) / (double)(r - m));
  }
#undef MEL_BIN
  return NN_OK;
}

#endif

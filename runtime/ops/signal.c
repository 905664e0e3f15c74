/* signal.c - the signal family in the op layer: its operators, their versions and
 * their shape and dtype inference (nn_ops_signal[], collected by ops/registry.c),
 * and the DFT / STFT geometry of signal.h.
 *
 * The window size, MelWeightMatrix's num_mel_bins and dft_length, DFT's
 * dft_length and axis, and STFT's frame_step and frame_length are input
 * values that decide output shapes, so those inputs are shape inputs (known
 * at prepare). */
#include <string.h>

#include "ops/signal.h"

static const nn_value *input(const nn_node *n, int i) { return i < n->n_in ? n->x[i] : NULL; }

static bool is_index(nn_dtype dt) { return dt == NN_DTYPE_INT64 || dt == NN_DTYPE_INT32; }

/* A scalar (or 1-element) integer input, known at prepare. */
static nn_status signal_scalar(nn_ctx *c, const nn_value *v, const char *what, int64_t *out) {
  if (!v || !v->data)
    return nn_fail(c, NN_ERR_INVALID_MODEL, "%s must be a known input", what);
  if (!is_index(v->dtype) || v->numel != 1 || v->rank > 1)
    return nn_fail(c, NN_ERR_SHAPE, "%s must be an int32/int64 scalar", what);
  *out = nn_value_get_int(v, 0);
  return NN_OK;
}

/* output_datatype: any numeric type */
static nn_status signal_out_dtype(nn_ctx *c, const nn_node *n, nn_dtype *dt) {
  int64_t od = nn_attr_int(n, "output_datatype", NN_DTYPE_FLOAT);
  if (od <= 0 || od > NN_DTYPE_BFLOAT16 ||
      !(nn_dtype_is_float((nn_dtype)od) || nn_dtype_is_int((nn_dtype)od)))
    return nn_fail(c, NN_ERR_UNSUPPORTED, "unsupported output_datatype %lld", (long long)od);
  *dt = (nn_dtype)od;
  return NN_OK;
}

static nn_status window_infer(nn_ctx *c, nn_node *n) {
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

/* ---- MelWeightMatrix -------------------------------------------------------------- */

static nn_status mel_infer(nn_ctx *c, nn_node *n) {
  int64_t bins, dft;
  nn_dtype dt;
  nn_status st = signal_scalar(c, n->x[0], "num_mel_bins", &bins);
  if (st == NN_OK)
    st = signal_scalar(c, input(n, 1), "dft_length", &dft);
  if (st != NN_OK)
    return st;
  if (n->n_in < 5 || !n->x[2] || !n->x[3] || !n->x[4])
    return nn_fail(c, NN_ERR_INVALID_MODEL, "five inputs are required");
  if (bins <= 0 || dft <= 0)
    return nn_fail(c, NN_ERR_INVALID_MODEL, "num_mel_bins and dft_length must be positive");
  if (!is_index(n->x[2]->dtype) || n->x[2]->numel != 1 || !nn_dtype_is_float(n->x[3]->dtype) ||
      n->x[3]->numel != 1 || !nn_dtype_is_float(n->x[4]->dtype) || n->x[4]->numel != 1)
    return nn_fail(c, NN_ERR_SHAPE, "sample_rate must be an int scalar, the edges float scalars");
  if ((st = signal_out_dtype(c, n, &dt)) != NN_OK)
    return st;
  int64_t od[2] = {dft / 2 + 1, bins};
  return nn_set_output(c, n->y[0], dt, 2, od);
}

/* ---- DFT ------------------------------------------------------------------------ */

static nn_status dft_axis(nn_ctx *c, const nn_node *n, const nn_value *x, int *ax) {
  int64_t a;
  const nn_value *av = n->version >= 20 ? input(n, 2) : NULL;
  if (av) {
    if (!is_index(av->dtype) || av->numel != 1 || !av->data)
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

nn_status nn_dft_geom_init(nn_ctx *c, const nn_node *n, nn_dft_geom *p) {
  const nn_value *x = n->x[0], *lenv = input(n, 1);
  if (!nn_dtype_is_float(x->dtype))
    return nn_fail(c, NN_ERR_UNSUPPORTED, "unsupported type %s", nn_dtype_name(x->dtype));
  if (x->rank < 2 || (x->dims[x->rank - 1] != 1 && x->dims[x->rank - 1] != 2))
    return nn_fail(c, NN_ERR_SHAPE, "input must end with a dim of 1 (real) or 2 (complex)");
  int64_t inv = nn_attr_int(n, "inverse", 0), one = nn_attr_int(n, "onesided", 0);
  if ((inv != 0 && inv != 1) || (one != 0 && one != 1))
    return nn_fail(c, NN_ERR_UNSUPPORTED, "inverse and onesided must be 0 or 1");
  if (lenv && (!is_index(lenv->dtype) || lenv->numel != 1 || !lenv->data))
    return nn_fail(c, NN_ERR_SHAPE, "dft_length must be a known int scalar");
  memset(p, 0, sizeof *p);
  nn_status st = dft_axis(c, n, x, &p->axis);
  if (st != NN_OK)
    return st;
  int ax = p->axis;
  int64_t in_len = x->dims[ax];
  bool irfft = inv && one;
  int64_t len = lenv ? nn_value_get_int(lenv, 0) : irfft ? 2 * (in_len - 1) : in_len;
  if (len < 1)
    return nn_fail(c, NN_ERR_INVALID_MODEL, "dft_length %lld must be positive", (long long)len);
  if (irfft && x->dims[x->rank - 1] != 2)
    return nn_fail(c, NN_ERR_SHAPE, "an inverse one-sided DFT needs a complex input");
  p->n = len;
  p->inverse = inv;
  p->irfft = irfft;
  p->in_len = in_len;
  p->out_len = irfft ? len : one ? len / 2 + 1 : len;
  p->cin = x->dims[x->rank - 1];
  p->cout = irfft ? 1 : 2;
  p->outer = nn_dims_numel(ax, x->dims);
  p->inner = nn_dims_numel(x->rank - 2 - ax, x->dims + ax + 1);
  return NN_OK;
}

static nn_status dft_infer(nn_ctx *c, nn_node *n) {
  nn_dft_geom g;
  nn_status st = nn_dft_geom_init(c, n, &g);
  if (st != NN_OK)
    return st;
  const nn_value *x = n->x[0];
  int64_t od[NN_MAX_RANK];
  memcpy(od, x->dims, sizeof(int64_t) * (size_t)x->rank);
  od[g.axis] = g.out_len;
  od[x->rank - 1] = g.cout;
  return nn_set_output(c, n->y[0], x->dtype, x->rank, od);
}

/* ---- STFT ------------------------------------------------------------------------ */

nn_status nn_stft_geom_init(nn_ctx *c, const nn_node *n, nn_dft_geom *p) {
  const nn_value *x = n->x[0], *stepv = input(n, 1), *win = input(n, 2), *flv = input(n, 3);
  if (!nn_dtype_is_float(x->dtype))
    return nn_fail(c, NN_ERR_UNSUPPORTED, "unsupported type %s", nn_dtype_name(x->dtype));
  if (x->rank != 3 || (x->dims[2] != 1 && x->dims[2] != 2))
    return nn_fail(c, NN_ERR_SHAPE, "signal must be (batch, length, 1 or 2)");
  if (!stepv || !stepv->data || !is_index(stepv->dtype) || stepv->numel != 1)
    return nn_fail(c, NN_ERR_INVALID_MODEL, "frame_step must be a known int scalar");
  if (flv && (!flv->data || !is_index(flv->dtype) || flv->numel != 1))
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
  memset(p, 0, sizeof *p);
  p->n = fl;
  p->step = step;
  p->frames = 1 + (x->dims[1] - fl) / step;
  p->out_len = one ? fl / 2 + 1 : fl;
  p->cin = x->dims[2];
  p->cout = 2;
  return NN_OK;
}

static nn_status stft_infer(nn_ctx *c, nn_node *n) {
  nn_dft_geom g;
  nn_status st = nn_stft_geom_init(c, n, &g);
  if (st != NN_OK)
    return st;
  const nn_value *x = n->x[0];
  int64_t od[4] = {x->dims[0], g.frames, g.out_len, 2};
  return nn_set_output(c, n->y[0], x->dtype, 4, od);
}

/* The family's operators (ops/registry.c), each with its shape and dtype
 * inference; cpu/signal.c has the kernels. */
const nn_op_def nn_ops_signal[] = {
  {.name = "HannWindow", .versions = {17}, .shape_inputs = 1u << 0, .infer = window_infer},
  {.name = "HammingWindow", .versions = {17}, .shape_inputs = 1u << 0, .infer = window_infer},
  {.name = "BlackmanWindow", .versions = {17}, .shape_inputs = 1u << 0, .infer = window_infer},
  {.name = "DFT", .versions = {17, 20}, .shape_inputs = (1u << 1) | (1u << 2),
   .infer = dft_infer},
  {.name = "STFT", .versions = {17}, .shape_inputs = (1u << 1) | (1u << 3), .infer = stft_infer},
  {.name = "MelWeightMatrix", .versions = {17}, .shape_inputs = (1u << 0) | (1u << 1),
   .infer = mel_infer},
  {0},
};

/* conv_geom.h - sliding-window geometry shared by conv.c and pool.c: the
 * kernel_shape / strides / dilations / pads / auto_pad / ceil_mode attributes
 * turned into output sizes and begin/end pads.
 *
 * Geometry is normalized to CONV_SP (3) spatial dimensions: a model with nsp
 * spatial dims occupies the LAST nsp slots, the leading ones are size-1 with
 * kernel 1, stride 1, no padding.  Kernels then need a single 3-D loop nest
 * for 1-D, 2-D and 3-D operators.
 */
#ifndef NN_CPU_CONV_GEOM_H
#define NN_CPU_CONV_GEOM_H

#include <string.h>

#include "nn_internal.h"

#define CONV_SP 3
/* Attribute values above this are refused: they keep every size product of
 * the geometry (e.g. (k-1)*d) far from int64 overflow. */
#define CONV_ATTR_MAX ((int64_t)1 << 31)

typedef struct conv_geom {
  int nsp;                     /* spatial dims of the model (1..CONV_SP) */
  int64_t in[CONV_SP], out[CONV_SP];
  int64_t k[CONV_SP], s[CONV_SP], d[CONV_SP];
  int64_t pb[CONV_SP], pe[CONV_SP];  /* pads at the begin / end */
  int64_t in_sz, out_sz, k_sz;       /* element counts of one plane / window */
} conv_geom;

typedef enum conv_autopad {
  CONV_PAD_NOTSET = 0,
  CONV_PAD_SAME_UPPER,
  CONV_PAD_SAME_LOWER,
  CONV_PAD_VALID,
} conv_autopad;

static inline nn_status conv_geom_autopad(nn_ctx *c, const nn_node *n, conv_autopad *ap) {
  const char *s = nn_attr_string(n, "auto_pad", "NOTSET");
  *ap = CONV_PAD_NOTSET;
  if (strcmp(s, "NOTSET") == 0 || s[0] == '\0')
    *ap = CONV_PAD_NOTSET;
  else if (strcmp(s, "SAME_UPPER") == 0)
    *ap = CONV_PAD_SAME_UPPER;
  else if (strcmp(s, "SAME_LOWER") == 0)
    *ap = CONV_PAD_SAME_LOWER;
  else if (strcmp(s, "VALID") == 0)
    *ap = CONV_PAD_VALID;
  else
    return nn_fail(c, NN_ERR_UNSUPPORTED, "auto_pad '%s' is not supported", s);
  return NN_OK;
}

/* Read an ints attribute of exactly `want` entries, each in [lo, CONV_ATTR_MAX],
 * into dst (left untouched when the attribute is absent). */
static inline nn_status conv_geom_ints(nn_ctx *c, const nn_node *n, const char *name,
                                       int want, int64_t lo, int64_t *dst) {
  int cnt = 0;
  const int64_t *v = nn_attr_ints(n, name, &cnt);
  if (!v)
    return NN_OK;
  if (cnt != want)
    return nn_fail(c, NN_ERR_INVALID_MODEL, "%s has %d values, expected %d", name, cnt, want);
  for (int i = 0; i < cnt; i++) {
    if (v[i] < lo || v[i] > CONV_ATTR_MAX)
      return nn_fail(c, NN_ERR_INVALID_MODEL, "%s[%d] = %lld is out of range", name, i,
                     (long long)v[i]);
    dst[i] = v[i];
  }
  return NN_OK;
}

/* Parse the window attributes for a node whose input has spatial sizes in[0..nsp)
 * and whose kernel is kern[0..nsp) (weights or kernel_shape).
 * ceil_mode: pools only (0 for Conv).  dil_ok: whether dilations are allowed.
 * Fills g with the normalized geometry and the output sizes. */
static inline nn_status conv_geom_init(nn_ctx *c, const nn_node *n, int nsp, const int64_t *in,
                                       const int64_t *kern, bool dil_ok, bool ceil_mode,
                                       conv_geom *g) {
  if (nsp < 1 || nsp > CONV_SP)
    return nn_fail(c, NN_ERR_UNSUPPORTED, "%d spatial dimensions (1 to %d supported)", nsp,
                   CONV_SP);
  int64_t s[CONV_SP], d[CONV_SP], pads[2 * CONV_SP];
  for (int i = 0; i < CONV_SP; i++)
    s[i] = d[i] = 1;
  memset(pads, 0, sizeof pads);
  nn_status st;
  if ((st = conv_geom_ints(c, n, "strides", nsp, 1, s)) ||
      (st = conv_geom_ints(c, n, "dilations", nsp, 1, d)) ||
      (st = conv_geom_ints(c, n, "pads", 2 * nsp, 0, pads)))
    return st;
  if (!dil_ok)
    for (int i = 0; i < nsp; i++)
      if (d[i] != 1)
        return nn_fail(c, NN_ERR_UNSUPPORTED, "dilations are not supported by this version");
  conv_autopad ap;
  if ((st = conv_geom_autopad(c, n, &ap)))
    return st;

  memset(g, 0, sizeof *g);
  g->nsp = nsp;
  int off = CONV_SP - nsp;
  for (int i = 0; i < CONV_SP; i++) {
    g->in[i] = g->out[i] = g->k[i] = g->s[i] = g->d[i] = 1;
    g->pb[i] = g->pe[i] = 0;
  }
  for (int i = 0; i < nsp; i++) {
    int j = off + i;
    if (kern[i] < 1 || kern[i] > CONV_ATTR_MAX)
      return nn_fail(c, NN_ERR_INVALID_MODEL, "kernel size %lld in dimension %d is invalid",
                     (long long)kern[i], i);
    g->in[j] = in[i];
    g->k[j] = kern[i];
    g->s[j] = s[i];
    g->d[j] = d[i];
    int64_t ek = (kern[i] - 1) * d[i] + 1;    /* extent of the dilated window */
    if (ap == CONV_PAD_SAME_UPPER || ap == CONV_PAD_SAME_LOWER) {
      int64_t o = (in[i] + s[i] - 1) / s[i];
      int64_t total = (o - 1) * s[i] + ek - in[i];
      if (total < 0)
        total = 0;
      int64_t small = total / 2;
      g->pb[j] = ap == CONV_PAD_SAME_UPPER ? small : total - small;
      g->pe[j] = total - g->pb[j];
      g->out[j] = o;
    } else {
      if (ap == CONV_PAD_NOTSET) {
        g->pb[j] = pads[i];
        g->pe[j] = pads[nsp + i];
      }
      int64_t span = in[i] + g->pb[j] + g->pe[j] - ek;
      if (span < 0)
        return nn_fail(c, NN_ERR_SHAPE,
                       "window %lld (kernel %lld, dilation %lld) is larger than the padded "
                       "input %lld in spatial dimension %d",
                       (long long)ek, (long long)kern[i], (long long)d[i],
                       (long long)(in[i] + g->pb[j] + g->pe[j]), i);
      int64_t o = (ceil_mode ? (span + s[i] - 1) / s[i] : span / s[i]) + 1;
      /* ceil_mode must not create a window that starts in the end padding
       * (PyTorch / ONNX reference rule): such a window sees no input. */
      if (ceil_mode && o > 1 && (o - 1) * s[i] >= in[i] + g->pb[j])
        o--;
      g->out[j] = o;
    }
  }
  g->in_sz = g->out_sz = g->k_sz = 1;
  for (int i = 0; i < CONV_SP; i++) {
    g->in_sz *= g->in[i];
    g->out_sz *= g->out[i];
    g->k_sz *= g->k[i];
  }
  return NN_OK;
}

/* Range [*lo, *hi) of kernel taps t (0 <= t < k) for which o*s - pb + t*d
 * falls inside [0, in). */
static inline void conv_geom_taps(int64_t o, int64_t s, int64_t pb, int64_t d, int64_t k,
                                  int64_t in, int64_t *lo, int64_t *hi) {
  int64_t base = o * s - pb;
  int64_t a = 0, b = k;
  if (base < 0)
    a = (-base + d - 1) / d;
  if (base + (k - 1) * d >= in)
    b = base >= in ? 0 : (in - 1 - base) / d + 1;
  if (b < a)
    b = a;
  *lo = a;
  *hi = b;
}

#endif /* NN_CPU_CONV_GEOM_H */

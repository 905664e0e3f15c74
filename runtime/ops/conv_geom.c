/* conv_geom.c - window attributes into nn_conv_geom (conv_geom.h). */
#include <string.h>

#include "ops/conv_geom.h"

nn_status nn_conv_autopad_parse(nn_ctx *c, const nn_node *n, nn_conv_autopad *ap) {
  const char *s = nn_attr_string(n, "auto_pad", "NOTSET");
  *ap = NN_CONV_PAD_NOTSET;
  if (strcmp(s, "NOTSET") == 0 || s[0] == '\0')
    *ap = NN_CONV_PAD_NOTSET;
  else if (strcmp(s, "SAME_UPPER") == 0)
    *ap = NN_CONV_PAD_SAME_UPPER;
  else if (strcmp(s, "SAME_LOWER") == 0)
    *ap = NN_CONV_PAD_SAME_LOWER;
  else if (strcmp(s, "VALID") == 0)
    *ap = NN_CONV_PAD_VALID;
  else
    return nn_fail(c, NN_ERR_UNSUPPORTED, "auto_pad '%s' is not supported", s);
  return NN_OK;
}

nn_status nn_conv_attr_ints(nn_ctx *c, const nn_node *n, const char *name, int want, int64_t lo,
                            int64_t *dst) {
  int cnt = 0;
  const int64_t *v = nn_attr_ints(n, name, &cnt);
  if (!v)
    return NN_OK;
  if (cnt != want)
    return nn_fail(c, NN_ERR_INVALID_MODEL, "%s has %d values, expected %d", name, cnt, want);
  for (int i = 0; i < cnt; i++) {
    if (v[i] < lo || v[i] > NN_CONV_ATTR_MAX)
      return nn_fail(c, NN_ERR_INVALID_MODEL, "%s[%d] = %lld is out of range", name, i,
                     (long long)v[i]);
    dst[i] = v[i];
  }
  return NN_OK;
}

nn_status nn_conv_geom_init(nn_ctx *c, const nn_node *n, int nsp, const int64_t *in,
                            const int64_t *kern, bool dil_ok, bool ceil_mode, nn_conv_geom *g) {
  if (nsp < 1 || nsp > NN_CONV_SP)
    return nn_fail(c, NN_ERR_UNSUPPORTED, "%d spatial dimensions (1 to %d supported)", nsp,
                   NN_CONV_SP);
  int64_t s[NN_CONV_SP], d[NN_CONV_SP], pads[2 * NN_CONV_SP];
  for (int i = 0; i < NN_CONV_SP; i++)
    s[i] = d[i] = 1;
  memset(pads, 0, sizeof pads);
  nn_status st;
  if ((st = nn_conv_attr_ints(c, n, "strides", nsp, 1, s)) ||
      (st = nn_conv_attr_ints(c, n, "dilations", nsp, 1, d)) ||
      (st = nn_conv_attr_ints(c, n, "pads", 2 * nsp, 0, pads)))
    return st;
  if (!dil_ok)
    for (int i = 0; i < nsp; i++)
      if (d[i] != 1)
        return nn_fail(c, NN_ERR_UNSUPPORTED, "dilations are not supported by this version");
  nn_conv_autopad ap;
  if ((st = nn_conv_autopad_parse(c, n, &ap)))
    return st;

  memset(g, 0, sizeof *g);
  g->nsp = nsp;
  int off = NN_CONV_SP - nsp;
  for (int i = 0; i < NN_CONV_SP; i++) {
    g->in[i] = g->out[i] = g->k[i] = g->s[i] = g->d[i] = 1;
    g->pb[i] = g->pe[i] = 0;
  }
  for (int i = 0; i < nsp; i++) {
    int j = off + i;
    if (kern[i] < 1 || kern[i] > NN_CONV_ATTR_MAX)
      return nn_fail(c, NN_ERR_INVALID_MODEL, "kernel size %lld in dimension %d is invalid",
                     (long long)kern[i], i);
    g->in[j] = in[i];
    g->k[j] = kern[i];
    g->s[j] = s[i];
    g->d[j] = d[i];
    int64_t ek = (kern[i] - 1) * d[i] + 1; /* extent of the dilated window */
    if (ap == NN_CONV_PAD_SAME_UPPER || ap == NN_CONV_PAD_SAME_LOWER) {
      int64_t o = (in[i] + s[i] - 1) / s[i];
      int64_t total = (o - 1) * s[i] + ek - in[i];
      if (total < 0)
        total = 0;
      int64_t small = total / 2;
      g->pb[j] = ap == NN_CONV_PAD_SAME_UPPER ? small : total - small;
      g->pe[j] = total - g->pb[j];
      g->out[j] = o;
    } else {
      if (ap == NN_CONV_PAD_NOTSET) {
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
  for (int i = 0; i < NN_CONV_SP; i++) {
    g->in_sz *= g->in[i];
    g->out_sz *= g->out[i];
    g->k_sz *= g->k[i];
  }
  return NN_OK;
}

nn_status nn_convt_geom_init(nn_ctx *c, const nn_node *n, int nsp, const int64_t *in,
                             const int64_t *kern, nn_conv_geom *g) {
  if (nsp < 1 || nsp > NN_CONV_SP)
    return nn_fail(c, NN_ERR_UNSUPPORTED, "%d spatial dimensions (1 to %d supported)", nsp,
                   NN_CONV_SP);
  int64_t s[NN_CONV_SP], d[NN_CONV_SP], pads[2 * NN_CONV_SP], opad[NN_CONV_SP];
  for (int i = 0; i < NN_CONV_SP; i++) {
    s[i] = d[i] = 1;
    opad[i] = 0;
  }
  memset(pads, 0, sizeof pads);
  nn_status st;
  if ((st = nn_conv_attr_ints(c, n, "strides", nsp, 1, s)) ||
      (st = nn_conv_attr_ints(c, n, "dilations", nsp, 1, d)) ||
      (st = nn_conv_attr_ints(c, n, "pads", 2 * nsp, 0, pads)) ||
      (st = nn_conv_attr_ints(c, n, "output_padding", nsp, 0, opad)))
    return st;
  nn_conv_autopad ap;
  if ((st = nn_conv_autopad_parse(c, n, &ap)))
    return st;
  int cnt = 0;
  const int64_t *oshape = nn_attr_ints(n, "output_shape", &cnt);
  if (oshape) {
    /* Some exporters give the full shape (N, C, spatial...). */
    if (cnt == nsp + 2)
      oshape += 2;
    else if (cnt != nsp)
      return nn_fail(c, NN_ERR_INVALID_MODEL, "output_shape has %d values, expected %d", cnt,
                     nsp);
  }
  memset(g, 0, sizeof *g);
  g->nsp = nsp;
  for (int i = 0; i < NN_CONV_SP; i++) {
    g->in[i] = g->out[i] = g->k[i] = g->s[i] = g->d[i] = 1;
    g->pb[i] = g->pe[i] = 0;
  }
  int off = NN_CONV_SP - nsp;
  for (int i = 0; i < nsp; i++) {
    int j = off + i;
    if (kern[i] < 1 || kern[i] > NN_CONV_ATTR_MAX)
      return nn_fail(c, NN_ERR_INVALID_MODEL, "kernel size %lld in dimension %d is invalid",
                     (long long)kern[i], i);
    g->in[j] = in[i];
    g->k[j] = kern[i];
    g->s[j] = s[i];
    g->d[j] = d[i];
    int64_t ek = (kern[i] - 1) * d[i] + 1;
    int64_t full = s[i] * (in[i] - 1) + opad[i] + ek;   /* output with no padding */
    int64_t out;
    if (oshape || ap == NN_CONV_PAD_SAME_UPPER || ap == NN_CONV_PAD_SAME_LOWER) {
      if (oshape) {
        out = oshape[i];
        if (out < 0 || out > NN_CONV_ATTR_MAX)
          return nn_fail(c, NN_ERR_INVALID_MODEL, "output_shape[%d] = %lld is invalid", i,
                         (long long)out);
      } else {
        out = in[i] * s[i];
      }
      int64_t total = full - out;
      if (total < 0) {
        /* asked for more than the kernel reaches: the extra is at the end */
        g->pb[j] = 0;
      } else {
        int64_t half = total / 2;
        g->pb[j] = ap == NN_CONV_PAD_SAME_UPPER ? half : total - half;
      }
      g->pe[j] = total - g->pb[j];
    } else {
      if (ap == NN_CONV_PAD_NOTSET) {
        g->pb[j] = pads[i];
        g->pe[j] = pads[nsp + i];
      }
      out = full - g->pb[j] - g->pe[j];
    }
    if (out < 1 && in[i] > 0)
      return nn_fail(c, NN_ERR_SHAPE, "output size %lld in spatial dimension %d is not positive",
                     (long long)out, i);
    g->out[j] = out;
  }
  g->in_sz = g->out_sz = g->k_sz = 1;
  for (int i = 0; i < NN_CONV_SP; i++) {
    g->in_sz *= g->in[i];
    g->out_sz *= g->out[i];
    g->k_sz *= g->k[i];
  }
  return NN_OK;
}

/* 0 or 1, else refused. */
static nn_status pool_flag(nn_ctx *c, const nn_node *n, const char *name, bool *out) {
  int64_t v = nn_attr_int(n, name, 0);
  if (v != 0 && v != 1)
    return nn_fail(c, NN_ERR_UNSUPPORTED, "%s = %lld is not supported (0 or 1)", name,
                   (long long)v);
  *out = v == 1;
  return NN_OK;
}

nn_status nn_pool_params_init(nn_ctx *c, const nn_node *n, nn_pool_params *p) {
  memset(p, 0, sizeof *p);
  const nn_value *x = n->n_in > 0 ? n->x[0] : NULL;
  if (!x || x->rank < 3)
    return nn_fail(c, NN_ERR_SHAPE, "input needs spatial dimensions");
  int nsp = x->rank - 2, cnt = 0;
  const int64_t *ks = nn_attr_ints(n, "kernel_shape", &cnt);
  if (!ks)
    return nn_fail(c, NN_ERR_INVALID_MODEL, "kernel_shape is required");
  if (cnt != nsp)
    return nn_fail(c, NN_ERR_INVALID_MODEL, "kernel_shape has %d values, input has %d spatial dims",
                   cnt, nsp);
  nn_status st;
  if ((st = pool_flag(c, n, "ceil_mode", &p->ceil_mode)) != NN_OK ||
      (st = pool_flag(c, n, "count_include_pad", &p->count_include_pad)) != NN_OK ||
      (st = pool_flag(c, n, "storage_order", &p->storage_order)) != NN_OK)
    return st;
  return nn_conv_geom_init(c, n, nsp, x->dims + 2, ks, true, p->ceil_mode, &p->g);
}

nn_status nn_conv_group(nn_ctx *c, const nn_node *n, int64_t C, int64_t M, int64_t *group) {
  *group = nn_attr_int(n, "group", 1);
  if (*group < 1 || *group > NN_CONV_ATTR_MAX)
    return nn_fail(c, NN_ERR_INVALID_MODEL, "group %lld is invalid", (long long)*group);
  if (C % *group != 0 || (M > 0 && M % *group != 0))
    return nn_fail(c, NN_ERR_SHAPE, "group %lld does not divide %lld input / %lld output channels",
                   (long long)*group, (long long)C, (long long)M);
  return NN_OK;
}

nn_status nn_conv_kernel_shape(nn_ctx *c, const nn_node *n, int nsp, const int64_t *kern) {
  int cnt = 0;
  const int64_t *ks = nn_attr_ints(n, "kernel_shape", &cnt);
  if (!ks)
    return NN_OK;
  if (cnt != nsp)
    return nn_fail(c, NN_ERR_INVALID_MODEL, "kernel_shape has %d values, expected %d", cnt, nsp);
  for (int i = 0; i < nsp; i++)
    if (ks[i] != kern[i])
      return nn_fail(c, NN_ERR_SHAPE, "kernel_shape[%d] = %lld but W has %lld", i,
                     (long long)ks[i], (long long)kern[i]);
  return NN_OK;
}

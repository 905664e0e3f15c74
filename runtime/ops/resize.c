/* resize.c - the resize family in the op layer: Resize / Upsample attributes
 * and inputs into nn_resize_params (resize.h), once for every backend, and
 * their shape and dtype inference (nn_ops_resize[], collected by
 * ops/registry.c). */
#include <math.h>
#include <string.h>

#include "ops/resize.h"

static nn_status resize_parse_mode(nn_ctx *c, const char *s, bool legacy, nn_resize_mode *mode) {
  if (strcmp(s, "nearest") == 0)
    *mode = NN_RESIZE_NEAREST;
  else if (strcmp(s, "linear") == 0 || (legacy && strcmp(s, "bilinear") == 0))
    *mode = NN_RESIZE_LINEAR;
  else if (!legacy && strcmp(s, "cubic") == 0)
    *mode = NN_RESIZE_CUBIC;
  else
    return nn_fail(c, NN_ERR_UNSUPPORTED, "mode '%s' is not supported", s);
  return NN_OK;
}

static nn_status resize_parse_attrs(nn_ctx *c, const nn_node *n, nn_resize_params *p) {
  p->cubic_a = -0.75;
  p->extrapolation = 0;
  p->exclude_outside = false;
  p->antialias = false;
  p->policy = NN_RESIZE_STRETCH;
  if (p->legacy) {
    p->coord = NN_RESIZE_ASYMMETRIC;
    p->nearest = NN_RESIZE_NEAREST_LEGACY;
    return resize_parse_mode(c, nn_attr_string(n, "mode", "nearest"), true, &p->mode);
  }
  nn_status st = resize_parse_mode(c, nn_attr_string(n, "mode", "nearest"), false, &p->mode);
  if (st != NN_OK)
    return st;
  /* in the order of nn_resize_coord */
  static const char *const coords[] = {"half_pixel",         "half_pixel_symmetric",
                                       "pytorch_half_pixel", "align_corners",
                                       "asymmetric",         "tf_half_pixel_for_nn",
                                       "tf_crop_and_resize"};
  const char *s = nn_attr_string(n, "coordinate_transformation_mode", "half_pixel");
  int ci = -1;
  for (int i = 0; i < (int)(sizeof coords / sizeof coords[0]); i++)
    if (strcmp(s, coords[i]) == 0)
      ci = i;
  if (ci < 0 || (ci == NN_RESIZE_HALF_PIXEL_SYMMETRIC && n->version < 19))
    return nn_fail(c, NN_ERR_UNSUPPORTED, "coordinate_transformation_mode '%s' is not supported",
                   s);
  p->coord = (nn_resize_coord)ci;
  /* in the order of nn_resize_nearest */
  static const char *const nearests[] = {"round_prefer_floor", "round_prefer_ceil", "floor",
                                         "ceil"};
  s = nn_attr_string(n, "nearest_mode", "round_prefer_floor");
  int ni = -1;
  for (int i = 0; i < 4; i++)
    if (strcmp(s, nearests[i]) == 0)
      ni = i;
  if (ni < 0)
    return nn_fail(c, NN_ERR_UNSUPPORTED, "nearest_mode '%s' is not supported", s);
  p->nearest = (nn_resize_nearest)ni;
  p->cubic_a = nn_attr_float(n, "cubic_coeff_a", -0.75f);
  p->exclude_outside = nn_attr_int(n, "exclude_outside", 0) != 0;
  p->extrapolation = nn_attr_float(n, "extrapolation_value", 0.0f);
  if (n->version >= 18) {
    p->antialias = nn_attr_int(n, "antialias", 0) != 0 && p->mode != NN_RESIZE_NEAREST;
    const char *pol = nn_attr_string(n, "keep_aspect_ratio_policy", "stretch");
    p->policy = strcmp(pol, "stretch") == 0       ? NN_RESIZE_STRETCH
                : strcmp(pol, "not_larger") == 0  ? NN_RESIZE_NOT_LARGER
                : strcmp(pol, "not_smaller") == 0 ? NN_RESIZE_NOT_SMALLER
                                                  : NN_RESIZE_POLICY_UNKNOWN;
  }
  return NN_OK;
}

static bool resize_present(const nn_value *v) {
  return v && v->numel > 0;
}

static const nn_value *resize_in(const nn_node *n, int k) {
  return k < n->n_in ? n->x[k] : NULL;
}

/* Output sizes and per-axis scales.  `scales`/`sizes`/`roi` are the inputs
 * (NULL when absent); `attr_scales` is Upsample-7's attribute. */
static nn_status resize_shape(nn_ctx *c, const nn_node *n, nn_resize_params *p, const nn_value *roi,
                              const nn_value *scales, const nn_value *sizes,
                              const float *attr_scales, int attr_n) {
  const nn_value *x = n->x[0];
  int r = x->rank;
  p->rank = r;
  int *ax = p->axes;
  p->n_axes = r;
  for (int i = 0; i < r; i++) {
    ax[i] = i;
    p->in[i] = p->out[i] = x->dims[i];
    p->scale[i] = 1;
    p->roi0[i] = 0;
    p->roi1[i] = 1;
  }
  if (n->version >= 18 && !attr_scales) {
    int cnt;
    const int64_t *axes = nn_attr_ints(n, "axes", &cnt);
    if (axes) {
      if (cnt > r)
        return nn_fail(c, NN_ERR_INVALID_MODEL, "%d axes for an input of rank %d", cnt, r);
      for (int i = 0; i < cnt; i++) {
        if (!nn_norm_axis(axes[i], r, &ax[i]))
          return nn_fail(c, NN_ERR_INVALID_MODEL, "axes value %lld is out of range for rank %d",
                         (long long)axes[i], r);
        for (int j = 0; j < i; j++)
          if (ax[j] == ax[i])
            return nn_fail(c, NN_ERR_INVALID_MODEL, "axes repeats axis %d", ax[i]);
      }
      p->n_axes = cnt;
      p->axes_given = true;
    }
  }
  int na = p->n_axes;
  if (p->coord == NN_RESIZE_TF_CROP_AND_RESIZE) {
    if (!resize_present(roi) || !roi->data)
      return nn_fail(c, NN_ERR_INVALID_MODEL, "tf_crop_and_resize needs a known roi");
    if (roi->numel != 2 * na)
      return nn_fail(c, NN_ERR_SHAPE, "roi has %lld values, expected %d", (long long)roi->numel,
                     2 * na);
    for (int i = 0; i < na; i++) {
      p->roi0[ax[i]] = nn_value_get_double(roi, i);
      p->roi1[ax[i]] = nn_value_get_double(roi, na + i);
    }
  }
  if (attr_scales || resize_present(scales)) {
    if (resize_present(sizes))
      return nn_fail(c, NN_ERR_INVALID_MODEL, "only one of scales and sizes may be given");
    int cnt = attr_scales ? attr_n : (int)scales->numel;
    if (!attr_scales && (!scales->data || !nn_dtype_is_float(scales->dtype)))
      return nn_fail(c, NN_ERR_UNSUPPORTED, "scales must be a float tensor known at prepare");
    if (cnt != na)
      return nn_fail(c, NN_ERR_SHAPE, "scales has %d values, expected %d", cnt, na);
    for (int i = 0; i < na; i++) {
      double s = attr_scales ? attr_scales[i] : nn_value_get_double(scales, i);
      if (!(s > 0) || !isfinite(s))
        return nn_fail(c, NN_ERR_INVALID_MODEL, "scale %g must be positive", s);
      double o = floor(s * (double)x->dims[ax[i]]);
      if (o > 9.0e18)
        return nn_fail(c, NN_ERR_LIMIT, "output dimension overflows");
      p->scale[ax[i]] = s;
      p->out[ax[i]] = (int64_t)o;
    }
    return NN_OK;
  }
  if (!resize_present(sizes))
    return nn_fail(c, NN_ERR_INVALID_MODEL, "one of scales and sizes is required");
  if (!sizes->data || !nn_dtype_is_int(sizes->dtype))
    return nn_fail(c, NN_ERR_UNSUPPORTED, "sizes must be an integer tensor known at prepare");
  if (sizes->numel != na)
    return nn_fail(c, NN_ERR_SHAPE, "sizes has %lld values, expected %d", (long long)sizes->numel,
                   na);
  p->from_sizes = true;
  if (p->policy == NN_RESIZE_POLICY_UNKNOWN)
    return nn_fail(c, NN_ERR_UNSUPPORTED, "keep_aspect_ratio_policy '%s' is not supported",
                   nn_attr_string(n, "keep_aspect_ratio_policy", ""));
  bool not_larger = p->policy == NN_RESIZE_NOT_LARGER;
  double common = not_larger ? INFINITY : 0;
  for (int i = 0; i < na; i++) {
    int64_t sz = nn_value_get_int(sizes, i);
    int d = ax[i];
    if (sz < 0)
      return nn_fail(c, NN_ERR_SHAPE, "sizes[%d] = %lld is negative", i, (long long)sz);
    if (x->dims[d] == 0) {
      if (sz != 0)
        return nn_fail(c, NN_ERR_SHAPE, "cannot resize the empty axis %d to %lld", d,
                       (long long)sz);
      continue;
    }
    p->out[d] = sz;
    p->scale[d] = (double)sz / (double)x->dims[d];
    common = not_larger ? fmin(common, p->scale[d]) : fmax(common, p->scale[d]);
  }
  if (p->policy != NN_RESIZE_STRETCH) {
    for (int i = 0; i < na; i++) {
      int d = ax[i];
      if (x->dims[d] == 0)
        continue;
      p->scale[d] = common;
      double o = floor(common * (double)x->dims[d] + 0.5);
      if (o > 9.0e18)
        return nn_fail(c, NN_ERR_LIMIT, "output dimension overflows");
      p->out[d] = (int64_t)o;
    }
  }
  for (int d = 0; d < r; d++)
    if (p->scale[d] <= 0 && p->out[d] > 0)
      return nn_fail(c, NN_ERR_INVALID_MODEL, "invalid scale on axis %d", d);
  return NN_OK;
}

nn_status nn_resize_params_init(nn_ctx *c, const nn_node *n, nn_resize_params *p) {
  memset(p, 0, sizeof *p);
  bool upsample = strcmp(n->op_type, "Upsample") == 0;
  p->legacy = upsample || n->version < 11;
  int attr_n = 0;
  const float *attr_scales = NULL;
  if (upsample && n->version < 9) {
    attr_scales = nn_attr_floats(n, "scales", &attr_n);
    if (!attr_scales)
      return nn_fail(c, NN_ERR_INVALID_MODEL, "attribute 'scales' is required");
  }
  nn_status st = resize_parse_attrs(c, n, p);
  if (st != NN_OK)
    return st;
  if (attr_scales)
    return resize_shape(c, n, p, NULL, NULL, NULL, attr_scales, attr_n);
  if (p->legacy)
    return resize_shape(c, n, p, NULL, resize_in(n, 1), NULL, NULL, 0);
  return resize_shape(c, n, p, resize_in(n, 1), resize_in(n, 2), resize_in(n, 3), NULL, 0);
}

/* ---- shape and dtype inference ------------------------------------------------ */

/* Y: X's type, the sizes nn_resize_params_init derives. */
static nn_status resize_infer(nn_ctx *c, nn_node *n) {
  nn_resize_params p;
  nn_status st = nn_resize_params_init(c, n, &p);
  return st ? st : nn_set_output(c, n->y[0], n->x[0]->dtype, n->x[0]->rank, p.out);
}

/* The family's operators (ops/registry.c), each with its shape and dtype
 * inference; the kernel's prepare (cpu/resize.c) compiles its tables. */
const nn_op_def nn_ops_resize[] = {
  {.name = "Resize", .versions = {10, 11, 13, 18, 19}, .shape_inputs = 0xeu,
   .infer = resize_infer},
  {.name = "Upsample", .versions = {7, 9}, .shape_inputs = 1u << 1, .infer = resize_infer},
  {0},
};

/* shape.c - ops that only relabel a tensor's shape or produce small constant
 * tensors: Reshape, Flatten, Squeeze, Unsqueeze, Identity, Dropout (as
 * inference), Shape, Size, Constant, ConstantOfShape, Range, EyeLike.
 *
 * Reshape, Flatten, Squeeze, Unsqueeze and Identity are views: the planner
 * may alias their output to their input, in which case run has nothing to
 * do. */
#include "cpu/shp_common.h"

/* ---- Reshape --------------------------------------------------------------- */

static nn_status reshape_prepare(nn_ctx *c, nn_node *n) {
  nn_value *x = n->x[0];
  int64_t shape[NN_MAX_RANK];
  int cnt = 0;
  nn_status st;
  if (n->version < 5) {
    const int64_t *a = nn_attr_ints(n, "shape", &cnt);
    if (cnt > NN_MAX_RANK)
      return nn_fail(c, NN_ERR_LIMIT, "shape has %d dims, at most %d are allowed", cnt, NN_MAX_RANK);
    for (int i = 0; i < cnt; i++)
      shape[i] = a[i];
  } else if ((st = shp_get_ints(c, shp_in(n, 1), "shape", shape, NN_MAX_RANK, &cnt)) != NN_OK) {
    return st;
  }
  bool allowzero = n->version >= 14 && nn_attr_int(n, "allowzero", 0) != 0;
  int infer = -1;
  int64_t known = 1;
  for (int i = 0; i < cnt; i++) {
    if (shape[i] == 0 && !allowzero) {
      if (i >= x->rank)
        return nn_fail(c, NN_ERR_SHAPE, "shape[%d] = 0 copies a dimension the input (rank %d) lacks",
                       i, x->rank);
      shape[i] = x->dims[i];
    }
    if (shape[i] == -1) {
      if (infer >= 0)
        return nn_fail(c, NN_ERR_SHAPE, "shape has more than one -1");
      infer = i;
      continue;
    }
    if (shape[i] < 0)
      return nn_fail(c, NN_ERR_SHAPE, "shape[%d] = %lld is negative", i, (long long)shape[i]);
    if (nn_mul_overflow_i64(known, shape[i], &known))
      return nn_fail(c, NN_ERR_LIMIT, "shape overflows");
  }
  if (infer >= 0) {
    if (known == 0)
      return nn_fail(c, NN_ERR_SHAPE, "cannot infer the -1 dimension next to a zero dimension");
    if (x->numel % known != 0)
      return nn_fail(c, NN_ERR_SHAPE, "cannot reshape %lld elements with -1 and a known product of %lld",
                     (long long)x->numel, (long long)known);
    shape[infer] = x->numel / known;
  } else if (known != x->numel) {
    return nn_fail(c, NN_ERR_SHAPE, "cannot reshape %lld elements into %lld", (long long)x->numel,
                   (long long)known);
  }
  return nn_set_output(c, n->y[0], x->dtype, cnt, shape);
}

/* ---- Flatten --------------------------------------------------------------- */

static nn_status flatten_prepare(nn_ctx *c, nn_node *n) {
  nn_value *x = n->x[0];
  /* negative axes are only defined from opset 11, but older exporters
   * emitted them: accept them in every version, as other runtimes do */
  int64_t raw = nn_attr_int(n, "axis", 1), axis = raw < 0 ? raw + x->rank : raw;
  if (axis < 0 || axis > x->rank)
    return nn_fail(c, NN_ERR_INVALID_MODEL, "axis %lld is out of range for rank %d",
                   (long long)raw, x->rank);
  int64_t d[2] = {nn_dims_numel((int)axis, x->dims), nn_dims_numel(x->rank - (int)axis, x->dims + axis)};
  return nn_set_output(c, n->y[0], x->dtype, 2, d);
}

/* ---- Squeeze / Unsqueeze ----------------------------------------------------- */

static nn_status squeeze_axes(nn_ctx *c, nn_node *n, int64_t *axes, int *cnt, bool *given) {
  *given = false;
  *cnt = 0;
  if (n->version >= 13) {
    nn_value *a = shp_in(n, 1);
    /* an empty axes tensor means "not given", as in ONNX Runtime */
    if (!a || a->numel == 0)
      return NN_OK;
    *given = true;
    return shp_get_ints(c, a, "axes", axes, NN_MAX_RANK * 2, cnt);
  }
  const int64_t *a = nn_attr_ints(n, "axes", cnt);
  if (!a)
    return NN_OK;
  if (*cnt > NN_MAX_RANK * 2)
    return nn_fail(c, NN_ERR_LIMIT, "too many axes (%d)", *cnt);
  *given = true;
  memcpy(axes, a, (size_t)*cnt * sizeof *axes);
  return NN_OK;
}

static nn_status squeeze_prepare(nn_ctx *c, nn_node *n) {
  nn_value *x = n->x[0];
  int64_t axes[NN_MAX_RANK * 2];
  int cnt, ax[NN_MAX_RANK * 2];
  bool given;
  nn_status st = squeeze_axes(c, n, axes, &cnt, &given);
  if (st != NN_OK)
    return st;
  if (cnt > x->rank)
    return nn_fail(c, NN_ERR_INVALID_MODEL, "%d axes for an input of rank %d", cnt, x->rank);
  if ((st = shp_norm_axes(c, axes, cnt, x->rank, ax, "axes")) != NN_OK)
    return st;
  bool drop[NN_MAX_RANK] = {false};
  for (int i = 0; i < cnt; i++) {
    if (x->dims[ax[i]] != 1)
      return nn_fail(c, NN_ERR_SHAPE, "cannot squeeze axis %d of size %lld", ax[i],
                     (long long)x->dims[ax[i]]);
    drop[ax[i]] = true;
  }
  if (!given) {
    for (int i = 0; i < x->rank; i++)
      drop[i] = x->dims[i] == 1;
  }
  int64_t d[NN_MAX_RANK];
  int r = 0;
  for (int i = 0; i < x->rank; i++)
    if (!drop[i])
      d[r++] = x->dims[i];
  return nn_set_output(c, n->y[0], x->dtype, r, d);
}

static nn_status unsqueeze_prepare(nn_ctx *c, nn_node *n) {
  nn_value *x = n->x[0];
  int64_t axes[NN_MAX_RANK * 2];
  int cnt, ax[NN_MAX_RANK * 2];
  bool given;
  nn_status st = squeeze_axes(c, n, axes, &cnt, &given);
  if (st != NN_OK)
    return st;
  if (n->version >= 13 ? !shp_in(n, 1) : !given)
    return nn_fail(c, NN_ERR_INVALID_MODEL, "axes are required");
  int r = x->rank + cnt;
  if (r > NN_MAX_RANK)
    return nn_fail(c, NN_ERR_LIMIT, "output rank %d exceeds %d", r, NN_MAX_RANK);
  if ((st = shp_norm_axes(c, axes, cnt, r, ax, "axes")) != NN_OK)
    return st;
  bool ins[NN_MAX_RANK] = {false};
  for (int i = 0; i < cnt; i++)
    ins[ax[i]] = true;
  int64_t d[NN_MAX_RANK];
  for (int i = 0, k = 0; i < r; i++)
    d[i] = ins[i] ? 1 : x->dims[k++];
  return nn_set_output(c, n->y[0], x->dtype, r, d);
}

/* ---- Identity --------------------------------------------------------------- */

static nn_status identity_prepare(nn_ctx *c, nn_node *n) {
  nn_value *x = n->x[0];
  return nn_set_output(c, n->y[0], x->dtype, x->rank, x->dims);
}

/* ---- Dropout ------------------------------------------------------------------
 * Inference only: the output is the input and the mask is all ones.  Training
 * mode is refused unless its ratio is 0, which is deterministic too.  Before
 * opset 7 the is_test attribute is ignored, as every inference runtime does:
 * models exported with is_test=0 still expect inference behaviour. */

typedef struct dropout_priv {
  bool check_at_run;     /* training_mode or ratio were unknown at prepare */
} dropout_priv;

static nn_status dropout_check(nn_ctx *c, nn_node *n, bool at_run) {
  nn_value *r = shp_in(n, 1), *t = shp_in(n, 2);
  if (n->version < 12 || !t)
    return NN_OK;
  if (!t->data)
    return NN_OK;
  if (t->numel != 1)
    return nn_fail(c, NN_ERR_SHAPE, "training_mode must be a scalar");
  if (!nn_value_get_int(t, 0))
    return NN_OK;
  double ratio = 0.5;
  if (r) {
    if (!r->data)
      return NN_OK;   /* decided at run */
    if (r->numel != 1)
      return nn_fail(c, NN_ERR_SHAPE, "ratio must be a scalar");
    ratio = nn_value_get_double(r, 0);
  }
  if (ratio != 0)
    return nn_fail(c, NN_ERR_UNSUPPORTED,
                   "training_mode=true with ratio %g is random%s; only inference is supported", ratio,
                   at_run ? " (found at run)" : "");
  return NN_OK;
}

static nn_status dropout_prepare(nn_ctx *c, nn_node *n) {
  nn_value *x = n->x[0];
  size_t es;
  nn_status st = shp_elem_size(c, x, &es);
  if (st != NN_OK)
    return st;
  if ((st = dropout_check(c, n, false)) != NN_OK)
    return st;
  nn_value *r = shp_in(n, 1), *t = shp_in(n, 2);
  dropout_priv *p = nn_malloc(sizeof *p);
  if (!p)
    return nn_fail(c, NN_ERR_NOMEM, "out of memory");
  p->check_at_run = (r && !r->data) || (t && !t->data);
  n->priv = p;
  if ((st = nn_set_output(c, n->y[0], x->dtype, x->rank, x->dims)) != NN_OK)
    return st;
  nn_value *mask = shp_out(n, 1);
  if (mask) {
    nn_dtype mdt = n->version >= 10 ? NN_DTYPE_BOOL : x->dtype;
    if ((st = nn_set_output(c, mask, mdt, x->rank, x->dims)) != NN_OK)
      return st;
  }
  return NN_OK;
}

static nn_status dropout_run(nn_ctx *c, nn_node *n) {
  const dropout_priv *p = n->priv;
  nn_status st;
  if (p && p->check_at_run && (st = dropout_check(c, n, true)) != NN_OK)
    return st;
  shp_view_run(c, n);
  nn_value *mask = shp_out(n, 1);
  if (mask && mask->numel) {
    unsigned char one[16];
    shp_store_double(mask->dtype, 1.0, one);
    shp_fill(mask->data, one, nn_dtype_size(mask->dtype), mask->numel);
  }
  return NN_OK;
}

/* ---- Shape / Size --------------------------------------------------------------- */

static void shape_range(const nn_node *n, int64_t *start, int64_t *end) {
  int r = n->x[0]->rank;
  int64_t s = 0, e = r;
  if (n->version >= 15) {
    s = nn_attr_int(n, "start", 0);
    e = nn_attr_int(n, "end", r);
    if (s < 0)
      s += r;
    if (e < 0)
      e += r;
    s = s < 0 ? 0 : s > r ? r : s;
    e = e < 0 ? 0 : e > r ? r : e;
    if (e < s)
      e = s;
  }
  *start = s;
  *end = e;
}

static nn_status shape_prepare(nn_ctx *c, nn_node *n) {
  int64_t s, e;
  shape_range(n, &s, &e);
  int64_t d = e - s;
  return nn_set_output(c, n->y[0], NN_DTYPE_INT64, 1, &d);
}

static nn_status shape_run(nn_ctx *c, nn_node *n) {
  (void)c;
  int64_t s, e;
  shape_range(n, &s, &e);
  int64_t *y = n->y[0]->data;
  for (int64_t i = s; i < e; i++)
    y[i - s] = n->x[0]->dims[i];
  return NN_OK;
}

static nn_status size_prepare(nn_ctx *c, nn_node *n) {
  return nn_set_output(c, n->y[0], NN_DTYPE_INT64, 0, NULL);
}

static nn_status size_run(nn_ctx *c, nn_node *n) {
  (void)c;
  *(int64_t *)n->y[0]->data = n->x[0]->numel;
  return NN_OK;
}

/* ---- Constant -------------------------------------------------------------------- */

typedef struct constant_priv {
  const void *src;        /* graph-owned attribute storage */
  size_t nbytes;
  int64_t ival;           /* value_int */
  float fval;             /* value_float */
} constant_priv;

/* value_string(s): views on the graph-owned attribute strings, kept after
 * the priv header (nn_strings.h) */
static nn_status constant_strings(nn_ctx *c, nn_node *n, const nn_attr *one, const nn_attr *many) {
  int cnt = one ? 1 : many->n;
  constant_priv *p = nn_calloc(1, sizeof *p + (size_t)cnt * sizeof(nn_string));
  if (!p)
    return nn_fail(c, NN_ERR_NOMEM, "out of memory");
  n->priv = p;
  nn_string *v = (nn_string *)(p + 1);
  for (int i = 0; i < cnt; i++) {
    v[i].data = one ? one->s : many->strings[i];
    v[i].len = one ? one->s_len : strlen(many->strings[i]);
  }
  p->src = v;
  p->nbytes = (size_t)cnt * sizeof(nn_string);
  int64_t d = cnt;
  return nn_set_output(c, n->y[0], NN_DTYPE_STRING, one ? 0 : 1, &d);
}

static nn_status constant_prepare(nn_ctx *c, nn_node *n) {
  if (nn_attr_get(n, "sparse_value"))
    return nn_fail(c, NN_ERR_UNSUPPORTED, "attribute 'sparse_value' is not supported");
  const nn_attr *vs = nn_attr_get(n, "value_string"), *vss = nn_attr_get(n, "value_strings");
  if ((vs && vs->type == NN_ATTR_STRING) || (vss && vss->type == NN_ATTR_STRINGS))
    return constant_strings(c, n, vs && vs->type == NN_ATTR_STRING ? vs : NULL, vss);
  constant_priv *p = nn_calloc(1, sizeof *p);
  if (!p)
    return nn_fail(c, NN_ERR_NOMEM, "out of memory");
  n->priv = p;
  const nn_attr *a;
  int cnt;
  if ((a = nn_attr_get(n, "value")) != NULL) {
    const nn_tensor *t = nn_attr_tensor(n, "value");
    if (!t || a->type != NN_ATTR_TENSOR)
      return nn_fail(c, NN_ERR_INVALID_MODEL, "attribute 'value' is not a tensor");
    size_t es = nn_dtype_size(t->dtype);
    if (es == 0)
      return nn_fail(c, NN_ERR_UNSUPPORTED, "constant of type %s is not supported",
                     nn_dtype_name(t->dtype));
    nn_status st = nn_set_output(c, n->y[0], t->dtype, t->rank, t->dims);
    if (st != NN_OK)
      return st;
    if (t->nbytes != n->y[0]->nbytes || (t->nbytes && !t->data))
      return nn_fail(c, NN_ERR_INVALID_MODEL, "tensor holds %zu bytes, its shape needs %zu",
                     t->nbytes, n->y[0]->nbytes);
    p->src = t->data;
    p->nbytes = t->nbytes;
    return NN_OK;
  }
  if ((a = nn_attr_get(n, "value_float")) != NULL) {
    p->fval = a->f;
    p->src = &p->fval;
    p->nbytes = sizeof p->fval;
    return nn_set_output(c, n->y[0], NN_DTYPE_FLOAT, 0, NULL);
  }
  if ((a = nn_attr_get(n, "value_int")) != NULL) {
    p->ival = a->i;
    p->src = &p->ival;
    p->nbytes = sizeof p->ival;
    return nn_set_output(c, n->y[0], NN_DTYPE_INT64, 0, NULL);
  }
  const float *f = nn_attr_floats(n, "value_floats", &cnt);
  if (f || nn_attr_get(n, "value_floats")) {
    int64_t d = cnt;
    p->src = f;
    p->nbytes = (size_t)cnt * sizeof *f;
    return nn_set_output(c, n->y[0], NN_DTYPE_FLOAT, 1, &d);
  }
  const int64_t *iv = nn_attr_ints(n, "value_ints", &cnt);
  if (iv || nn_attr_get(n, "value_ints")) {
    int64_t d = cnt;
    p->src = iv;
    p->nbytes = (size_t)cnt * sizeof *iv;
    return nn_set_output(c, n->y[0], NN_DTYPE_INT64, 1, &d);
  }
  return nn_fail(c, NN_ERR_INVALID_MODEL, "no value attribute");
}

static nn_status constant_run(nn_ctx *c, nn_node *n) {
  (void)c;
  const constant_priv *p = n->priv;
  if (p->nbytes)
    memcpy(n->y[0]->data, p->src, p->nbytes);
  return NN_OK;
}

/* ---- ConstantOfShape ------------------------------------------------------------- */

typedef struct cos_priv {
  unsigned char val[16];
} cos_priv;

static nn_status cos_prepare(nn_ctx *c, nn_node *n) {
  int64_t dims[NN_MAX_RANK];
  int cnt;
  nn_status st = shp_get_ints(c, n->x[0], "input", dims, NN_MAX_RANK, &cnt);
  if (st != NN_OK)
    return st;
  cos_priv *p = nn_calloc(1, sizeof *p);
  if (!p)
    return nn_fail(c, NN_ERR_NOMEM, "out of memory");
  n->priv = p;
  nn_dtype dt = NN_DTYPE_FLOAT;
  const nn_tensor *t = nn_attr_tensor(n, "value");
  if (t) {
    size_t es = nn_dtype_size(t->dtype);
    if (es == 0)
      return nn_fail(c, NN_ERR_UNSUPPORTED, "value of type %s is not supported",
                     nn_dtype_name(t->dtype));
    if (nn_tensor_numel(t) != 1 || t->nbytes != es || !t->data)
      return nn_fail(c, NN_ERR_INVALID_MODEL, "value must hold exactly one element");
    dt = t->dtype;
    memcpy(p->val, t->data, es);
  }
  for (int i = 0; i < cnt; i++)
    if (dims[i] < 0)
      return nn_fail(c, NN_ERR_SHAPE, "dimension %d is negative (%lld)", i, (long long)dims[i]);
  return nn_set_output(c, n->y[0], dt, cnt, dims);
}

static nn_status cos_run(nn_ctx *c, nn_node *n) {
  (void)c;
  const cos_priv *p = n->priv;
  nn_value *y = n->y[0];
  shp_fill(y->data, p->val, nn_dtype_size(y->dtype), y->numel);
  return NN_OK;
}

/* ---- Range ------------------------------------------------------------------------- */

static bool range_dtype_ok(nn_dtype dt) {
  switch (dt) {
  case NN_DTYPE_FLOAT: case NN_DTYPE_DOUBLE: case NN_DTYPE_FLOAT16: case NN_DTYPE_BFLOAT16:
  case NN_DTYPE_INT16: case NN_DTYPE_INT32: case NN_DTYPE_INT64:
  case NN_DTYPE_INT8: case NN_DTYPE_UINT8: case NN_DTYPE_UINT16: case NN_DTYPE_UINT32:
    return true;
  default:
    return false;
  }
}

static nn_status range_count(nn_ctx *c, nn_node *n, int64_t *count) {
  nn_value *v[3] = {n->x[0], shp_in(n, 1), shp_in(n, 2)};
  static const char *const names[3] = {"start", "limit", "delta"};
  for (int i = 0; i < 3; i++) {
    if (!v[i] || !v[i]->data)
      return nn_fail(c, NN_ERR_UNSUPPORTED, "input '%s' must be known when the model is prepared",
                     names[i]);
    if (v[i]->numel != 1)
      return nn_fail(c, NN_ERR_SHAPE, "input '%s' must be a scalar", names[i]);
    if (v[i]->dtype != v[0]->dtype)
      return nn_fail(c, NN_ERR_DTYPE, "inputs have different types");
  }
  if (!range_dtype_ok(v[0]->dtype))
    return nn_fail(c, NN_ERR_UNSUPPORTED, "type %s is not supported", nn_dtype_name(v[0]->dtype));
  if (nn_dtype_is_float(v[0]->dtype)) {
    double s = nn_value_get_double(v[0], 0), l = nn_value_get_double(v[1], 0),
           d = nn_value_get_double(v[2], 0);
    if (d == 0 || !isfinite(s) || !isfinite(l) || !isfinite(d))
      return nn_fail(c, NN_ERR_INVALID_MODEL, "delta must be non-zero and all values finite");
    double k = ceil((l - s) / d);
    if (!(k < 9.0e18))
      return nn_fail(c, NN_ERR_LIMIT, "range of %g elements is too large", k);
    *count = k > 0 ? (int64_t)k : 0;
    return NN_OK;
  }
  int64_t s = nn_value_get_int(v[0], 0), l = nn_value_get_int(v[1], 0), d = nn_value_get_int(v[2], 0);
  if (d == 0)
    return nn_fail(c, NN_ERR_INVALID_MODEL, "delta must be non-zero");
  uint64_t span, step;
  if (d > 0) {
    if (l <= s) { *count = 0; return NN_OK; }
    span = (uint64_t)l - (uint64_t)s;
    step = (uint64_t)d;
  } else {
    if (l >= s) { *count = 0; return NN_OK; }
    span = (uint64_t)s - (uint64_t)l;
    step = (uint64_t)0 - (uint64_t)d;
  }
  uint64_t k = span / step + (span % step != 0);
  if (k > (uint64_t)INT64_MAX)
    return nn_fail(c, NN_ERR_LIMIT, "range is too large");
  *count = (int64_t)k;
  return NN_OK;
}

static nn_status range_prepare(nn_ctx *c, nn_node *n) {
  int64_t k;
  nn_status st = range_count(c, n, &k);
  if (st != NN_OK)
    return st;
  return nn_set_output(c, n->y[0], n->x[0]->dtype, 1, &k);
}

static nn_status range_run(nn_ctx *c, nn_node *n) {
  (void)c;
  nn_value *y = n->y[0];
  nn_dtype dt = y->dtype;
  size_t es = nn_dtype_size(dt);
  unsigned char *out = y->data;
  if (nn_dtype_is_float(dt)) {
    double s = nn_value_get_double(n->x[0], 0), d = nn_value_get_double(n->x[2], 0);
    for (int64_t i = 0; i < y->numel; i++)
      shp_store_double(dt, s + (double)i * d, out + (size_t)i * es);
    return NN_OK;
  }
  /* wrapping arithmetic in uint64 is exact for every in-range element */
  uint64_t s = (uint64_t)nn_value_get_int(n->x[0], 0), d = (uint64_t)nn_value_get_int(n->x[2], 0);
  for (int64_t i = 0; i < y->numel; i++) {
    uint64_t v = s + (uint64_t)i * d;
    switch (es) {
    case 1: { uint8_t t = (uint8_t)v; memcpy(out + i, &t, 1); break; }
    case 2: { uint16_t t = (uint16_t)v; memcpy(out + 2 * i, &t, 2); break; }
    case 4: { uint32_t t = (uint32_t)v; memcpy(out + 4 * i, &t, 4); break; }
    default: memcpy(out + 8 * i, &v, 8); break;
    }
  }
  return NN_OK;
}

/* ---- EyeLike ------------------------------------------------------------------------- */

static nn_status eyelike_prepare(nn_ctx *c, nn_node *n) {
  nn_value *x = n->x[0];
  if (x->rank != 2)
    return nn_fail(c, NN_ERR_SHAPE, "input must be 2-D, got rank %d", x->rank);
  nn_dtype dt = (nn_dtype)nn_attr_int(n, "dtype", 0);
  if (dt == NN_DTYPE_UNDEFINED)
    dt = x->dtype;
  if (nn_dtype_size(dt) == 0 || dt == NN_DTYPE_STRING)
    return nn_fail(c, NN_ERR_UNSUPPORTED, "dtype %d is not supported", (int)dt);
  return nn_set_output(c, n->y[0], dt, 2, x->dims);
}

static nn_status eyelike_run(nn_ctx *c, nn_node *n) {
  (void)c;
  nn_value *y = n->y[0];
  size_t es = nn_dtype_size(y->dtype);
  int64_t rows = y->dims[0], cols = y->dims[1];
  int64_t k = nn_attr_int(n, "k", 0);
  unsigned char one[16];
  shp_store_double(y->dtype, 1.0, one);
  memset(y->data, 0, y->nbytes);
  unsigned char *out = y->data;
  for (int64_t i = 0; i < rows; i++) {
    /* j = i + k, computed without overflow for any k */
    if (k >= cols || k <= -rows)
      break;
    int64_t j = i + k;
    if (j >= 0 && j < cols)
      memcpy(out + ((size_t)i * (size_t)cols + (size_t)j) * es, one, es);
  }
  return NN_OK;
}

const nn_kernel nn_kernels_shape[] = {
  {.name = "Reshape", .prepare = reshape_prepare, .run = shp_view_run},
  {.name = "Flatten", .prepare = flatten_prepare, .run = shp_view_run},
  {.name = "Squeeze", .prepare = squeeze_prepare, .run = shp_view_run},
  {.name = "Unsqueeze", .prepare = unsqueeze_prepare, .run = shp_view_run},
  {.name = "Identity", .prepare = identity_prepare, .run = shp_view_run},
  {.name = "Dropout", .prepare = dropout_prepare, .run = dropout_run},
  {.name = "Shape", .prepare = shape_prepare, .run = shape_run},
  {.name = "Size", .prepare = size_prepare, .run = size_run},
  {.name = "Constant", .prepare = constant_prepare, .run = constant_run},
  {.name = "ConstantOfShape", .prepare = cos_prepare, .run = cos_run},
  {.name = "Range", .prepare = range_prepare, .run = range_run},
  {.name = "EyeLike", .prepare = eyelike_prepare, .run = eyelike_run},
  {0},
};

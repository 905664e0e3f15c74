/* shape.c - the shape family in the op layer: its operators, their versions and
 * their shape and dtype inference (nn_ops_shape[], collected by ops/registry.c). */
#include <math.h>
#include <string.h>

#include "ops/inputs.h"
#include "ops/shape.h"

/* ---- Reshape --------------------------------------------------------------- */

static nn_status reshape_infer(nn_ctx *c, nn_node *n) {
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
  } else if ((st = nn_op_ints(c, nn_op_in(n, 1), "shape", shape, NN_MAX_RANK, &cnt)) != NN_OK) {
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

static nn_status flatten_infer(nn_ctx *c, nn_node *n) {
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
    nn_value *a = nn_op_in(n, 1);
    /* an empty axes tensor means "not given", as in ONNX Runtime */
    if (!a || a->numel == 0)
      return NN_OK;
    *given = true;
    return nn_op_ints(c, a, "axes", axes, NN_MAX_RANK * 2, cnt);
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

static nn_status squeeze_infer(nn_ctx *c, nn_node *n) {
  nn_value *x = n->x[0];
  int64_t axes[NN_MAX_RANK * 2];
  int cnt, ax[NN_MAX_RANK * 2];
  bool given;
  nn_status st = squeeze_axes(c, n, axes, &cnt, &given);
  if (st != NN_OK)
    return st;
  if (cnt > x->rank)
    return nn_fail(c, NN_ERR_INVALID_MODEL, "%d axes for an input of rank %d", cnt, x->rank);
  if ((st = nn_op_norm_axes(c, axes, cnt, x->rank, ax, "axes")) != NN_OK)
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

static nn_status unsqueeze_infer(nn_ctx *c, nn_node *n) {
  nn_value *x = n->x[0];
  int64_t axes[NN_MAX_RANK * 2];
  int cnt, ax[NN_MAX_RANK * 2];
  bool given;
  nn_status st = squeeze_axes(c, n, axes, &cnt, &given);
  if (st != NN_OK)
    return st;
  if (n->version >= 13 ? !nn_op_in(n, 1) : !given)
    return nn_fail(c, NN_ERR_INVALID_MODEL, "axes are required");
  int r = x->rank + cnt;
  if (r > NN_MAX_RANK)
    return nn_fail(c, NN_ERR_LIMIT, "output rank %d exceeds %d", r, NN_MAX_RANK);
  if ((st = nn_op_norm_axes(c, axes, cnt, r, ax, "axes")) != NN_OK)
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

static nn_status identity_infer(nn_ctx *c, nn_node *n) {
  nn_value *x = n->x[0];
  return nn_set_output(c, n->y[0], x->dtype, x->rank, x->dims);
}

/* ---- Dropout ------------------------------------------------------------------
 * Inference only: the output is the input and the mask is all ones.  Training
 * mode is refused unless its ratio is 0, which is deterministic too.  Before
 * opset 7 the is_test attribute is ignored, as every inference runtime does:
 * models exported with is_test=0 still expect inference behaviour. */

nn_status nn_dropout_check(nn_ctx *c, const nn_node *n, bool at_run) {
  nn_value *r = nn_op_in(n, 1), *t = nn_op_in(n, 2);
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

static nn_status dropout_infer(nn_ctx *c, nn_node *n) {
  nn_value *x = n->x[0];
  nn_status st = nn_op_held(c, x);
  if (st != NN_OK)
    return st;
  if ((st = nn_dropout_check(c, n, false)) != NN_OK)
    return st;
  if ((st = nn_set_output(c, n->y[0], x->dtype, x->rank, x->dims)) != NN_OK)
    return st;
  nn_value *mask = nn_op_out(n, 1);
  if (mask) {
    nn_dtype mdt = n->version >= 10 ? NN_DTYPE_BOOL : x->dtype;
    if ((st = nn_set_output(c, mask, mdt, x->rank, x->dims)) != NN_OK)
      return st;
  }
  return NN_OK;
}

/* ---- Shape / Size --------------------------------------------------------------- */

void nn_shape_range(const nn_node *n, int64_t *start, int64_t *end) {
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

static nn_status shape_infer(nn_ctx *c, nn_node *n) {
  int64_t s, e;
  nn_shape_range(n, &s, &e);
  int64_t d = e - s;
  return nn_set_output(c, n->y[0], NN_DTYPE_INT64, 1, &d);
}

static nn_status size_infer(nn_ctx *c, nn_node *n) {
  return nn_set_output(c, n->y[0], NN_DTYPE_INT64, 0, NULL);
}

/* ---- Constant -------------------------------------------------------------------- */

nn_constant_kind nn_constant_kind_of(const nn_node *n) {
  if (nn_attr_get(n, "sparse_value"))
    return NN_CONSTANT_SPARSE;
  const nn_attr *vs = nn_attr_get(n, "value_string"), *vss = nn_attr_get(n, "value_strings");
  if (vs && vs->type == NN_ATTR_STRING)
    return NN_CONSTANT_STRING;
  if (vss && vss->type == NN_ATTR_STRINGS)
    return NN_CONSTANT_STRINGS;
  if (nn_attr_get(n, "value"))
    return NN_CONSTANT_TENSOR;
  if (nn_attr_get(n, "value_float"))
    return NN_CONSTANT_FLOAT;
  if (nn_attr_get(n, "value_int"))
    return NN_CONSTANT_INT;
  if (nn_attr_get(n, "value_floats"))
    return NN_CONSTANT_FLOATS;
  if (nn_attr_get(n, "value_ints"))
    return NN_CONSTANT_INTS;
  return NN_CONSTANT_NONE;
}

static nn_status constant_infer(nn_ctx *c, nn_node *n) {
  int cnt = 0;
  int64_t d;
  switch (nn_constant_kind_of(n)) {
  case NN_CONSTANT_SPARSE:
    return nn_fail(c, NN_ERR_UNSUPPORTED, "attribute 'sparse_value' is not supported");
  case NN_CONSTANT_STRING:
    return nn_set_output(c, n->y[0], NN_DTYPE_STRING, 0, NULL);
  case NN_CONSTANT_STRINGS:
    d = nn_attr_get(n, "value_strings")->n;
    return nn_set_output(c, n->y[0], NN_DTYPE_STRING, 1, &d);
  case NN_CONSTANT_TENSOR: {
    const nn_attr *a = nn_attr_get(n, "value");
    const nn_tensor *t = nn_attr_tensor(n, "value");
    if (!t || a->type != NN_ATTR_TENSOR)
      return nn_fail(c, NN_ERR_INVALID_MODEL, "attribute 'value' is not a tensor");
    if (nn_dtype_size(t->dtype) == 0)
      return nn_fail(c, NN_ERR_UNSUPPORTED, "constant of type %s is not supported",
                     nn_dtype_name(t->dtype));
    nn_status st = nn_set_output(c, n->y[0], t->dtype, t->rank, t->dims);
    if (st != NN_OK)
      return st;
    if (t->nbytes != n->y[0]->nbytes || (t->nbytes && !t->data))
      return nn_fail(c, NN_ERR_INVALID_MODEL, "tensor holds %zu bytes, its shape needs %zu",
                     t->nbytes, n->y[0]->nbytes);
    return NN_OK;
  }
  case NN_CONSTANT_FLOAT:
    return nn_set_output(c, n->y[0], NN_DTYPE_FLOAT, 0, NULL);
  case NN_CONSTANT_INT:
    return nn_set_output(c, n->y[0], NN_DTYPE_INT64, 0, NULL);
  case NN_CONSTANT_FLOATS:
    nn_attr_floats(n, "value_floats", &cnt);
    d = cnt;
    return nn_set_output(c, n->y[0], NN_DTYPE_FLOAT, 1, &d);
  case NN_CONSTANT_INTS:
    nn_attr_ints(n, "value_ints", &cnt);
    d = cnt;
    return nn_set_output(c, n->y[0], NN_DTYPE_INT64, 1, &d);
  case NN_CONSTANT_NONE:
    break;
  }
  return nn_fail(c, NN_ERR_INVALID_MODEL, "no value attribute");
}

/* ---- ConstantOfShape ------------------------------------------------------------- */

static nn_status cos_infer(nn_ctx *c, nn_node *n) {
  int64_t dims[NN_MAX_RANK];
  int cnt;
  nn_status st = nn_op_ints(c, n->x[0], "input", dims, NN_MAX_RANK, &cnt);
  if (st != NN_OK)
    return st;
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
  }
  for (int i = 0; i < cnt; i++)
    if (dims[i] < 0)
      return nn_fail(c, NN_ERR_SHAPE, "dimension %d is negative (%lld)", i, (long long)dims[i]);
  return nn_set_output(c, n->y[0], dt, cnt, dims);
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
  nn_value *v[3] = {n->x[0], nn_op_in(n, 1), nn_op_in(n, 2)};
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

static nn_status range_infer(nn_ctx *c, nn_node *n) {
  int64_t k;
  nn_status st = range_count(c, n, &k);
  if (st != NN_OK)
    return st;
  return nn_set_output(c, n->y[0], n->x[0]->dtype, 1, &k);
}

/* ---- EyeLike ------------------------------------------------------------------------- */

static nn_status eyelike_infer(nn_ctx *c, nn_node *n) {
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

/* The family's operators (ops/registry.c), each with its shape and dtype
 * inference; the views (NN_OP_VIEW) only relabel input 0's bytes. */
const nn_op_def nn_ops_shape[] = {
  {.name = "Reshape", .versions = {1, 5, 14}, .shape_inputs = 1u << 1, .flags = NN_OP_VIEW,
   .infer = reshape_infer},
  {.name = "Flatten", .versions = {1, 11}, .flags = NN_OP_VIEW, .infer = flatten_infer},
  {.name = "Squeeze", .versions = {1, 13}, .shape_inputs = 1u << 1, .flags = NN_OP_VIEW,
   .infer = squeeze_infer},
  {.name = "Unsqueeze", .versions = {1, 13}, .shape_inputs = 1u << 1, .flags = NN_OP_VIEW,
   .infer = unsqueeze_infer},
  {.name = "Identity", .versions = {1}, .flags = NN_OP_VIEW, .infer = identity_infer},
  {.name = "Dropout", .versions = {1, 7, 10, 12}, .flags = NN_OP_VIEW, .infer = dropout_infer},
  {.name = "Shape", .versions = {1, 15}, .infer = shape_infer},
  {.name = "Size", .versions = {1}, .infer = size_infer},
  {.name = "Constant", .versions = {1}, .infer = constant_infer},
  {.name = "ConstantOfShape", .versions = {9}, .shape_inputs = 1u << 0, .infer = cos_infer},
  {.name = "Range", .versions = {11}, .shape_inputs = 7u, .infer = range_infer},
  {.name = "EyeLike", .versions = {9}, .infer = eyelike_infer},
  {0},
};

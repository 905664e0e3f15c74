/* cast.c - Cast and CastLike between every numeric type the runtime holds
 * and bool.
 *
 * A conversion goes source dtype -> its compute domain -> the target's
 * domain -> target dtype (ew_conv.h), in stack chunks.  The semantics follow
 * numpy's astype, which the ONNX reference uses: float -> integer truncates
 * toward zero (out-of-range values saturate to int64 and then wrap to the
 * target width; NaN gives 0), anything -> bool is "nonzero" (NaN is true),
 * float -> float16/bfloat16 rounds to nearest even.  Strings, complex,
 * float8, float4 and the 2/4-bit integer types are refused as unsupported.
 *
 * BitCast (26) reinterprets the bytes of every element as another type of the
 * same width (float32 <-> int32, bool <-> uint8, ...): a copy, or nothing
 * when the planner lets the output share the input's buffer.  Strings (whose
 * elements are views, not bytes) and types of other widths are refused.
 */
#include <string.h>

#include "cpu/ew_conv.h"
#include "cpu/ops.h"

/* Cast-1 names the target type with a string. */
static nn_dtype cast_dtype_from_name(const char *s) {
  static const struct {
    const char *name;
    nn_dtype dt;
  } names[] = {
    {"FLOAT", NN_DTYPE_FLOAT},     {"UINT8", NN_DTYPE_UINT8},     {"INT8", NN_DTYPE_INT8},
    {"UINT16", NN_DTYPE_UINT16},   {"INT16", NN_DTYPE_INT16},     {"INT32", NN_DTYPE_INT32},
    {"INT64", NN_DTYPE_INT64},     {"STRING", NN_DTYPE_STRING},   {"BOOL", NN_DTYPE_BOOL},
    {"FLOAT16", NN_DTYPE_FLOAT16}, {"DOUBLE", NN_DTYPE_DOUBLE},   {"UINT32", NN_DTYPE_UINT32},
    {"UINT64", NN_DTYPE_UINT64},   {"BFLOAT16", NN_DTYPE_BFLOAT16},
  };
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
    if (strcmp(names[i].name, s) == 0)
      return names[i].dt;
  return NN_DTYPE_UNDEFINED;
}

/* nn_dtype_name knows only the types the runtime holds; name the others in
 * messages so that "unsupported" says which type. */
static const char *cast_type_name(int dt) {
  static const char *const names[] = {
    [NN_DTYPE_STRING] = "string", [NN_DTYPE_COMPLEX64] = "complex64",
    [NN_DTYPE_COMPLEX128] = "complex128", [17] = "float8e4m3fn", [18] = "float8e4m3fnuz",
    [19] = "float8e5m2", [20] = "float8e5m2fnuz", [21] = "uint4", [22] = "int4",
    [23] = "float4e2m1", [24] = "float8e8m0", [25] = "uint2", [26] = "int2",
  };
  if (dt > 0 && dt < (int)(sizeof names / sizeof names[0]) && names[dt])
    return names[dt];
  return nn_dtype_name((nn_dtype)dt);
}

static nn_status cast_check_attrs(nn_ctx *c, const nn_node *n) {
  /* saturate and round_mode only concern float8 targets, which are refused
   * anyway; still reject values no version defines. */
  int64_t sat = nn_attr_int(n, "saturate", 1);
  if (sat != 0 && sat != 1)
    return nn_fail(c, NN_ERR_UNSUPPORTED, "saturate=%lld (expected 0 or 1)", (long long)sat);
  const char *rm = nn_attr_string(n, "round_mode", "up");
  if (strcmp(rm, "up") != 0 && strcmp(rm, "down") != 0 && strcmp(rm, "nearest") != 0)
    return nn_fail(c, NN_ERR_UNSUPPORTED, "round_mode='%s' (expected up, down or nearest)", rm);
  return NN_OK;
}

static nn_status cast_prepare_to(nn_ctx *c, nn_node *n, nn_dtype to) {
  if (n->n_in < 1 || !n->x[0] || n->n_out < 1 || !n->y[0])
    return nn_fail(c, NN_ERR_INVALID_MODEL, "expects an input and an output");
  const nn_value *x = n->x[0];
  if (!ew_dtype_ok(x->dtype))
    return nn_fail(c, NN_ERR_UNSUPPORTED, "casting from %s (type %d) is not supported",
                   cast_type_name(x->dtype), (int)x->dtype);
  if (!ew_dtype_ok(to))
    return nn_fail(c, NN_ERR_UNSUPPORTED, "casting to %s (type %d) is not supported",
                   cast_type_name(to), (int)to);
  nn_status st = cast_check_attrs(c, n);
  if (st != NN_OK)
    return st;
  return nn_set_output(c, n->y[0], to, x->rank, x->dims);
}

static nn_status cast_prepare(nn_ctx *c, nn_node *n) {
  const nn_attr *to = nn_attr_get(n, "to");
  if (!to)
    return nn_fail(c, NN_ERR_INVALID_MODEL, "attribute 'to' is missing");
  nn_dtype dt;
  if (to->type == NN_ATTR_STRING) {
    dt = cast_dtype_from_name(to->s ? to->s : "");
    if (dt == NN_DTYPE_UNDEFINED)
      return nn_fail(c, NN_ERR_UNSUPPORTED, "to='%s' is not a known type name", to->s ? to->s : "");
  } else {
    if (to->i <= 0 || to->i > 64)
      return nn_fail(c, NN_ERR_INVALID_MODEL, "to=%lld is not a data type", (long long)to->i);
    dt = (nn_dtype)to->i;
  }
  return cast_prepare_to(c, n, dt);
}

static nn_status castlike_prepare(nn_ctx *c, nn_node *n) {
  if (n->n_in < 2 || !n->x[1])
    return nn_fail(c, NN_ERR_INVALID_MODEL, "expects input and target_type");
  return cast_prepare_to(c, n, n->x[1]->dtype);
}

typedef struct cast_exec {
  nn_dtype dx, dy;
  const char *x;
  char *y;
  size_t ex, ey;
} cast_exec;

static void cast_range(void *arg, int64_t begin, int64_t end) {
  const cast_exec *e = arg;
  const ew_dom from = ew_dom_of(e->dx);
  const char *x = e->x + begin * (int64_t)e->ex;
  char *y = e->y + begin * (int64_t)e->ey;
  const int64_t len = end - begin;
  uint64_t buf[EW_CHUNK], tmp[EW_CHUNK];
  for (int64_t i = 0; i < len; i += EW_CHUNK) {
    int64_t m = len - i < EW_CHUNK ? len - i : EW_CHUNK;
    const void *v = ew_fetch(e->dx, x + i * (int64_t)e->ex, m, from, buf, tmp);
    ew_put(from, v, e->dy, y + i * (int64_t)e->ey, m, tmp);
  }
}

static nn_status cast_run(nn_ctx *c, nn_node *n) {
  const nn_value *x = n->x[0];
  nn_value *y = n->y[0];
  if (x->dtype == y->dtype) {
    if (x->data != y->data)
      memcpy(y->data, x->data, y->nbytes);
    return NN_OK;
  }
  cast_exec e = {x->dtype, y->dtype, x->data, y->data, nn_dtype_size(x->dtype),
                 nn_dtype_size(y->dtype)};
  if (x->numel > 0)
    nn_parallel_for(c, x->numel, EW_GRAIN, cast_range, &e);
  return NN_OK;
}

static nn_status bitcast_prepare(nn_ctx *c, nn_node *n) {
  if (n->n_in != 1 || !n->x[0] || n->n_out != 1 || !n->y[0])
    return nn_fail(c, NN_ERR_INVALID_MODEL, "expects one input and one output");
  const nn_attr *to = nn_attr_get(n, "to");
  if (!to || to->type != NN_ATTR_INT)
    return nn_fail(c, NN_ERR_INVALID_MODEL, "attribute 'to' (an int) is missing");
  const nn_value *x = n->x[0];
  if (to->i <= 0 || to->i > 64)
    return nn_fail(c, NN_ERR_INVALID_MODEL, "to=%lld is not a data type", (long long)to->i);
  nn_dtype dt = (nn_dtype)to->i;
  if (x->dtype == NN_DTYPE_STRING || dt == NN_DTYPE_STRING || !ew_dtype_ok(x->dtype) ||
      !ew_dtype_ok(dt))
    return nn_fail(c, NN_ERR_UNSUPPORTED, "bit-casting %s to %s is not supported",
                   cast_type_name(x->dtype), cast_type_name(dt));
  if (nn_dtype_size(dt) != nn_dtype_size(x->dtype))
    return nn_fail(c, NN_ERR_INVALID_MODEL, "%s and %s differ in bit width",
                   cast_type_name(x->dtype), cast_type_name(dt));
  return nn_set_output(c, n->y[0], dt, x->rank, x->dims);
}

static nn_status bitcast_run(nn_ctx *c, nn_node *n) {
  (void)c;
  if (n->y[0]->data != n->x[0]->data && n->y[0]->nbytes)
    memcpy(n->y[0]->data, n->x[0]->data, n->y[0]->nbytes);
  return NN_OK;
}

/* Cast-1 takes the target as a string, Cast-6 as an int; later revisions add
 * types (and saturate/round_mode for float8) only.  CastLike-15. */
const nn_kernel nn_kernels_cast[] = {
  {.name = "Cast", .prepare = cast_prepare, .run = cast_run},
  {.name = "CastLike", .prepare = castlike_prepare, .run = cast_run},
  {.name = "BitCast", .prepare = bitcast_prepare, .run = bitcast_run},
  {0},
};

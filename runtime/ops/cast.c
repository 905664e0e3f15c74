/* cast.c - the cast family in the op layer: its operators, their versions and
 * their shape and dtype inference (nn_ops_cast[], collected by ops/registry.c). */
#include <string.h>

#include "ops/cast.h"

const char *nn_cast_type_name(int dt) {
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

/* Y has X's shape and the target type.  Types the runtime holds no tensor
 * of (complex, float8, float4, 2/4-bit integers) are refused here; which of
 * the others a backend converts is its own (cpu/cast.c). */
static nn_status cast_infer_to(nn_ctx *c, nn_node *n, nn_dtype to) {
  if (n->n_in < 1 || !n->x[0] || n->n_out < 1 || !n->y[0])
    return nn_fail(c, NN_ERR_INVALID_MODEL, "expects an input and an output");
  const nn_value *x = n->x[0];
  if (nn_dtype_size(to) == 0)
    return nn_fail(c, NN_ERR_UNSUPPORTED, "casting to %s (type %d) is not supported",
                   nn_cast_type_name(to), (int)to);
  nn_status st = cast_check_attrs(c, n);
  if (st != NN_OK)
    return st;
  return nn_set_output(c, n->y[0], to, x->rank, x->dims);
}

static nn_status cast_infer(nn_ctx *c, nn_node *n) {
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
  return cast_infer_to(c, n, dt);
}

static nn_status castlike_infer(nn_ctx *c, nn_node *n) {
  if (n->n_in < 2 || !n->x[1])
    return nn_fail(c, NN_ERR_INVALID_MODEL, "expects input and target_type");
  return cast_infer_to(c, n, n->x[1]->dtype);
}

/* BitCast reinterprets the bytes of each element: both types must be held
 * as bytes (not strings, whose elements are views) and of the same width. */
static nn_status bitcast_infer(nn_ctx *c, nn_node *n) {
  if (n->n_in != 1 || !n->x[0] || n->n_out != 1 || !n->y[0])
    return nn_fail(c, NN_ERR_INVALID_MODEL, "expects one input and one output");
  const nn_attr *to = nn_attr_get(n, "to");
  if (!to || to->type != NN_ATTR_INT)
    return nn_fail(c, NN_ERR_INVALID_MODEL, "attribute 'to' (an int) is missing");
  const nn_value *x = n->x[0];
  if (to->i <= 0 || to->i > 64)
    return nn_fail(c, NN_ERR_INVALID_MODEL, "to=%lld is not a data type", (long long)to->i);
  nn_dtype dt = (nn_dtype)to->i;
  if (x->dtype == NN_DTYPE_STRING || dt == NN_DTYPE_STRING || nn_dtype_size(x->dtype) == 0 ||
      nn_dtype_size(dt) == 0)
    return nn_fail(c, NN_ERR_UNSUPPORTED, "bit-casting %s to %s is not supported",
                   nn_cast_type_name(x->dtype), nn_cast_type_name(dt));
  if (nn_dtype_size(dt) != nn_dtype_size(x->dtype))
    return nn_fail(c, NN_ERR_INVALID_MODEL, "%s and %s differ in bit width",
                   nn_cast_type_name(x->dtype), nn_cast_type_name(dt));
  return nn_set_output(c, n->y[0], dt, x->rank, x->dims);
}

/* The family's operators (ops/registry.c), each with its inference.  Cast-1
 * takes the target as a string, Cast-6 as an int; later revisions add types
 * (and saturate/round_mode for float8) only.  CastLike-15, BitCast-26. */
const nn_op_def nn_ops_cast[] = {
  {.name = "Cast", .versions = {1, 6}, .flags = NN_OP_ELEMENTWISE, .infer = cast_infer},
  {.name = "CastLike", .versions = {15}, .flags = NN_OP_ELEMENTWISE, .infer = castlike_infer},
  {.name = "BitCast", .versions = {26}, .flags = NN_OP_ELEMENTWISE, .infer = bitcast_infer},
  {0},
};

/* shape_util.c - broadcasting, axes and element access shared by kernels. */
#include <string.h>

#include "nn_internal.h"
#include "nn_limits.h"

nn_status nn_broadcast_shape(int ra, const int64_t *da, int rb, const int64_t *db,
                             int *rout, int64_t *dout) {
  int r = ra > rb ? ra : rb;
  for (int i = 0; i < r; i++) {
    int ia = i - (r - ra), ib = i - (r - rb);
    int64_t a = ia >= 0 ? da[ia] : 1;
    int64_t b = ib >= 0 ? db[ib] : 1;
    if (a == b || b == 1)
      dout[i] = a;
    else if (a == 1)
      dout[i] = b;
    else
      return NN_ERR_SHAPE;
  }
  *rout = r;
  return NN_OK;
}

void nn_broadcast_strides(int r, const int64_t *dims, int rout, const int64_t *dout,
                          int64_t *strides) {
  int64_t s = 1;
  for (int i = rout - 1; i >= 0; i--) {
    int j = i - (rout - r);
    if (j < 0) {
      strides[i] = 0;
      continue;
    }
    strides[i] = (dims[j] == 1 && dout[i] != 1) ? 0 : s;
    s *= dims[j];
  }
}

bool nn_norm_axis(int64_t axis, int rank, int *out) {
  if (axis < -rank || axis >= rank)
    return false;
  *out = (int)(axis < 0 ? axis + rank : axis);
  return true;
}

int64_t nn_dims_numel(int rank, const int64_t *dims) {
  int64_t n = 1;
  for (int i = 0; i < rank; i++)
    n *= dims[i];
  return n;
}

/* Float to int64 is undefined behaviour in C for NaN and out-of-range values,
 * and shape-deciding inputs come straight from the model: saturate (NaN
 * gives 0) so that the caller's range checks see a value, not UB. */
static int64_t f64_to_i64_sat(double d) {
  if (d != d)
    return 0;
  if (d >= 9223372036854775808.0)
    return INT64_MAX;
  if (d < -9223372036854775808.0)
    return INT64_MIN;
  return (int64_t)d;
}

int64_t nn_value_get_int(const nn_value *v, int64_t i) {
  const void *p = v->data;
  switch (v->dtype) {
  case NN_DTYPE_INT64: return ((const int64_t *)p)[i];
  case NN_DTYPE_INT32: return ((const int32_t *)p)[i];
  case NN_DTYPE_INT16: return ((const int16_t *)p)[i];
  case NN_DTYPE_INT8: return ((const int8_t *)p)[i];
  case NN_DTYPE_UINT64: return (int64_t)((const uint64_t *)p)[i];
  case NN_DTYPE_UINT32: return ((const uint32_t *)p)[i];
  case NN_DTYPE_UINT16: return ((const uint16_t *)p)[i];
  case NN_DTYPE_UINT8: return ((const uint8_t *)p)[i];
  case NN_DTYPE_BOOL: return ((const uint8_t *)p)[i] != 0;
  case NN_DTYPE_FLOAT: return f64_to_i64_sat(((const float *)p)[i]);
  case NN_DTYPE_DOUBLE: return f64_to_i64_sat(((const double *)p)[i]);
  case NN_DTYPE_FLOAT16: return f64_to_i64_sat(nn_f16_to_f32(((const uint16_t *)p)[i]));
  case NN_DTYPE_BFLOAT16: return f64_to_i64_sat(nn_bf16_to_f32(((const uint16_t *)p)[i]));
  default: return 0;
  }
}

double nn_value_get_double(const nn_value *v, int64_t i) {
  const void *p = v->data;
  switch (v->dtype) {
  case NN_DTYPE_FLOAT: return ((const float *)p)[i];
  case NN_DTYPE_DOUBLE: return ((const double *)p)[i];
  case NN_DTYPE_FLOAT16: return nn_f16_to_f32(((const uint16_t *)p)[i]);
  case NN_DTYPE_BFLOAT16: return nn_bf16_to_f32(((const uint16_t *)p)[i]);
  case NN_DTYPE_UINT64: return (double)((const uint64_t *)p)[i];
  default: return (double)nn_value_get_int(v, i);
  }
}

int64_t nn_tensor_numel(const nn_tensor *t) {
  if (!t)
    return 0;
  return nn_dims_numel(t->rank, t->dims);
}

nn_status nn_set_output(nn_ctx *c, nn_value *y, nn_dtype dt, int rank, const int64_t *dims) {
  if (!y)
    return NN_OK; /* omitted optional output */
  int max_rank = c && c->limits && c->limits->max_rank ? c->limits->max_rank : NN_MAX_RANK;
  if (rank < 0 || rank > max_rank || rank > NN_MAX_RANK)
    return nn_fail(c, NN_ERR_LIMIT, "output '%s' would have rank %d (limit %d)", y->name, rank, max_rank);
  size_t esize = nn_dtype_size(dt);
  if (esize == 0)
    return nn_fail(c, NN_ERR_UNSUPPORTED, "output '%s' would have unsupported type %s", y->name,
                   nn_dtype_name(dt));
  int64_t max_elems = c && c->limits && c->limits->max_tensor_elems ? c->limits->max_tensor_elems
                                                                     : NN_LIMIT_TENSOR_ELEMS;
  int64_t numel = 1;
  for (int i = 0; i < rank; i++) {
    if (dims[i] < 0)
      return nn_fail(c, NN_ERR_SHAPE, "output '%s' would have negative dimension %lld", y->name,
                     (long long)dims[i]);
    /* also when another dim is 0: kernels size per-dim tables by the dims,
     * and an empty tensor with a 2^40 dim is only ever hostile */
    if (dims[i] > max_elems)
      return nn_fail(c, NN_ERR_LIMIT, "output '%s' would have dimension %lld, more than the limit %lld",
                     y->name, (long long)dims[i], (long long)max_elems);
    if (nn_mul_overflow_i64(numel, dims[i], &numel))
      return nn_fail(c, NN_ERR_LIMIT, "output '%s': element count overflows", y->name);
  }
  if (numel > max_elems)
    return nn_fail(c, NN_ERR_LIMIT, "output '%s' would have %lld elements, more than the limit %lld",
                   y->name, (long long)numel, (long long)max_elems);
  size_t nbytes;
  if (nn_mul_overflow_size((size_t)numel, esize, &nbytes))
    return nn_fail(c, NN_ERR_LIMIT, "output '%s': byte size overflows", y->name);
  y->dtype = dt;
  y->rank = rank;
  for (int i = 0; i < rank; i++)
    y->dims[i] = dims[i];
  for (int i = rank; i < NN_MAX_RANK; i++)
    y->dims[i] = 0;
  y->numel = numel;
  y->nbytes = nbytes;
  return NN_OK;
}

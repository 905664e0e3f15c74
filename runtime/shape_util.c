/* shape_util.c - broadcasting, axes and element access shared by kernels. */
#include <string.h>

#include "nn_internal.h"

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
  case NN_DTYPE_FLOAT: return (int64_t)((const float *)p)[i];
  case NN_DTYPE_DOUBLE: return (int64_t)((const double *)p)[i];
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

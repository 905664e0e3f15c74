/* kernel_util.c - the out-of-line helpers of kernel_util.h: checks the CPU
 * kernel families run at prepare only, defined once here instead of in
 * every family that uses them. */
#include "cpu/kernel_util.h"

bool ku_dtype_storable(nn_dtype dt) {
  switch (dt) {
  case NN_DTYPE_FLOAT: case NN_DTYPE_DOUBLE: case NN_DTYPE_FLOAT16: case NN_DTYPE_BFLOAT16:
  case NN_DTYPE_INT8: case NN_DTYPE_UINT8: case NN_DTYPE_INT16: case NN_DTYPE_UINT16:
  case NN_DTYPE_INT32: case NN_DTYPE_UINT32: case NN_DTYPE_INT64: case NN_DTYPE_UINT64:
  case NN_DTYPE_BOOL:
    return true;
  default:
    return false;
  }
}

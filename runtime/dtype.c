/* dtype.c - element types: sizes, names, half-precision conversions. */
#include <math.h>
#include <string.h>

#include "nn_internal.h"

size_t nn_dtype_size(nn_dtype dt) {
  switch (dt) {
  case NN_DTYPE_FLOAT: return 4;
  case NN_DTYPE_UINT8: return 1;
  case NN_DTYPE_INT8: return 1;
  case NN_DTYPE_UINT16: return 2;
  case NN_DTYPE_INT16: return 2;
  case NN_DTYPE_INT32: return 4;
  case NN_DTYPE_INT64: return 8;
  case NN_DTYPE_BOOL: return 1;
  case NN_DTYPE_FLOAT16: return 2;
  case NN_DTYPE_DOUBLE: return 8;
  case NN_DTYPE_UINT32: return 4;
  case NN_DTYPE_UINT64: return 8;
  case NN_DTYPE_BFLOAT16: return 2;
  case NN_DTYPE_STRING: return sizeof(nn_string); /* a view: nn_strings.h */
  default: return 0; /* complex and sub-byte types are not held */
  }
}

const char *nn_dtype_name(nn_dtype dt) {
  switch (dt) {
  case NN_DTYPE_FLOAT: return "float32";
  case NN_DTYPE_UINT8: return "uint8";
  case NN_DTYPE_INT8: return "int8";
  case NN_DTYPE_UINT16: return "uint16";
  case NN_DTYPE_INT16: return "int16";
  case NN_DTYPE_INT32: return "int32";
  case NN_DTYPE_INT64: return "int64";
  case NN_DTYPE_STRING: return "string";
  case NN_DTYPE_BOOL: return "bool";
  case NN_DTYPE_FLOAT16: return "float16";
  case NN_DTYPE_DOUBLE: return "float64";
  case NN_DTYPE_UINT32: return "uint32";
  case NN_DTYPE_UINT64: return "uint64";
  case NN_DTYPE_COMPLEX64: return "complex64";
  case NN_DTYPE_COMPLEX128: return "complex128";
  case NN_DTYPE_BFLOAT16: return "bfloat16";
  /* ONNX types the runtime cannot hold, named so that errors read well */
  case 17: return "float8e4m3fn";
  case 18: return "float8e4m3fnuz";
  case 19: return "float8e5m2";
  case 20: return "float8e5m2fnuz";
  case 21: return "uint4";
  case 22: return "int4";
  case 23: return "float4e2m1";
  case 24: return "float8e8m0";
  case 25: return "uint2";
  case 26: return "int2";
  default: return "undefined";
  }
}

bool nn_dtype_is_float(nn_dtype dt) {
  return dt == NN_DTYPE_FLOAT || dt == NN_DTYPE_DOUBLE || dt == NN_DTYPE_FLOAT16 ||
         dt == NN_DTYPE_BFLOAT16;
}

bool nn_dtype_is_int(nn_dtype dt) {
  switch (dt) {
  case NN_DTYPE_UINT8: case NN_DTYPE_INT8: case NN_DTYPE_UINT16: case NN_DTYPE_INT16:
  case NN_DTYPE_INT32: case NN_DTYPE_INT64: case NN_DTYPE_UINT32: case NN_DTYPE_UINT64:
    return true;
  default:
    return false;
  }
}

bool nn_dtype_is_signed(nn_dtype dt) {
  return dt == NN_DTYPE_INT8 || dt == NN_DTYPE_INT16 || dt == NN_DTYPE_INT32 ||
         dt == NN_DTYPE_INT64 || nn_dtype_is_float(dt);
}

float nn_f16_to_f32(uint16_t h) {
  uint32_t sign = (uint32_t)(h & 0x8000) << 16;
  uint32_t exp = (h >> 10) & 0x1f;
  uint32_t man = h & 0x3ff;
  uint32_t bits;
  if (exp == 0) {
    if (man == 0) {
      bits = sign;
    } else { /* subnormal: normalize */
      int e = -1;
      do {
        e++;
        man <<= 1;
      } while ((man & 0x400) == 0);
      bits = sign | ((uint32_t)(127 - 15 - e) << 23) | ((man & 0x3ff) << 13);
    }
  } else if (exp == 0x1f) {
    bits = sign | 0x7f800000u | (man << 13);
  } else {
    bits = sign | ((exp + 127 - 15) << 23) | (man << 13);
  }
  float f;
  memcpy(&f, &bits, sizeof f);
  return f;
}

uint16_t nn_f32_to_f16(float f) {
  uint32_t x;
  memcpy(&x, &f, sizeof x);
  uint32_t sign = (x >> 16) & 0x8000;
  uint32_t exp = (x >> 23) & 0xff;
  uint32_t man = x & 0x7fffff;
  if (exp == 0xff) /* inf or nan (keep nan quiet) */
    return (uint16_t)(sign | 0x7c00 | (man ? 0x200 | (man >> 13) : 0));
  int e = (int)exp - 127 + 15;
  if (e >= 0x1f)
    return (uint16_t)(sign | 0x7c00);
  if (e <= 0) {
    if (e < -10)
      return (uint16_t)sign;
    man |= 0x800000;
    int shift = 14 - e;
    uint32_t half = man >> shift;
    uint32_t rem = man & ((1u << shift) - 1);
    uint32_t mid = 1u << (shift - 1);
    if (rem > mid || (rem == mid && (half & 1)))
      half++;
    return (uint16_t)(sign | half);
  }
  uint32_t half = sign | ((uint32_t)e << 10) | (man >> 13);
  uint32_t rem = man & 0x1fff;
  if (rem > 0x1000 || (rem == 0x1000 && (half & 1)))
    half++; /* may carry into the exponent, which is correct rounding */
  return (uint16_t)half;
}

float nn_bf16_to_f32(uint16_t h) {
  uint32_t bits = (uint32_t)h << 16;
  float f;
  memcpy(&f, &bits, sizeof f);
  return f;
}

uint16_t nn_f32_to_bf16(float f) {
  uint32_t x;
  memcpy(&x, &f, sizeof x);
  if ((x & 0x7fffffff) > 0x7f800000)
    return (uint16_t)((x >> 16) | 0x40);
  uint32_t rounding = 0x7fff + ((x >> 16) & 1);
  return (uint16_t)((x + rounding) >> 16);
}

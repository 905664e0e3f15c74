/* tool.c - the tool-facing API of nn_tool.h over the loader and the core.
 *
 * The runtime's command-line tools read and write ONNX test data without
 * reaching into internals: what they need is here, at the top layer, next
 * to the session. */
#include <string.h>

#include "include/nn_tool.h"
#include "nn_internal.h"
#include "nn_limits.h"
#include "onnx-subset.pb-c.h"
#include "onnx/loader.h"

nn_status nn_tool_tensor_decode(const void *buf, size_t size, nn_tensor *out, char **name,
                                nn_error *err) {
  return nn_tensor_decode(buf, size, out, name, err);
}

nn_status nn_tool_items_decode(const void *buf, size_t size, int optional, nn_tensor **items, int *n,
                               int *none, int *is_seq, char **name, nn_error *err) {
  bool b_none = false, b_seq = false;
  nn_status st = nn_sequence_decode(buf, size, optional != 0, items, n, &b_none, &b_seq, name, err);
  if (none)
    *none = b_none;
  if (is_seq)
    *is_seq = b_seq;
  return st;
}

nn_status nn_tool_tensor_encode(const nn_tensor *t, const char *name, void **out, size_t *len,
                                nn_error *err) {
  OnnxSubset__TensorProto tp = ONNX_SUBSET__TENSOR_PROTO__INIT;
  int64_t dims[NN_MAX_RANK];
  *out = NULL;
  *len = 0;
  if (!t || t->rank < 0 || t->rank > NN_MAX_RANK || (t->nbytes && !t->data))
    return nn_error_set(err, NN_ERR_INVALID_ARG, "encode: bad tensor");
  for (int i = 0; i < t->rank; i++)
    dims[i] = t->dims[i];
  tp.n_dims = (size_t)t->rank;
  tp.dims = dims;
  tp.has_data_type = 1;
  tp.data_type = (int32_t)t->dtype;
  tp.name = (char *)(name ? name : "");
  ProtobufCBinaryData *strs = NULL;
  if (t->dtype == NN_DTYPE_STRING) { /* string_data, one entry per view */
    size_t count = t->nbytes / sizeof(nn_string);
    strs = nn_calloc(count ? count : 1, sizeof *strs);
    if (!strs)
      return nn_error_set(err, NN_ERR_NOMEM, "encode: out of memory");
    const nn_string *v = t->data;
    for (size_t i = 0; i < count; i++) {
      strs[i].len = v[i].len;
      strs[i].data = (uint8_t *)(v[i].len ? v[i].data : "");
    }
    tp.n_string_data = count;
    tp.string_data = strs;
  } else {
    tp.has_raw_data = 1;
    tp.raw_data.len = t->nbytes;
    tp.raw_data.data = t->data;
  }
  size_t n = onnx_subset__tensor_proto__get_packed_size(&tp);
  uint8_t *buf = nn_malloc(n + 1);
  if (!buf) {
    nn_free(strs);
    return nn_error_set(err, NN_ERR_NOMEM, "encode: out of memory (%zu bytes)", n);
  }
  onnx_subset__tensor_proto__pack(&tp, buf);
  nn_free(strs);
  *out = buf;
  *len = n;
  return NN_OK;
}

nn_status nn_tool_tensor_alloc(nn_tensor *t, nn_error *err) {
  int64_t n = 1;
  size_t bytes;
  if (t->rank < 0 || t->rank > NN_MAX_RANK)
    return nn_error_set(err, NN_ERR_INVALID_ARG, "rank %d out of range", t->rank);
  for (int i = 0; i < t->rank; i++)
    if (t->dims[i] < 0 || nn_mul_overflow_i64(n, t->dims[i], &n))
      return nn_error_set(err, NN_ERR_LIMIT, "bad or overflowing dimensions");
  if (n > NN_LIMIT_TENSOR_ELEMS || nn_mul_overflow_size((size_t)n, nn_dtype_size(t->dtype), &bytes))
    return nn_error_set(err, NN_ERR_LIMIT, "tensor of %lld elements is over the limit", (long long)n);
  t->data = nn_aligned_alloc(bytes ? bytes : 1);
  if (!t->data)
    return nn_error_set(err, NN_ERR_NOMEM, "out of memory (%zu bytes)", bytes);
  memset(t->data, 0, bytes ? bytes : 1);
  t->nbytes = bytes;
  return NN_OK;
}

void nn_tool_tensor_free(nn_tensor *t) {
  if (!t)
    return;
  nn_aligned_free(t->data);
  t->data = NULL;
  t->nbytes = 0;
}

void nn_tool_free(void *p) {
  nn_free(p);
}

double nn_tool_tensor_get(const nn_tensor *t, int64_t i) {
  nn_value v = {0};
  v.dtype = t->dtype;
  v.data = t->data;
  return nn_value_get_double(&v, i);
}

void nn_tool_tensor_set(nn_tensor *t, int64_t i, double x) {
  void *p = t->data;
  switch (t->dtype) {
  case NN_DTYPE_FLOAT: ((float *)p)[i] = (float)x; break;
  case NN_DTYPE_DOUBLE: ((double *)p)[i] = x; break;
  case NN_DTYPE_FLOAT16: ((uint16_t *)p)[i] = nn_f32_to_f16((float)x); break;
  case NN_DTYPE_BFLOAT16: ((uint16_t *)p)[i] = nn_f32_to_bf16((float)x); break;
  case NN_DTYPE_BOOL: ((uint8_t *)p)[i] = x != 0; break;
  case NN_DTYPE_INT8: ((int8_t *)p)[i] = (int8_t)x; break;
  case NN_DTYPE_UINT8: ((uint8_t *)p)[i] = (uint8_t)x; break;
  case NN_DTYPE_INT16: ((int16_t *)p)[i] = (int16_t)x; break;
  case NN_DTYPE_UINT16: ((uint16_t *)p)[i] = (uint16_t)x; break;
  case NN_DTYPE_INT32: ((int32_t *)p)[i] = (int32_t)x; break;
  case NN_DTYPE_UINT32: ((uint32_t *)p)[i] = (uint32_t)x; break;
  case NN_DTYPE_INT64: ((int64_t *)p)[i] = (int64_t)x; break;
  case NN_DTYPE_UINT64: ((uint64_t *)p)[i] = (uint64_t)x; break;
  default: break; /* strings and complex: not numeric */
  }
}

bool nn_tool_dtype_is_float(nn_dtype dt) {
  return nn_dtype_is_float(dt);
}

/* nn_tool.h - what the runtime offers its own command-line tools (nn-run,
 * the schema generator's input) beyond nn.h: the operators it implements and
 * the ONNX test-data format (TensorProto .pb files).  Not part of the
 * application API; tools include nn.h, nn_file.h and this, nothing internal.
 */
#ifndef NN_TOOL_H
#define NN_TOOL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "nn.h"

/* Called once per registered operator, in lookup order: its domain ("" for
 * the default one), its op type, and the ONNX since-versions its kernel
 * implements, ascending (n_versions of them).  The pointers are static. */
typedef void (*nn_op_list_fn)(void *user, const char *domain, const char *op_type,
                              const int *versions, int n_versions);

/* Every operator of the runtime's kernel tables, through fn. */
void nn_op_list(nn_op_list_fn fn, void *user);

/* Decode a serialized TensorProto (an ONNX test .pb file).  On success
 * out->data is the caller's (nn_tool_tensor_free) and so is *name when name
 * is not NULL (nn_tool_free; "" when the proto has none).  A string tensor's
 * data is its nn_string views followed by the bytes they point into, one
 * block: the views are valid until it is freed. */
nn_status nn_tool_tensor_decode(const void *buf, size_t size, nn_tensor *out, char **name,
                                nn_error *err);
/* Decode a serialized SequenceProto (optional 0) or OptionalProto (optional
 * 1): the ONNX test .pb of a sequence or optional value.  *items (n of them)
 * are the caller's: nn_tool_tensor_free each, nn_tool_free the array; *none
 * is set for an optional without a value, *is_seq for one holding a
 * sequence; *name as for nn_tool_tensor_decode. */
nn_status nn_tool_items_decode(const void *buf, size_t size, int optional, nn_tensor **items, int *n,
                               int *none, int *is_seq, char **name, nn_error *err);
/* Encode t (raw data; string_data for a string tensor) as a TensorProto
 * named name (may be NULL).  *out is the caller's (nn_tool_free), *len its
 * size. */
nn_status nn_tool_tensor_encode(const nn_tensor *t, const char *name, void **out, size_t *len,
                                nn_error *err);
/* A tensor with data for dtype/rank/dims, zero-filled, 64-byte aligned
 * (nn_tool_tensor_free).  NN_ERR_NOMEM, NN_ERR_LIMIT on overflow. */
nn_status nn_tool_tensor_alloc(nn_tensor *t, nn_error *err);
void nn_tool_tensor_free(nn_tensor *t); /* data only; t may be zeroed; NULL ok */
void nn_tool_free(void *p);

/* Element i of any numeric tensor as double / written from a double
 * (float16 and bfloat16 rounded to nearest even). */
double nn_tool_tensor_get(const nn_tensor *t, int64_t i);
void nn_tool_tensor_set(nn_tensor *t, int64_t i, double v);
/* float16, bfloat16, float, double */
bool nn_tool_dtype_is_float(nn_dtype dt);

#endif /* NN_TOOL_H */

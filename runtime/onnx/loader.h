/* loader.h - tensor decoding shared by the loader, nn-run and the tests. */
#ifndef NN_ONNX_LOADER_H
#define NN_ONNX_LOADER_H

#include "nn_internal.h"

/* Decode a TensorProto (an Onnx_subset__TensorProto*) into out.  out->data is
 * caller-owned, allocated with nn_aligned_alloc (free with nn_aligned_free).
 * base_dir anchors external data (NULL forbids it); lim may be NULL. */
nn_status nn_tensor_from_proto(const void *proto, const char *base_dir, const nn_limits *lim,
                               nn_tensor *out, nn_error *err);

/* Decode a serialized TensorProto (an ONNX test .pb file).  out->data is
 * caller-owned (nn_aligned_free); *name, when name != NULL, is caller-owned
 * (nn_free). */
nn_status nn_tensor_decode(const void *buf, size_t size, nn_tensor *out, char **name,
                           nn_error *err);

/* Decode a serialized SequenceProto (optional false) or OptionalProto (an
 * ONNX test .pb of a sequence or optional value): *n tensors in *items
 * (nn_malloc'd array, each data nn_aligned_alloc'd: the caller frees both),
 * *none for an optional without a value, *is_seq for an optional holding a
 * sequence, *name (nn_free) when name is not NULL. */
nn_status nn_sequence_decode(const void *buf, size_t size, bool optional, nn_tensor **items, int *n,
                             bool *none, bool *is_seq, char **name, nn_error *err);

#endif

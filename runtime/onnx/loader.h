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

#endif

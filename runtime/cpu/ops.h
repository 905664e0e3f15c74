/* ops.h - the per-family operator tables collected by registry.c.
 * Each family file defines one 0-terminated (name == NULL) table. */
#ifndef NN_CPU_OPS_H
#define NN_CPU_OPS_H

#include "nn_internal.h"

extern const nn_op_def nn_ops_unary[];     /* unary.c: math and activations */
extern const nn_op_def nn_ops_binary[];    /* binary.c: arithmetic, compare, logic, variadic, Where, PRelu */
extern const nn_op_def nn_ops_cast[];      /* cast.c: Cast, CastLike */
extern const nn_op_def nn_ops_conv[];      /* conv.c: Conv, ConvTranspose */
extern const nn_op_def nn_ops_pool[];      /* pool.c: Average/Max/Lp pools, global pools */
extern const nn_op_def nn_ops_norm[];      /* norm.c: BatchNorm, InstanceNorm, LayerNorm, LRN, ... */
extern const nn_op_def nn_ops_gemm[];      /* gemm.c: MatMul, Gemm */
extern const nn_op_def nn_ops_reduce[];    /* reduce.c: Reduce*, ArgMax/ArgMin, TopK, CumSum */
extern const nn_op_def nn_ops_softmax[];   /* softmax.c: Softmax, LogSoftmax, Hardmax */
extern const nn_op_def nn_ops_shape[];     /* shape.c: Reshape, Flatten, (Un)Squeeze, Shape, Size, Identity, Constant, ... */
extern const nn_op_def nn_ops_transform[]; /* transform.c: Transpose, Concat, Split, Slice, Pad, Tile, Expand, ... */
extern const nn_op_def nn_ops_gather[];    /* gather.c: Gather*, Scatter*, OneHot */
extern const nn_op_def nn_ops_resize[];    /* resize.c: Resize, Upsample */
extern const nn_op_def nn_ops_misc[];      /* misc.c: ops that fit no family above */

#endif

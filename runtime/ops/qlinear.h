/* qlinear.h - ONNX Runtime's "QOperator" contrib ops (domain com.microsoft,
 * version 1), which its quantizer writes beside QLinearConv / QLinearMatMul:
 * QLinearAdd, QLinearMul, QLinearGlobalAveragePool, QLinearAveragePool,
 * QLinearConcat, QLinearSigmoid, QLinearLeakyRelu, QLinearSoftmax.
 *
 * Every tensor is 8-bit (uint8 or int8) with per-tensor parameters: a
 * float32 scale and a zero point of the tensor's type, one element each
 * (any rank; an omitted optional zero point is 0).  These ops have no ONNX
 * schema (ops/schema.c checks the default domain only), so the checks here
 * are the whole of it: input counts, types, sizes and the attribute set.
 *
 * The op layer's inference (ops/qlinear.c) and the CPU kernels
 * (cpu/qlinear.c) read the same geometry from here.  Errors go through
 * nn_fail(c); nothing is allocated. */
#ifndef NN_OPS_QLINEAR_H
#define NN_OPS_QLINEAR_H

#include "ops/conv_geom.h"

#define NN_QLINEAR_DOMAIN "com.microsoft"

/* QLinearAdd / QLinearMul: C = A (op) B with numpy broadcasting.  A, B and
 * C viewed at the output's rank with element strides (0 on broadcast dims).
 * a_spans_scalar: ONNX Runtime hands A to its kernel as the scalar of every
 * span (A broadcast along the innermost dims that are not 1 in both), and
 * its QLinearAdd kernel then adds the operands in the other order (see
 * cpu/qlinear.c); the shapes alone decide it. */
typedef struct nn_qlbin_geom {
  int rank;
  int64_t dims[NN_MAX_RANK], astr[NN_MAX_RANK], bstr[NN_MAX_RANK];
  bool a_spans_scalar;
} nn_qlbin_geom;

nn_status nn_qlbin_geom_init(nn_ctx *c, const nn_node *n, nn_qlbin_geom *g);

/* QLinearGlobalAveragePool and QLinearAveragePool: X is (N, C, spatial...)
 * or, with channels_last = 1, (N, spatial..., C); rank 3 to 5.  g is the
 * window geometry over the spatial dims (AveragePool's attributes: auto_pad,
 * ceil_mode, count_include_pad, kernel_shape, pads, strides; pads below the
 * kernel, as ONNX Runtime requires); for the global pool a window the size
 * of the image.  as_global: a window covering the whole image with no
 * padding, which ONNX Runtime computes with the global pool's integer
 * arithmetic. */
typedef struct nn_qlpool_geom {
  nn_conv_geom g;
  int64_t N, C;
  bool channels_last, count_include_pad, as_global;
} nn_qlpool_geom;

nn_status nn_qlpool_geom_init(nn_ctx *c, const nn_node *n, bool global, nn_qlpool_geom *p);

/* QLinearConcat: inputs Y_scale, Y_zero_point, then (X, X_scale,
 * X_zero_point) per tensor.  Viewed as (outer, pitch) around the axis: input
 * k's rows of pitch[k] = dims[axis] * inner bytes land at offset[k] of the
 * output's rows of out_pitch bytes. */
#define NN_QLCONCAT_MAX 4096 /* tensors: bounds the kernel's per-node tables */
typedef struct nn_qlconcat_geom {
  int axis, count;
  int64_t outer, out_pitch;
} nn_qlconcat_geom;

nn_status nn_qlconcat_geom_init(nn_ctx *c, const nn_node *n, nn_qlconcat_geom *g);

/* QLinearSoftmax: the rows of D elements it normalises over, as (outer, D,
 * inner).  ONNX Runtime's semantics: attribute opset (required) < 13
 * flattens from axis to the end, >= 13 takes the one axis; axis defaults to
 * -1 either way. */
typedef struct nn_qlsoftmax_geom {
  int64_t outer, D, inner;
} nn_qlsoftmax_geom;

nn_status nn_qlsoftmax_geom_init(nn_ctx *c, const nn_node *n, nn_qlsoftmax_geom *g);

#endif /* NN_OPS_QLINEAR_H */

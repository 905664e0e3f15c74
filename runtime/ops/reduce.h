/* reduce.h - the Reduce* family's axes, ArgMax / ArgMin's axis, TopK's axis
 * and K and CumSum / CumProd's axis, once for every backend (ops/reduce.c's
 * inference, cpu/reduce.c, vulkan/vk_reduce.c).
 *
 * The axes come from the `axes` attribute up to the opset that moved them to
 * input 1 (ReduceSum 13, the others 18), then from that input, which must be
 * known at prepare; none means every axis, or with noop_with_empty_axes a
 * plain copy.  Errors go through nn_fail(c) (c may have no err to only
 * test).  Nothing is allocated. */
#ifndef NN_OPS_REDUCE_H
#define NN_OPS_REDUCE_H

#include "nn_internal.h"

typedef struct nn_reduce_axes {
  int rank;                   /* input 0's */
  bool reduce[NN_MAX_RANK];   /* per input axis */
  bool noop;                  /* no axes and noop_with_empty_axes: y = x */
  bool keepdims;
  int out_rank;
  int64_t out[NN_MAX_RANK];   /* the output shape */
} nn_reduce_axes;

/* The first opset in which op_type (a Reduce* op) takes its axes as input 1. */
int nn_reduce_axes_input_version(const char *op_type);

nn_status nn_reduce_axes_init(nn_ctx *c, const nn_node *n, nn_reduce_axes *p);

/* ArgMax / ArgMin: the axis (normalized), select_last_index, keepdims and
 * the output shape. */
typedef struct nn_arg_params {
  int axis;
  bool last, keepdims;
  int out_rank;
  int64_t out[NN_MAX_RANK];
} nn_arg_params;

nn_status nn_arg_params_init(nn_ctx *c, const nn_node *n, nn_arg_params *p);

/* TopK over an input of rank >= 1: the axis (default -1, normalized), K
 * (input 1 from opset 10, known at prepare; attribute k before) in
 * [0, dims[axis]], and largest (0 or 1, default 1). */
typedef struct nn_topk_params {
  int axis;
  int64_t k;
  bool largest;
} nn_topk_params;

nn_status nn_topk_params_init(nn_ctx *c, const nn_node *n, nn_topk_params *p);

/* CumSum / CumProd: the axis from input 1 (a single integer, with data),
 * normalized for input 0's rank.  The input may be computed: inference
 * checks it when it is known at prepare, the kernels at run. */
nn_status nn_cum_axis(nn_ctx *c, const nn_node *n, int *axis);

#endif /* NN_OPS_REDUCE_H */

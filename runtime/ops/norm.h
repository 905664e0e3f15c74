/* norm.h - the attributes of the normalizations, once for every backend
 * (cpu/norm.c, vulkan/vk_norm.c): BatchNormalization's mode, LRN's window
 * and constants, the row normalizations' epsilon, axis, stash_type and
 * groups.  Errors go through nn_fail(c) (c may have no err to only test);
 * nothing is allocated.  BatchNorm folding into convolution weights is
 * batchnorm.h. */
#ifndef NN_OPS_NORM_H
#define NN_OPS_NORM_H

#include "nn_internal.h"

/* `epsilon` (default 1e-5), refused when negative, NaN or infinite. */
nn_status nn_norm_epsilon(nn_ctx *c, const nn_node *n, double *eps);

/* BatchNormalization: epsilon, momentum, training_mode (opset 14+; 0 or 1),
 * and whether an opset < 9 node has spatial = 0 (a parameter per element of
 * [C, D1, ...] rather than per channel).  Before opset 7 `is_test` (default
 * 0) said training; exporters left it out of inference graphs, so the CPU
 * runs such nodes with the given statistics, as other runtimes do, and the
 * Vulkan backend leaves them to it (not_test). */
typedef struct nn_bn_params {
  double eps, momentum;
  bool training;
  bool per_element;
  bool not_test;
} nn_bn_params;

nn_status nn_bn_params_init(nn_ctx *c, const nn_node *n, nn_bn_params *p);

/* LRN: the window over channels c - lo .. c + hi (size = lo + hi + 1, at
 * most 2^20) and the finite constants. */
typedef struct nn_lrn_params {
  int64_t size, lo, hi;
  double alpha, beta, bias;
} nn_lrn_params;

nn_status nn_lrn_params_init(nn_ctx *c, const nn_node *n, nn_lrn_params *p);

/* LayerNormalization / RMSNormalization: the first normalized axis of a
 * rank-`rank` input (attribute axis, default -1). */
nn_status nn_rownorm_axis(nn_ctx *c, const nn_node *n, int rank, int *axis);

/* stash_type (default float): float, double, float16 or bfloat16. */
nn_status nn_norm_stash_type(nn_ctx *c, const nn_node *n, nn_dtype *dt);

/* LpNormalization: the axis (default -1) of a rank-`rank` input and the
 * order p (default 2; ONNX defines 1 and 2). */
typedef struct nn_lpnorm_params {
  int axis;
  int p;
} nn_lpnorm_params;

nn_status nn_lpnorm_params_init(nn_ctx *c, const nn_node *n, int rank, nn_lpnorm_params *p);

/* MeanVarianceNormalization: reduced[d] for each axis d of a rank-`rank`
 * input the statistics run over (attribute axes, default [0, 2, 3]). */
nn_status nn_mvn_axes(nn_ctx *c, const nn_node *n, int rank, bool reduced[NN_MAX_RANK]);

/* GroupNormalization over C channels: num_groups (>= 1, dividing C), and
 * whether scale and bias are per group (opsets < 21) or per channel. */
typedef struct nn_groupnorm_params {
  int64_t groups;
  bool per_group;
} nn_groupnorm_params;

nn_status nn_groupnorm_params_init(nn_ctx *c, const nn_node *n, int64_t C,
                                   nn_groupnorm_params *p);

#endif /* NN_OPS_NORM_H */

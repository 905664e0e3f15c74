/* pool.h - what the pools read besides their window (nn_pool_params,
 * ops/conv_geom.h): LpPool's exponent and MaxUnpool's shapes, for the op
 * layer's shape inference (ops/pool.c) and the CPU kernels (cpu/pool.c).
 * Errors go through nn_fail(c); nothing is allocated. */
#ifndef NN_OPS_POOL_H
#define NN_OPS_POOL_H

#include "ops/conv_geom.h"

/* LpPool / GlobalLpPool: p is a float in version 1, an int afterwards
 * (default 2); refused unless in (0, 1e6]. */
nn_status nn_pool_lp_p(nn_ctx *c, const nn_node *n, double *p);

/* MaxUnpool: X (input 0), I (input 1: int64, X's shape), kernel_shape,
 * strides and pads give the inferred shape (N, C, (in-1)*s - pads + k); an
 * output_shape (input 2, its values known) replaces it: not smaller, N and C
 * unchanged, and the pads are then ignored. */
typedef struct nn_unpool_params {
  int rank;
  int64_t inf[NN_MAX_RANK];     /* inferred shape */
  int64_t out[NN_MAX_RANK];     /* output shape */
} nn_unpool_params;

nn_status nn_unpool_params_init(nn_ctx *c, const nn_node *n, nn_unpool_params *p);

#endif /* NN_OPS_POOL_H */

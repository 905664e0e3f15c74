/* gemm.h - Gemm's meaning once for every backend (cpu/gemm.c,
 * vulkan/vk_gemm.c): Y = alpha * op(A) * op(B) + beta * C, with
 * op(X) = X^T when transA / transB; A and B 2-D, C broadcasting to M x N.
 * And the batched shapes of MatMul and MatMulInteger.
 * Errors go through nn_fail(c) (c may have no err to only test); nothing is
 * allocated. */
#ifndef NN_OPS_GEMM_H
#define NN_OPS_GEMM_H

#include "nn_internal.h"

typedef struct nn_gemm_params {
  bool ta, tb;
  float alpha, beta;
  int64_t M, N, K;
  bool has_c;
  bool c_no_broadcast; /* Gemm-1/6 with broadcast set to 0: C should be M x N (the
                          CPU takes a broadcasting C all the same) */
  /* C's strides over the M x N result (0 along a broadcast axis) */
  int64_t cs[2];
} nn_gemm_params;

/* Reads the attributes and checks the shapes of inputs A, B (and C). */
nn_status nn_gemm_params_init(nn_ctx *c, const nn_node *n, nn_gemm_params *p);

/* MatMul, MatMulInteger: numpy matmul.  The last two dims multiply, the
 * leading ones broadcast; a 1-D left operand is a row vector and a 1-D right
 * operand a column vector whose unit dim is dropped from the result. */
typedef struct nn_matmul_shape {
  int64_t M, N, K;
  int64_t nb;                      /* number of output matrices */
  int brank;                       /* batch rank of the output */
  int64_t bdims[NN_MAX_RANK];
  int64_t sa[NN_MAX_RANK], sb[NN_MAX_RANK]; /* batch strides in matrices, 0 = broadcast */
  int yrank;                       /* the result */
  int64_t ydims[NN_MAX_RANK];
} nn_matmul_shape;

/* Checks the shapes of A and B (inner dimensions, batch broadcast, result
 * rank) and fills s. */
nn_status nn_matmul_shape_init(nn_ctx *c, const nn_value *a, const nn_value *b,
                               nn_matmul_shape *s);

#endif /* NN_OPS_GEMM_H */

/* gemm.h - Gemm's meaning once for every backend (cpu/gemm.c,
 * vulkan/vk_gemm.c): Y = alpha * op(A) * op(B) + beta * C, with
 * op(X) = X^T when transA / transB; A and B 2-D, C broadcasting to M x N.
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

#endif /* NN_OPS_GEMM_H */

/* batchnorm.h - folding an inference BatchNormalization into the Conv that
 * feeds it, written once for the two passes that do it: passes.c at load
 * (weights that are initializers, rewritten for good) and plan.c per plan
 * (weights that only become constant through plan-time folding).  Each pass
 * decides which storage the new weights go to; the arithmetic is here.
 */
#ifndef NN_OPS_BATCHNORM_H
#define NN_OPS_BATCHNORM_H

#include "nn_internal.h"

/* Whether the node is a BatchNormalization that may be folded at all: the
 * default domain, its five inputs present, inference mode (training_mode 0).
 * The callers still check the operands (constant float32, one reader) and
 * that the extra outputs of the training form are unused. */
bool nn_bn_fold_candidate(const nn_node *bn);

/* Fold BN(Conv(x, W, B)) into Conv(x, W', B'):
 *   s[o] = scale[o] / sqrt(var[o] + epsilon),  W'[o, :] = W[o, :] * s[o],
 *   B'[o] = (B[o] - mean[o]) * s[o] + shift[o]
 * in place over w (m rows of `per` floats) and b (m floats, zeros when the
 * Conv had no bias).  scale, shift, mean and var (m floats each) are the
 * BN's inputs 1 to 4; epsilon its attribute. */
void nn_bn_fold_into_conv(const nn_node *bn, int64_t m, int64_t per, const float *scale,
                          const float *shift, const float *mean, const float *var, float *w,
                          float *b);

#endif /* NN_OPS_BATCHNORM_H */

/* loss.h - the attributes of NegativeLogLikelihoodLoss and
 * SoftmaxCrossEntropyLoss, for every backend (cpu/loss.c).
 *
 * Both view the input as (N, C, D) with D the product of the trailing dims
 * and the target as (N, D); targets equal to ignore_index (when set) add
 * nothing.  Errors go through nn_fail(c); nothing is allocated. */
#ifndef NN_OPS_LOSS_H
#define NN_OPS_LOSS_H

#include "nn_internal.h"

enum { NN_LOSS_NONE, NN_LOSS_SUM, NN_LOSS_MEAN };

typedef struct nn_loss_attrs {
  int reduction;
  bool has_ignore;
  int64_t ignore;
} nn_loss_attrs;

nn_status nn_loss_attrs_init(nn_ctx *c, const nn_node *n, nn_loss_attrs *a);

#endif /* NN_OPS_LOSS_H */

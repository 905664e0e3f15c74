/* loss.c - the loss family in the op layer: its operators, their versions and
 * their shape and dtype inference (nn_ops_loss[], collected by ops/registry.c). */
#include "nn_internal.h"

/* The family's operators (ops/registry.c); infer = NULL: the CPU kernel's
 * prepare still infers the shapes. */
const nn_op_def nn_ops_loss[] = {
  {.name = "NegativeLogLikelihoodLoss", .versions = {12}},
  {.name = "SoftmaxCrossEntropyLoss", .versions = {12}},
  {0},
};

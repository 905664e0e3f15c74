/* conv.c - the conv family in the op layer: its operators, their versions and
 * their shape and dtype inference (nn_ops_conv[], collected by ops/registry.c). */
#include "nn_internal.h"

/* The family's operators (ops/registry.c); infer = NULL: the CPU kernel's
 * prepare still infers the shapes. */
const nn_op_def nn_ops_conv[] = {
  {.name = "Conv", .versions = {1, 11}},
  {.name = "ConvTranspose", .versions = {1, 11}},
  {.name = "DeformConv", .versions = {19}},
  {.name = "ConvInteger", .versions = {10}},
  {.name = "QLinearConv", .versions = {10}},
  {0},
};

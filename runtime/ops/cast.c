/* cast.c - the cast family in the op layer: its operators, their versions and
 * their shape and dtype inference (nn_ops_cast[], collected by ops/registry.c). */
#include "nn_internal.h"

/* The family's operators (ops/registry.c); infer = NULL: the CPU kernel's
 * prepare still infers the shapes. */
const nn_op_def nn_ops_cast[] = {
  {.name = "Cast", .versions = {1, 6}, .flags = NN_OP_ELEMENTWISE},
  {.name = "CastLike", .versions = {15}, .flags = NN_OP_ELEMENTWISE},
  {.name = "BitCast", .versions = {26}, .flags = NN_OP_ELEMENTWISE},
  {0},
};

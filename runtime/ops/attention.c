/* attention.c - the attention family in the op layer: its operators, their versions and
 * their shape and dtype inference (nn_ops_attention[], collected by ops/registry.c). */
#include "nn_internal.h"

/* The family's operators (ops/registry.c); infer = NULL: the CPU kernel's
 * prepare still infers the shapes. */
const nn_op_def nn_ops_attention[] = {
  {.name = "Attention", .versions = {23, 24}},
  {.name = "RotaryEmbedding", .versions = {23}},
  {.name = "SwiGLU", .versions = {28}, .flags = NN_OP_ELEMENTWISE},
  {0},
};

/* control.c - the control family in the op layer: its operators, their versions and
 * their shape and dtype inference (nn_ops_control[], collected by ops/registry.c). */
#include "nn_internal.h"

/* The family's operators (ops/registry.c); infer = NULL: the CPU kernel's
 * prepare still infers the shapes. */
const nn_op_def nn_ops_control[] = {
  {.name = "If", .versions = {1, 11, 13, 16}, .flags = NN_OP_SUBGRAPH | NN_OP_BOXES},
  {.name = "Loop", .versions = {1, 11, 13, 16}, .flags = NN_OP_SUBGRAPH | NN_OP_BOXES},
  {.name = "Scan", .versions = {8, 9, 11, 16}, .flags = NN_OP_SUBGRAPH},
  {.name = "SequenceMap", .versions = {17}, .flags = NN_OP_SUBGRAPH | NN_OP_BOXES},
  {0},
};

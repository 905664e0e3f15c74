/* nms.c - the nms family in the op layer: its operators, their versions and
 * their shape and dtype inference (nn_ops_nms[], collected by ops/registry.c). */
#include "nn_internal.h"

/* The family's operators (ops/registry.c); infer = NULL: the CPU kernel's
 * prepare still infers the shapes. */
const nn_op_def nn_ops_nms[] = {
  /* every NMS input decides how many boxes survive, hence the output shape */
  {.name = "NonMaxSuppression", .versions = {10, 11}, .shape_inputs = 0x1f},
  {0},
};

/* select.c - the select family in the op layer: its operators, their versions and
 * their shape and dtype inference (nn_ops_select[], collected by ops/registry.c). */
#include "nn_internal.h"

/* The family's operators (ops/registry.c); infer = NULL: the CPU kernel's
 * prepare still infers the shapes. */
const nn_op_def nn_ops_select[] = {
  {.name = "Unique", .versions = {11}, .shape_inputs = 1u << 0},
  {.name = "NonZero", .versions = {9, 13}, .shape_inputs = 1u << 0},
  {0},
};

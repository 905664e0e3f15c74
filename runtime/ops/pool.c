/* pool.c - the pool family in the op layer: its operators, their versions and
 * their shape and dtype inference (nn_ops_pool[], collected by ops/registry.c). */
#include "nn_internal.h"

/* The family's operators (ops/registry.c); infer = NULL: the CPU kernel's
 * prepare still infers the shapes. */
const nn_op_def nn_ops_pool[] = {
  {.name = "AveragePool", .versions = {1, 7, 10, 11, 19}},
  {.name = "MaxPool", .versions = {1, 8, 10, 11, 12}},
  {.name = "LpPool", .versions = {1, 2, 11, 18}},
  {.name = "GlobalAveragePool", .versions = {1}},
  {.name = "GlobalMaxPool", .versions = {1}},
  {.name = "GlobalLpPool", .versions = {1, 2}},
  {.name = "MaxUnpool", .versions = {9, 11}, .shape_inputs = 1u << 2},
  {0},
};

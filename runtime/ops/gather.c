/* gather.c - the gather family in the op layer: its operators, their versions and
 * their shape and dtype inference (nn_ops_gather[], collected by ops/registry.c). */
#include "nn_internal.h"

/* The family's operators (ops/registry.c); infer = NULL: the CPU kernel's
 * prepare still infers the shapes. */
const nn_op_def nn_ops_gather[] = {
  {.name = "Gather", .versions = {1, 11}},
  {.name = "GatherElements", .versions = {11}},
  {.name = "GatherND", .versions = {11, 12}},
  {.name = "ScatterElements", .versions = {11, 16, 18}},
  {.name = "Scatter", .versions = {9}},
  {.name = "ScatterND", .versions = {11, 16, 18}},
  {.name = "OneHot", .versions = {9, 11}, .shape_inputs = 1u << 1},
  {.name = "TensorScatter", .versions = {24}},
  {0},
};

/* sampling.c - the sampling family in the op layer: its operators, their versions and
 * their shape and dtype inference (nn_ops_sampling[], collected by ops/registry.c). */
#include "nn_internal.h"

/* The family's operators (ops/registry.c); infer = NULL: the CPU kernel's
 * prepare still infers the shapes. */
const nn_op_def nn_ops_sampling[] = {
  {.name = "GridSample", .versions = {16, 20}},
  {.name = "AffineGrid", .versions = {20}, .shape_inputs = 1u << 1},
  {.name = "Col2Im", .versions = {18}, .shape_inputs = (1u << 1) | (1u << 2)},
  {.name = "RoiAlign", .versions = {10, 16}},
  {0},
};

/* shape.c - the shape family in the op layer: its operators, their versions and
 * their shape and dtype inference (nn_ops_shape[], collected by ops/registry.c). */
#include "nn_internal.h"

/* The family's operators (ops/registry.c); infer = NULL: the CPU kernel's
 * prepare still infers the shapes. */
const nn_op_def nn_ops_shape[] = {
  {.name = "Reshape", .versions = {1, 5, 14}, .shape_inputs = 1u << 1, .flags = NN_OP_VIEW},
  {.name = "Flatten", .versions = {1, 11}, .flags = NN_OP_VIEW},
  {.name = "Squeeze", .versions = {1, 13}, .shape_inputs = 1u << 1, .flags = NN_OP_VIEW},
  {.name = "Unsqueeze", .versions = {1, 13}, .shape_inputs = 1u << 1, .flags = NN_OP_VIEW},
  {.name = "Identity", .versions = {1}, .flags = NN_OP_VIEW},
  {.name = "Dropout", .versions = {1, 7, 10, 12}, .flags = NN_OP_VIEW},
  {.name = "Shape", .versions = {1, 15}},
  {.name = "Size", .versions = {1}},
  {.name = "Constant", .versions = {1}},
  {.name = "ConstantOfShape", .versions = {9}, .shape_inputs = 1u << 0},
  {.name = "Range", .versions = {11}, .shape_inputs = 7u},
  {.name = "EyeLike", .versions = {9}},
  {0},
};

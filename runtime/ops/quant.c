/* quant.c - the quant family in the op layer: its operators, their versions and
 * their shape and dtype inference (nn_ops_quant[], collected by ops/registry.c). */
#include "nn_internal.h"

/* The family's operators (ops/registry.c); infer = NULL: the CPU kernel's
 * prepare still infers the shapes. */
const nn_op_def nn_ops_quant[] = {
  {.name = "DequantizeLinear", .versions = {10, 13, 19, 21, 23, 25}},
  {.name = "QuantizeLinear", .versions = {10, 13, 19, 21, 23, 25}},
  {.name = "DynamicQuantizeLinear", .versions = {11}},
  {.name = "QLinearMatMul", .versions = {10, 21}},
  {0},
};

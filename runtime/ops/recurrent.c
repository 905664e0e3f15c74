/* recurrent.c - the recurrent family in the op layer: its operators, their versions and
 * their shape and dtype inference (nn_ops_recurrent[], collected by ops/registry.c). */
#include "nn_internal.h"

/* The family's operators (ops/registry.c); infer = NULL: the CPU kernel's
 * prepare still infers the shapes. */
const nn_op_def nn_ops_recurrent[] = {
  {.name = "LinearAttention", .versions = {27}},
  {.name = "CausalConvWithState", .versions = {27}},
  {.name = "RNN", .versions = {7, 14}},
  {.name = "GRU", .versions = {7, 14}},
  {.name = "LSTM", .versions = {7, 14}},
  {0},
};

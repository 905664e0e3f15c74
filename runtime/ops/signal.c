/* signal.c - the signal family in the op layer: its operators, their versions and
 * their shape and dtype inference (nn_ops_signal[], collected by ops/registry.c). */
#include "nn_internal.h"

/* The family's operators (ops/registry.c); infer = NULL: the CPU kernel's
 * prepare still infers the shapes. */
const nn_op_def nn_ops_signal[] = {
  {.name = "HannWindow", .versions = {17}, .shape_inputs = 1u << 0},
  {.name = "HammingWindow", .versions = {17}, .shape_inputs = 1u << 0},
  {.name = "BlackmanWindow", .versions = {17}, .shape_inputs = 1u << 0},
  {.name = "DFT", .versions = {17, 20}, .shape_inputs = (1u << 1) | (1u << 2)},
  {.name = "STFT", .versions = {17}, .shape_inputs = (1u << 1) | (1u << 3)},
  {.name = "MelWeightMatrix", .versions = {17}, .shape_inputs = (1u << 0) | (1u << 1)},
  {0},
};

/* strings.c - the strings family in the op layer: its operators, their versions and
 * their shape and dtype inference (nn_ops_strings[], collected by ops/registry.c). */
#include "nn_internal.h"

/* The family's operators (ops/registry.c); infer = NULL: the CPU kernel's
 * prepare still infers the shapes. */
const nn_op_def nn_ops_strings[] = {
  {.name = "StringConcat", .versions = {20}},
  {.name = "StringSplit", .versions = {20}, .shape_inputs = 1u << 0},
  {.name = "RegexFullMatch", .versions = {20}},
  {.name = "StringNormalizer", .versions = {10}, .shape_inputs = 1u << 0},
  {0},
};

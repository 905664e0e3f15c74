/* sequence.c - the sequence family in the op layer: its operators, their versions and
 * their shape and dtype inference (nn_ops_sequence[], collected by ops/registry.c). */
#include "nn_internal.h"

/* The family's operators (ops/registry.c); infer = NULL: the CPU kernel's
 * prepare still infers the shapes. */
const nn_op_def nn_ops_sequence[] = {
  {.name = "SequenceEmpty", .versions = {11}, .flags = NN_OP_BOXES},
  {.name = "SequenceConstruct", .versions = {11}, .flags = NN_OP_BOXES},
  {.name = "SequenceInsert", .versions = {11}, .shape_inputs = 1u << 2, .flags = NN_OP_BOXES},
  {.name = "SequenceErase", .versions = {11}, .shape_inputs = 1u << 1, .flags = NN_OP_BOXES},
  {.name = "SequenceAt", .versions = {11}, .shape_inputs = 1u << 1, .flags = NN_OP_BOXES},
  {.name = "SequenceLength", .versions = {11}, .flags = NN_OP_BOXES},
  {.name = "SplitToSequence", .versions = {11}, .shape_inputs = 1u << 1, .flags = NN_OP_BOXES},
  {.name = "ConcatFromSequence", .versions = {11}, .flags = NN_OP_BOXES},
  {.name = "Optional", .versions = {15}, .flags = NN_OP_BOXES},
  {.name = "OptionalHasElement", .versions = {15, 18}, .flags = NN_OP_BOXES},
  {.name = "OptionalGetElement", .versions = {15, 18}, .flags = NN_OP_BOXES},
  /* Identity of a boxed value (nn_node.box_op, resolved at finalize) */
  {.name = "Identity", .domain = "nn.box", .versions = {1}, .flags = NN_OP_BOXES},
  {0},
};

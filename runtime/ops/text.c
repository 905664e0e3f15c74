/* text.c - the text family in the op layer: its operators, their versions and
 * their shape and dtype inference (nn_ops_text[], collected by ops/registry.c). */
#include "nn_internal.h"

/* The family's operators (ops/registry.c); infer = NULL: the CPU kernel's
 * prepare still infers the shapes. */
const nn_op_def nn_ops_text[] = {
  {.name = "TfIdfVectorizer", .versions = {9}},
  {0},
};

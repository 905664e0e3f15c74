/* binary.c - attributes of the elementwise binary ops (binary.h). */
#include <string.h>

#include "ops/binary.h"

nn_status nn_binary_attrs_init(nn_ctx *c, const nn_node *n, nn_binary_attrs *b) {
  memset(b, 0, sizeof *b);
  b->legacy_broadcast = nn_attr_int(n, "broadcast", 0) != 0;
  const nn_attr *ax = nn_attr_get(n, "axis");
  if (ax) {
    b->has_axis = true;
    b->axis = ax->i;
  }
  if (!strcmp(n->op_type, "Mod")) {
    int64_t fm = nn_attr_int(n, "fmod", 0);
    if (fm != 0 && fm != 1)
      return nn_fail(c, NN_ERR_UNSUPPORTED, "fmod=%lld (expected 0 or 1)", (long long)fm);
    b->fmod = (int)fm;
  }
  return NN_OK;
}

/* The family's operators (ops/registry.c); infer = NULL: the CPU kernel's
 * prepare still infers the shapes. */
#define BIN_OP(NAME, ...) {.name = NAME, .versions = {__VA_ARGS__}, .flags = NN_OP_ELEMENTWISE}

/* versions: since-versions with distinct semantics.  1: legacy broadcast
 * attribute (opset < 7); 7/8: numpy broadcasting; later revisions only add
 * types. */
const nn_op_def nn_ops_binary[] = {
  BIN_OP("Add", 1, 7),
  BIN_OP("Sub", 1, 7),
  BIN_OP("Mul", 1, 7),
  BIN_OP("Div", 1, 7),
  BIN_OP("Pow", 1, 7),
  BIN_OP("Mod", 10),
  BIN_OP("PRelu", 1, 7),
  {.name = "Equal", .versions = {1, 7}, .flags = NN_OP_ELEMENTWISE},
  BIN_OP("Less", 1, 7),
  BIN_OP("Greater", 1, 7),
  BIN_OP("LessOrEqual", 12),
  BIN_OP("GreaterOrEqual", 12),
  BIN_OP("And", 1, 7),
  BIN_OP("Or", 1, 7),
  BIN_OP("Xor", 1, 7),
  BIN_OP("BitwiseAnd", 18),
  BIN_OP("BitwiseOr", 18),
  BIN_OP("BitwiseXor", 18),
  BIN_OP("BitShift", 11),
  BIN_OP("Max", 1, 8),
  BIN_OP("Min", 1, 8),
  BIN_OP("Sum", 1, 8),
  BIN_OP("Mean", 1, 8),
  BIN_OP("Where", 9),
  {0},
};

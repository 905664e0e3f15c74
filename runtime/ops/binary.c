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

/* binary.h - the attributes of the elementwise binary ops, for every backend
 * (cpu/binary.c, vulkan/vk_binary.c). */
#ifndef NN_OPS_BINARY_H
#define NN_OPS_BINARY_H

#include "nn_internal.h"

typedef struct nn_binary_attrs {
  /* Before opset 7 broadcasting was opt-in: broadcast = 1 lines B's dims up
   * with A's from `axis` (suffix alignment when the attribute is absent). */
  bool legacy_broadcast;
  bool has_axis;
  int64_t axis;                /* as written (may be negative) */
  int fmod;                    /* Mod: 1 = C's fmod, 0 = Python's sign rule */
} nn_binary_attrs;

/* The attributes of node n (an op without them leaves them 0);
 * NN_ERR_UNSUPPORTED through nn_fail(c) for an fmod other than 0 or 1 (c may
 * have no err to only test). */
nn_status nn_binary_attrs_init(nn_ctx *c, const nn_node *n, nn_binary_attrs *b);

#endif

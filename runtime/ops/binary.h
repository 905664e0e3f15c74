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
  bool shift_left;             /* BitShift: direction LEFT (else RIGHT) */
} nn_binary_attrs;

/* The attributes of node n (an op without them leaves them 0);
 * NN_ERR_UNSUPPORTED through nn_fail(c) for an fmod other than 0 or 1 or a
 * BitShift direction other than LEFT or RIGHT (c may have no err to only
 * test). */
nn_status nn_binary_attrs_init(nn_ctx *c, const nn_node *n, nn_binary_attrs *b);

/* How input 1 (B) of a two-input op lines up with input 0 (A) before
 * opset 7, as numpy dims for B.  on = false: B broadcasts numpy-style as
 * it is (opset 7+, the variadic ops, broadcast = 0, a PRelu slope that is
 * not per channel). */
typedef struct nn_binary_legacy {
  bool on;
  int b_rank;
  int64_t b_dims[NN_MAX_RANK];
} nn_binary_legacy;

/* The legacy view of node n's B from its attributes (ba) and input shapes;
 * NN_ERR_SHAPE / NN_ERR_INVALID_MODEL through nn_fail(c) when B does not
 * line up with A. */
nn_status nn_binary_legacy_init(nn_ctx *c, const nn_node *n, const nn_binary_attrs *ba,
                                nn_binary_legacy *lg);

#endif

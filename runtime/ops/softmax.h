/* softmax.h - the [outer, n, inner] walk of Softmax, LogSoftmax and Hardmax,
 * for every backend (cpu/softmax.c, vulkan/vk_softmax.c).
 *
 * Before opset 13 the input is coerced to 2-D at `axis` (default 1): rows
 * are everything before the axis and the normalisation runs over the
 * product of the dims from the axis on (inner = 1); the axis just past the
 * last dim gives rows of one.  From 13 it runs along the one axis (default
 * -1), inner the product of the dims after it.  A scalar is one row of one.
 */
#ifndef NN_OPS_SOFTMAX_H
#define NN_OPS_SOFTMAX_H

#include "nn_internal.h"

typedef struct nn_softmax_geom {
  int64_t outer, n, inner;
} nn_softmax_geom;

/* The walk of node n over its input x[0]; NN_ERR_INVALID_MODEL through
 * nn_fail(c) for an axis out of range (c may have no err to only test). */
nn_status nn_softmax_geom_init(nn_ctx *c, const nn_node *n, nn_softmax_geom *g);

#endif

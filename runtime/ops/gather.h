/* gather.h - what the indexed writes mean where a kernel needs it too: the
 * reduction of ScatterElements and ScatterND (ops/gather.c, read by
 * cpu/gather.c). */
#ifndef NN_OPS_GATHER_H
#define NN_OPS_GATHER_H

#include "nn_internal.h"

enum {
  NN_SCATTER_NONE = 0,         /* the update replaces the element */
  NN_SCATTER_ADD,
  NN_SCATTER_MUL,
  NN_SCATTER_MAX,
  NN_SCATTER_MIN,
};

/* The reduction (NN_SCATTER_*): `reduction` from opset 16 (none, add, mul;
 * max and min from 18), none before; another value is refused. */
nn_status nn_scatter_reduction(nn_ctx *c, const nn_node *n, int *red);

#endif /* NN_OPS_GATHER_H */

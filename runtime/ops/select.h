/* select.h - Unique and NonZero, whose output shape is their input's data:
 * the op layer sizes the outputs by running the selection at prepare (the
 * input is a shape input, so it is known then), and the CPU kernels
 * (cpu/select.c) run the same selection into the planned outputs. */
#ifndef NN_OPS_SELECT_H
#define NN_OPS_SELECT_H

#include "nn_internal.h"

/* Unique: the input viewed as K slices (outer, K, inner) along the axis
 * (K = numel without an axis).  Slices are sorted by value then position,
 * equal neighbours form the groups. */
typedef struct nn_unique_params {
  bool sorted;
  int axis;             /* -1: flattened */
  int64_t outer, K, inner;
} nn_unique_params;

/* The view of node n's input 0, its attributes checked. */
nn_status nn_unique_params_init(nn_ctx *c, const nn_node *n, nn_unique_params *p);

/* Work arrays of 4K int64 in w: perm, group of each slice, first index and
 * count of each group.  Returns the group count; fills node n's outputs when
 * n is given (their data planned for that count). */
int64_t nn_unique_compute(const nn_unique_params *p, const nn_value *x, int64_t *w, nn_node *n);

/* NonZero: the number of non-zero elements of x (any numeric or bool). */
int64_t nn_nonzero_count(const nn_value *x);

#endif /* NN_OPS_SELECT_H */

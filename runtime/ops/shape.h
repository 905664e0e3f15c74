/* shape.h - what the shape family's ops mean where a kernel needs it too:
 * Shape's [start, end) range of dims and Dropout's inference-only check
 * (ops/shape.c, read by cpu/shape.c). */
#ifndef NN_OPS_SHAPE_H
#define NN_OPS_SHAPE_H

#include "nn_internal.h"

/* Shape (opset 15 adds start / end): the dims [*start, *end) of input 0
 * it returns, clamped to its rank (empty when end < start). */
void nn_shape_range(const nn_node *n, int64_t *start, int64_t *end);

/* Dropout is run as inference: the output is the input, the mask all
 * ones.  Training mode (opset 12's training_mode input) is refused unless
 * its ratio is 0, which is deterministic too.  Inputs not known yet pass:
 * the kernel checks again at run (at_run words the message so). */
nn_status nn_dropout_check(nn_ctx *c, const nn_node *n, bool at_run);

/* Constant: which of its attributes holds the value, the first set in this
 * order (value_string wins over value_strings only when it is a string). */
typedef enum nn_constant_kind {
  NN_CONSTANT_NONE = 0,        /* no value attribute */
  NN_CONSTANT_SPARSE,          /* sparse_value: not supported */
  NN_CONSTANT_STRING,          /* value_string: a string scalar */
  NN_CONSTANT_STRINGS,         /* value_strings: a 1-D string tensor */
  NN_CONSTANT_TENSOR,          /* value */
  NN_CONSTANT_FLOAT,           /* value_float */
  NN_CONSTANT_INT,             /* value_int */
  NN_CONSTANT_FLOATS,          /* value_floats */
  NN_CONSTANT_INTS,            /* value_ints */
} nn_constant_kind;

nn_constant_kind nn_constant_kind_of(const nn_node *n);

#endif /* NN_OPS_SHAPE_H */

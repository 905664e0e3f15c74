/* linalg.h - Einsum's equation, for every backend (cpu/linalg.c).
 *
 * Every distinct label (letter, or one broadcast dimension of the ellipsis)
 * becomes a loop index.  Each operand gets an element stride per label (the
 * sum of its strides for a repeated label, which walks the diagonal; 0 where
 * the label is absent or broadcast); the output's labels are the explicit
 * ones after "->" or, in implicit mode, the ellipsis then the labels seen
 * exactly once in ASCII order, and the others are summed. */
#ifndef NN_OPS_LINALG_H
#define NN_OPS_LINALG_H

#include "nn_internal.h"

#define NN_EINSUM_MAX_LABELS (52 + NN_MAX_RANK)
#define NN_EINSUM_MAX_OPERANDS 64

typedef struct nn_einsum {
  int n_in;
  int n_out, n_sum;
  int64_t dim[NN_EINSUM_MAX_LABELS];    /* per label, -1 where unused */
  int out_lab[NN_MAX_RANK];             /* the output's labels, outermost first */
  int sum_lab[NN_EINSUM_MAX_LABELS];    /* the summed labels */
  int64_t stride[]; /* n_in * NN_EINSUM_MAX_LABELS */
} nn_einsum;

/* Bytes of an nn_einsum of n_in operands. */
size_t nn_einsum_size(int n_in);

/* The equation of node n against its inputs' shapes into *out, one
 * nn_calloc block the caller frees with nn_free (a kernel may keep it as its
 * priv).  Errors go through nn_fail(c). */
nn_status nn_einsum_parse(nn_ctx *c, const nn_node *n, nn_einsum **out);

#endif /* NN_OPS_LINALG_H */

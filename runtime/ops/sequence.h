/* sequence.h - what the sequence ops mean where a kernel needs it too: the
 * item position SequenceInsert, SequenceErase and SequenceAt work at
 * (ops/sequence.c, read by cpu/sequence.c). */
#ifndef NN_OPS_SEQUENCE_H
#define NN_OPS_SEQUENCE_H

#include "nn_internal.h"

/* The position in s (input 0's box, s->n items) that node n (SequenceInsert,
 * SequenceErase or SequenceAt) inserts at, erases or reads, from its
 * position input (known at prepare: a shape input) or the default (Insert:
 * the end; Erase: the last item), negative counting from the end.  One out
 * of range is refused. */
nn_status nn_seq_position(nn_ctx *c, const nn_node *n, const nn_box *s, int64_t *pos);

#endif /* NN_OPS_SEQUENCE_H */

/* box.h - boxed values (sequences, optionals: nn_internal.h, nn_box) for the
 * op layer's inference (ops/sequence.c) and the kernels that read or fill
 * them (cpu/sequence.c, cpu/control.c).
 *
 * A boxed value's bytes hold its items one after the other, each at a
 * 64-byte aligned offset; its header (nn_box) describes them and lives in
 * a block of the node that produced it (nn_node.boxes, set by its op's
 * infer, or its priv for the control ops), so it goes with the plan.
 */
#ifndef NN_OPS_BOX_H
#define NN_OPS_BOX_H

#include "nn_internal.h"

/* Bytes of the items of box, each aligned to 64. */
size_t nn_box_bytes(const nn_box *box);
/* Point the items into data (the value's bytes). */
void nn_box_bind(nn_box *box, void *data);
/* Make y the boxed value described by box (borrowed, usually the node's
 * boxes; items' dtype/rank/dims set, nbytes computed here), within the
 * tensor and sequence limits. */
nn_status nn_set_box_output(nn_ctx *c, nn_value *y, nn_box *box);
/* Set item i's dtype and shape (and nbytes). */
void nn_box_item_set(nn_tensor *it, nn_dtype dt, int rank, const int64_t *dims);
/* Do two boxes describe the same layout (type, none, item shapes)? */
bool nn_box_same(const nn_box *a, const nn_box *b);

/* A priv block: psize bytes of parameters, then one box per entry of
 * n_items[0..n_boxes) (-1: no box) with that many items, zeroed.  boxes[k]
 * receives each box (NULL for -1).  NULL on OOM or when the item count
 * exceeds NN_LIMIT_SEQUENCE_ITEMS (sets the error). */
void *nn_priv_with_boxes(nn_ctx *c, size_t psize, int n_boxes, const int *n_items, nn_box **boxes);
/* The same block without parameters as the node's boxes (nn_node.boxes, whose
 * previous block it frees): where an op's infer keeps the headers of its boxed
 * outputs. */
nn_status nn_node_boxes(nn_ctx *c, nn_node *n, int n_boxes, const int *n_items, nn_box **boxes);
/* Copy src's description (not data) into dst, whose items array holds
 * src->n items. */
void nn_box_copy_desc(nn_box *dst, const nn_box *src);

#endif /* NN_OPS_BOX_H */

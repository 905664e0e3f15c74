/* nms.h - NonMaxSuppression's selection, which decides the output's size:
 * the op layer runs it at prepare on the known inputs to infer the shape,
 * the CPU kernel (cpu/nms.c) runs it again into the planned output. */
#ifndef NN_OPS_NMS_H
#define NN_OPS_NMS_H

#include "nn_internal.h"

typedef struct nn_nms_cand {
  float score;
  int64_t idx;
} nn_nms_cand;

/* Bytes of the scratch of nn_nms_select for S boxes per batch: S
 * candidates, then S selected indices (nn_nms_scratch_sel).  True on
 * overflow. */
static inline bool nn_nms_scratch_bytes(int64_t S, size_t *bytes) {
  return nn_mul_overflow_size((size_t)S, sizeof(nn_nms_cand) + sizeof(int64_t), bytes);
}
static inline int64_t *nn_nms_scratch_sel(void *scratch, int64_t S) {
  return (int64_t *)((char *)scratch + (size_t)S * sizeof(nn_nms_cand));
}

/* Selection over all (batch, class) of node n (float boxes and scores,
 * checked by its inference); writes up to `cap` [batch, class, box]
 * triples to out (NULL to count only).  cand/sel are scratch of num_boxes
 * entries.  Returns the number selected. */
int64_t nn_nms_select(const nn_node *n, nn_nms_cand *cand, int64_t *sel, int64_t *out,
                      int64_t cap);

#endif /* NN_OPS_NMS_H */

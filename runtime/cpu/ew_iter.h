/* ew_iter.h - private to the elementwise family: walking an output tensor
 * together with up to EW_MAX_IN broadcast inputs.
 *
 * The output shape is first simplified: size-1 dimensions are dropped and
 * neighbouring dimensions that every input walks the same way are merged, so
 * that the common cases (same shape, scalar operand, per-channel operand)
 * become one or two long contiguous rows.  The innermost dimension then
 * steps every input by 0 (broadcast) or 1 element: a segment callback gets
 * plain rows it can process with a simple loop.
 *
 * The walk is split across the session's threads by flat output index, each
 * worker finding its own starting position, so it needs no allocation.
 */
#ifndef NN_CPU_EW_ITER_H
#define NN_CPU_EW_ITER_H

#include "cpu/ew_conv.h"

#define EW_MAX_IN 3

/* One row: in_off[k] = element offset of input k at the row start, step[k] =
 * 0 or 1, y_off = flat output offset, len = elements in the row. */
typedef void (*ew_seg_fn)(void *ctx, const int64_t *in_off, const int *step, int64_t y_off,
                          int64_t len);

typedef struct ew_iter {
  int rank;                              /* >= 1 after simplification */
  int n_in;
  int64_t dims[NN_MAX_RANK];
  int64_t strides[EW_MAX_IN][NN_MAX_RANK];
  int step[EW_MAX_IN];                   /* inner stride of each input: 0 or 1 */
  int64_t numel;
  ew_seg_fn fn;
  void *ctx;
} ew_iter;

/* Inputs are given by rank and dims and must broadcast to (rout, dout). */
static inline void ew_iter_init(ew_iter *it, int rout, const int64_t *dout, int n_in,
                                const int *rin, const int64_t *const *din, ew_seg_fn fn,
                                void *ctx) {
  int64_t st[EW_MAX_IN][NN_MAX_RANK];
  for (int k = 0; k < n_in; k++)
    nn_broadcast_strides(rin[k], din[k], rout, dout, st[k]);
  int r = 0;
  for (int d = 0; d < rout; d++) {
    if (dout[d] == 1)
      continue;
    if (r > 0) {
      bool merge = true;
      for (int k = 0; k < n_in; k++)
        if (it->strides[k][r - 1] != st[k][d] * dout[d])
          merge = false;
      if (merge) {
        it->dims[r - 1] *= dout[d];
        for (int k = 0; k < n_in; k++)
          it->strides[k][r - 1] = st[k][d];
        continue;
      }
    }
    it->dims[r] = dout[d];
    for (int k = 0; k < n_in; k++)
      it->strides[k][r] = st[k][d];
    r++;
  }
  if (r == 0) {
    r = 1;
    it->dims[0] = 1;
    for (int k = 0; k < n_in; k++)
      it->strides[k][0] = 0;
  }
  it->rank = r;
  it->n_in = n_in;
  /* The innermost output dimension is the innermost dimension of every
   * input that has it (right-aligned broadcasting), hence stride 0 or 1. */
  for (int k = 0; k < n_in; k++)
    it->step[k] = it->strides[k][r - 1] != 0;
  it->numel = nn_dims_numel(rout, dout);
  it->fn = fn;
  it->ctx = ctx;
}

static inline void ew_iter_range(void *arg, int64_t begin, int64_t end) {
  const ew_iter *it = arg;
  const int r = it->rank, nin = it->n_in;
  const int64_t inner = it->dims[r - 1];
  int64_t idx[NN_MAX_RANK];
  int64_t off[EW_MAX_IN] = {0};
  int64_t rem = begin / inner, col = begin % inner;
  for (int d = r - 2; d >= 0; d--) {
    idx[d] = rem % it->dims[d];
    rem /= it->dims[d];
    for (int k = 0; k < nin; k++)
      off[k] += idx[d] * it->strides[k][d];
  }
  int64_t pos = begin;
  while (pos < end) {
    int64_t len = inner - col;
    if (len > end - pos)
      len = end - pos;
    int64_t o[EW_MAX_IN];
    for (int k = 0; k < nin; k++)
      o[k] = off[k] + col * it->step[k];
    it->fn(it->ctx, o, it->step, pos, len);
    pos += len;
    col = 0;
    for (int d = r - 2; d >= 0; d--) {
      idx[d]++;
      for (int k = 0; k < nin; k++)
        off[k] += it->strides[k][d];
      if (idx[d] < it->dims[d])
        break;
      for (int k = 0; k < nin; k++)
        off[k] -= it->dims[d] * it->strides[k][d];
      idx[d] = 0;
    }
  }
}

static inline void ew_iter_run(nn_ctx *c, ew_iter *it) {
  if (it->numel > 0)
    nn_parallel_for(c, it->numel, EW_GRAIN, ew_iter_range, it);
}

#endif /* NN_CPU_EW_ITER_H */

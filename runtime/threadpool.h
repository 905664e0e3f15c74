/* threadpool.h - per-session worker threads behind nn_parallel_for: the CPU
 * kernels, the host steps of a device backend and nn_image all run on them. */
#ifndef NN_THREADPOOL_H
#define NN_THREADPOOL_H

#include <stdatomic.h>

#include "nn_internal.h"

/* threads <= 1 gives *out = NULL (serial).  *out is caller-owned: release
 * with nn_threadpool_destroy (joins the workers). */
nn_status nn_threadpool_create(int threads, nn_threadpool **out);
void nn_threadpool_destroy(nn_threadpool *p);
/* The caller has no more work for now (a run ended): workers spinning for
 * the next job go to sleep at once.  NULL is a no-op. */
void nn_threadpool_park(nn_threadpool *p);

/* Work items split into contiguous blocks, one per participant, each with
 * its own counter (on its own cache line): a participant claims from its
 * own block first, then from the others (nn_parallel_for's chunks, the GEMM
 * engine's tiles).  Consecutive jobs over the same data so split keep each
 * core on the part it wrote. */
typedef struct nn_block {
  _Alignas(64) atomic_int_fast64_t next;
  int64_t end;
} nn_block;

/* Items [0, n_items) over n_blocks blocks, as evenly as integers allow. */
void nn_blocks_init(nn_block *b, int n_blocks, int64_t n_items);
/* The next item for participant `owner` (its block first), -1 when none is
 * left anywhere. */
int64_t nn_blocks_claim(nn_block *b, int n_blocks, int owner);

#endif

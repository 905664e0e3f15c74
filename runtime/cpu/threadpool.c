/* threadpool.c - nn_parallel_for.  Serial for now; the worker pool of the
 * speed issue plugs in here without changing kernels. */
#include "nn_internal.h"

void nn_parallel_for(nn_ctx *c, int64_t n, int64_t grain, nn_range_fn fn, void *arg) {
  (void)c;
  (void)grain;
  if (n > 0)
    fn(arg, 0, n);
}

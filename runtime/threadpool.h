/* threadpool.h - per-session worker threads behind nn_parallel_for: the CPU
 * kernels, the host steps of a device backend and nn_image all run on them. */
#ifndef NN_THREADPOOL_H
#define NN_THREADPOOL_H

#include "nn_internal.h"

/* threads <= 1 gives *out = NULL (serial).  *out is caller-owned: release
 * with nn_threadpool_destroy (joins the workers). */
nn_status nn_threadpool_create(int threads, nn_threadpool **out);
void nn_threadpool_destroy(nn_threadpool *p);
/* The caller has no more work for now (a run ended): workers spinning for
 * the next job go to sleep at once.  NULL is a no-op. */
void nn_threadpool_park(nn_threadpool *p);

#endif

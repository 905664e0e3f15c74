/* threadpool.c - the session's worker threads and nn_parallel_for.
 *
 * Workers are created once per session (threads - 1 of them; the calling
 * thread is the last worker) and sleep on a condition variable between
 * jobs: an idle pipeline costs no CPU.  A job is split into chunks of at
 * least `grain` items that participants claim with an atomic counter, so
 * uneven chunks balance themselves.  Nothing here allocates per job.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

#include "cpu/threadpool.h"

typedef struct worker_start {
  nn_threadpool *pool;
  int id;
} worker_start;

struct nn_threadpool {
  int n_workers;
  pthread_t *workers;
  worker_start *starts;
  pthread_mutex_t mu;
  pthread_cond_t cv_work;
  pthread_cond_t cv_done;
  uint64_t generation;     /* bumped for every job, under mu */
  int pending;             /* workers still inside the current job, under mu */
  bool quit;
  /* the current job */
  nn_range_fn fn;
  void *arg;
  int64_t n, chunk, n_chunks;
  atomic_int_fast64_t next;
};

static _Thread_local bool tl_in_worker;
static _Thread_local int tl_worker_id; /* 0 for the calling thread */

static void job_work(nn_threadpool *p) {
  for (;;) {
    int64_t k = atomic_fetch_add(&p->next, 1);
    if (k >= p->n_chunks)
      break;
    int64_t begin = k * p->chunk;
    int64_t end = begin + p->chunk < p->n ? begin + p->chunk : p->n;
    p->fn(p->arg, begin, end);
  }
}

static void *worker_main(void *arg) {
  nn_threadpool *p = ((worker_start *)arg)->pool;
  tl_worker_id = ((worker_start *)arg)->id;
  uint64_t seen = 0;
  tl_in_worker = true;
  pthread_mutex_lock(&p->mu);
  for (;;) {
    while (!p->quit && p->generation == seen)
      pthread_cond_wait(&p->cv_work, &p->mu);
    if (p->quit)
      break;
    seen = p->generation;
    pthread_mutex_unlock(&p->mu);
    job_work(p);
    pthread_mutex_lock(&p->mu);
    if (--p->pending == 0)
      pthread_cond_signal(&p->cv_done);
  }
  pthread_mutex_unlock(&p->mu);
  return NULL;
}

nn_status nn_threadpool_create(int threads, nn_threadpool **out) {
  *out = NULL;
  if (threads <= 1)
    return NN_OK;
  nn_threadpool *p = nn_calloc(1, sizeof *p);
  if (!p)
    return NN_ERR_NOMEM;
  p->workers = nn_calloc((size_t)threads, sizeof(pthread_t));
  p->starts = nn_calloc((size_t)threads, sizeof(worker_start));
  if (!p->workers || !p->starts) {
    nn_free(p->workers);
    nn_free(p->starts);
    nn_free(p);
    return NN_ERR_NOMEM;
  }
  pthread_mutex_init(&p->mu, NULL);
  pthread_cond_init(&p->cv_work, NULL);
  pthread_cond_init(&p->cv_done, NULL);
  for (int i = 0; i < threads - 1; i++) {
    p->starts[i] = (worker_start){p, i + 1};
    if (pthread_create(&p->workers[i], NULL, worker_main, &p->starts[i]) != 0) {
      nn_threadpool_destroy(p);
      return NN_ERR_NOMEM;
    }
    p->n_workers++;
  }
  *out = p;
  return NN_OK;
}

void nn_threadpool_destroy(nn_threadpool *p) {
  if (!p)
    return;
  pthread_mutex_lock(&p->mu);
  p->quit = true;
  pthread_cond_broadcast(&p->cv_work);
  pthread_mutex_unlock(&p->mu);
  for (int i = 0; i < p->n_workers; i++)
    pthread_join(p->workers[i], NULL);
  pthread_cond_destroy(&p->cv_done);
  pthread_cond_destroy(&p->cv_work);
  pthread_mutex_destroy(&p->mu);
  nn_free(p->workers);
  nn_free(p->starts);
  nn_free(p);
}

int nn_parallel_width(const nn_ctx *c) {
  return c && c->pool ? c->pool->n_workers + 1 : 1;
}

int nn_parallel_worker(void) {
  return tl_worker_id;
}

void nn_parallel_for(nn_ctx *c, int64_t n, int64_t grain, nn_range_fn fn, void *arg) {
  if (n <= 0)
    return;
  if (grain < 1)
    grain = 1;
  nn_threadpool *p = c ? c->pool : NULL;
  /* serial when there is no pool, too little work, or when called from a
   * worker (kernels do not nest parallel loops) */
  if (!p || n < 2 * grain || tl_in_worker) {
    fn(arg, 0, n);
    return;
  }
  int participants = p->n_workers + 1;
  int64_t max_chunks = n / grain;
  int64_t n_chunks = (int64_t)participants * 4 < max_chunks ? (int64_t)participants * 4 : max_chunks;
  int64_t chunk = (n + n_chunks - 1) / n_chunks;
  n_chunks = (n + chunk - 1) / chunk;
  pthread_mutex_lock(&p->mu);
  p->fn = fn;
  p->arg = arg;
  p->n = n;
  p->chunk = chunk;
  p->n_chunks = n_chunks;
  atomic_store(&p->next, 0);
  p->pending = p->n_workers;
  p->generation++;
  pthread_cond_broadcast(&p->cv_work);
  pthread_mutex_unlock(&p->mu);
  tl_in_worker = true;
  job_work(p);
  tl_in_worker = false;
  pthread_mutex_lock(&p->mu);
  while (p->pending > 0)
    pthread_cond_wait(&p->cv_done, &p->mu);
  pthread_mutex_unlock(&p->mu);
}

/* threadpool.c - the session's worker threads and nn_parallel_for.
 *
 * Workers are created once per session (threads - 1 of them; the calling
 * thread is the last worker).  A job is split into chunks of at least
 * `grain` items, the chunks into one contiguous block per participant.
 * Each participant claims the chunks of its own block first (the caller
 * the first block, worker i block i), then those left in the others, with
 * an atomic counter per block: uneven chunks and a busy core still balance
 * themselves, and in a run of jobs over the same data (a Conv, its Relu,
 * the pool after it) each core mostly reads what it wrote.  Claimed from one
 * counter, the chunks of consecutive jobs landed on either core at random,
 * and on a 2-core VM whose cores read each other's caches at a quarter of
 * their own bandwidth, SqueezeNet on 2 threads ran 8% slower than with
 * blocks (Zen 5).  Nothing here allocates per job.
 *
 * Late workers never hold the caller up.  A job has a gate: a worker joins
 * it (atomically, while it is open) before claiming chunks and leaves it
 * after; the caller, once it finds no chunk left, closes the gate and waits
 * only for the workers inside.  A worker that wakes after that skips the
 * job.  On a loaded machine (or a VM, where waking a halted vCPU takes tens
 * of microseconds) the caller used to wait for a worker to be scheduled even
 * when it had done every chunk itself: a 2-thread BlazeFace ran 3x slower
 * than 1 thread.
 *
 * Between jobs a worker spins for a short while (100 us; the environment
 * variable NN_SPIN_US, read when the pool is created, changes it, 0 = never
 * spin) before it sleeps on a condition variable: the jobs of one inference
 * follow each other within microseconds, and waking a sleeping worker costs
 * more than most of them (tens of microseconds on a VM).  When a run ends
 * the session parks the pool (nn_threadpool_park): spinning workers sleep
 * at once, so an idle pipeline costs nothing between frames but the wake-up
 * (tools/idle-cost.sh measures it).
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif

#include "knobs.h"
#include "threadpool.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define NN_CPU_RELAX() _mm_pause()
#elif defined(__aarch64__)
#define NN_CPU_RELAX() __asm__ __volatile__("yield")
#else
#define NN_CPU_RELAX() ((void)0)
#endif

/* How long a worker keeps looking for the next job before it sleeps (the
 * default of NN_SPIN_US), and how long the caller spins for workers still
 * inside a job before it sleeps (they are running, so they finish soon
 * unless preempted). */
#define NN_SPIN_US_DEFAULT 100
#define NN_WAIT_SPIN_US 50
/* Chunks per participant: several, so that a participant that starts late or
 * is preempted leaves its remaining chunks to the others, and the one that
 * finishes first waits at most a small chunk for the last: with 4, two
 * threads idled 12% of their time at the ends of Inception-v2's 160 jobs a
 * run; 16 ran it 2.5%, SqueezeNet, ResNet-50 and DenseNet 1-1.5% faster
 * (Zen 5).  Kernels that need coarser chunks say so with their grain. */
#define NN_CHUNKS_PER_PARTICIPANT 16

/* gate: bit 31 = closed, low bits = workers inside the job */
#define GATE_CLOSED 0x80000000u

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
  atomic_uint_fast64_t generation;  /* bumped for every job, after it is published */
  atomic_uint_fast64_t parked;      /* generation at the last park: stop spinning */
  atomic_bool quit;
  unsigned spin_us;        /* spin before sleeping (NN_SPIN_US) */
  int sleepers;            /* workers blocked on cv_work, under mu */
  bool done_waiter;        /* the caller is blocked on cv_done, under mu */
  /* the current job: written by the caller while the gate is closed and
   * empty, read by workers that joined through the gate */
  nn_range_fn fn;
  void *arg;
  int64_t n, chunk, n_chunks;
  nn_block *blocks;        /* one per participant: its share of the chunks */
  atomic_uint gate;
};

static _Thread_local bool tl_in_worker;
static _Thread_local int tl_worker_id; /* 0 for the calling thread */

static uint64_t now_us(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

void nn_blocks_init(nn_block *b, int n_blocks, int64_t n_items) {
  for (int i = 0; i < n_blocks; i++) {
    atomic_init(&b[i].next, (int64_t)i * n_items / n_blocks);
    b[i].end = (int64_t)(i + 1) * n_items / n_blocks;
  }
}

int64_t nn_blocks_claim(nn_block *b, int n_blocks, int owner) {
  for (int i = 0; i < n_blocks; i++) {
    nn_block *blk = &b[(owner + i) % n_blocks];
    if (atomic_load_explicit(&blk->next, memory_order_relaxed) >= blk->end)
      continue;
    int64_t k = atomic_fetch_add_explicit(&blk->next, 1, memory_order_relaxed);
    if (k < blk->end)
      return k;
  }
  return -1;
}

static void job_work(nn_threadpool *p) {
  const int participants = p->n_workers + 1;
  for (;;) {
    int64_t k = nn_blocks_claim(p->blocks, participants, tl_worker_id % participants);
    if (k < 0)
      break;
    int64_t begin = k * p->chunk;
    int64_t end = begin + p->chunk < p->n ? begin + p->chunk : p->n;
    p->fn(p->arg, begin, end);
  }
}

/* Enter the current job unless the caller already closed it. */
static bool gate_join(nn_threadpool *p) {
  unsigned g = atomic_load_explicit(&p->gate, memory_order_relaxed);
  do {
    if (g & GATE_CLOSED)
      return false;
  } while (!atomic_compare_exchange_weak_explicit(&p->gate, &g, g + 1, memory_order_acquire,
                                                  memory_order_relaxed));
  return true;
}

static void gate_leave(nn_threadpool *p) {
  unsigned prev = atomic_fetch_sub_explicit(&p->gate, 1, memory_order_release);
  if (prev == (GATE_CLOSED | 1u)) {
    /* the last one out of a closed job: the caller may be asleep */
    pthread_mutex_lock(&p->mu);
    if (p->done_waiter)
      pthread_cond_signal(&p->cv_done);
    pthread_mutex_unlock(&p->mu);
  }
}

static void *worker_main(void *arg) {
  nn_threadpool *p = ((worker_start *)arg)->pool;
  tl_worker_id = ((worker_start *)arg)->id;
  tl_in_worker = true;
#ifdef __linux__
  /* a name tools (top -H, tools/idle-cost.sh) can find the workers by */
  prctl(PR_SET_NAME, "nn-worker", 0, 0, 0);
#endif
  uint64_t seen = 0;
  for (;;) {
    uint64_t gen = atomic_load_explicit(&p->generation, memory_order_acquire);
    if (gen == seen && !atomic_load_explicit(&p->quit, memory_order_relaxed)) {
      /* spin a little: the next job of this inference is likely close */
      uint64_t t0 = now_us();
      for (unsigned i = 1; p->spin_us > 0; i++) {
        NN_CPU_RELAX();
        gen = atomic_load_explicit(&p->generation, memory_order_acquire);
        if (gen != seen || atomic_load_explicit(&p->quit, memory_order_relaxed) ||
            atomic_load_explicit(&p->parked, memory_order_relaxed) == seen)
          break;
        if ((i & 63) == 0 && now_us() - t0 > p->spin_us)
          break;
      }
    }
    if (gen == seen && !atomic_load_explicit(&p->quit, memory_order_relaxed)) {
      pthread_mutex_lock(&p->mu);
      p->sleepers++;
      while ((gen = atomic_load_explicit(&p->generation, memory_order_acquire)) == seen &&
             !atomic_load_explicit(&p->quit, memory_order_relaxed))
        pthread_cond_wait(&p->cv_work, &p->mu);
      p->sleepers--;
      pthread_mutex_unlock(&p->mu);
    }
    if (atomic_load_explicit(&p->quit, memory_order_relaxed))
      break;
    seen = gen;
    if (gate_join(p)) {
      job_work(p);
      gate_leave(p);
    }
  }
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
  p->blocks = nn_aligned_alloc((size_t)threads * sizeof(nn_block));
  if (!p->workers || !p->starts || !p->blocks) {
    nn_free(p->workers);
    nn_free(p->starts);
    nn_aligned_free(p->blocks);
    nn_free(p);
    return NN_ERR_NOMEM;
  }
  nn_blocks_init(p->blocks, threads, 0);
  pthread_mutex_init(&p->mu, NULL);
  pthread_cond_init(&p->cv_work, NULL);
  pthread_cond_init(&p->cv_done, NULL);
  atomic_init(&p->generation, 0);
  atomic_init(&p->parked, 0);
  p->spin_us = NN_SPIN_US_DEFAULT;
  int spin = nn_knobs().spin_us;
  if (spin >= 0)
    p->spin_us = (unsigned)spin;
  atomic_init(&p->quit, false);
  atomic_init(&p->gate, GATE_CLOSED);
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
  atomic_store(&p->quit, true);
  pthread_cond_broadcast(&p->cv_work);
  pthread_mutex_unlock(&p->mu);
  for (int i = 0; i < p->n_workers; i++)
    pthread_join(p->workers[i], NULL);
  pthread_cond_destroy(&p->cv_done);
  pthread_cond_destroy(&p->cv_work);
  pthread_mutex_destroy(&p->mu);
  nn_free(p->workers);
  nn_free(p->starts);
  nn_aligned_free(p->blocks);
  nn_free(p);
}

void nn_threadpool_park(nn_threadpool *p) {
  if (p)
    atomic_store_explicit(&p->parked, atomic_load(&p->generation), memory_order_relaxed);
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
  int64_t n_chunks = (int64_t)participants * NN_CHUNKS_PER_PARTICIPANT < max_chunks
                         ? (int64_t)participants * NN_CHUNKS_PER_PARTICIPANT
                         : max_chunks;
  int64_t chunk = (n + n_chunks - 1) / n_chunks;
  n_chunks = (n + chunk - 1) / chunk;
  /* publish: the gate is closed and empty since the previous job ended */
  p->fn = fn;
  p->arg = arg;
  p->n = n;
  p->chunk = chunk;
  p->n_chunks = n_chunks;
  nn_blocks_init(p->blocks, participants, n_chunks);
  atomic_store_explicit(&p->gate, 0u, memory_order_release);
  atomic_fetch_add_explicit(&p->generation, 1, memory_order_release);
  pthread_mutex_lock(&p->mu);
  if (p->sleepers > 0)
    pthread_cond_broadcast(&p->cv_work);
  pthread_mutex_unlock(&p->mu);
  tl_in_worker = true;
  job_work(p);
  tl_in_worker = false;
  /* every chunk is claimed: close the job and wait for the workers inside */
  unsigned g = atomic_fetch_or_explicit(&p->gate, GATE_CLOSED, memory_order_acq_rel);
  if ((g & ~GATE_CLOSED) == 0)
    return;
  uint64_t t0 = now_us();
  for (unsigned i = 1; atomic_load_explicit(&p->gate, memory_order_acquire) != GATE_CLOSED; i++) {
    NN_CPU_RELAX();
    if ((i & 63) == 0 && now_us() - t0 > NN_WAIT_SPIN_US) {
      pthread_mutex_lock(&p->mu);
      p->done_waiter = true;
      while (atomic_load_explicit(&p->gate, memory_order_acquire) != GATE_CLOSED)
        pthread_cond_wait(&p->cv_done, &p->mu);
      p->done_waiter = false;
      pthread_mutex_unlock(&p->mu);
      break;
    }
  }
}

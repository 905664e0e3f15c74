/* cpu_backend.c - the CPU backend behind backend.h: the planned steps run one
 * after the other through each node's kern->run on the session's worker pool.
 *
 * It owns the arena (one host block, grown when a re-plan needs more, never
 * shrunk: a stream that alternates two shapes does not reallocate) and the
 * layout of the weights its kernels read (cpu_weights.c: GEMM A panels packed
 * once at build, restored to the ONNX layout before a re-plan).
 *
 * NN_PROFILE=1 (knobs.h) times every step of every run; when the plan is
 * dropped (re-plan or destroy) the totals go to nn_log: time per op type and
 * the slowest nodes, per run.  Off, it costs one branch per run.
 *
 * Threads per step.  With a worker pool, some steps run faster on the
 * calling thread alone: small ones (waking and joining the worker costs
 * more than the half they save), and, on machines whose two cores are far
 * apart, memory-bound ones, where the worker reads what the other core has
 * just written (a 2-core VM here read another core's cache at 27-31 GB/s
 * against 95 from its own, and ran ShuffleNet slower on two threads than on
 * one).  So the plan's first runs after the cold one time every step both
 * ways, CPU_TUNE_RUNS of each, alternately; a step whose fastest time alone
 * beats its fastest on the pool by CPU_TUNE_MARGIN is to run alone (the
 * fastest, not the mean: a preempted sample says nothing about the step).
 * Then, since a step's time also depends on where its neighbours left the
 * data, CPU_TUNE_RUNS runs of that choice alternate with as many of all on
 * the pool, and of the three ways of running (all on the pool, all alone,
 * the choice) the one with the fastest whole run stays: on that VM
 * BlazeFace back-256 ran 4.7 ms alone, 5.3 on the pool and 5.0 as chosen
 * step by step.
 * NN_CPU_CALIBRATION_RUNS (nn.h) runs in all, cold one included; then
 * nothing is timed until CPU_TUNE_FIRST runs later, when it starts again
 * (without the cold run), then after CPU_TUNE_SECOND, then every
 * CPU_TUNE_EVERY: what another process did to the machine during the
 * first frames of a stream does not decide its next hours.
 * NN_THREAD_TUNE=0 keeps every step on the pool.  Kernels
 * plan for any width (serially they use the first worker's workspace slot),
 * and the choice does not change results: tiles split the outputs, never a
 * sum.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "backend.h"
#include "cpu/cpu_weights.h"
#include "knobs.h"
#include "threadpool.h"

typedef struct cpu_backend {
  void *arena;
  size_t arena_cap;
  nn_graph *g;          /* of the last successful build; NULL before */
  nn_plan *plan;
  int profile;          /* NN_PROFILE, read at create (knobs.h) */
  bool prof_cold;       /* the next run is a plan's first: not profiled */
  uint64_t *prof_ns;    /* per step of plan, summed over prof_runs; NULL when off */
  int *prof_node;       /* the steps' node indices (the plan's own array goes
                           before before_plan is called) */
  int prof_steps;
  uint64_t prof_runs;
  /* threads per step (see the top): one block of n_steps entries each */
  bool tune;            /* NN_THREAD_TUNE not 0, read at create */
  int tune_steps;       /* plan->n_steps the block was made for; 0 = none */
  int tune_run;         /* runs of this plan so far, up to NN_CPU_CALIBRATION_RUNS + 1 */
  int tune_steady;      /* steady runs since the last calibration */
  int tune_cals;        /* calibrations of this plan begun since its first */
  uint64_t *tune_ns;    /* [2][steps]: best time on the pool, alone */
  uint64_t check_ns[3]; /* best whole run: all on the pool, the choice, all alone */
  bool *serial;         /* [steps]: run on the calling thread alone */
  int n_serial;         /* how many of them do */
} cpu_backend;

/* Timed runs of each kind per phase (after the cold first run), and how
 * much faster alone a step must be to run so: parallel is the default, and
 * a 2-core VM's timings swing by 10-30 %. */
#define CPU_TUNE_RUNS 3
#define CPU_TUNE_MARGIN 0.9
/* Steady runs between calibrations: 12 runs of mixed ways in 5000 cost a
 * fraction of a percent.  The first two come sooner, after 64 and 512
 * runs: a 2-vCPU VM's second core has spells of seconds in which it barely
 * runs (a 2-thread MobileNetV2 took 7.2 ms in them, 4.1 outside, the same
 * as ONNX Runtime's swings); a calibration inside one puts every step on
 * one thread, and kept for 5000 runs that is minutes of a stream. */
#define CPU_TUNE_EVERY 5000
#define CPU_TUNE_FIRST 64
#define CPU_TUNE_SECOND 512
_Static_assert(NN_CPU_CALIBRATION_RUNS == 1 + 4 * CPU_TUNE_RUNS,
               "nn.h's count of calibration runs");

static uint64_t cpu_now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

typedef struct prof_row {
  const char *key;
  const nn_node *node;  /* per-node rows */
  uint64_t ns;
  int count;
} prof_row;

static int prof_row_cmp(const void *a, const void *b) {
  const prof_row *x = a, *y = b;
  return x->ns < y->ns ? 1 : x->ns > y->ns ? -1 : 0;
}

static void prof_dims(char *buf, size_t cap, const nn_value *v) {
  size_t len = 0;
  if (!v)
    return;
  for (int d = 0; d < v->rank && len + 1 < cap; d++) {
    int w = snprintf(buf + len, cap - len, d ? "x%lld" : "%lld", (long long)v->dims[d]);
    if (w < 0)
      break;
    len += (size_t)w;
  }
}

/* Logs the profile of the plan being dropped and forgets it.  Runs outside
 * the per-frame path (at re-plan or destroy), so it may allocate. */
static void cpu_profile_flush(cpu_backend *b) {
  prof_row *rows = NULL;
  if (!b->prof_ns || b->prof_runs == 0 || !b->g)
    goto done;
  int n = b->prof_steps;
  rows = nn_calloc((size_t)n * 2 + 1, sizeof *rows);
  if (!rows)
    goto done;
  prof_row *types = rows + n;
  int n_types = 0;
  uint64_t total = 0;
  for (int k = 0; k < n; k++) {
    const nn_node *nd = &b->g->nodes[b->prof_node[k]];
    rows[k] = (prof_row){nd->name, nd, b->prof_ns[k], k};   /* count: the step */
    total += b->prof_ns[k];
    int t = 0;
    while (t < n_types && strcmp(types[t].key, nd->op_type) != 0)
      t++;
    if (t == n_types)
      types[n_types++] = (prof_row){nd->op_type, NULL, 0, 0};
    types[t].ns += b->prof_ns[k];
    types[t].count++;
  }
  qsort(types, (size_t)n_types, sizeof *types, prof_row_cmp);
  qsort(rows, (size_t)n, sizeof *rows, prof_row_cmp);
  double runs = (double)b->prof_runs, all = total ? (double)total : 1.0;
  nn_log(NN_LOG_INFO, "profile: %d steps, %llu runs, %.3f ms per run, %d on one thread", n,
         (unsigned long long)b->prof_runs, (double)total / runs / 1e6, b->n_serial);
  for (int t = 0; t < n_types; t++)
    nn_log(NN_LOG_INFO, "profile: %-24s %4d nodes %9.3f ms %5.1f %%", types[t].key,
           types[t].count, (double)types[t].ns / runs / 1e6, 100.0 * (double)types[t].ns / all);
  int list = b->profile > 1 ? b->profile : 20;
  for (int k = 0; k < n && k < list; k++) {
    /* the shapes say which layer it is (names are often generated) */
    char in[64] = "", out[64] = "";
    const nn_node *nd = rows[k].node;
    prof_dims(in, sizeof in, nd->n_in > 0 ? nd->x[0] : NULL);
    prof_dims(out, sizeof out, nd->n_out > 0 ? nd->y[0] : NULL);
    bool alone = b->n_serial > 0 && b->tune_steps == n && b->serial[rows[k].count];
    nn_log(NN_LOG_INFO, "profile: node %-20s %-14s %9.3f ms %5.1f %%  %s -> %s%s", rows[k].key,
           nd->op_type, (double)rows[k].ns / runs / 1e6, 100.0 * (double)rows[k].ns / all, in,
           out, alone ? "  (1 thread)" : "");
  }
done:
  nn_free(rows);
  nn_free(b->prof_ns);
  b->prof_ns = NULL;
  b->prof_node = NULL;
  b->prof_steps = 0;
  b->prof_runs = 0;
}

/* Forgets the per-step thread choice (a new plan, or the end). */
static void cpu_tune_drop(cpu_backend *b) {
  nn_free(b->tune_ns);
  b->tune_ns = NULL;
  b->serial = NULL;
  b->tune_steps = 0;
  b->tune_run = 0;
  b->tune_steady = 0;
  b->tune_cals = 0;
  b->n_serial = 0;
}

/* The choice, once the steps' times are in (nn_stats.nodes_cpu_one_thread
 * counts the steps alone). */
static void cpu_tune_decide(cpu_backend *b) {
  int n = b->tune_steps;
  b->n_serial = 0;
  for (int k = 0; k < n; k++) {
    b->serial[k] = (double)b->tune_ns[n + k] < CPU_TUNE_MARGIN * (double)b->tune_ns[k];
    b->n_serial += b->serial[k];
  }
}

/* The way of the fastest whole run: all alone, all on the pool, or the
 * choice step by step (cpu_tune_decide's). */
static void cpu_tune_settle(cpu_backend *b) {
  const uint64_t *t = b->check_ns;
  if (t[2] < t[0] && t[2] < t[1]) {
    for (int k = 0; k < b->tune_steps; k++)
      b->serial[k] = true;
    b->n_serial = b->tune_steps;
  } else if (t[1] >= t[0]) {
    b->n_serial = 0;
  }
}

/* How run `r` (1-based) of a plan runs while calibrating: *alone (every step
 * on the calling thread) or *chosen (the steps of b->serial alone); which
 * per-step times it adds to (*steps, NULL for none), or whole-run time
 * (*whole, -1 for none). */
static void cpu_tune_mode(const cpu_backend *b, int r, bool *alone, bool *chosen,
                          uint64_t **steps, int *whole) {
  *alone = *chosen = false;
  *steps = NULL;
  *whole = -1;
  if (r <= 1 || r > NN_CPU_CALIBRATION_RUNS) {
    *chosen = r > 1;   /* the cold run on the pool, then the steady state */
    return;
  }
  if (r <= 1 + 2 * CPU_TUNE_RUNS) {   /* per step: on the pool, alone, in turn */
    *alone = r % 2 == 1;
    *steps = b->tune_ns + (*alone ? b->tune_steps : 0);
    *whole = *alone ? 2 : 0;
    return;
  }
  *chosen = r % 2 == 0;               /* whole runs: the choice, all on the pool */
  *whole = *chosen ? 1 : 0;
}

static nn_status cpu_create(void **state, nn_error *err) {
  cpu_backend *b = nn_calloc(1, sizeof *b);
  if (!b)
    return nn_error_set(err, NN_ERR_NOMEM, "out of memory");
  b->profile = nn_knobs().profile;
  b->tune = nn_knobs().thread_tune != 0;
  *state = b;
  return NN_OK;
}

static nn_status cpu_before_plan(void *state, nn_graph *g, nn_error *err) {
  cpu_backend *b = state;
  cpu_profile_flush(b);
  cpu_tune_drop(b);
  b->g = NULL;
  b->plan = NULL;
  return nn_cpu_weights_restore(g, err);
}

static nn_status cpu_build(void *state, nn_graph *g, nn_plan *plan, const bool *on_device,
                           nn_ctx *ctx, nn_error *err) {
  cpu_backend *b = state;
  (void)on_device; /* every step is ours */
  nn_status st = nn_cpu_weights_pack(g, plan, err);
  if (st != NN_OK)
    return st;
  if (plan->arena_bytes > b->arena_cap || !b->arena) {
    void *a = nn_aligned_alloc(plan->arena_bytes ? plan->arena_bytes : 1);
    if (!a)
      return nn_error_set(err, NN_ERR_NOMEM, "out of memory for the arena (%zu bytes)",
                          plan->arena_bytes);
    nn_aligned_free(b->arena);
    b->arena = a;
    b->arena_cap = plan->arena_bytes;
  }
  nn_plan_bind_arena(g, plan, b->arena);
  if (b->profile) {
    cpu_profile_flush(b);
    /* one block: the times, then the node indices */
    size_t n = plan->n_steps ? (size_t)plan->n_steps : 1;
    b->prof_ns = nn_calloc(n, sizeof *b->prof_ns + sizeof *b->prof_node);
    if (b->prof_ns) {
      b->prof_node = (int *)(b->prof_ns + n);
      for (int k = 0; k < plan->n_steps; k++)
        b->prof_node[k] = plan->steps[k];
      b->prof_steps = plan->n_steps;
      b->prof_cold = true;
    }
  }
  cpu_tune_drop(b);
  if (b->tune && ctx && ctx->pool && ctx->threads > 1 && plan->n_steps > 0) {
    /* one block: the times of both kinds, then the choices */
    size_t n = (size_t)plan->n_steps;
    b->tune_ns = nn_calloc(1, n * 2 * sizeof *b->tune_ns + n * sizeof *b->serial);
    if (b->tune_ns) {   /* without it every step stays on the pool */
      b->serial = (bool *)(b->tune_ns + 2 * n);
      for (size_t k = 0; k < 2 * n; k++)
        b->tune_ns[k] = UINT64_MAX;
      b->check_ns[0] = b->check_ns[1] = b->check_ns[2] = UINT64_MAX;
      b->tune_steps = plan->n_steps;
    }
  }
  b->g = g;
  b->plan = plan;
  return NN_OK;
}

static nn_status cpu_run(void *state, nn_ctx *ctx, nn_error *err) {
  cpu_backend *b = state;
  nn_status st = NN_OK;
  if (!b->plan)
    return nn_error_set(err, NN_ERR_RUNTIME, "cpu: run before build");
  uint64_t *prof = b->prof_ns && b->prof_steps == b->plan->n_steps ? b->prof_ns : NULL;
  if (prof && b->prof_cold) {
    /* a plan's first run packs and transforms weights lazily: averaged in,
     * it doubled ResNet-50's per-node times over 20 runs */
    b->prof_cold = false;
    prof = NULL;
  }
  /* threads per step: calibrating (cpu_tune_mode), then each step as chosen */
  bool all_alone = false, chosen = false;
  uint64_t *tune = NULL;
  int whole = -1;
  if (b->tune_ns && b->tune_steps == b->plan->n_steps) {   /* a plan of no steps has none */
    const int every = b->tune_cals == 0   ? CPU_TUNE_FIRST
                      : b->tune_cals == 1 ? CPU_TUNE_SECOND
                                          : CPU_TUNE_EVERY;
    if (b->tune_run > NN_CPU_CALIBRATION_RUNS && ++b->tune_steady >= every) {
      /* calibrate again, from the first timed run: 12 runs both ways and
       * checked, as after a build */
      b->tune_steady = 0;
      b->tune_cals += b->tune_cals < 2;
      b->tune_run = 1;
      for (int k = 0; k < 2 * b->tune_steps; k++)
        b->tune_ns[k] = UINT64_MAX;
      b->check_ns[0] = b->check_ns[1] = b->check_ns[2] = UINT64_MAX;
    }
    if (b->tune_run <= NN_CPU_CALIBRATION_RUNS)
      b->tune_run++;   /* stops one past: the steady state */
    cpu_tune_mode(b, b->tune_run, &all_alone, &chosen, &tune, &whole);
    if (b->tune_run <= NN_CPU_CALIBRATION_RUNS)
      prof = NULL;   /* the profile is of the steady state */
  }
  nn_threadpool *pool = ctx->pool;
  uint64_t t0 = prof || tune ? cpu_now_ns() : 0;
  uint64_t t_run = whole >= 0 ? cpu_now_ns() : 0;
  for (int k = 0; k < b->plan->n_steps; k++) {
    nn_node *n = &b->g->nodes[b->plan->steps[k]];
    ctx->node = n;
    if (all_alone || (chosen && b->n_serial > 0 && b->serial[k]))
      ctx->pool = NULL;   /* nn_parallel_for and the GEMM engine run serially */
    st = n->kern->run(ctx, n);
    ctx->pool = pool;
    if (prof || tune) {
      uint64_t t1 = cpu_now_ns();
      if (prof)
        prof[k] += t1 - t0;
      if (tune && t1 - t0 < tune[k])
        tune[k] = t1 - t0;
      t0 = t1;
    }
    if (st != NN_OK) {
      if (err->msg[0] == '\0')
        nn_fail(ctx, st, "kernel failed (%s)", nn_status_str(st));
      break;
    }
  }
  ctx->node = NULL;
  if (prof && st == NN_OK)
    b->prof_runs++;
  if (whole >= 0 && st == NN_OK) {
    uint64_t t = cpu_now_ns() - t_run;
    if (t < b->check_ns[whole])
      b->check_ns[whole] = t;
  }
  if (b->tune_ns && b->tune_steps == b->plan->n_steps && st == NN_OK) {
    if (b->tune_run == 1 + 2 * CPU_TUNE_RUNS)
      cpu_tune_decide(b);
    else if (b->tune_run == NN_CPU_CALIBRATION_RUNS)
      cpu_tune_settle(b);
  }
  /* the run is over: workers sleep now instead of spinning for a next job,
   * so a stream costs no CPU between frames */
  nn_threadpool_park(pool);
  return st;
}

static void cpu_stats(const void *state, nn_backend_stats *st) {
  const cpu_backend *b = state;
  memset(st, 0, sizeof *st);
  st->nodes_host = b->plan ? b->plan->n_steps : 0;
  st->nodes_one_thread = b->n_serial;
  st->host_bytes = b->arena_cap;
}

static void cpu_destroy(void *state) {
  cpu_backend *b = state;
  if (!b)
    return;
  cpu_profile_flush(b);
  cpu_tune_drop(b);
  nn_aligned_free(b->arena);
  nn_free(b);
}

const nn_backend_iface nn_backend_cpu = {
  .name = "cpu",
  .kind = NN_BACKEND_CPU,
  .fusions = NN_FUSE_RESIDUAL | NN_FUSE_DW_PW | NN_FUSE_NORM_ACT | NN_FUSE_NORM_PW |
               NN_FUSE_CONCAT | NN_FUSE_MATMUL_ADD | NN_FUSE_QDQ,
  .create = cpu_create,
  .is_software = NULL,
  .supports_node = NULL,
  .before_plan = cpu_before_plan,
  .build = cpu_build,
  .run = cpu_run,
  .stats = cpu_stats,
  .destroy = cpu_destroy,
};

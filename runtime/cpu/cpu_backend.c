/* cpu_backend.c - the CPU backend behind backend.h: the planned steps run one
 * after the other through each node's op->run on the session's worker pool.
 *
 * It owns the arena (one host block, grown when a re-plan needs more, never
 * shrunk: a stream that alternates two shapes does not reallocate) and the
 * layout of the weights its kernels read (cpu_weights.c: GEMM A panels packed
 * once at build, restored to the ONNX layout before a re-plan).
 */
#include <string.h>

#include "backend.h"
#include "cpu/cpu_weights.h"
#include "threadpool.h"

typedef struct cpu_backend {
  void *arena;
  size_t arena_cap;
  nn_graph *g;          /* of the last successful build; NULL before */
  nn_plan *plan;
} cpu_backend;

static nn_status cpu_create(void **state, nn_error *err) {
  cpu_backend *b = nn_calloc(1, sizeof *b);
  if (!b)
    return nn_error_set(err, NN_ERR_NOMEM, "out of memory");
  *state = b;
  return NN_OK;
}

static nn_status cpu_before_plan(void *state, nn_graph *g, nn_error *err) {
  cpu_backend *b = state;
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
  (void)ctx;
  b->g = g;
  b->plan = plan;
  return NN_OK;
}

static nn_status cpu_run(void *state, nn_ctx *ctx, nn_error *err) {
  cpu_backend *b = state;
  nn_status st = NN_OK;
  if (!b->plan)
    return nn_error_set(err, NN_ERR_RUNTIME, "cpu: run before build");
  for (int k = 0; k < b->plan->n_steps; k++) {
    nn_node *n = &b->g->nodes[b->plan->steps[k]];
    ctx->node = n;
    st = n->op->run(ctx, n);
    if (st != NN_OK) {
      if (err->msg[0] == '\0')
        nn_fail(ctx, st, "kernel failed (%s)", nn_status_str(st));
      break;
    }
  }
  ctx->node = NULL;
  /* the run is over: workers sleep now instead of spinning for a next job,
   * so a stream costs no CPU between frames */
  nn_threadpool_park(ctx->pool);
  return st;
}

static void cpu_stats(const void *state, nn_backend_stats *st) {
  const cpu_backend *b = state;
  memset(st, 0, sizeof *st);
  st->nodes_host = b->plan ? b->plan->n_steps : 0;
  st->host_bytes = b->arena_cap;
}

static void cpu_destroy(void *state) {
  cpu_backend *b = state;
  if (!b)
    return;
  nn_aligned_free(b->arena);
  nn_free(b);
}

const nn_backend_iface nn_backend_cpu = {
  .name = "cpu",
  .kind = NN_BACKEND_CPU,
  .fusions = NN_FUSE_RESIDUAL | NN_FUSE_DW_PW,
  .create = cpu_create,
  .is_software = NULL,
  .supports_node = NULL,
  .before_plan = cpu_before_plan,
  .build = cpu_build,
  .run = cpu_run,
  .stats = cpu_stats,
  .destroy = cpu_destroy,
};

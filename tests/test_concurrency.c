/* test_concurrency.c - sessions in parallel threads.
 *
 * The runtime's contract (nn.h): one session is used by one thread at a
 * time, distinct sessions are independent.  This test holds it to that:
 *   - workers each own a session of the same model (created from one shared,
 *     read-only model buffer) and run it many times on varying inputs;
 *   - workers on different models, with per-session worker pools of 1 to 4
 *     threads (runtime/cpu/threadpool.c);
 *   - a churn thread creates, runs and disposes sessions the whole time,
 *     racing the others' runs;
 *   - a real model (shared/real-cases) joins when present.
 * Every output is compared with a reference computed single-threaded before
 * the threads start, and the runtime's live heap must come back to where it
 * was.  Built for the ThreadSanitizer run too (tools/sanitize.sh).
 *
 *   test-concurrency [RUNS]   runs per worker (default 400; valgrind uses fewer)
 */
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "model_builder.h"
#include "nn.h"

#define N_SEEDS 4

static atomic_int g_errors;

#define FAILF(...)                                \
  do {                                            \
    fprintf(stderr, "  FAIL: " __VA_ARGS__);      \
    atomic_fetch_add(&g_errors, 1);               \
  } while (0)

static const char *shared_dir(void) {
  const char *e = getenv("NN_SHARED_DIR");
  return e ? e : SHARED_DIR_DEFAULT;
}

/* ---- models ---------------------------------------------------------------------- */
static float frand(uint32_t *s) {
  *s = *s * 1664525u + 1013904223u;
  return (float)((*s >> 8) & 0xffff) / 65536.0f - 0.5f;
}

/* y = softmax(relu(x W1 + b1) W2): MatMuls large enough to be split over a
 * session's workers. */
static uint8_t *mlp_model(size_t *len) {
  enum { B = 16, D = 192, H = 160, O = 24 };
  static float w1[D * H], b1[H], w2[H * O];
  uint32_t s = 7;
  for (int i = 0; i < D * H; i++) w1[i] = frand(&s) * 0.2f;
  for (int i = 0; i < H; i++) b1[i] = frand(&s);
  for (int i = 0; i < H * O; i++) w2[i] = frand(&s) * 0.2f;
  mb m;
  mb_init(&m, 13);
  mb_input(&m, "x", NN_DTYPE_FLOAT, 2, (int64_t[]){B, D});
  mb_init_f32(&m, "w1", 2, (int64_t[]){D, H}, w1);
  mb_init_f32(&m, "b1", 1, (int64_t[]){H}, b1);
  mb_init_f32(&m, "w2", 2, (int64_t[]){H, O}, w2);
  mb_node(&m, "MatMul", "mm1", "x,w1", "h0");
  mb_node(&m, "Add", "add1", "h0,b1", "h1");
  mb_node(&m, "Relu", "relu1", "h1", "h2");
  mb_node(&m, "MatMul", "mm2", "h2,w2", "h3");
  OnnxSubset__NodeProto *sm = mb_node(&m, "Softmax", "sm", "h3", "y");
  mb_attr_int(&m, sm, "axis", -1);
  mb_output(&m, "y");
  uint8_t *buf = mb_pack(&m, len);
  mb_free(&m);
  return buf;
}

/* y = GlobalAveragePool(relu(conv(x, W, b))): the conv kernels' threaded
 * paths. */
static uint8_t *conv_model(size_t *len) {
  enum { C = 3, M = 16, K = 3, HW = 40 };
  static float w[M * C * K * K], b[M];
  uint32_t s = 11;
  for (int i = 0; i < M * C * K * K; i++) w[i] = frand(&s) * 0.5f;
  for (int i = 0; i < M; i++) b[i] = frand(&s);
  mb m;
  mb_init(&m, 13);
  mb_input(&m, "x", NN_DTYPE_FLOAT, 4, (int64_t[]){1, C, HW, HW});
  mb_init_f32(&m, "w", 4, (int64_t[]){M, C, K, K}, w);
  mb_init_f32(&m, "b", 1, (int64_t[]){M}, b);
  mb_node(&m, "Conv", "conv", "x,w,b", "c");
  mb_node(&m, "Relu", "relu", "c", "r");
  mb_node(&m, "GlobalAveragePool", "gap", "r", "y");
  mb_output(&m, "y");
  uint8_t *buf = mb_pack(&m, len);
  mb_free(&m);
  return buf;
}

typedef struct model {
  const char *name;
  uint8_t *buf;                 /* serialized model (read-only once threads run) */
  size_t len;
  const char *path;             /* or a file */
  int64_t in_elems, out_elems;
  float *ref[N_SEEDS];          /* expected output 0 per input seed */
} model;

static nn_status model_create(const model *md, int threads, nn_session **s) {
  nn_options o;
  nn_options_init(&o);
  o.threads = threads;
  nn_error err;
  nn_status st = md->path ? nn_session_create_from_file(md->path, &o, s, &err)
                          : nn_session_create_from_memory(md->buf, md->len, &o, s, &err);
  if (st != NN_OK)
    FAILF("%s: create (threads %d): %s\n", md->name, threads, err.msg);
  return st;
}

static void fill_input(nn_tensor *t, int seed) {
  uint32_t s = 1000u + (uint32_t)seed * 7919u;
  float *f = t->data;
  int64_t n = nn_tensor_numel(t);
  for (int64_t i = 0; i < n; i++)
    f[i] = frand(&s) * 2.0f;
}

/* Run once on input `seed`; out receives output 0 (out_elems floats). */
static nn_status run_seed(nn_session *s, const model *md, int seed, float *out) {
  nn_tensor *in;
  nn_status st = nn_session_input_tensor(s, 0, &in);
  if (st != NN_OK)
    return st;
  fill_input(in, seed);
  if ((st = nn_session_run(s)) != NN_OK)
    return st;
  const nn_tensor *y;
  if ((st = nn_session_output_tensor(s, 0, &y)) != NN_OK)
    return st;
  if (nn_tensor_numel(y) != md->out_elems || y->dtype != NN_DTYPE_FLOAT)
    return NN_ERR_SHAPE;
  memcpy(out, y->data, (size_t)md->out_elems * sizeof(float));
  return NN_OK;
}

/* Threaded kernels may sum in another order: compare with a tolerance. */
static bool close_enough(const float *got, const float *want, int64_t n, float *worst) {
  *worst = 0;
  for (int64_t i = 0; i < n; i++) {
    float e = fabsf(got[i] - want[i]);
    if (!(e <= 1e-4f + 1e-4f * fabsf(want[i]))) {
      *worst = e;
      return false;
    }
  }
  return true;
}

static bool model_prepare(model *md) {
  nn_session *s;
  if (model_create(md, 1, &s) != NN_OK)
    return false;
  nn_tensor *in;
  const nn_tensor *y;
  bool ok = nn_session_input_tensor(s, 0, &in) == NN_OK && nn_session_run(s) == NN_OK &&
            nn_session_output_tensor(s, 0, &y) == NN_OK;
  if (ok) {
    md->in_elems = nn_tensor_numel(in);
    md->out_elems = nn_tensor_numel(y);
    for (int k = 0; k < N_SEEDS && ok; k++) {
      md->ref[k] = malloc((size_t)md->out_elems * sizeof(float));
      ok = md->ref[k] && run_seed(s, md, k, md->ref[k]) == NN_OK;
    }
  }
  if (!ok)
    FAILF("%s: reference run failed: %s\n", md->name, nn_session_last_error(s));
  nn_session_free(s);
  /* the references must differ, or the comparison would prove little */
  if (ok && memcmp(md->ref[0], md->ref[1], (size_t)md->out_elems * sizeof(float)) == 0) {
    FAILF("%s: outputs do not depend on the input\n", md->name);
    ok = false;
  }
  return ok;
}

/* ---- threads ------------------------------------------------------------------------ */
typedef struct worker {
  const model *md;
  int threads;
  int runs;
  int id;
  int done;
} worker;

static void *worker_main(void *arg) {
  worker *w = arg;
  nn_session *s;
  if (model_create(w->md, w->threads, &s) != NN_OK)
    return NULL;
  float *out = malloc((size_t)w->md->out_elems * sizeof(float));
  for (int r = 0; r < w->runs && out; r++) {
    int seed = (r + w->id) % N_SEEDS;
    nn_status st = run_seed(s, w->md, seed, out);
    float worst;
    if (st != NN_OK) {
      FAILF("%s worker %d (threads %d) run %d: %s: %s\n", w->md->name, w->id, w->threads, r,
            nn_status_str(st), nn_session_last_error(s));
      break;
    }
    if (!close_enough(out, w->md->ref[seed], w->md->out_elems, &worst)) {
      FAILF("%s worker %d (threads %d) run %d: output differs from the reference by %g\n",
            w->md->name, w->id, w->threads, r, worst);
      break;
    }
    w->done++;
  }
  free(out);
  nn_session_free(s);
  return NULL;
}

typedef struct churn {
  const model *models;
  int n_models;
  atomic_int *stop;
  int cycles;
} churn;

/* Create, run once, dispose, over and over, while the workers run. */
static void *churn_main(void *arg) {
  churn *c = arg;
  float *out = NULL;
  size_t cap = 0;
  for (int i = 0; !atomic_load(c->stop); i++) {
    const model *md = &c->models[i % c->n_models];
    if ((size_t)md->out_elems > cap) {
      free(out);
      cap = (size_t)md->out_elems;
      out = malloc(cap * sizeof(float));
    }
    nn_session *s;
    if (model_create(md, 1 + i % 4, &s) != NN_OK)
      break;
    int seed = i % N_SEEDS;
    float worst;
    nn_status st = run_seed(s, md, seed, out);
    if (st != NN_OK)
      FAILF("churn %s cycle %d: %s\n", md->name, i, nn_session_last_error(s));
    else if (!close_enough(out, md->ref[seed], md->out_elems, &worst))
      FAILF("churn %s cycle %d: output differs by %g\n", md->name, i, worst);
    /* dispose and free separately: the disposed handle must still answer */
    nn_session_dispose(s);
    if (nn_session_run(s) != NN_ERR_DISPOSED)
      FAILF("churn: run after dispose did not return NN_ERR_DISPOSED\n");
    nn_session_free(s);
    c->cycles++;
  }
  free(out);
  return NULL;
}

int main(int argc, char **argv) {
  int runs = argc > 1 ? atoi(argv[1]) : 400;
  if (runs < 1)
    runs = 1;
  size_t base;
  nn_memory_usage(&base, NULL);

  model models[3];
  memset(models, 0, sizeof models);
  models[0].name = "mlp";
  models[0].buf = mlp_model(&models[0].len);
  models[1].name = "conv";
  models[1].buf = conv_model(&models[1].len);
  int n_models = 2;
  char real[1024];
  snprintf(real, sizeof real, "%s/real-cases/blazeface_front_128/model.onnx", shared_dir());
  if (access(real, R_OK) == 0) {
    models[2].name = "blazeface";
    models[2].path = real;
    n_models = 3;
  } else {
    printf("note: %s not found: the real-model worker is left out\n", real);
  }
  for (int i = 0; i < n_models; i++)
    if (!model_prepare(&models[i])) {
      printf("0 passed, 1 failed, 0 skipped\n");
      return 1;
    }

  /* same model x4 (threads 1, 1, 2, 3), other model x2 (threads 2, 4), the
   * real model (threads 2, fewer runs: it is 100x the work) */
  worker ws[8];
  int nw = 0;
  const int mlp_threads[] = {1, 1, 2, 3};
  for (int i = 0; i < 4; i++)
    ws[nw++] = (worker){&models[0], mlp_threads[i], runs, nw, 0};
  ws[nw++] = (worker){&models[1], 2, runs, nw, 0};
  ws[nw++] = (worker){&models[1], 4, runs, nw, 0};
  if (n_models == 3)
    ws[nw++] = (worker){&models[2], 2, runs / 10 + 1, nw, 0};
  atomic_int stop = 0;
  churn ch = {models, n_models, &stop, 0};
  pthread_t tids[8], churn_tid;
  if (pthread_create(&churn_tid, NULL, churn_main, &ch) != 0) {
    fprintf(stderr, "cannot start threads\n");
    return 1;
  }
  for (int i = 0; i < nw; i++)
    pthread_create(&tids[i], NULL, worker_main, &ws[i]);
  for (int i = 0; i < nw; i++)
    pthread_join(tids[i], NULL);
  atomic_store(&stop, 1);
  pthread_join(churn_tid, NULL);

  int total = 0;
  for (int i = 0; i < nw; i++) {
    total += ws[i].done;
    if (ws[i].done != ws[i].runs)
      FAILF("worker %d (%s) finished %d of %d runs\n", i, ws[i].md->name, ws[i].done, ws[i].runs);
  }
  if (ch.cycles < 1)
    FAILF("the churn thread completed no cycle\n");
  printf("%d workers, %d runs checked, %d create/run/dispose cycles raced them\n", nw, total, ch.cycles);

  for (int i = 0; i < n_models; i++) {
    free(models[i].buf);
    for (int k = 0; k < N_SEEDS; k++)
      free(models[i].ref[k]);
  }
  size_t after;
  nn_memory_usage(&after, NULL);
  if (after != base)
    FAILF("runtime heap: %zu bytes live after all sessions were freed (started at %zu)\n", after, base);
  int errors = atomic_load(&g_errors);
  printf("%d passed, %d failed, 0 skipped\n", errors ? 0 : 1, errors ? 1 : 0);
  return errors ? 1 : 0;
}

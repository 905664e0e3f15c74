/* test_runtime.c - session API, memory rules and bad-input handling.
 *
 * Every test checks real values, and that the runtime's live heap (counted
 * by nn_memory_usage) returns to where it started: nothing leaks, on success
 * or on any error path.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "backend.h"
#include "include/nn_tool.h"
#include "model_builder.h"
#include "nn.h"
#include "threadpool.h"
#include <stdatomic.h>
#include <sys/resource.h>
#include <time.h>

static int g_failed, g_passed, g_skipped;
static int t_failed;

#define CHECK(cond)                                                                   \
  do {                                                                                \
    if (!(cond)) {                                                                    \
      fprintf(stderr, "  %s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond);       \
      t_failed = 1;                                                                   \
    }                                                                                 \
  } while (0)
#define CHECK_ST(expr, want)                                                          \
  do {                                                                                \
    nn_status _st = (expr);                                                           \
    if (_st != (want)) {                                                              \
      fprintf(stderr, "  %s:%d: %s returned %s, expected %s\n", __FILE__, __LINE__,   \
              #expr, nn_status_str(_st), nn_status_str(want));                        \
      t_failed = 1;                                                                   \
    }                                                                                 \
  } while (0)

static const char *shared_dir(void) {
  const char *e = getenv("NN_SHARED_DIR");
  return e ? e : SHARED_DIR_DEFAULT;
}

static size_t live_bytes(void) {
  size_t cur;
  nn_memory_usage(&cur, NULL);
  return cur;
}

/* ---- counting allocator ------------------------------------------------------- */
static long g_allocs;
static void *count_malloc(size_t n, void *ud) { (void)ud; g_allocs++; return malloc(n); }
static void *count_realloc(void *p, size_t n, void *ud) { (void)ud; g_allocs++; return realloc(p, n); }
static void count_free(void *p, void *ud) { (void)ud; free(p); }

/* ---- helpers ------------------------------------------------------------------- */
static uint8_t *relu_model(size_t *len, int dynamic) {
  mb m;
  mb_init(&m, 13);
  int64_t dims[2] = {dynamic ? -1 : 2, 3};
  mb_input(&m, "x", NN_DTYPE_FLOAT, 2, dims);
  mb_node(&m, "Relu", "relu0", "x", "h");
  mb_node(&m, "Relu", "relu1", "h", "y");
  mb_output(&m, "y");
  uint8_t *buf = mb_pack(&m, len);
  mb_free(&m);
  return buf;
}

static nn_status create_mem(const uint8_t *buf, size_t len, nn_session **s, nn_error *err) {
  nn_options o;
  nn_options_init(&o);
  return nn_session_create_from_memory(buf, len, &o, s, err);
}

/* ---- tests ---------------------------------------------------------------------- */
static void test_run_basic(void) {
  size_t base = live_bytes();
  size_t len;
  uint8_t *buf = relu_model(&len, 0);
  nn_session *s = NULL;
  nn_error err;
  CHECK_ST(create_mem(buf, len, &s, &err), NN_OK);
  free(buf);
  if (!s)
    return;
  int ni, no;
  CHECK_ST(nn_session_io_count(s, &ni, &no), NN_OK);
  CHECK(ni == 1 && no == 1);
  nn_io_info info;
  CHECK_ST(nn_session_input_info(s, 0, &info), NN_OK);
  CHECK(strcmp(info.name, "x") == 0 && info.rank == 2 && info.dims[0] == 2 && info.dims[1] == 3);
  /* a run before the input is provided is an error, not garbage */
  CHECK_ST(nn_session_run(s), NN_ERR_MISSING_INPUT);
  CHECK(strstr(nn_session_last_error(s), "'x'") != NULL);
  nn_tensor *in;
  CHECK_ST(nn_session_input_tensor(s, 0, &in), NN_OK);
  float src[6] = {-1, 2, -3, 4, -5, 6};
  memcpy(in->data, src, sizeof src);
  CHECK_ST(nn_session_run(s), NN_OK);
  const nn_tensor *out;
  CHECK_ST(nn_session_output_tensor(s, 0, &out), NN_OK);
  const float want[6] = {0, 2, 0, 4, 0, 6};
  CHECK(out->dtype == NN_DTYPE_FLOAT && out->rank == 2 && out->nbytes == sizeof want);
  CHECK(memcmp(out->data, want, sizeof want) == 0);
  /* zero-copy input and caller-provided output */
  float mine[6] = {1, -1, 1, -1, 1, -1}, res[6] = {0};
  nn_tensor tin = {NN_DTYPE_FLOAT, 2, {2, 3}, mine, sizeof mine};
  nn_tensor tout = {NN_DTYPE_FLOAT, 2, {2, 3}, res, sizeof res};
  CHECK_ST(nn_session_bind_input(s, 0, &tin), NN_OK);
  CHECK_ST(nn_session_bind_output(s, 0, &tout), NN_OK);
  CHECK_ST(nn_session_run(s), NN_OK);
  CHECK(res[0] == 1 && res[1] == 0 && res[4] == 1 && res[5] == 0);
  CHECK_ST(nn_session_output_tensor(s, 0, &out), NN_OK);
  CHECK(out->data == res);
  /* wrong dtype / shape are refused with a message */
  int32_t ints[6];
  nn_tensor bad_dt = {NN_DTYPE_INT32, 2, {2, 3}, ints, sizeof ints};
  CHECK_ST(nn_session_bind_input(s, 0, &bad_dt), NN_ERR_DTYPE);
  CHECK(strstr(nn_session_last_error(s), "float32") != NULL);
  nn_tensor bad_shape = {NN_DTYPE_FLOAT, 2, {3, 2}, mine, sizeof mine};
  CHECK_ST(nn_session_bind_input(s, 0, &bad_shape), NN_ERR_SHAPE);
  CHECK(strstr(nn_session_last_error(s), "2x3") != NULL);
  nn_tensor bad_rank = {NN_DTYPE_FLOAT, 1, {6}, mine, sizeof mine};
  CHECK_ST(nn_session_bind_input(s, 0, &bad_rank), NN_ERR_SHAPE);
  CHECK_ST(nn_session_set_input_shape(s, 0, 2, (int64_t[]){4, 3}), NN_ERR_SHAPE);
  /* a bound output of the wrong size fails the run cleanly */
  nn_tensor small = {NN_DTYPE_FLOAT, 1, {2}, res, 2 * sizeof(float)};
  CHECK_ST(nn_session_bind_output(s, 0, &small), NN_OK);
  CHECK_ST(nn_session_run(s), NN_ERR_SHAPE);
  CHECK_ST(nn_session_bind_output(s, 0, NULL), NN_OK);
  CHECK_ST(nn_session_run(s), NN_OK);
  nn_session_free(s);
  CHECK(live_bytes() == base);
}

static void test_dispose(void) {
  size_t base = live_bytes();
  size_t len;
  uint8_t *buf = relu_model(&len, 0);
  nn_session *s = NULL;
  CHECK_ST(create_mem(buf, len, &s, NULL), NN_OK);
  free(buf);
  if (!s)
    return;
  nn_tensor *in;
  CHECK_ST(nn_session_input_tensor(s, 0, &in), NN_OK);
  CHECK_ST(nn_session_run(s), NN_OK);
  nn_stats st;
  CHECK_ST(nn_session_stats(s, &st), NN_OK);
  CHECK(st.io_bytes > 0 && st.runs == 1);
  CHECK_ST(nn_session_dispose(s), NN_OK);
  /* everything released but the handle */
  CHECK(live_bytes() - base < 4096);
  const nn_tensor *out;
  int ni;
  nn_io_info info;
  CHECK_ST(nn_session_run(s), NN_ERR_DISPOSED);
  CHECK_ST(nn_session_input_tensor(s, 0, &in), NN_ERR_DISPOSED);
  CHECK_ST(nn_session_output_tensor(s, 0, &out), NN_ERR_DISPOSED);
  CHECK_ST(nn_session_io_count(s, &ni, NULL), NN_ERR_DISPOSED);
  CHECK_ST(nn_session_input_info(s, 0, &info), NN_ERR_DISPOSED);
  CHECK_ST(nn_session_stats(s, &st), NN_ERR_DISPOSED);
  CHECK_ST(nn_session_set_input_shape(s, 0, 2, (int64_t[]){2, 3}), NN_ERR_DISPOSED);
  CHECK_ST(nn_session_bind_input(s, 0, NULL), NN_ERR_DISPOSED);
  CHECK_ST(nn_session_dispose(s), NN_ERR_DISPOSED);
  CHECK(strstr(nn_session_last_error(s), "disposed") != NULL);
  nn_session_free(s);
  nn_session_free(NULL);
  CHECK(live_bytes() == base);
}

static void test_dynamic_shape(void) {
  size_t base = live_bytes();
  size_t len;
  uint8_t *buf = relu_model(&len, 1);
  nn_session *s = NULL;
  CHECK_ST(create_mem(buf, len, &s, NULL), NN_OK);
  free(buf);
  if (!s)
    return;
  nn_tensor *in;
  CHECK_ST(nn_session_input_tensor(s, 0, &in), NN_ERR_SHAPE); /* N not fixed yet */
  CHECK(strstr(nn_session_last_error(s), "set_input_shape") != NULL);
  for (int64_t n = 1; n <= 5; n++) {
    CHECK_ST(nn_session_set_input_shape(s, 0, 2, (int64_t[]){n, 3}), NN_OK);
    CHECK_ST(nn_session_input_tensor(s, 0, &in), NN_OK);
    for (int64_t i = 0; i < n * 3; i++)
      ((float *)in->data)[i] = (float)(i % 2 ? i : -i);
    CHECK_ST(nn_session_run(s), NN_OK);
    const nn_tensor *out;
    CHECK_ST(nn_session_output_tensor(s, 0, &out), NN_OK);
    CHECK(out->dims[0] == n && out->nbytes == (size_t)n * 12);
    for (int64_t i = 0; i < n * 3; i++)
      CHECK(((float *)out->data)[i] == (float)(i % 2 ? i : 0));
  }
  nn_session_free(s);
  CHECK(live_bytes() == base);
}

/* An input with an initializer is optional: the default is used until fed. */
static void test_default_input(void) {
  size_t base = live_bytes();
  mb m;
  mb_init(&m, 13);
  mb_input(&m, "x", NN_DTYPE_FLOAT, 1, (int64_t[]){3});
  mb_input(&m, "b", NN_DTYPE_FLOAT, 1, (int64_t[]){3});
  mb_init_f32(&m, "b", 1, (int64_t[]){3}, (float[]){10, 20, 30});
  mb_node(&m, "Add", "add", "x,b", "y");
  mb_output(&m, "y");
  size_t len;
  uint8_t *buf = mb_pack(&m, &len);
  mb_free(&m);
  nn_session *s = NULL;
  CHECK_ST(create_mem(buf, len, &s, NULL), NN_OK);
  free(buf);
  if (!s)
    return;
  nn_io_info info;
  CHECK_ST(nn_session_input_info(s, 1, &info), NN_OK);
  CHECK(info.has_default == 1 && strcmp(info.name, "b") == 0);
  nn_tensor *x, *b;
  CHECK_ST(nn_session_input_tensor(s, 0, &x), NN_OK);
  memcpy(x->data, (float[]){1, 2, 3}, 12);
  CHECK_ST(nn_session_run(s), NN_OK);
  const nn_tensor *out;
  CHECK_ST(nn_session_output_tensor(s, 0, &out), NN_OK);
  CHECK(((float *)out->data)[0] == 11 && ((float *)out->data)[2] == 33);
  CHECK_ST(nn_session_input_tensor(s, 1, &b), NN_OK);
  CHECK(((float *)b->data)[1] == 20); /* starts from the default */
  memcpy(b->data, (float[]){100, 200, 300}, 12);
  CHECK_ST(nn_session_run(s), NN_OK);
  CHECK_ST(nn_session_output_tensor(s, 0, &out), NN_OK);
  CHECK(((float *)out->data)[0] == 101 && ((float *)out->data)[2] == 303);
  CHECK_ST(nn_session_reset_input(s, 1), NN_OK);
  CHECK_ST(nn_session_run(s), NN_OK);
  CHECK_ST(nn_session_output_tensor(s, 0, &out), NN_OK);
  CHECK(((float *)out->data)[1] == 22);
  nn_session_free(s);
  CHECK(live_bytes() == base);
}

/* A model must fail with `want`, a message containing each of `needles`,
 * and leave nothing behind. */
static void expect_create_error(const uint8_t *buf, size_t len, nn_status want, const char *n1,
                                const char *n2) {
  size_t base = live_bytes();
  nn_session *s = (nn_session *)0x1;
  nn_error err;
  nn_status st = create_mem(buf, len, &s, &err);
  CHECK(st == want);
  if (st != want)
    fprintf(stderr, "  got %s (%s), expected %s\n", nn_status_str(st), err.msg, nn_status_str(want));
  CHECK(s == NULL);
  CHECK(err.status == want);
  CHECK(err.msg[0] != '\0');
  if (n1 && !strstr(err.msg, n1)) {
    fprintf(stderr, "  message '%s' lacks '%s'\n", err.msg, n1);
    t_failed = 1;
  }
  if (n2 && !strstr(err.msg, n2)) {
    fprintf(stderr, "  message '%s' lacks '%s'\n", err.msg, n2);
    t_failed = 1;
  }
  CHECK(live_bytes() == base);
}

static void test_bad_files(void) {
  size_t base = live_bytes();
  nn_error err;
  nn_session *s = NULL;
  CHECK_ST(nn_session_create_from_file("/nonexistent/model.onnx", NULL, &s, &err), NN_ERR_IO);
  CHECK(strstr(err.msg, "/nonexistent/model.onnx' does not exist") != NULL && s == NULL);
  CHECK_ST(nn_session_create_from_file("/tmp", NULL, &s, &err), NN_ERR_IO);
  /* zero bytes */
  expect_create_error((const uint8_t *)"", 0, NN_ERR_PARSE, "empty", NULL);
  /* random bytes: must never crash; most do not decode */
  uint64_t x = 88172645463325252ull;
  for (int trial = 0; trial < 200; trial++) {
    uint8_t junk[512];
    size_t n = 1 + (size_t)(trial * 37 % 511);
    for (size_t i = 0; i < n; i++) {
      x ^= x << 13;
      x ^= x >> 7;
      x ^= x << 17;
      junk[i] = (uint8_t)x;
    }
    size_t b0 = live_bytes();
    nn_status st = create_mem(junk, n, &s, &err);
    CHECK(st != NN_OK && s == NULL);
    CHECK(live_bytes() == b0);
  }
  /* truncations of a valid model at many points */
  size_t len;
  uint8_t *buf = relu_model(&len, 0);
  for (size_t cut = 1; cut < len; cut++) {
    size_t b0 = live_bytes();
    nn_status st = create_mem(buf, cut, &s, &err);
    if (st == NN_OK)
      nn_session_free(s); /* a prefix can be a smaller valid message */
    else
      CHECK(s == NULL);
    CHECK(live_bytes() == b0);
  }
  free(buf);
  CHECK(live_bytes() == base);
}

static void test_bad_graphs(void) {
  mb m;
  size_t len;
  uint8_t *buf;
  /* a cycle: a -> b -> a */
  mb_init(&m, 13);
  mb_input(&m, "x", NN_DTYPE_FLOAT, 1, (int64_t[]){4});
  mb_node(&m, "Add", "add_a", "x,b", "a");
  mb_node(&m, "Relu", "relu_b", "a", "b");
  mb_output(&m, "b");
  buf = mb_pack(&m, &len);
  mb_free(&m);
  expect_create_error(buf, len, NN_ERR_INVALID_MODEL, "cycle", NULL);
  free(buf);
  /* an input that nothing produces */
  mb_init(&m, 13);
  mb_input(&m, "x", NN_DTYPE_FLOAT, 1, (int64_t[]){4});
  mb_node(&m, "Add", "add0", "x,ghost", "y");
  mb_output(&m, "y");
  buf = mb_pack(&m, &len);
  mb_free(&m);
  expect_create_error(buf, len, NN_ERR_INVALID_MODEL, "'ghost'", "'add0'");
  free(buf);
  /* an unsupported operator: the message names the op and the node */
  mb_init(&m, 13);
  mb_input(&m, "x", NN_DTYPE_FLOAT, 1, (int64_t[]){4});
  mb_node(&m, "FrobnicateTensor", "frob7", "x", "y");
  mb_output(&m, "y");
  buf = mb_pack(&m, &len);
  mb_free(&m);
  expect_create_error(buf, len, NN_ERR_UNSUPPORTED, "FrobnicateTensor", "'frob7'");
  free(buf);
  /* an opset newer than we know */
  mb_init(&m, 99);
  mb_input(&m, "x", NN_DTYPE_FLOAT, 1, (int64_t[]){4});
  mb_node(&m, "Relu", "r", "x", "y");
  mb_output(&m, "y");
  buf = mb_pack(&m, &len);
  mb_free(&m);
  expect_create_error(buf, len, NN_ERR_UNSUPPORTED, "opset 99", NULL);
  free(buf);
  /* a value produced twice */
  mb_init(&m, 13);
  mb_input(&m, "x", NN_DTYPE_FLOAT, 1, (int64_t[]){4});
  mb_node(&m, "Relu", "r1", "x", "y");
  mb_node(&m, "Relu", "r2", "x", "y");
  mb_output(&m, "y");
  buf = mb_pack(&m, &len);
  mb_free(&m);
  expect_create_error(buf, len, NN_ERR_INVALID_MODEL, "produced twice", NULL);
  free(buf);
  /* an output nobody produces */
  mb_init(&m, 13);
  mb_input(&m, "x", NN_DTYPE_FLOAT, 1, (int64_t[]){4});
  mb_node(&m, "Relu", "r1", "x", "y");
  mb_output(&m, "z");
  buf = mb_pack(&m, &len);
  mb_free(&m);
  expect_create_error(buf, len, NN_ERR_INVALID_MODEL, "'z'", NULL);
  free(buf);
}

static void test_hostile_dims(void) {
  mb m;
  size_t len;
  uint8_t *buf;
  /* initializer dims whose product overflows int64 */
  mb_init(&m, 13);
  mb_input(&m, "x", NN_DTYPE_FLOAT, 1, (int64_t[]){4});
  mb_init_f32(&m, "w", 3, (int64_t[]){1ll << 40, 1ll << 40, 1ll << 40}, NULL);
  mb_node(&m, "Add", "add0", "x,w", "y");
  mb_output(&m, "y");
  buf = mb_pack(&m, &len);
  mb_free(&m);
  expect_create_error(buf, len, NN_ERR_LIMIT, "'w'", "overflow");
  free(buf);
  /* an input whose declared shape is absurd */
  mb_init(&m, 13);
  mb_input(&m, "x", NN_DTYPE_FLOAT, 3, (int64_t[]){1ll << 31, 1ll << 31, 4});
  mb_node(&m, "Relu", "r", "x", "y");
  mb_output(&m, "y");
  buf = mb_pack(&m, &len);
  mb_free(&m);
  expect_create_error(buf, len, NN_ERR_LIMIT, "'x'", NULL);
  free(buf);
  /* more elements than a raw_data/float_data holds */
  mb_init(&m, 13);
  mb_input(&m, "x", NN_DTYPE_FLOAT, 1, (int64_t[]){4});
  OnnxSubset__TensorProto *t = mb_init_f32(&m, "w", 1, (int64_t[]){4}, (float[]){1, 2, 3, 4});
  t->n_float_data = 3;
  mb_node(&m, "Add", "add0", "x,w", "y");
  mb_output(&m, "y");
  buf = mb_pack(&m, &len);
  mb_free(&m);
  expect_create_error(buf, len, NN_ERR_INVALID_MODEL, "'w'", NULL);
  free(buf);
  /* a limit set by the application */
  mb_init(&m, 13);
  mb_input(&m, "x", NN_DTYPE_FLOAT, 1, (int64_t[]){1000});
  mb_node(&m, "Relu", "r", "x", "y");
  mb_output(&m, "y");
  buf = mb_pack(&m, &len);
  mb_free(&m);
  nn_options o;
  nn_options_init(&o);
  o.limits.max_tensor_elems = 100;
  nn_session *s = NULL;
  nn_error err;
  size_t base = live_bytes();
  CHECK_ST(nn_session_create_from_memory(buf, len, &o, &s, &err), NN_ERR_LIMIT);
  CHECK(s == NULL && live_bytes() == base);
  free(buf);
}

static void write_file(const char *path, const void *data, size_t n) {
  FILE *f = fopen(path, "wb");
  if (f) {
    fwrite(data, 1, n, f);
    fclose(f);
  }
}

static void test_external_data(void) {
  char dir[] = "/tmp/nn-ext-XXXXXX";
  if (!mkdtemp(dir)) {
    fprintf(stderr, "  mkdtemp: %s\n", strerror(errno));
    t_failed = 1;
    return;
  }
  char path[256], model[256], outside[256], link[256];
  float w[4] = {1, 2, 3, 4};
  snprintf(path, sizeof path, "%s/weights.bin", dir);
  float padded[6] = {99, 1, 2, 3, 4, 99};
  write_file(path, padded, sizeof padded);
  snprintf(outside, sizeof outside, "%s-outside.bin", dir);
  write_file(outside, w, sizeof w);
  snprintf(link, sizeof link, "%s/escape.bin", dir);
  if (symlink(outside, link) != 0)
    t_failed = 1;
  const char *locations[] = {"weights.bin", "../outside.bin", "/etc/passwd", "escape.bin", "sub/../../x",
                             "missing.bin"};
  nn_status want[] = {NN_OK, NN_ERR_INVALID_MODEL, NN_ERR_INVALID_MODEL, NN_ERR_INVALID_MODEL,
                      NN_ERR_INVALID_MODEL, NN_ERR_IO};
  for (int k = 0; k < 6; k++) {
    mb m;
    mb_init(&m, 13);
    mb_input(&m, "x", NN_DTYPE_FLOAT, 1, (int64_t[]){4});
    OnnxSubset__TensorProto *t = mb_init_f32(&m, "w", 1, (int64_t[]){4}, NULL);
    mb_external(&m, t, locations[k], 4, 16);
    mb_node(&m, "Add", "add0", "x,w", "y");
    mb_output(&m, "y");
    size_t len;
    uint8_t *buf = mb_pack(&m, &len);
    mb_free(&m);
    snprintf(model, sizeof model, "%s/model.onnx", dir);
    write_file(model, buf, len);
    size_t base = live_bytes();
    nn_session *s = NULL;
    nn_error err;
    nn_status st = nn_session_create_from_file(model, NULL, &s, &err);
    if (st != want[k])
      fprintf(stderr, "  location '%s': %s (%s)\n", locations[k], nn_status_str(st), err.msg);
    CHECK(st == want[k]);
    if (st == NN_OK) {
      nn_tensor *x;
      CHECK_ST(nn_session_input_tensor(s, 0, &x), NN_OK);
      memset(x->data, 0, 16);
      CHECK_ST(nn_session_run(s), NN_OK);
      const nn_tensor *out;
      CHECK_ST(nn_session_output_tensor(s, 0, &out), NN_OK);
      CHECK(memcmp(out->data, w, sizeof w) == 0);
      nn_session_free(s);
    } else {
      CHECK(strstr(err.msg, "'w'") != NULL);
    }
    /* from memory without base_dir, external data is refused */
    if (k == 0) {
      st = create_mem(buf, len, &s, &err);
      CHECK(st == NN_ERR_INVALID_MODEL && strstr(err.msg, "base_dir"));
    }
    free(buf);
    CHECK(live_bytes() == base);
  }
  unlink(link);
  unlink(outside);
  unlink(path);
  unlink(model);
  rmdir(dir);
}

/* ---- weights straight from the file (loader.c: nn_graph_load_fd) ---------------------- */
enum { WF_N = 2000 };

/* y = (x + w1) * w3 + w2: w1 a raw_data of WF_N floats (read out of the wire
 * when loaded from a file), w2 a small raw_data, w3 float_data.  raw1_len
 * bytes of w1 given (WF_N * 4 normally). */
static uint8_t *wf_model(size_t raw1_len, size_t *len) {
  static float w1[WF_N + 1], w3[WF_N], w2[1] = {0.5f};
  for (int i = 0; i <= WF_N; i++)
    w1[i] = (float)i * 0.25f;
  for (int i = 0; i < WF_N; i++)
    w3[i] = (float)(i % 7) - 3.0f;
  mb m;
  mb_init(&m, 13);
  mb_input(&m, "x", NN_DTYPE_FLOAT, 1, (int64_t[]){WF_N});
  OnnxSubset__TensorProto *t1 = mb_init_f32(&m, "w1", 1, (int64_t[]){WF_N}, NULL);
  t1->has_raw_data = 1;
  t1->raw_data.data = (uint8_t *)w1;
  t1->raw_data.len = raw1_len;
  OnnxSubset__TensorProto *t2 = mb_init_f32(&m, "w2", 1, (int64_t[]){1}, NULL);
  t2->has_raw_data = 1;
  t2->raw_data.data = (uint8_t *)w2;
  t2->raw_data.len = sizeof w2;
  mb_init_f32(&m, "w3", 1, (int64_t[]){WF_N}, w3);
  mb_node(&m, "Add", "a", "x,w1", "s");
  mb_node(&m, "Mul", "m", "s,w3", "p");
  mb_node(&m, "Add", "b", "p,w2", "y");
  mb_output(&m, "y");
  uint8_t *buf = mb_pack(&m, len);
  mb_free(&m);
  return buf;
}

/* Runs a session on x[i] = i and copies y out; false when it fails. */
static bool wf_run(nn_session *s, float *y) {
  nn_tensor *x;
  const nn_tensor *out;
  if (nn_session_input_tensor(s, 0, &x) != NN_OK)
    return false;
  for (int i = 0; i < WF_N; i++)
    ((float *)x->data)[i] = (float)i;
  if (nn_session_run(s) != NN_OK || nn_session_output_tensor(s, 0, &out) != NN_OK)
    return false;
  memcpy(y, out->data, sizeof(float) * WF_N);
  return true;
}

/* The file path reads w1 out of the wire: the same graph as from memory, the
 * same errors for a bad size or a limit, the same result where the walk
 * leaves the file to the decoder (a repeated graph field), and no leak. */
static void test_weights_from_file(void) {
  char dir[] = "/tmp/nn-wf-XXXXXX", path[256];
  if (!mkdtemp(dir)) {
    t_failed = 1;
    return;
  }
  snprintf(path, sizeof path, "%s/model.onnx", dir);
  static float yf[WF_N], ym[WF_N];
  for (int k = 0; k < 4; k++) {
    /* 0 plain, 1 w1 4 bytes longer than its shape, 2 a second (empty) graph
     * field after the model (decoders merge it: the same model), 3 cut short */
    size_t len;
    uint8_t *buf = wf_model(k == 1 ? WF_N * 4 + 4 : WF_N * 4, &len);
    size_t flen = k == 3 ? len / 2 : len;
    uint8_t *fbuf = malloc(len + 2);
    memcpy(fbuf, buf, len);
    if (k == 2) {
      fbuf[len] = 0x3a;   /* ModelProto.graph, length-delimited, 0 bytes */
      fbuf[len + 1] = 0;
      flen = len + 2;
    }
    write_file(path, fbuf, flen);
    size_t base = live_bytes();
    nn_session *sf = NULL, *sm = NULL;
    nn_error ef, em;
    nn_status stf = nn_session_create_from_file(path, NULL, &sf, &ef);
    nn_status stm = create_mem(fbuf, flen, &sm, &em);
    if (stf != stm || (k == 1 && !strstr(ef.msg, "raw_data has 8004 bytes")))
      fprintf(stderr, "  case %d: from file %s (%s), from memory %s (%s)\n", k, nn_status_str(stf),
              ef.msg, nn_status_str(stm), em.msg);
    CHECK(stf == stm);
    CHECK(k == 0 || k == 2 ? stf == NN_OK : stf != NN_OK);
    if (k == 1)
      CHECK(strstr(ef.msg, "raw_data has 8004 bytes") != NULL);
    if (stf == NN_OK && stm == NN_OK) {
      CHECK(wf_run(sf, yf) && wf_run(sm, ym));
      CHECK(memcmp(yf, ym, sizeof yf) == 0);
      CHECK(yf[WF_N - 1] == ((float)(WF_N - 1) * 1.25f) * (float)((WF_N - 1) % 7 - 3) + 0.5f);
    }
    nn_session_free(sf);
    nn_session_free(sm);
    CHECK(live_bytes() == base);
    /* over the weights limit: refused from the file as from memory */
    if (k == 0) {
      nn_options o;
      nn_options_init(&o);
      o.limits.max_weights_bytes = WF_N * 4 - 1;
      CHECK_ST(nn_session_create_from_file(path, &o, &sf, &ef), NN_ERR_LIMIT);
      CHECK(strstr(ef.msg, "'w1'") != NULL);
      CHECK(live_bytes() == base);
    }
    free(fbuf);
    free(buf);
  }
  unlink(path);
  rmdir(dir);
}

/* Memory rule 4: after the first run with given shapes, no heap allocation. */
static void check_zero_alloc(const char *model_path, int runs, const int64_t *shape) {
  nn_session *s = NULL;
  nn_error err;
  if (nn_session_create_from_file(model_path, NULL, &s, &err) != NN_OK) {
    fprintf(stderr, "  %s: %s\n", model_path, err.msg);
    t_failed = 1;
    return;
  }
  int ni;
  nn_session_io_count(s, &ni, NULL);
  for (int i = 0; i < ni; i++) {
    nn_io_info info;
    nn_session_input_info(s, i, &info);
    nn_tensor *t;
    if (info.has_default)
      continue;
    int64_t dims[NN_MAX_RANK];
    for (int d = 0; d < info.rank; d++)
      dims[d] = info.dims[d] >= 0 ? info.dims[d] : shape ? shape[d] : 1;
    CHECK_ST(nn_session_set_input_shape(s, i, info.rank, dims), NN_OK);
    CHECK_ST(nn_session_input_tensor(s, i, &t), NN_OK);
    memset(t->data, 0, t->nbytes);
  }
  CHECK_ST(nn_session_run(s), NN_OK);
  long before = g_allocs;
  for (int r = 0; r < runs; r++)
    CHECK_ST(nn_session_run(s), NN_OK);
  long per_run = g_allocs - before;
  printf("  %s: %ld allocations over %d runs after the first\n", model_path, per_run, runs);
  CHECK(per_run == 0);
  nn_session_free(s);
}

static void test_zero_alloc_steady_state(void) {
  nn_allocator a = {count_malloc, count_realloc, count_free, NULL};
  CHECK_ST(nn_set_allocator(&a), NN_OK);
  size_t len;
  uint8_t *buf = relu_model(&len, 0);
  char path[] = "/tmp/nn-relu-XXXXXX";
  int fd = mkstemp(path);
  if (fd >= 0) {
    CHECK(write(fd, buf, len) == (ssize_t)len);
    close(fd);
    check_zero_alloc(path, 100, NULL);
    unlink(path);
  }
  free(buf);
  char real[512];
  snprintf(real, sizeof real, "%s/real-cases/ppocr_mobile_cls/model.onnx", shared_dir());
  if (access(real, R_OK) == 0)
    check_zero_alloc(real, 20, (const int64_t[]){1, 3, 48, 192});
  snprintf(real, sizeof real, "%s/real-cases/blazeface_front_128/model.onnx", shared_dir());
  if (access(real, R_OK) == 0)
    check_zero_alloc(real, 20, NULL);
  /* the allocator cannot change while a session is alive */
  nn_session *s = NULL;
  buf = relu_model(&len, 0);
  CHECK_ST(create_mem(buf, len, &s, NULL), NN_OK);
  CHECK_ST(nn_set_allocator(NULL), NN_ERR_INVALID_ARG);
  nn_session_free(s);
  free(buf);
  CHECK_ST(nn_set_allocator(NULL), NN_OK);
}

/* The planner: arena well under the naive sum on real CNNs (issue 2). */
static void test_planner_ratio(void) {
  const char *models[] = {"resnet50", "densenet121", "squeezenet", "inception_v2"};
  for (int i = 0; i < 4; i++) {
    char path[512];
    snprintf(path, sizeof path, "%s/onnx-tests/light-cases/%s/model.onnx", shared_dir(), models[i]);
    if (access(path, R_OK) != 0) {
      printf("  %s: skipped, %s not found\n", models[i], path);
      continue;
    }
    nn_session *s = NULL;
    nn_error err;
    nn_status st = nn_session_create_from_file(path, NULL, &s, &err);
    CHECK(st == NN_OK);
    if (st != NN_OK) {
      fprintf(stderr, "  %s: %s\n", models[i], err.msg);
      continue;
    }
    nn_stats stt;
    nn_session_stats(s, &stt);
    double ratio = (double)stt.arena_bytes / (double)stt.arena_naive_bytes;
    printf("  %s: arena %zu bytes, naive %zu bytes, ratio %.3f, weights %zu bytes\n", models[i],
           stt.arena_bytes, stt.arena_naive_bytes, ratio, stt.weights_bytes);
    if (i < 2)
      CHECK(ratio <= 0.5);
    nn_session_free(s);
  }
}

/* Threads per step (cpu/cpu_backend.c): a 2-thread session times every step
 * on the pool and alone in its first runs, then runs each the faster way.
 * Its outputs equal the 1-thread session's on every run, calibration runs
 * included, the first re-calibration's too (tiles split the outputs, never
 * a sum); the count of steps run
 * alone appears after the 7th run only (the steps' times are in), within the
 * CPU steps; with NN_THREAD_TUNE=0 it stays 0. */
static void test_thread_tune(void) {
  char path[512];
  snprintf(path, sizeof path, "%s/onnx-tests/light-cases/squeezenet/model.onnx", shared_dir());
  if (access(path, R_OK) != 0) {
    printf("  skipped: %s not found (the shared test data)\n", path);
    g_skipped++;
    return;
  }
  size_t base = live_bytes();
  for (int tune = 1; tune >= 0; tune--) {
    if (!tune)
      setenv("NN_THREAD_TUNE", "0", 1);
    nn_session *s[2] = {NULL, NULL};
    nn_error err;
    for (int k = 0; k < 2; k++) {
      nn_options o;
      nn_options_init(&o);
      o.threads = k + 1;
      CHECK_ST(nn_session_create_from_file(path, &o, &s[k], &err), NN_OK);
    }
    if (!s[0] || !s[1]) {
      nn_session_free(s[0]);
      nn_session_free(s[1]);
      unsetenv("NN_THREAD_TUNE");
      return;
    }
    nn_tensor *in[2];
    for (int k = 0; k < 2; k++) {
      CHECK_ST(nn_session_input_tensor(s[k], 0, &in[k]), NN_OK);
      float *d = in[k]->data;
      for (size_t i = 0; i < in[k]->nbytes / sizeof(float); i++)
        d[i] = (float)((i * 2654435761u) % 1000) / 500.0f - 1.0f;
    }
    /* through the first re-calibration (64 steady runs after the first) */
    int same = 0, runs = 2 * NN_CPU_CALIBRATION_RUNS + 64 + 3, alone = -1;
    for (int r = 1; r <= runs; r++) {
      CHECK_ST(nn_session_run(s[0]), NN_OK);
      CHECK_ST(nn_session_run(s[1]), NN_OK);
      const nn_tensor *out[2];
      CHECK_ST(nn_session_output_tensor(s[0], 0, &out[0]), NN_OK);
      CHECK_ST(nn_session_output_tensor(s[1], 0, &out[1]), NN_OK);
      same += out[0]->nbytes == out[1]->nbytes &&
              memcmp(out[0]->data, out[1]->data, out[0]->nbytes) == 0;
      nn_stats st;
      CHECK_ST(nn_session_stats(s[1], &st), NN_OK);
      if (r < 7 || !tune)
        CHECK(st.nodes_cpu_one_thread == 0);
      else
        CHECK(st.nodes_cpu_one_thread >= 0 && st.nodes_cpu_one_thread <= st.nodes_cpu);
      alone = st.nodes_cpu_one_thread;
      nn_stats st1;
      CHECK_ST(nn_session_stats(s[0], &st1), NN_OK);
      CHECK(st1.nodes_cpu_one_thread == 0);   /* no pool, nothing to choose */
    }
    CHECK(same == runs);
    printf("  NN_THREAD_TUNE=%d: %d of %d runs equal to 1 thread's, %d steps on one thread\n", tune,
           same, runs, alone);
    nn_session_free(s[0]);
    nn_session_free(s[1]);
  }
  unsetenv("NN_THREAD_TUNE");
  CHECK(live_bytes() == base);
}

/* nn_parallel_for covers every item exactly once, whatever the split, and
 * idle workers sleep instead of spinning. */
typedef struct pf_arg {
  atomic_int *hits;
  atomic_llong sum;
} pf_arg;

static atomic_int g_bad_worker;

static void pf_body(void *arg, int64_t begin, int64_t end) {
  pf_arg *a = arg;
  long long s = 0;
  if (nn_parallel_worker() < 0 || nn_parallel_worker() >= 4)
    atomic_fetch_add(&g_bad_worker, 1);
  for (int64_t i = begin; i < end; i++) {
    atomic_fetch_add(&a->hits[i], 1);
    s += i;
  }
  atomic_fetch_add(&a->sum, s);
}

static double cpu_seconds(void) {
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return ru.ru_utime.tv_sec + ru.ru_stime.tv_sec + (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

static void test_threadpool(void) {
  size_t base = live_bytes();
  for (int threads = 1; threads <= 4; threads++) {
    nn_threadpool *p = NULL;
    CHECK_ST(nn_threadpool_create(threads, &p), NN_OK);
    CHECK((threads == 1) == (p == NULL));
    CHECK(nn_parallel_width(&(nn_ctx){.pool = p}) == threads);
    nn_ctx c = {0};
    c.pool = p;
    c.threads = threads;
    const int64_t ns[] = {1, 7, 1000, 100003};
    for (int k = 0; k < 4; k++) {
      int64_t n = ns[k];
      pf_arg a;
      a.hits = calloc((size_t)n, sizeof(atomic_int));
      atomic_init(&a.sum, 0);
      for (int rep = 0; rep < 50; rep++)
        nn_parallel_for(&c, n, 16, pf_body, &a);
      int bad = 0;
      for (int64_t i = 0; i < n; i++)
        bad += atomic_load(&a.hits[i]) != 50;
      CHECK(bad == 0);
      CHECK(atomic_load(&a.sum) == 50LL * (n * (n - 1) / 2));
      free(a.hits);
    }
    /* idle workers must not burn CPU between jobs */
    double c0 = cpu_seconds();
    struct timespec ts = {0, 200 * 1000 * 1000};
    nanosleep(&ts, NULL);
    double used = cpu_seconds() - c0;
    printf("  threads=%d: idle CPU over 200 ms = %.4f s\n", threads, used);
    CHECK(used < 0.01);
    nn_threadpool_destroy(p);
  }
  CHECK(atomic_load(&g_bad_worker) == 0);
  CHECK(live_bytes() == base);
}

typedef struct test {
  const char *name;
  void (*fn)(void);
} test;

/* The op layer's registry and the CPU kernels agree: every op the registry
 * lists (what nn-run --list-ops prints) resolves through nn_op_find, has a
 * CPU kernel of the same name and domain (the reference every node needs),
 * and infers its own outputs; only the control ops (NN_OP_SUBGRAPH), whose
 * outputs are those of the body their kernel plans, leave that to it. */
typedef struct reg_count {
  int ops, missing_kernel, missing_infer, not_found;
} reg_count;

static void reg_visit(void *user, const char *domain, const char *op_type, const int *versions,
                      int n_versions) {
  reg_count *rc = user;
  rc->ops++;
  const nn_op_def *op = nn_op_find(domain, op_type);
  if (!op || n_versions < 1 || op->versions[0] != versions[0]) {
    fprintf(stderr, "  %s:%s: not found by nn_op_find\n", domain, op_type);
    rc->not_found++;
    return;
  }
  if (!nn_kernel_find(domain, op_type)) {
    fprintf(stderr, "  %s:%s: no CPU kernel\n", domain, op_type);
    rc->missing_kernel++;
  }
  if (!op->infer && !(op->flags & NN_OP_SUBGRAPH)) {
    fprintf(stderr, "  %s:%s: no infer in the op layer\n", domain, op_type);
    rc->missing_infer++;
  }
}

static void test_registry(void) {
  reg_count rc = {0};
  nn_op_list(reg_visit, &rc);
  printf("  %d ops\n", rc.ops);
  CHECK(rc.ops >= 200);
  CHECK(rc.not_found == 0);
  CHECK(rc.missing_kernel == 0);
  CHECK(rc.missing_infer == 0);
  CHECK(nn_op_find("", "NoSuchOp") == NULL && nn_kernel_find("", "NoSuchOp") == NULL);
  /* the domain is part of the name: the boxed Identity is not the plain one */
  const nn_op_def *id = nn_op_find("", "Identity"), *box = nn_op_find("nn.box", "Identity");
  CHECK(id && box && id != box);
  CHECK(nn_kernel_find("ai.onnx", "Relu") == nn_kernel_find("", "Relu"));
}

/* The default hooks map large blocks straight from the kernel: a block
 * grown from the heap into a mapping, across mappings and back keeps its
 * bytes, and the counters come back to where they were. */
static void test_alloc_large(void) {
  size_t base = live_bytes();
  size_t sizes[] = {100, 1 << 20, 300 << 10, 5 << 20, 64, 0};
  unsigned char *p = nn_malloc(sizes[0]);
  CHECK(p != NULL);
  if (!p)
    return;
  for (size_t i = 0; i < sizes[0]; i++)
    p[i] = (unsigned char)(i * 7 + 1);
  for (int k = 1; sizes[k]; k++) {
    size_t keep = sizes[k - 1] < sizes[k] ? sizes[k - 1] : sizes[k];
    keep = keep < sizes[0] ? keep : sizes[0];
    p = nn_realloc(p, sizes[k]);
    CHECK(p != NULL);
    if (!p)
      return;
    bool same = true;
    for (size_t i = 0; i < keep; i++)
      same &= p[i] == (unsigned char)(i * 7 + 1);
    CHECK(same);
    memset(p + sizes[0] - 0, 0xab, sizes[k] > sizes[0] ? sizes[k] - sizes[0] : 0);   /* all of it writable */
    CHECK(live_bytes() == base + sizes[k]);
  }
  nn_free(p);
  void *a = nn_aligned_alloc(3 << 20);
  CHECK(a != NULL && ((uintptr_t)a & 63) == 0);
  if (a)
    memset(a, 1, 3 << 20);
  nn_aligned_free(a);
  CHECK(live_bytes() == base);
}

/* Graph outputs live in the CPU arena (nn_plan.outputs_in_arena): an output
 * read by later steps keeps its slot to the end of the run, while the
 * intermediates after its last reader are planned over dead memory; a bound
 * output is written to the caller's memory instead, and unbinding returns
 * to the arena slot.  No output buffer outside the arena. */
static void test_outputs_in_arena(void) {
  size_t base = live_bytes();
  enum { R = 64, C = 64 };
  mb m;
  mb_init(&m, 13);
  int64_t dims[2] = {R, C};
  mb_input(&m, "x", NN_DTYPE_FLOAT, 2, dims);
  mb_node(&m, "Relu", "relu", "x", "a");
  mb_node(&m, "Neg", "neg0", "a", "b");
  mb_node(&m, "Softmax", "sm0", "b", "c");
  mb_node(&m, "Softmax", "sm1", "c", "d");
  mb_node(&m, "Softmax", "sm2", "d", "e");
  mb_node(&m, "Neg", "neg1", "e", "y");
  mb_output(&m, "a");
  mb_output(&m, "y");
  size_t len;
  uint8_t *buf = mb_pack(&m, &len);
  mb_free(&m);
  nn_session *s = NULL;
  nn_error err;
  CHECK_ST(create_mem(buf, len, &s, &err), NN_OK);
  free(buf);
  if (!s)
    return;
  static float x[R * C], mine[R * C];
  static double want_a[R * C], want_y[R * C];
  for (int i = 0; i < R * C; i++)
    x[i] = (float)((i * 37 % 101) - 50) / 16.0f;
  for (int r = 0; r < R; r++) {
    double row[C];
    for (int j = 0; j < C; j++) {
      want_a[r * C + j] = x[r * C + j] > 0 ? x[r * C + j] : 0;
      row[j] = -want_a[r * C + j];
    }
    for (int k = 0; k < 3; k++) {
      double mx = row[0], sum = 0;
      for (int j = 1; j < C; j++)
        mx = row[j] > mx ? row[j] : mx;
      for (int j = 0; j < C; j++)
        sum += (row[j] = exp(row[j] - mx));
      for (int j = 0; j < C; j++)
        row[j] /= sum;
    }
    for (int j = 0; j < C; j++)
      want_y[r * C + j] = -row[j];
  }
  nn_tensor *in;
  CHECK_ST(nn_session_input_tensor(s, 0, &in), NN_OK);
  memcpy(in->data, x, sizeof x);
  for (int pass = 0; pass < 3; pass++) {
    /* pass 1: output 0 bound to our memory; pass 2: unbound again */
    nn_tensor t = {NN_DTYPE_FLOAT, 2, {R, C}, mine, sizeof mine};
    if (pass == 1) {
      memset(mine, 0, sizeof mine);
      CHECK_ST(nn_session_bind_output(s, 0, &t), NN_OK);
    } else if (pass == 2) {
      CHECK_ST(nn_session_bind_output(s, 0, NULL), NN_OK);
    }
    CHECK_ST(nn_session_run(s), NN_OK);
    const nn_tensor *a, *y;
    CHECK_ST(nn_session_output_tensor(s, 0, &a), NN_OK);
    CHECK_ST(nn_session_output_tensor(s, 1, &y), NN_OK);
    CHECK((a->data == (void *)mine) == (pass == 1));
    double ea = 0, ey = 0;
    for (int i = 0; i < R * C; i++) {
      ea = fmax(ea, fabs(((const float *)a->data)[i] - want_a[i]));
      ey = fmax(ey, fabs(((const float *)y->data)[i] - want_y[i]));
    }
    if (ea != 0 || ey > 1e-6)
      fprintf(stderr, "  pass %d: output a off by %g, y by %g\n", pass, ea, ey);
    CHECK(ea == 0 && ey <= 1e-6);
  }
  nn_stats st;
  CHECK_ST(nn_session_stats(s, &st), NN_OK);
  /* the input's buffer is the only one outside the arena; the arena holds
   * a (live to the end) beside two values at any step: b and c, ..., e and y */
  CHECK(st.io_bytes == sizeof x);
  CHECK(st.arena_bytes == 3 * sizeof x);
  nn_session_free(s);
  CHECK(live_bytes() == base);
}

int main(int argc, char **argv) {
  const test tests[] = {
      {"run_basic", test_run_basic},
      {"outputs_in_arena", test_outputs_in_arena},
      {"alloc_large", test_alloc_large},
      {"dispose", test_dispose},
      {"dynamic_shape", test_dynamic_shape},
      {"default_input", test_default_input},
      {"bad_files", test_bad_files},
      {"bad_graphs", test_bad_graphs},
      {"hostile_dims", test_hostile_dims},
      {"external_data", test_external_data},
      {"weights_from_file", test_weights_from_file},
      {"zero_alloc_steady_state", test_zero_alloc_steady_state},
      {"planner_ratio", test_planner_ratio},
      {"threadpool", test_threadpool},
      {"thread_tune", test_thread_tune},
      {"registry", test_registry},
  };
  for (size_t i = 0; i < sizeof tests / sizeof tests[0]; i++) {
    if (argc > 1 && !strstr(tests[i].name, argv[1]))
      continue;
    t_failed = 0;
    printf("- %s\n", tests[i].name);
    fflush(stdout);
    tests[i].fn();
    printf("%s %s\n", t_failed ? "FAIL" : "ok  ", tests[i].name);
    if (t_failed)
      g_failed++;
    else
      g_passed++;
  }
  printf("%d passed, %d failed, %d skipped\n", g_passed, g_failed, g_skipped);
  return g_failed ? 1 : 0;
}

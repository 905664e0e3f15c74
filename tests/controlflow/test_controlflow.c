/* test_controlflow.c - steady state and lifetime of sessions with If, Loop
 * and Scan (the models of make_controlflow.py, given as case directories):
 * after the first run, further runs with the same input shapes make no heap
 * allocation (the bodies are planned once, their arenas are regions of the
 * session's), the outputs match the case's, and disposing the session gives
 * every byte back.
 *
 *   test-controlflow CASE_DIR...
 */
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nn.h"
#include "nn_file.h"
#include "nn_tool.h"

static long g_allocs;
static void *count_malloc(size_t n, void *ud) { (void)ud; g_allocs++; return malloc(n); }
static void *count_realloc(void *p, size_t n, void *ud) { (void)ud; g_allocs++; return realloc(p, n); }
static void count_free(void *p, void *ud) { (void)ud; free(p); }

static int failed;

#define CHECK(c, ...)                                                                     \
  do {                                                                                    \
    if (!(c)) {                                                                           \
      printf("FAIL %s:%d: ", __FILE__, __LINE__);                                         \
      printf(__VA_ARGS__);                                                                \
      printf("\n");                                                                       \
      failed++;                                                                           \
      goto out;                                                                           \
    }                                                                                     \
  } while (0)

static nn_status load(const char *path, nn_tensor *t) {
  void *buf = NULL;
  size_t size = 0;
  nn_error err = {0};
  nn_status st = nn_file_read(path, (size_t)1 << 30, &buf, &size, &err);
  if (st != NN_OK)
    return st;
  st = nn_tool_tensor_decode(buf, size, t, NULL, &err);
  nn_file_free(buf);
  return st;
}

static void check_case(const char *dir) {
  char path[4096];
  nn_session *s = NULL;
  nn_error err = {0};
  nn_tensor want[8];
  int n_want = 0;
  size_t before = 0, after = 0;
  nn_memory_usage(&before, NULL);
  snprintf(path, sizeof path, "%s/model.onnx", dir);
  nn_status st = nn_session_create_from_file(path, NULL, &s, &err);
  CHECK(st == NN_OK, "%s: create: %s", dir, err.msg);
  int n_in = 0, n_out = 0;
  nn_session_io_count(s, &n_in, &n_out);
  for (int i = 0; i < n_in; i++) {
    nn_tensor t;
    snprintf(path, sizeof path, "%s/test_data_set_0/input_%d.pb", dir, i);
    CHECK(load(path, &t) == NN_OK, "%s: cannot read input %d", dir, i);
    st = nn_session_set_input_shape(s, i, t.rank, t.dims);
    nn_tensor *dst = NULL;
    if (st == NN_OK)
      st = nn_session_input_tensor(s, i, &dst);
    if (st == NN_OK && t.nbytes)
      memcpy(dst->data, t.data, t.nbytes);
    nn_tool_tensor_free(&t);
    CHECK(st == NN_OK, "%s: input %d: %s", dir, i, nn_session_last_error(s));
  }
  CHECK(nn_session_run(s) == NN_OK, "%s: run: %s", dir, nn_session_last_error(s));
  long a0 = g_allocs;
  for (int r = 0; r < 50; r++)
    CHECK(nn_session_run(s) == NN_OK, "%s: run %d: %s", dir, r, nn_session_last_error(s));
  long per = g_allocs - a0;
  printf("  %s: %ld allocations over 50 runs after the first\n", dir, per);
  CHECK(per == 0, "%s: steady-state runs allocate", dir);
  for (int k = 0; k < n_out && k < 8; k++) {
    snprintf(path, sizeof path, "%s/test_data_set_0/output_%d.pb", dir, k);
    CHECK(load(path, &want[k]) == NN_OK, "%s: cannot read output %d", dir, k);
    n_want = k + 1;
    const nn_tensor *got = NULL;
    CHECK(nn_session_output_tensor(s, k, &got) == NN_OK, "%s: output %d", dir, k);
    CHECK(got->nbytes == want[k].nbytes && got->dtype == NN_DTYPE_FLOAT, "%s: output %d shape", dir, k);
    const float *g = got->data, *w = want[k].data;
    for (size_t e = 0; e < got->nbytes / 4; e++)
      CHECK(fabsf(g[e] - w[e]) <= 1e-4f + 1e-3f * fabsf(w[e]), "%s: output %d element %zu: %g vs %g", dir,
            k, e, g[e], w[e]);
  }
out:
  for (int k = 0; k < n_want; k++)
    nn_tool_tensor_free(&want[k]);
  nn_session_free(s);
  nn_memory_usage(&after, NULL);
  if (after != before) {
    printf("FAIL %s: %zu bytes still allocated after the session was freed\n", dir, after - before);
    failed++;
  }
}

int main(int argc, char **argv) {
  nn_allocator a = {count_malloc, count_realloc, count_free, NULL};
  if (nn_set_allocator(&a) != NN_OK) {
    printf("FAIL cannot set the allocator\n");
    return 1;
  }
  if (argc < 2) {
    printf("SKIP: no case directories\n");
    return 77;
  }
  for (int i = 1; i < argc; i++)
    check_case(argv[i]);
  nn_set_allocator(NULL);
  printf("%s: %d cases, %d failures\n", failed ? "FAIL" : "PASS", argc - 1, failed);
  return failed ? 1 : 0;
}

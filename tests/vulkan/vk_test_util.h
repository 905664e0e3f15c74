/* vk_test_util.h - helpers shared by the Vulkan backend tests: checks,
 * a counting allocator, RSS, random data, float comparison, device buffers.
 *
 * Every test runs under NN_VULKAN_VALIDATION=1 (meson test env) and ends
 * with vt_finish(), which fails on any validation message and, when
 * validation was requested, on a context that ran without the layer. */
#ifndef VK_TEST_UTIL_H
#define VK_TEST_UTIL_H

#include <math.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "vk_backend.h"

static int vt_failures;

#define VT_CHECK(cond)                                                                  \
  do {                                                                                  \
    if (!(cond)) {                                                                      \
      fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond);          \
      vt_failures++;                                                                    \
    }                                                                                   \
  } while (0)

/* Abort the test on a failed status: later steps would only cascade. */
#define VT_OK(expr)                                                                     \
  do {                                                                                  \
    nn_error vt_err_ = {0};                                                             \
    nn_error *err = &vt_err_;                                                           \
    (void)err;                                                                          \
    nn_status vt_st_ = (expr);                                                          \
    if (vt_st_ != NN_OK) {                                                              \
      fprintf(stderr, "%s:%d: %s -> %s: %s\n", __FILE__, __LINE__, #expr,               \
              nn_status_str(vt_st_), vt_err_.msg);                                      \
      exit(1);                                                                          \
    }                                                                                   \
  } while (0)

/* ---- counting allocator: installed before any context exists ------------- */
static atomic_long vt_allocs;

static void *vt_malloc(size_t n, void *ud) {
  (void)ud;
  atomic_fetch_add(&vt_allocs, 1);
  return malloc(n);
}
static void *vt_realloc(void *p, size_t n, void *ud) {
  (void)ud;
  atomic_fetch_add(&vt_allocs, 1);
  return realloc(p, n);
}
static void vt_free(void *p, void *ud) {
  (void)ud;
  free(p);
}

static inline void vt_install_allocator(void) {
  nn_allocator a = {vt_malloc, vt_realloc, vt_free, NULL};
  if (nn_set_allocator(&a) != NN_OK) {
    fprintf(stderr, "cannot install the counting allocator\n");
    exit(1);
  }
}

static inline long vt_alloc_count(void) { return atomic_load(&vt_allocs); }

static inline size_t vt_heap_current(void) {
  size_t cur = 0;
  nn_memory_usage(&cur, NULL);
  return cur;
}

/* Resident set size in KiB (Linux), 0 when unknown.  Free heap pages are
 * handed back first (glibc keeps them otherwise), so the number tracks live
 * memory rather than allocator high-water marks. */
static inline long vt_rss_kib(void) {
#ifdef __GLIBC__
  malloc_trim(0);
#endif
  FILE *f = fopen("/proc/self/statm", "r");
  long pages = 0, resident = 0;
  if (!f)
    return 0;
  if (fscanf(f, "%ld %ld", &pages, &resident) != 2)
    resident = 0;
  fclose(f);
  return resident * (sysconf(_SC_PAGESIZE) / 1024);
}

/* ---- data ----------------------------------------------------------------- */
static uint64_t vt_rng = 0x9E3779B97F4A7C15ull;

static inline float vt_randf(float lo, float hi) {
  vt_rng ^= vt_rng << 13;
  vt_rng ^= vt_rng >> 7;
  vt_rng ^= vt_rng << 17;
  return lo + (hi - lo) * (float)((vt_rng >> 40) * (1.0 / 16777216.0));
}

static inline float *vt_rand_array(int64_t n, float lo, float hi) {
  float *p = malloc((size_t)(n > 0 ? n : 1) * sizeof *p);
  for (int64_t i = 0; i < n; i++)
    p[i] = vt_randf(lo, hi);
  return p;
}

/* |got - want| <= atol + rtol * |want|, NaN matches NaN.  Prints the first
 * few mismatches; returns their count. */
static inline int64_t vt_compare(const char *what, const float *got, const float *want, int64_t n,
                          float rtol, float atol) {
  int64_t bad = 0;
  for (int64_t i = 0; i < n; i++) {
    float g = got[i], w = want[i];
    if (isnan(w) && isnan(g))
      continue;
    if (isinf(w) && g == w)
      continue;
    if (!(fabsf(g - w) <= atol + rtol * fabsf(w))) {
      if (bad < 5)
        fprintf(stderr, "  %s[%lld]: got %.7g want %.7g\n", what, (long long)i, g, w);
      bad++;
    }
  }
  if (bad)
    fprintf(stderr, "%s: %lld of %lld elements differ\n", what, (long long)bad, (long long)n);
  return bad;
}

/* ---- a device tensor: a sub-allocation holding n floats ------------------ */
typedef struct vt_buf {
  nn_vk_buf buf;
  nn_vk_tensor t;
  int64_t n;
} vt_buf;

static inline void vt_buf_alloc(nn_vk_mem *m, vt_buf *b, int64_t n) {
  VT_OK(nn_vk_mem_alloc(m, NN_VK_MEM_DEVICE, (VkDeviceSize)(n > 0 ? n : 1) * 4, &b->buf, err));
  b->t = nn_vk_view(&b->buf, 0, (VkDeviceSize)(n > 0 ? n : 1) * 4);
  b->n = n;
}

static inline void vt_buf_upload(nn_vk_exec *e, nn_vk_mem *m, vt_buf *b, const void *data) {
  VT_OK(nn_vk_exec_upload(e, m, &b->buf, 0, data, (size_t)b->n * 4, err));
}

static inline void vt_buf_download(nn_vk_exec *e, nn_vk_mem *m, vt_buf *b, void *data) {
  VT_OK(nn_vk_exec_download(e, m, &b->buf, 0, data, (size_t)b->n * 4, err));
}

static inline int vt_finish(const char *name) {
  uint64_t msgs = nn_vk_validation_messages(), general = nn_vk_general_messages();
  if (msgs || general) {
    fprintf(stderr, "%s: %llu validation and %llu general message(s)\n", name,
            (unsigned long long)msgs, (unsigned long long)general);
    vt_failures++;
  }
  if (nn_vk_ctx_alive()) {
    fprintf(stderr, "%s: the Vulkan context outlived its last reference\n", name);
    vt_failures++;
  }
  printf("%s: %s (%d failure(s), %llu validation messages)\n", name,
         vt_failures ? "FAIL" : "PASS", vt_failures, (unsigned long long)msgs);
  return vt_failures ? 1 : 0;
}

static inline bool vt_validation_requested(void) {
  const char *v = getenv("NN_VULKAN_VALIDATION");
  return v && v[0] && strcmp(v, "0") != 0;
}

/* Validation must really be on when the environment asks for it. */
static inline void vt_check_validation(const nn_vk_ctx *c) {
  if (vt_validation_requested() && !c->validation) {
    fprintf(stderr, "NN_VULKAN_VALIDATION is set but the validation layer is not active\n");
    vt_failures++;
  }
}

#endif

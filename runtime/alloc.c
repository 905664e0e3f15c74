/* alloc.c - the one pair of allocation hooks every runtime allocation uses.
 *
 * Each block carries a small header with its size so that the counters of
 * nn_memory_usage() are exact and nn_free needs no size from the caller.
 * The header is 16 bytes (max_align_t on the platforms we build for). */
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#if defined(__unix__) && !defined(__SANITIZE_ADDRESS__)
#include <sys/mman.h>
#define LIBC_MAP 1   /* (under ASan every block stays with malloc: its redzones, its leak check) */
#endif

#include "nn_internal.h"

#define HDR 16

/* The default hooks.  Blocks of LIBC_MAP_MIN bytes and more are mapped
 * straight from the kernel and unmapped when freed.  glibc does the same
 * above its mmap threshold, but raises that threshold to the size of each
 * mapped block freed (up to 32 MiB): after the planner freed a few large
 * weights (each replaced by its packed copy), later large blocks came from
 * the heap, whose freed middle the kernel never gets back.  densenet121's
 * peak RSS was 4.8 MB above its live memory that way (74.0 -> 69.2 MB).
 * Each block starts with 16 bytes: its size, and whether it is mapped. */
#define LIBC_MAP_MIN ((size_t)256 << 10)
#define LIBC_HDR 16

static void *libc_malloc(size_t size, void *ud) {
  (void)ud;
  if (size > SIZE_MAX - LIBC_HDR - 4096)
    return NULL;
  unsigned char *p = NULL;
  size_t mapped = 0;
#if defined(LIBC_MAP) && defined(MAP_ANONYMOUS)
  if (size >= LIBC_MAP_MIN) {
    void *m = mmap(NULL, size + LIBC_HDR, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m != MAP_FAILED) {
      p = m;
      mapped = 1;
    }
  }
#endif
  if (!p)
    p = malloc(size + LIBC_HDR);
  if (!p)
    return NULL;
  memcpy(p, &size, sizeof size);
  memcpy(p + sizeof size, &mapped, sizeof mapped);
  return p + LIBC_HDR;
}

static void libc_free(void *ptr, void *ud) {
  (void)ud;
  if (!ptr)
    return;
  unsigned char *p = (unsigned char *)ptr - LIBC_HDR;
  size_t size, mapped;
  memcpy(&size, p, sizeof size);
  memcpy(&mapped, p + sizeof size, sizeof mapped);
#if defined(LIBC_MAP) && defined(MAP_ANONYMOUS)
  if (mapped) {
    munmap(p, size + LIBC_HDR);
    return;
  }
#endif
  free(p);
}

static void *libc_realloc(void *ptr, size_t size, void *ud) {
  if (!ptr)
    return libc_malloc(size, ud);
  unsigned char *p = (unsigned char *)ptr - LIBC_HDR;
  size_t old, mapped;
  memcpy(&old, p, sizeof old);
  memcpy(&mapped, p + sizeof old, sizeof mapped);
  if (!mapped && size < LIBC_MAP_MIN) {
    if (size > SIZE_MAX - LIBC_HDR)
      return NULL;
    unsigned char *q = realloc(p, size + LIBC_HDR);
    if (!q)
      return NULL;
    memcpy(q, &size, sizeof size);
    return q + LIBC_HDR;
  }
  unsigned char *q = libc_malloc(size, ud);   /* into or out of a mapping */
  if (!q)
    return NULL;
  memcpy(q, ptr, old < size ? old : size);
  libc_free(ptr, ud);
  return q;
}

static nn_allocator g_alloc = {libc_malloc, libc_realloc, libc_free, NULL};
static atomic_size_t g_current;
static atomic_size_t g_peak;
static atomic_int g_pins;

static void account_add(size_t n) {
  size_t cur = atomic_fetch_add(&g_current, n) + n;
  size_t peak = atomic_load(&g_peak);
  while (cur > peak && !atomic_compare_exchange_weak(&g_peak, &peak, cur)) {
  }
}

nn_status nn_set_allocator(const nn_allocator *a) {
  if (atomic_load(&g_pins) > 0)
    return NN_ERR_INVALID_ARG;
  if (a == NULL) {
    g_alloc = (nn_allocator){libc_malloc, libc_realloc, libc_free, NULL};
    return NN_OK;
  }
  if (!a->malloc || !a->realloc || !a->free)
    return NN_ERR_INVALID_ARG;
  g_alloc = *a;
  return NN_OK;
}

void nn_memory_usage(size_t *current, size_t *peak) {
  if (current) *current = atomic_load(&g_current);
  if (peak) *peak = atomic_load(&g_peak);
}

void nn_alloc_pin(void) { atomic_fetch_add(&g_pins, 1); }
void nn_alloc_unpin(void) { atomic_fetch_sub(&g_pins, 1); }

/* The header: the block's size, then whether the default hooks made it.
 * A default block (which has a header of its own: libc_malloc) goes back
 * through them even after nn_set_allocator replaced them, as a file read
 * before a fuzzer installed its hooks and freed after does. */
static void hdr_put(unsigned char *p, size_t size, bool dflt) {
  memcpy(p, &size, sizeof size);
  p[sizeof size] = dflt;
}

static bool hdr_default(const unsigned char *p) { return p[sizeof(size_t)] != 0; }

void *nn_malloc(size_t size) {
  if (size > SIZE_MAX - HDR)
    return NULL;
  const bool dflt = g_alloc.malloc == libc_malloc;
  unsigned char *p = g_alloc.malloc(size + HDR, g_alloc.ud);
  if (!p)
    return NULL;
  hdr_put(p, size, dflt);
  account_add(size);
  return p + HDR;
}

void *nn_calloc(size_t n, size_t size) {
  size_t total;
  if (nn_mul_overflow_size(n, size, &total))
    return NULL;
  void *p = nn_malloc(total);
  if (p)
    memset(p, 0, total);
  return p;
}

void *nn_realloc(void *ptr, size_t size) {
  if (!ptr)
    return nn_malloc(size);
  if (size > SIZE_MAX - HDR)
    return NULL;
  unsigned char *base = (unsigned char *)ptr - HDR;
  size_t old;
  memcpy(&old, base, sizeof old);
  const bool dflt = hdr_default(base);
  unsigned char *p = dflt ? libc_realloc(base, size + HDR, NULL)
                          : g_alloc.realloc(base, size + HDR, g_alloc.ud);
  if (!p)
    return NULL;
  hdr_put(p, size, dflt);
  atomic_fetch_sub(&g_current, old);
  account_add(size);
  return p + HDR;
}

void nn_free(void *ptr) {
  if (!ptr)
    return;
  unsigned char *base = (unsigned char *)ptr - HDR;
  size_t size;
  memcpy(&size, base, sizeof size);
  atomic_fetch_sub(&g_current, size);
  if (hdr_default(base))
    libc_free(base, NULL);
  else
    g_alloc.free(base, g_alloc.ud);
}

char *nn_strndup(const char *s, size_t n) {
  size_t len = strnlen(s, n);
  char *d = nn_malloc(len + 1);
  if (d) {
    memcpy(d, s, len);
    d[len] = '\0';
  }
  return d;
}

char *nn_strdup(const char *s) { return nn_strndup(s, SIZE_MAX); }

/* Aligned blocks: over-allocate, and keep the raw pointer just below the
 * aligned address. */
void *nn_aligned_alloc(size_t size) {
  if (size > SIZE_MAX - NN_ALIGN - sizeof(void *))
    return NULL;
  unsigned char *raw = nn_malloc(size + NN_ALIGN + sizeof(void *));
  if (!raw)
    return NULL;
  uintptr_t a = ((uintptr_t)raw + sizeof(void *) + NN_ALIGN - 1) & ~(uintptr_t)(NN_ALIGN - 1);
  memcpy((unsigned char *)a - sizeof(void *), &raw, sizeof raw);
  return (void *)a;
}

void nn_aligned_free(void *ptr) {
  if (!ptr)
    return;
  void *raw;
  memcpy(&raw, (unsigned char *)ptr - sizeof(void *), sizeof raw);
  nn_free(raw);
}

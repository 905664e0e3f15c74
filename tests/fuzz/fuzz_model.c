/* fuzz_model.c - libFuzzer target: model bytes -> session -> one run.
 *
 * Covers the protobuf decode, the loader (tensors, attributes, external-data
 * refusal), graph validation, planning with constant folding and every
 * kernel's prepare/run on small inputs.  Limits are kept small so that a
 * hostile model fails with NN_ERR_LIMIT instead of eating the fuzzer's
 * memory; anything else that goes wrong must come back as an error code.
 * The runtime's live heap must return to zero after each input.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nn.h"

/* Under the limits below nothing legitimate needs one block over 64 MiB (a
 * tensor is at most 1 MiB, the arena 16 MiB, a 4 MB input decodes into at
 * most ~32 MiB of packed int64) nor 512 MiB live at once.  A bigger request
 * means some size was taken from the model without a limit: abort so that
 * the fuzzer, and the replay of its regression inputs in every test build,
 * report it even when the allocation would have succeeded. */
#define FUZZ_MAX_BLOCK ((size_t)64 << 20)
#define FUZZ_MAX_LIVE ((size_t)512 << 20)

static void too_big(size_t size) {
  size_t cur;
  nn_memory_usage(&cur, NULL);
  fprintf(stderr, "fuzz_model: allocation of %zu bytes with %zu live: a size not bounded by the "
          "limits\n", size, cur);
  abort();
}

static void *guard_malloc(size_t size, void *ud) {
  (void)ud;
  size_t cur;
  nn_memory_usage(&cur, NULL);
  if (size > FUZZ_MAX_BLOCK || cur + size > FUZZ_MAX_LIVE)
    too_big(size);
  return malloc(size);
}

static void *guard_realloc(void *p, size_t size, void *ud) {
  (void)ud;
  if (size > FUZZ_MAX_BLOCK)
    too_big(size);
  return realloc(p, size);
}

static void guard_free(void *p, void *ud) {
  (void)ud;
  free(p);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static int hooked;
  if (!hooked) {
    /* no session exists yet, so the hooks may be installed */
    static const nn_allocator guard = {guard_malloc, guard_realloc, guard_free, NULL};
    if (nn_set_allocator(&guard) != NN_OK)
      abort();
    hooked = 1;
  }
  nn_options o;
  nn_options_init(&o);
  o.limits.max_tensor_elems = 1 << 16;
  o.limits.max_weights_bytes = 1 << 22;
  o.limits.max_arena_bytes = 1 << 24;
  o.limits.max_nodes = 256;
  o.limits.max_graph_depth = 256;
  size_t before;
  nn_memory_usage(&before, NULL);
  nn_session *s = NULL;
  nn_error err;
  if (nn_session_create_from_memory(data, size, &o, &s, &err) == NN_OK) {
    int ni = 0;
    nn_session_io_count(s, &ni, NULL);
    for (int i = 0; i < ni; i++) {
      nn_io_info info;
      if (nn_session_input_info(s, i, &info) != NN_OK || info.has_default)
        continue;
      int64_t dims[NN_MAX_RANK];
      for (int d = 0; d < info.rank; d++)
        dims[d] = info.dims[d] < 0 ? 2 : info.dims[d];
      nn_tensor *t;
      if (nn_session_set_input_shape(s, i, info.rank < 0 ? 0 : info.rank, dims) == NN_OK &&
          nn_session_input_tensor(s, i, &t) == NN_OK) {
        /* a string element is a view the caller owns (nn_string): empty
         * strings, never bytes that would read as pointers */
        if (t->dtype == NN_DTYPE_STRING)
          memset(t->data, 0, t->nbytes);
        else
          for (size_t b = 0; b < t->nbytes; b++)
            ((uint8_t *)t->data)[b] = (uint8_t)(b * 7 + 1);
      }
    }
    nn_session_run(s);
    nn_session_run(s); /* the steady-state path too */
    nn_session_free(s);
  }
  size_t after;
  nn_memory_usage(&after, NULL);
  if (after != before) {
    fprintf(stderr, "fuzz_model: runtime heap grew by %zu bytes\n", after - before);
    abort();
  }
  return 0;
}

/* nn_strings.h - string tensors inside the runtime (not installed).
 *
 * An element of an NN_DTYPE_STRING tensor is an nn_string (nn.h): a view
 * (pointer, length) on UTF-8 bytes that live elsewhere, so the kernels that
 * only move elements (Identity, Reshape, Gather, Concat, Where, ...) copy
 * views like any other 16-byte element.  Where the bytes live:
 *   initializers, Constant values, string attributes   the graph (decoded in
 *       one block with their views, onnx/loader.c), valid until dispose;
 *   session inputs                                     the caller's memory,
 *       borrowed for the run;
 *   bytes a kernel makes (StringConcat, StringSplit, StringNormalizer, ...)
 *       the session's string store below, valid until the next run (or the
 *       next plan for values folded at plan time).
 * A view with len 0 may have data NULL (a zeroed tensor is all empty
 * strings).
 *
 * The store (strings.c) is a list of chunks the session owns (nn_ctx.strings):
 * kernels take bytes from it with nn_str_alloc(); nn_session_run rewinds it
 * to the mark that the plan left, so the chunks are reused run after run and
 * a steady stream of inputs allocates nothing.  A run whose strings need
 * more bytes than any before adds one chunk (the store grows to the
 * high-water mark once, like the arena on a shape change), never above
 * NN_LIMIT_STRING_BYTES (nn_limits.h): past it the kernel fails with
 * NN_ERR_LIMIT.  The store also keeps objects that kernels derive once
 * from attributes (compiled regular expressions) for the session's life.
 */
#ifndef NN_STRINGS_H
#define NN_STRINGS_H

#include "nn_internal.h"

typedef struct nn_strstore nn_strstore;

/* A store that never holds more than limit bytes of chunks (0: the default
 * NN_LIMIT_STRING_BYTES).  Freed with nn_strstore_free (NULL ok), which also
 * frees the attached objects. */
nn_status nn_strstore_create(int64_t limit, nn_strstore **out);
void nn_strstore_free(nn_strstore *s);
/* Forget every string (a new plan); the chunks are kept for reuse. */
void nn_strstore_clear(nn_strstore *s);
/* What the store holds now survives nn_strstore_rewind (values folded at
 * plan time); the session marks after each plan. */
void nn_strstore_mark(nn_strstore *s);
/* Back to the mark: the start of a run. */
void nn_strstore_rewind(nn_strstore *s);
/* Bytes of chunks held (memory stats). */
size_t nn_strstore_bytes(const nn_strstore *s);

/* len bytes from the store of c into *out, valid until the next rewind or
 * clear (len 0 gives a valid pointer).  Fails through nn_fail: NN_ERR_LIMIT
 * past the limit, NN_ERR_NOMEM, or NN_ERR_UNSUPPORTED when c has no store
 * (a context built outside a session). */
nn_status nn_str_alloc(nn_ctx *c, size_t len, char **out);

/* Objects derived once per session (a compiled pattern), found by kind and
 * key (both NUL-terminated; the store copies them).  find: NULL when absent.
 * attach: the store owns obj from then on and frees it with free_fn at
 * nn_strstore_free, also when attach fails. */
void *nn_strstore_find(const nn_strstore *s, const char *kind, const char *key);
nn_status nn_strstore_attach(nn_strstore *s, const char *kind, const char *key, void *obj,
                             void (*free_fn)(void *obj));

/* Byte-wise equality and order (memcmp, then length) of two views. */
static inline bool nn_str_eq(const nn_string *a, const nn_string *b) {
  return a->len == b->len && (a->len == 0 || memcmp(a->data, b->data, a->len) == 0);
}
static inline int nn_str_cmp(const nn_string *a, const nn_string *b) {
  size_t n = a->len < b->len ? a->len : b->len;
  int r = n ? memcmp(a->data, b->data, n) : 0;
  return r ? r : (a->len < b->len ? -1 : a->len > b->len);
}

#endif

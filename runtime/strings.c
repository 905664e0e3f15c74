/* strings.c - the session's string store (nn_strings.h).
 *
 * Chunks in an array, filled in order from the first: an allocation takes
 * the current chunk's free tail, else moves on to the next chunk that is
 * large enough (the ones skipped keep their bytes until the next rewind),
 * else adds a chunk of max(len, twice the last, NN_STRING_CHUNK_BYTES).
 * Rewind and clear only move the fill position: no chunk is freed before
 * nn_strstore_free, so a run that needs no more bytes than an earlier one
 * allocates nothing. */
#include <string.h>

#include "nn_limits.h"
#include "nn_strings.h"

#define NN_STRING_CHUNK_BYTES ((size_t)64 << 10)
#define NN_STRING_MAX_CHUNKS 64 /* doubling from 64 KiB passes any limit first */

typedef struct str_chunk {
  char *base;
  size_t cap, used;
} str_chunk;

typedef struct str_obj {
  char *kind, *key;
  void *obj;
  void (*free_fn)(void *);
} str_obj;

struct nn_strstore {
  str_chunk chunks[NN_STRING_MAX_CHUNKS];
  int n_chunks;
  int cur;        /* chunk being filled */
  int mark_chunk; /* the mark: chunk and fill of chunks[mark_chunk] */
  size_t mark_used;
  size_t held, limit;
  str_obj *objs;
  int n_objs, cap_objs;
};

nn_status nn_strstore_create(int64_t limit, nn_strstore **out) {
  *out = nn_calloc(1, sizeof **out);
  if (!*out)
    return NN_ERR_NOMEM;
  (*out)->limit = (size_t)(limit > 0 ? limit : NN_LIMIT_STRING_BYTES);
  return NN_OK;
}

void nn_strstore_free(nn_strstore *s) {
  if (!s)
    return;
  for (int i = 0; i < s->n_chunks; i++)
    nn_free(s->chunks[i].base);
  for (int i = 0; i < s->n_objs; i++) {
    if (s->objs[i].free_fn)
      s->objs[i].free_fn(s->objs[i].obj);
    nn_free(s->objs[i].kind);
    nn_free(s->objs[i].key);
  }
  nn_free(s->objs);
  nn_free(s);
}

void nn_strstore_clear(nn_strstore *s) {
  if (!s)
    return;
  for (int i = 0; i < s->n_chunks; i++)
    s->chunks[i].used = 0;
  s->cur = s->mark_chunk = 0;
  s->mark_used = 0;
}

void nn_strstore_mark(nn_strstore *s) {
  if (!s)
    return;
  s->mark_chunk = s->cur;
  s->mark_used = s->n_chunks ? s->chunks[s->cur].used : 0;
}

void nn_strstore_rewind(nn_strstore *s) {
  if (!s)
    return;
  for (int i = s->mark_chunk + 1; i < s->n_chunks; i++)
    s->chunks[i].used = 0;
  if (s->n_chunks)
    s->chunks[s->mark_chunk].used = s->mark_used;
  s->cur = s->mark_chunk;
}

size_t nn_strstore_bytes(const nn_strstore *s) {
  return s ? s->held : 0;
}

nn_status nn_str_alloc(nn_ctx *c, size_t len, char **out) {
  nn_strstore *s = c->strings;
  *out = NULL;
  if (!s)
    return nn_fail(c, NN_ERR_UNSUPPORTED, "string outputs need a session (no string store here)");
  for (int i = s->cur; i < s->n_chunks; i++) {
    str_chunk *k = &s->chunks[i];
    if (k->cap - k->used >= len) {
      char *p = k->base + k->used;
      k->used += len;
      s->cur = i;
      *out = p;
      return NN_OK;
    }
  }
  size_t room = s->limit > s->held ? s->limit - s->held : 0;
  if (len > room || s->n_chunks == NN_STRING_MAX_CHUNKS)
    return nn_fail(c, NN_ERR_LIMIT,
                   "the strings of this run need more than the limit of %zu "
                   "bytes (NN_LIMIT_STRING_BYTES)",
                   s->limit);
  size_t last = s->n_chunks ? s->chunks[s->n_chunks - 1].cap : 0;
  size_t cap = last > room / 2 ? room : 2 * last;
  if (cap < NN_STRING_CHUNK_BYTES)
    cap = NN_STRING_CHUNK_BYTES;
  if (cap < len)
    cap = len;
  if (cap > room)
    cap = room;
  char *base = nn_malloc(cap);
  if (!base)
    return nn_fail(c, NN_ERR_NOMEM, "out of memory for %zu bytes of strings", cap);
  str_chunk *k = &s->chunks[s->n_chunks];
  k->base = base;
  k->cap = cap;
  k->used = len;
  s->held += cap;
  s->cur = s->n_chunks++;
  *out = base;
  return NN_OK;
}

void *nn_strstore_find(const nn_strstore *s, const char *kind, const char *key) {
  for (int i = 0; s && i < s->n_objs; i++)
    if (strcmp(s->objs[i].kind, kind) == 0 && strcmp(s->objs[i].key, key) == 0)
      return s->objs[i].obj;
  return NULL;
}

nn_status nn_strstore_attach(nn_strstore *s, const char *kind, const char *key, void *obj,
                             void (*free_fn)(void *obj)) {
  if (!s) {
    if (free_fn)
      free_fn(obj);
    return NN_ERR_INVALID_ARG;
  }
  if (s->n_objs == s->cap_objs) {
    int cap = s->cap_objs ? 2 * s->cap_objs : 4;
    str_obj *p = nn_realloc(s->objs, (size_t)cap * sizeof *p);
    if (!p) {
      if (free_fn)
        free_fn(obj);
      return NN_ERR_NOMEM;
    }
    s->objs = p;
    s->cap_objs = cap;
  }
  str_obj *o = &s->objs[s->n_objs];
  o->kind = nn_strdup(kind);
  o->key = nn_strdup(key);
  if (!o->kind || !o->key) {
    nn_free(o->kind);
    nn_free(o->key);
    if (free_fn)
      free_fn(obj);
    return NN_ERR_NOMEM;
  }
  o->obj = obj;
  o->free_fn = free_fn;
  s->n_objs++;
  return NN_OK;
}

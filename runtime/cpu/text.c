/* text.c - CPU kernel of TfIdfVectorizer (9) over integer tokens.
 *
 * The pool lists the n-grams of each size back to back (ngram_counts gives
 * where each size starts); n-gram number k of the pool, counting every size,
 * lands in output column ngram_indexes[k].  Prepare flattens the n-grams of
 * the sizes in [min_gram_length, max_gram_length] into (size, pool offset,
 * column) entries; run matches every (skip distance, start, size) window of
 * a row against them. */
#include "cpu/kernel_util.h"

enum { TFIDF_TF, TFIDF_IDF, TFIDF_TFIDF };

typedef struct tfidf_gram {
  int64_t size, off, col;
} tfidf_gram;

typedef struct tfidf_params {
  int mode;
  int64_t min_n, max_n, max_skip, out_size, rows, cols, n_grams;
  tfidf_gram grams[];
} tfidf_params;

static nn_status tfidf_prepare(nn_ctx *c, nn_node *n) {
  static const char *const modes[] = {"TF", "IDF", "TFIDF", NULL};
  nn_value *x = n->x[0];
  if (!ku_is_index(x->dtype))
    return nn_fail(c, NN_ERR_UNSUPPORTED, "unsupported input type %s (int32/int64 tokens only)",
                   nn_dtype_name(x->dtype));
  if (x->rank > 2 || (x->rank == 2 && x->dims[0] < 1))
    return nn_fail(c, NN_ERR_SHAPE, "input must be [C] or [B, C] with B > 0");
  int mode;
  nn_status st = ku_attr_choice(c, n, "mode", "", modes, &mode);
  if (st != NN_OK)
    return st;
  int n_pool, n_counts, n_idx, n_w;
  nn_attr_ints(n, "pool_int64s", &n_pool);
  const int64_t *counts = nn_attr_ints(n, "ngram_counts", &n_counts);
  const int64_t *idx = nn_attr_ints(n, "ngram_indexes", &n_idx);
  nn_attr_floats(n, "weights", &n_w);
  if (nn_attr_get(n, "pool_strings"))
    return nn_fail(c, NN_ERR_UNSUPPORTED, "string pools are not supported");
  int64_t min_n = nn_attr_int(n, "min_gram_length", 0);
  int64_t max_n = nn_attr_int(n, "max_gram_length", 0);
  int64_t max_skip = nn_attr_int(n, "max_skip_count", 0);
  if (min_n < 1 || max_n < min_n || max_skip < 0 || max_skip > INT32_MAX || n_idx < 1)
    return nn_fail(c, NN_ERR_INVALID_MODEL, "invalid gram lengths, skip count or ngram_indexes");
  int64_t out_size = 0;
  for (int i = 0; i < n_idx; i++) {
    if (idx[i] < 0 || idx[i] > INT32_MAX)
      return nn_fail(c, NN_ERR_INVALID_MODEL, "ngram_indexes[%d] = %lld out of range", i,
                     (long long)idx[i]);
    if (idx[i] + 1 > out_size)
      out_size = idx[i] + 1;
  }
  if (n_w && n_w < out_size)
    return nn_fail(c, NN_ERR_INVALID_MODEL, "weights has %d values for %lld columns", n_w,
                   (long long)out_size);
  tfidf_params *p = nn_calloc(1, sizeof *p + (size_t)n_pool * sizeof(tfidf_gram));
  if (!p)
    return nn_fail(c, NN_ERR_NOMEM, "out of memory");
  n->priv = p;
  p->mode = mode;
  p->min_n = min_n;
  p->max_n = max_n;
  p->max_skip = max_skip;
  p->out_size = out_size;
  int64_t id = 0;
  for (int i = 0; i < n_counts; i++) {
    int64_t size = i + 1, start = counts[i], end = i + 1 < n_counts ? counts[i + 1] : n_pool;
    if (start < 0 || end < start || end > n_pool)
      return nn_fail(c, NN_ERR_INVALID_MODEL, "ngram_counts is not an increasing list of pool "
                     "offsets");
    for (int64_t off = start; off + size <= end; off += size, id++) {
      if (id >= n_idx)
        return nn_fail(c, NN_ERR_INVALID_MODEL, "more n-grams than ngram_indexes entries");
      if (size < min_n || size > max_n)
        continue;
      p->grams[p->n_grams++] = (tfidf_gram){size, off, idx[id]};
    }
  }
  p->rows = x->rank == 2 ? x->dims[0] : 1;
  p->cols = x->rank == 0 ? 1 : x->dims[x->rank - 1];
  int64_t od[2] = {p->rows, out_size};
  if (x->rank == 2)
    return nn_set_output(c, n->y[0], NN_DTYPE_FLOAT, 2, od);
  return nn_set_output(c, n->y[0], NN_DTYPE_FLOAT, 1, &out_size);
}

/* Column of the pool n-gram of this size equal to the window, -1 if none; on
 * duplicates the last one wins, as when the pool is loaded into a trie. */
static int64_t tfidf_match(const tfidf_params *p, const int64_t *pool, const nn_value *x,
                           int64_t base, int64_t step, int64_t size) {
  for (int64_t g = p->n_grams - 1; g >= 0; g--) {
    const tfidf_gram *gr = &p->grams[g];
    if (gr->size != size)
      continue;
    int64_t k = 0;
    while (k < size && nn_value_get_int(x, base + k * step) == pool[gr->off + k])
      k++;
    if (k == size)
      return gr->col;
  }
  return -1;
}

static nn_status tfidf_run(nn_ctx *c, nn_node *n) {
  (void)c;
  const tfidf_params *p = n->priv;
  nn_value *x = n->x[0], *y = n->y[0];
  int n_pool, n_w;
  const int64_t *pool = nn_attr_ints(n, "pool_int64s", &n_pool);
  const float *w = nn_attr_floats(n, "weights", &n_w);
  float *out = y->data;
  for (int64_t i = 0; i < y->numel; i++)
    out[i] = 0.0f;
  if (x->numel == 0)
    return NN_OK;
  for (int64_t r = 0; r < p->rows; r++) {
    float *row = out + r * p->out_size;
    int64_t base = r * p->cols, start_n = p->min_n;
    /* a skip distance of cols or more fits no 2-gram in the row: stop there,
     * or a hostile max_skip_count (up to 2^31) spins for minutes */
    for (int64_t skip = 1; skip <= p->max_skip + 1 && skip <= p->cols; skip++) {
      for (int64_t s = 0; s < p->cols; s++) {
        if (s + skip * (start_n - 1) >= p->cols)
          break;
        for (int64_t size = start_n; size <= p->max_n; size++) {
          if (s + skip * (size - 1) >= p->cols)
            break;
          int64_t col = tfidf_match(p, pool, x, base + s, skip, size);
          if (col >= 0)
            row[col] += 1.0f;
        }
      }
      /* unigrams do not depend on the skip distance: count them once */
      if (start_n == 1) {
        start_n = 2;
        if (start_n > p->max_n)
          break;
      }
    }
    for (int64_t k = 0; k < p->out_size; k++) {
      if (p->mode == TFIDF_IDF)
        row[k] = row[k] > 0.0f ? (n_w ? w[k] : 1.0f) : 0.0f;
      else if (p->mode == TFIDF_TFIDF && n_w)
        row[k] *= w[k];
    }
  }
  return NN_OK;
}

const nn_kernel nn_kernels_text[] = {
  {.name = "TfIdfVectorizer", .prepare = tfidf_prepare, .run = tfidf_run},
  {0},
};

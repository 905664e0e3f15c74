/* text.c - CPU kernel of TfIdfVectorizer (9) over integer tokens.
 *
 * The attributes and the pool's layout are checked by the op layer
 * (ops/text.h, ops/text.c).  Prepare flattens the n-grams of the sizes in
 * [min_gram_length, max_gram_length] into (size, pool offset, column)
 * entries; run matches every (skip distance, start, size) window of a row
 * against them. */
#include "cpu/kernel_util.h"
#include "ops/text.h"

typedef struct tfidf_gram {
  int64_t size, off, col;
} tfidf_gram;

typedef struct tfidf_params {
  int mode;
  int64_t min_n, max_n, max_skip, out_size, rows, cols, n_grams;
  tfidf_gram grams[];
} tfidf_params;

static nn_status tfidf_prepare(nn_ctx *c, nn_node *n) {
  nn_value *x = n->x[0];
  if (!ku_is_index(x->dtype))
    return nn_fail(c, NN_ERR_UNSUPPORTED, "unsupported input type %s (int32/int64 tokens only)",
                   nn_dtype_name(x->dtype));
  if (nn_attr_get(n, "pool_strings"))
    return nn_fail(c, NN_ERR_UNSUPPORTED, "string pools are not supported");
  nn_tfidf_attrs a;
  nn_status st = nn_tfidf_attrs_init(c, n, &a);
  if (st != NN_OK)
    return st;
  int n_pool, n_counts, n_idx;
  nn_attr_ints(n, "pool_int64s", &n_pool);
  const int64_t *counts = nn_attr_ints(n, "ngram_counts", &n_counts);
  const int64_t *idx = nn_attr_ints(n, "ngram_indexes", &n_idx);
  tfidf_params *p = nn_calloc(1, sizeof *p + (size_t)n_pool * sizeof(tfidf_gram));
  if (!p)
    return nn_fail(c, NN_ERR_NOMEM, "out of memory");
  n->priv = p;
  p->mode = a.mode;
  p->min_n = a.min_n;
  p->max_n = a.max_n;
  p->max_skip = a.max_skip;
  p->out_size = a.out_size;
  /* the pool's layout is checked (nn_tfidf_attrs_init) */
  int64_t id = 0;
  for (int i = 0; i < n_counts; i++) {
    int64_t size = i + 1, start = counts[i], end = i + 1 < n_counts ? counts[i + 1] : n_pool;
    for (int64_t off = start; off + size <= end; off += size, id++) {
      if (size < p->min_n || size > p->max_n)
        continue;
      p->grams[p->n_grams++] = (tfidf_gram){size, off, idx[id]};
    }
  }
  p->rows = x->rank == 2 ? x->dims[0] : 1;
  p->cols = x->rank == 0 ? 1 : x->dims[x->rank - 1];
  return NN_OK;
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
      if (p->mode == NN_TFIDF_IDF)
        row[k] = row[k] > 0.0f ? (n_w ? w[k] : 1.0f) : 0.0f;
      else if (p->mode == NN_TFIDF_TFIDF && n_w)
        row[k] *= w[k];
    }
  }
  return NN_OK;
}

const nn_kernel nn_kernels_text[] = {
  {.name = "TfIdfVectorizer", .prepare = tfidf_prepare, .run = tfidf_run},
  {0},
};

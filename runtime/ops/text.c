/* text.c - the text family in the op layer: its operators, their versions and
 * their shape and dtype inference (nn_ops_text[], collected by ops/registry.c),
 * and TfIdfVectorizer's attributes (text.h). */
#include "ops/inputs.h"
#include "ops/text.h"

nn_status nn_tfidf_attrs_init(nn_ctx *c, const nn_node *n, nn_tfidf_attrs *a) {
  static const char *const modes[] = {"TF", "IDF", "TFIDF", NULL};
  nn_status st = nn_op_attr_choice(c, n, "mode", "", modes, &a->mode);
  if (st != NN_OK)
    return st;
  int n_pool, n_counts, n_idx, n_w;
  nn_attr_ints(n, "pool_int64s", &n_pool);
  const int64_t *counts = nn_attr_ints(n, "ngram_counts", &n_counts);
  const int64_t *idx = nn_attr_ints(n, "ngram_indexes", &n_idx);
  nn_attr_floats(n, "weights", &n_w);
  /* the pool is pool_strings or pool_int64s */
  const nn_attr *ps = nn_attr_get(n, "pool_strings");
  if (ps && ps->type == NN_ATTR_STRINGS)
    n_pool = ps->n;
  a->min_n = nn_attr_int(n, "min_gram_length", 0);
  a->max_n = nn_attr_int(n, "max_gram_length", 0);
  a->max_skip = nn_attr_int(n, "max_skip_count", 0);
  if (a->min_n < 1 || a->max_n < a->min_n || a->max_skip < 0 || a->max_skip > INT32_MAX ||
      n_idx < 1)
    return nn_fail(c, NN_ERR_INVALID_MODEL, "invalid gram lengths, skip count or ngram_indexes");
  a->out_size = 0;
  for (int i = 0; i < n_idx; i++) {
    if (idx[i] < 0 || idx[i] > INT32_MAX)
      return nn_fail(c, NN_ERR_INVALID_MODEL, "ngram_indexes[%d] = %lld out of range", i,
                     (long long)idx[i]);
    if (idx[i] + 1 > a->out_size)
      a->out_size = idx[i] + 1;
  }
  if (n_w && n_w < a->out_size)
    return nn_fail(c, NN_ERR_INVALID_MODEL, "weights has %d values for %lld columns", n_w,
                   (long long)a->out_size);
  int64_t id = 0;
  for (int i = 0; i < n_counts; i++) {
    int64_t size = i + 1, start = counts[i], end = i + 1 < n_counts ? counts[i + 1] : n_pool;
    if (start < 0 || end < start || end > n_pool)
      return nn_fail(c, NN_ERR_INVALID_MODEL, "ngram_counts is not an increasing list of pool "
                     "offsets");
    for (int64_t off = start; off + size <= end; off += size, id++)
      if (id >= n_idx)
        return nn_fail(c, NN_ERR_INVALID_MODEL, "more n-grams than ngram_indexes entries");
  }
  return NN_OK;
}

/* [C] gives [out_size], [B, C] gives [B, out_size]. */
static nn_status tfidf_infer(nn_ctx *c, nn_node *n) {
  const nn_value *x = n->x[0];
  if (x->rank > 2 || (x->rank == 2 && x->dims[0] < 1))
    return nn_fail(c, NN_ERR_SHAPE, "input must be [C] or [B, C] with B > 0");
  nn_tfidf_attrs a;
  nn_status st = nn_tfidf_attrs_init(c, n, &a);
  if (st != NN_OK)
    return st;
  if (x->rank == 2) {
    int64_t od[2] = {x->dims[0], a.out_size};
    return nn_set_output(c, n->y[0], NN_DTYPE_FLOAT, 2, od);
  }
  return nn_set_output(c, n->y[0], NN_DTYPE_FLOAT, 1, &a.out_size);
}

/* The family's operators (ops/registry.c), with their shape and dtype
 * inference; cpu/text.c has the kernel. */
const nn_op_def nn_ops_text[] = {
  {.name = "TfIdfVectorizer", .versions = {9}, .infer = tfidf_infer},
  {0},
};

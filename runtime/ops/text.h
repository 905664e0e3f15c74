/* text.h - TfIdfVectorizer's attributes, for every backend (cpu/text.c).
 *
 * The pool lists the n-grams of each size back to back (ngram_counts gives
 * where each size starts); n-gram number k of the pool, counting every size,
 * lands in output column ngram_indexes[k].  The output has one column per
 * index up to the largest of ngram_indexes.  Errors go through nn_fail(c);
 * nothing is allocated. */
#ifndef NN_OPS_TEXT_H
#define NN_OPS_TEXT_H

#include "nn_internal.h"

enum { NN_TFIDF_TF, NN_TFIDF_IDF, NN_TFIDF_TFIDF };

typedef struct nn_tfidf_attrs {
  int mode;
  int64_t min_n, max_n, max_skip, out_size;
} nn_tfidf_attrs;

/* The mode, the gram lengths and skip count, and the pool's layout checked
 * against ngram_counts, ngram_indexes and weights. */
nn_status nn_tfidf_attrs_init(nn_ctx *c, const nn_node *n, nn_tfidf_attrs *a);

#endif /* NN_OPS_TEXT_H */

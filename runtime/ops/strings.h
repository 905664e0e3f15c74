/* strings.h - how StringSplit splits and which strings StringNormalizer
 * keeps, for every backend (cpu/strings.c): both decide an output shape
 * from the input's values (input 0 is a shape input), so the op layer needs
 * them as much as the kernels.  Every function treats a string as bytes
 * (invalid UTF-8 is carried through unchanged).  Errors go through
 * nn_fail(c); nothing is allocated. */
#ifndef NN_OPS_STRINGS_H
#define NN_OPS_STRINGS_H

#include "nn_internal.h"

/* ---- StringSplit ------------------------------------------------------------- */
typedef struct nn_strsplit_attrs {
  const char *delim; /* NULL: runs of whitespace */
  size_t dlen;
  int64_t maxsplit; /* < 0: no limit */
} nn_strsplit_attrs;

void nn_strsplit_attrs_init(const nn_node *n, nn_strsplit_attrs *a);

/* Split s as Python's str.split (without a delimiter: on runs of ASCII
 * whitespace); fn(arg, k, piece, len) for every piece k when fn is not
 * NULL; returns the count. */
typedef void (*nn_str_piece_fn)(void *arg, int64_t k, const char *p, size_t len);
int64_t nn_str_split(const nn_strsplit_attrs *a, const nn_string *s, nn_str_piece_fn fn,
                     void *arg);

/* ---- StringNormalizer: drop the stop words, change the case ----------------- */
enum { NN_STRNORM_NONE, NN_STRNORM_LOWER, NN_STRNORM_UPPER };

typedef struct nn_strnorm_attrs {
  int action;
  bool case_sensitive;
} nn_strnorm_attrs;

nn_status nn_strnorm_attrs_init(nn_ctx *c, const nn_node *n, nn_strnorm_attrs *a);

/* Whether s is one of the stopwords (compared ASCII case-insensitively
 * unless is_case_sensitive). */
bool nn_strnorm_is_stop(const nn_node *n, const nn_strnorm_attrs *a, const nn_string *s);

#endif /* NN_OPS_STRINGS_H */

/* strings.c - the strings family in the op layer: its operators, their versions and
 * their shape and dtype inference (nn_ops_strings[], collected by ops/registry.c),
 * and the splitting and stop words of strings.h.
 *
 * StringSplit's default splits on ASCII whitespace, as Python's str.split on
 * ASCII text, the reference of the op; StringNormalizer changes the case of
 * ASCII letters only. */
#include <string.h>

#include "ops/inputs.h"
#include "ops/strings.h"

static nn_status str_all_string(nn_ctx *c, const nn_node *n, int count) {
  for (int i = 0; i < count; i++)
    if (i >= n->n_in || !n->x[i] || n->x[i]->dtype != NN_DTYPE_STRING)
      return nn_fail(c, NN_ERR_DTYPE, "input %d must be a string tensor", i);
  return NN_OK;
}

/* ---- StringConcat: y = a + b, numpy broadcasting --------------------------- */
static nn_status strcat_infer(nn_ctx *c, nn_node *n) {
  if (n->n_in != 2 || n->n_out != 1 || !n->y[0])
    return nn_fail(c, NN_ERR_INVALID_MODEL, "expects 2 inputs and 1 output");
  nn_status st = str_all_string(c, n, 2);
  if (st != NN_OK)
    return st;
  const nn_value *a = n->x[0], *b = n->x[1];
  int rank;
  int64_t dims[NN_MAX_RANK];
  if (nn_broadcast_shape(a->rank, a->dims, b->rank, b->dims, &rank, dims) != NN_OK)
    return nn_fail(c, NN_ERR_SHAPE, "the inputs do not broadcast");
  return nn_set_output(c, n->y[0], NN_DTYPE_STRING, rank, dims);
}

/* ---- StringSplit ------------------------------------------------------------- */

/* Python's ASCII whitespace (str.split without a separator) */
static bool str_space(unsigned char ch) {
  return ch == ' ' || (ch >= '\t' && ch <= '\r') || (ch >= 0x1c && ch <= 0x1f);
}

void nn_strsplit_attrs_init(const nn_node *n, nn_strsplit_attrs *p) {
  memset(p, 0, sizeof *p);
  const nn_attr *d = nn_attr_get(n, "delimiter");
  if (d && d->type == NN_ATTR_STRING && d->s_len > 0) {
    p->delim = d->s;
    p->dlen = d->s_len;
  }
  p->maxsplit = nn_attr_int(n, "maxsplit", -1); /* absent or negative: every split */
}

int64_t nn_str_split(const nn_strsplit_attrs *p, const nn_string *s, nn_str_piece_fn fn,
                     void *arg) {
  if (s->len == 0) { /* "".split() is [], "".split(sep) is [""] */
    if (p->delim && fn)
      fn(arg, 0, "", 0);
    return p->delim ? 1 : 0;
  }
  const char *b = s->data, *e = s->data + s->len;
  int64_t k = 0;
  if (!p->delim) {
    while (b < e) {
      while (b < e && str_space((unsigned char)*b))
        b++;
      if (b == e)
        break;
      const char *q = b;
      if (p->maxsplit >= 0 && k == p->maxsplit) {
        q = e; /* the rest, its trailing space included (Python's rule) */
      } else {
        while (q < e && !str_space((unsigned char)*q))
          q++;
      }
      if (fn)
        fn(arg, k, b, (size_t)(q - b));
      k++;
      b = q;
    }
    return k;
  }
  for (;;) {
    const char *q = NULL;
    if (p->maxsplit < 0 || k < p->maxsplit)
      for (const char *t = b; (size_t)(e - t) >= p->dlen; t++)
        if (memcmp(t, p->delim, p->dlen) == 0) {
          q = t;
          break;
        }
    if (!q) {
      if (fn)
        fn(arg, k, b, (size_t)(e - b));
      return k + 1;
    }
    if (fn)
      fn(arg, k, b, (size_t)(q - b));
    k++;
    b = q + p->dlen;
  }
}

/* The substrings padded to the most pieces of any string, and each count. */
static nn_status strsplit_infer(nn_ctx *c, nn_node *n) {
  if (n->n_in != 1 || n->n_out != 2 || !n->y[0] || !n->y[1])
    return nn_fail(c, NN_ERR_INVALID_MODEL, "expects 1 input and 2 outputs");
  nn_status st = str_all_string(c, n, 1);
  if (st != NN_OK)
    return st;
  const nn_value *x = n->x[0];
  if (x->rank + 1 > NN_MAX_RANK)
    return nn_fail(c, NN_ERR_SHAPE, "rank %d is too large", x->rank);
  nn_strsplit_attrs a;
  nn_strsplit_attrs_init(n, &a);
  int64_t width = 0;
  const nn_string *xs = x->data;
  for (int64_t i = 0; i < x->numel; i++) {
    int64_t k = nn_str_split(&a, &xs[i], NULL, NULL);
    if (k > width)
      width = k;
  }
  int64_t dims[NN_MAX_RANK];
  memcpy(dims, x->dims, sizeof(int64_t) * (size_t)x->rank);
  dims[x->rank] = width;
  if ((st = nn_set_output(c, n->y[0], NN_DTYPE_STRING, x->rank + 1, dims)) != NN_OK)
    return st;
  return nn_set_output(c, n->y[1], NN_DTYPE_INT64, x->rank, x->dims);
}

/* ---- RegexFullMatch ---------------------------------------------------------- */
static nn_status regex_infer(nn_ctx *c, nn_node *n) {
  if (n->n_in != 1 || n->n_out != 1 || !n->y[0])
    return nn_fail(c, NN_ERR_INVALID_MODEL, "expects 1 input and 1 output");
  nn_status st = str_all_string(c, n, 1);
  if (st != NN_OK)
    return st;
  const nn_attr *a = nn_attr_get(n, "pattern");
  if (!a || a->type != NN_ATTR_STRING)
    return nn_fail(c, NN_ERR_INVALID_MODEL, "attribute 'pattern' (a string) is missing");
  return nn_set_output(c, n->y[0], NN_DTYPE_BOOL, n->x[0]->rank, n->x[0]->dims);
}

/* ---- StringNormalizer ------------------------------------------------------- */

nn_status nn_strnorm_attrs_init(nn_ctx *c, const nn_node *n, nn_strnorm_attrs *p) {
  static const char *const actions[] = {"NONE", "LOWER", "UPPER", NULL};
  memset(p, 0, sizeof *p);
  nn_status st = nn_op_attr_choice(c, n, "case_change_action", "NONE", actions, &p->action);
  if (st != NN_OK)
    return st;
  p->case_sensitive = nn_attr_int(n, "is_case_sensitive", 0) != 0;
  return NN_OK;
}

bool nn_strnorm_is_stop(const nn_node *n, const nn_strnorm_attrs *p, const nn_string *s) {
  const nn_attr *sw = nn_attr_get(n, "stopwords");
  if (!sw || sw->type != NN_ATTR_STRINGS)
    return false;
  for (int k = 0; k < sw->n; k++) {
    const char *w = sw->strings[k];
    size_t len = strlen(w);
    if (len != s->len)
      continue;
    bool eq = true;
    for (size_t i = 0; eq && i < len; i++) {
      unsigned char a = (unsigned char)w[i], b = (unsigned char)s->data[i];
      if (!p->case_sensitive) {
        a = (unsigned char)(a >= 'A' && a <= 'Z' ? a + 32 : a);
        b = (unsigned char)(b >= 'A' && b <= 'Z' ? b + 32 : b);
      }
      eq = a == b;
    }
    if (eq)
      return true;
  }
  return false;
}

/* The strings that are not stop words; when none is kept, one empty string. */
static nn_status strnorm_infer(nn_ctx *c, nn_node *n) {
  if (n->n_in != 1 || n->n_out != 1 || !n->y[0])
    return nn_fail(c, NN_ERR_INVALID_MODEL, "expects 1 input and 1 output");
  nn_status st = str_all_string(c, n, 1);
  if (st != NN_OK)
    return st;
  const nn_value *x = n->x[0];
  if (!(x->rank == 1 || (x->rank == 2 && x->dims[0] == 1)))
    return nn_fail(c, NN_ERR_SHAPE, "input must be [C] or [1, C]");
  nn_strnorm_attrs a;
  if ((st = nn_strnorm_attrs_init(c, n, &a)) != NN_OK)
    return st;
  int64_t kept = 0;
  const nn_string *xs = x->data;
  for (int64_t i = 0; i < x->numel; i++)
    kept += !nn_strnorm_is_stop(n, &a, &xs[i]);
  int64_t dims[2] = {1, 1};
  if (x->rank == 1)
    dims[0] = kept ? kept : 1;
  else
    dims[1] = kept ? kept : 1;
  return nn_set_output(c, n->y[0], NN_DTYPE_STRING, x->rank, dims);
}

/* The family's operators (ops/registry.c), each with its shape and dtype
 * inference; cpu/strings.c has the kernels.  StringSplit's and
 * StringNormalizer's output shapes depend on the strings: input 0 is a shape
 * input (the session re-plans when its strings change). */
const nn_op_def nn_ops_strings[] = {
  {.name = "StringConcat", .versions = {20}, .infer = strcat_infer},
  {.name = "StringSplit", .versions = {20}, .shape_inputs = 1u << 0, .infer = strsplit_infer},
  {.name = "RegexFullMatch", .versions = {20}, .infer = regex_infer},
  {.name = "StringNormalizer", .versions = {10}, .shape_inputs = 1u << 0,
   .infer = strnorm_infer},
  {0},
};

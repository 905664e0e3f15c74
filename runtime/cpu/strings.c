/* strings.c - the string operators: StringConcat (20), StringSplit (20),
 * RegexFullMatch (20), StringNormalizer (10).  (Equal on strings is in
 * binary.c, LabelEncoder in ml.c, the string elements in nn_strings.h.)
 *
 * The bytes an op makes come from the session's string store
 * (nn_str_alloc), sized first and taken in one piece per run; views into
 * an input's bytes are never handed out as outputs, since the input's
 * bytes are the caller's and outputs must outlive the run.  Every kernel
 * treats the input as bytes: invalid UTF-8 is carried through unchanged
 * (StringNormalizer changes the case of ASCII letters only; StringSplit's
 * default splits on ASCII whitespace, as Python's str.split on ASCII text,
 * the reference of the op).  StringSplit's and StringNormalizer's output
 * shapes depend on the values: input 0 is a shape input (the session
 * re-plans when its strings change), and run checks that the strings still
 * fit the plan.  The shapes, the splitting and the stop words are the op
 * layer's (ops/strings.h, ops/strings.c). */
#include "cpu/kernel_util.h"
#include "nn_strings.h"
#include "ops/regex.h"
#include "ops/strings.h"

/* ---- StringConcat: y = a + b, numpy broadcasting --------------------------- */
typedef struct strcat_params {
  int rank;
  int64_t dims[NN_MAX_RANK], sa[NN_MAX_RANK], sb[NN_MAX_RANK];
} strcat_params;

static nn_status strcat_prepare(nn_ctx *c, nn_node *n) {
  const nn_value *a = n->x[0], *b = n->x[1], *y = n->y[0];
  strcat_params *p = nn_malloc(sizeof *p);
  if (!p)
    return nn_fail(c, NN_ERR_NOMEM, "out of memory");
  p->rank = y->rank;
  memcpy(p->dims, y->dims, sizeof(int64_t) * (size_t)y->rank);
  nn_broadcast_strides(a->rank, a->dims, p->rank, p->dims, p->sa);
  nn_broadcast_strides(b->rank, b->dims, p->rank, p->dims, p->sb);
  n->priv = p;
  return NN_OK;
}

static nn_status strcat_run(nn_ctx *c, nn_node *n) {
  const strcat_params *p = n->priv;
  const nn_string *a = n->x[0]->data, *b = n->x[1]->data;
  nn_string *y = n->y[0]->data;
  const int64_t total = n->y[0]->numel;
  /* pass 0 sizes the bytes, pass 1 writes them */
  size_t need = 0;
  char *out = NULL;
  for (int pass = 0; pass < 2; pass++) {
    int64_t idx[NN_MAX_RANK] = {0}, oa = 0, ob = 0;
    for (int64_t i = 0; i < total; i++) {
      const nn_string *sa = &a[oa], *sb = &b[ob];
      if (pass == 0) {
        if (sa->len > SIZE_MAX - need || sb->len > SIZE_MAX - need - sa->len)
          return nn_fail(c, NN_ERR_LIMIT, "the result's size overflows");
        need += sa->len + sb->len;
      } else {
        size_t la = sa->len, lb = sb->len;
        if (la)
          memcpy(out, sa->data, la);
        if (lb)
          memcpy(out + la, sb->data, lb);
        y[i].data = la + lb ? out : NULL;
        y[i].len = la + lb;
        out += la + lb;
      }
      for (int d = p->rank - 1; d >= 0; d--) { /* next index, offsets follow */
        oa += p->sa[d], ob += p->sb[d];
        if (++idx[d] < p->dims[d])
          break;
        oa -= p->sa[d] * idx[d], ob -= p->sb[d] * idx[d];
        idx[d] = 0;
      }
    }
    nn_status st;
    if (pass == 0 && (st = nn_str_alloc(c, need, &out)) != NN_OK)
      return st;
  }
  return NN_OK;
}

/* ---- StringSplit ------------------------------------------------------------- */
typedef struct strsplit_params {
  nn_strsplit_attrs a;
  int64_t width; /* the planned last dim of substrings */
} strsplit_params;

static nn_status strsplit_prepare(nn_ctx *c, nn_node *n) {
  strsplit_params *p = nn_malloc(sizeof *p);
  if (!p)
    return nn_fail(c, NN_ERR_NOMEM, "out of memory");
  nn_strsplit_attrs_init(n, &p->a);
  p->width = n->y[0]->dims[n->y[0]->rank - 1];
  n->priv = p;
  return NN_OK;
}

typedef struct strsplit_fill {
  nn_string *row;
  char **bytes;
  size_t *need;
} strsplit_fill;

static void strsplit_count(void *arg, int64_t k, const char *p, size_t len) {
  (void)k, (void)p;
  *((strsplit_fill *)arg)->need += len;
}

static void strsplit_put(void *arg, int64_t k, const char *p, size_t len) {
  strsplit_fill *f = arg;
  if (len)
    memcpy(*f->bytes, p, len);
  f->row[k].data = len ? *f->bytes : NULL;
  f->row[k].len = len;
  *f->bytes += len;
}

static nn_status strsplit_run(nn_ctx *c, nn_node *n) {
  const strsplit_params *p = n->priv;
  const nn_value *x = n->x[0];
  const nn_string *xs = x->data;
  nn_string *y = n->y[0]->data;
  int64_t *lens = n->y[1]->data;
  size_t need = 0;
  strsplit_fill f = {NULL, NULL, &need};
  for (int64_t i = 0; i < x->numel; i++) {
    int64_t k = nn_str_split(&p->a, &xs[i], strsplit_count, &f);
    if (k > p->width) /* the bytes behind the views changed after planning */
      return nn_fail(c, NN_ERR_RUNTIME,
                     "string %lld splits into %lld pieces, the plan has room "
                     "for %lld (its bytes changed since the plan)",
                     (long long)i, (long long)k, (long long)p->width);
  }
  char *bytes;
  nn_status st = nn_str_alloc(c, need, &bytes);
  if (st != NN_OK)
    return st;
  memset(y, 0, n->y[0]->nbytes); /* the padding: empty strings */
  f.bytes = &bytes;
  for (int64_t i = 0; i < x->numel; i++) {
    f.row = y + i * p->width;
    lens[i] = nn_str_split(&p->a, &xs[i], strsplit_put, &f);
  }
  return NN_OK;
}

/* ---- RegexFullMatch ---------------------------------------------------------- */
static nn_status regex_prepare(nn_ctx *c, nn_node *n) {
  const nn_attr *a = nn_attr_get(n, "pattern");
  if (!c->strings)
    return nn_fail(c, NN_ERR_UNSUPPORTED, "RegexFullMatch needs a session (no string store here)");
  /* compiled once per session, kept by the string store (freed at dispose) */
  nn_regex *re = nn_strstore_find(c->strings, "regex", a->s);
  if (!re) {
    char why[200];
    if (strlen(a->s) != a->s_len)
      return nn_fail(c, NN_ERR_UNSUPPORTED, "the pattern holds a NUL byte");
    re = nn_regex_compile(a->s, a->s_len, why, sizeof why);
    if (!re)
      return nn_fail(c, NN_ERR_UNSUPPORTED, "pattern '%.200s' is not supported: %s", a->s, why);
    if (nn_strstore_attach(c->strings, "regex", a->s, re, nn_regex_free) != NN_OK)
      return nn_fail(c, NN_ERR_NOMEM, "out of memory");
  }
  n->priv = NULL;
  return NN_OK;
}

static nn_status regex_run(nn_ctx *c, nn_node *n) {
  const nn_attr *a = nn_attr_get(n, "pattern");
  const nn_regex *re = nn_strstore_find(c->strings, "regex", a->s);
  if (!re)
    return nn_fail(c, NN_ERR_RUNTIME, "the compiled pattern is gone");
  const nn_string *xs = n->x[0]->data;
  uint8_t *y = n->y[0]->data;
  /* the matcher wants each subject NUL-terminated (regex.h): copies in the
   * store, which the next run reuses */
  size_t need = 0;
  for (int64_t i = 0; i < n->x[0]->numel; i++) {
    if (xs[i].len > (size_t)INT32_MAX || xs[i].len + 1 > SIZE_MAX - need)
      return nn_fail(c, NN_ERR_LIMIT, "string %lld has %zu bytes; the matcher takes 2 GiB at most",
                     (long long)i, xs[i].len);
    need += xs[i].len + 1;
  }
  char *buf;
  nn_status st = nn_str_alloc(c, need, &buf);
  if (st != NN_OK)
    return st;
  for (int64_t i = 0; i < n->x[0]->numel; i++) {
    if (xs[i].len)
      memcpy(buf, xs[i].data, xs[i].len);
    buf[xs[i].len] = '\0';
    y[i] = nn_regex_full_match(re, buf, xs[i].len);
    buf += xs[i].len + 1;
  }
  return NN_OK;
}

/* ---- StringNormalizer: drop the stop words, change the case ----------------- */
typedef struct strnorm_params {
  nn_strnorm_attrs a;
  int64_t kept; /* planned output count */
} strnorm_params;

static nn_status strnorm_prepare(nn_ctx *c, nn_node *n) {
  strnorm_params p = {0};
  nn_status st = nn_strnorm_attrs_init(c, n, &p.a);
  if (st != NN_OK)
    return st;
  const nn_string *xs = n->x[0]->data;
  for (int64_t i = 0; i < n->x[0]->numel; i++)
    p.kept += !nn_strnorm_is_stop(n, &p.a, &xs[i]);
  strnorm_params *pp = nn_malloc(sizeof *pp);
  if (!pp)
    return nn_fail(c, NN_ERR_NOMEM, "out of memory");
  *pp = p;
  n->priv = pp;
  return NN_OK;
}

static nn_status strnorm_run(nn_ctx *c, nn_node *n) {
  const strnorm_params *p = n->priv;
  const nn_string *xs = n->x[0]->data;
  nn_string *y = n->y[0]->data;
  int64_t kept = 0;
  size_t need = 0;
  for (int64_t i = 0; i < n->x[0]->numel; i++)
    if (!nn_strnorm_is_stop(n, &p->a, &xs[i]))
      kept++, need += xs[i].len;
  if (kept != p->kept)
    return nn_fail(c, NN_ERR_RUNTIME,
                   "%lld strings are kept, the plan has %lld (the bytes changed "
                   "since the plan)",
                   (long long)kept, (long long)p->kept);
  memset(y, 0, n->y[0]->nbytes); /* nothing kept: one empty string */
  char *out;
  nn_status st = nn_str_alloc(c, need, &out);
  if (st != NN_OK)
    return st;
  int64_t k = 0;
  for (int64_t i = 0; i < n->x[0]->numel; i++) {
    if (nn_strnorm_is_stop(n, &p->a, &xs[i]))
      continue;
    size_t len = xs[i].len;
    for (size_t j = 0; j < len; j++) {
      unsigned char ch = (unsigned char)xs[i].data[j];
      if (p->a.action == NN_STRNORM_LOWER && ch >= 'A' && ch <= 'Z')
        ch = (unsigned char)(ch + 32);
      else if (p->a.action == NN_STRNORM_UPPER && ch >= 'a' && ch <= 'z')
        ch = (unsigned char)(ch - 32);
      out[j] = (char)ch;
    }
    y[k].data = len ? out : NULL;
    y[k].len = len;
    out += len;
    k++;
  }
  return NN_OK;
}

/* Folding at plan time is fine: a folded value's views point into the
 * store's marked part (or into constants), valid for the plan's life. */
const nn_kernel nn_kernels_strings[] = {
  {.name = "StringConcat", .prepare = strcat_prepare, .run = strcat_run},
  {.name = "StringSplit", .prepare = strsplit_prepare, .run = strsplit_run},
  {.name = "RegexFullMatch", .prepare = regex_prepare, .run = regex_run},
  {.name = "StringNormalizer", .prepare = strnorm_prepare, .run = strnorm_run},
  {0},
};

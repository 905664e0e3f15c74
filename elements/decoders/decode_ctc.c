/* decode_ctc.c - CTC greedy decoding of text recognisers (PaddleOCR's
 * CTCLabelDecode), see decode.h.
 *
 * Classes: 0 the CTC blank (implicit), 1..n the dictionary's lines, n+1 a
 * space (PaddleOCR's use_space_char, on for every PP-OCR model).  Per batch
 * row: argmax per time step (the first maximum on ties, as numpy), a step
 * equal to the previous one is merged, blanks are dropped; a blank between
 * two equal steps separates them ("aa-a" -> "aa").  The confidence is the
 * mean maximum probability of the kept steps, 0 for an empty text.
 * Below space_threshold, a space also separates two characters when the
 * space class came close enough between them (decode.h, "Spaces").
 *
 * Memory: the dictionary (one block); the text buffer and the rows grow on
 * the first tensor needing more and are kept.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#include "decode_internal.h"

struct nd_ctc {
  char **chars;                /* n + 2 entries: "", dictionary..., " " */
  size_t *lens;
  int n_classes;
  size_t max_len;              /* longest entry in bytes */
  float space_threshold;       /* 1: plain greedy decoding */
  nd_labels *labels;           /* when loaded from a file (owns the strings) */
  char *own;                   /* when built from strings: the copies */
  char *text;                  /* rows' texts, NUL-separated */
  size_t text_cap;
  nd_ctc_result *rows;
  int rows_cap;
};

static const char ctc_blank[] = "";
static const char ctc_space[] = " ";

static nd_status ctc_alloc(int n, nd_ctc **out, nd_error *err) {
  nd_ctc *c = calloc(1, sizeof *c);
  if (!c)
    return nd_set_error(err, ND_ERR_NOMEM, "out of memory");
  c->n_classes = n + 2;
  c->space_threshold = 1.0f;
  c->chars = calloc((size_t)c->n_classes, sizeof *c->chars);
  c->lens = calloc((size_t)c->n_classes, sizeof *c->lens);
  if (!c->chars || !c->lens) {
    free(c->chars);
    free(c->lens);
    free(c);
    return nd_set_error(err, ND_ERR_NOMEM, "out of memory");
  }
  c->chars[0] = (char *)ctc_blank;
  c->chars[n + 1] = (char *)ctc_space;
  *out = c;
  return ND_OK;
}

static void ctc_finish(nd_ctc *c) {
  c->max_len = 1;
  for (int i = 0; i < c->n_classes; i++) {
    c->lens[i] = strlen(c->chars[i]);
    if (c->lens[i] > c->max_len)
      c->max_len = c->lens[i];
  }
}

nd_status nd_ctc_new(const char *dictionary_path, nd_ctc **out, nd_error *err) {
  if (!dictionary_path || !out)
    return nd_set_error(err, ND_ERR_INVALID_ARG, "ctc: NULL argument");
  *out = NULL;
  nd_labels *l = NULL;
  nd_status st = nd_labels_load(dictionary_path, &l, err);
  if (st != ND_OK)
    return st;
  int n = nd_labels_count(l);
  if (n < 1) {
    nd_labels_free(l);
    return nd_set_error(err, ND_ERR_PARSE, "ctc: dictionary '%s' is empty", dictionary_path);
  }
  nd_ctc *c = NULL;
  st = ctc_alloc(n, &c, err);
  if (st != ND_OK) {
    nd_labels_free(l);
    return st;
  }
  c->labels = l;
  for (int i = 0; i < n; i++)
    c->chars[i + 1] = (char *)nd_labels_get(l, i);
  ctc_finish(c);
  *out = c;
  return ND_OK;
}

nd_status nd_ctc_new_from_strings(const char *const *chars, int n, nd_ctc **out, nd_error *err) {
  if (!chars || !out || n < 1)
    return nd_set_error(err, ND_ERR_INVALID_ARG, "ctc: no dictionary entries");
  *out = NULL;
  size_t total = 0;
  for (int i = 0; i < n; i++) {
    if (!chars[i])
      return nd_set_error(err, ND_ERR_INVALID_ARG, "ctc: dictionary entry %d is NULL", i);
    total += strlen(chars[i]) + 1;
  }
  nd_ctc *c = NULL;
  nd_status st = ctc_alloc(n, &c, err);
  if (st != ND_OK)
    return st;
  c->own = malloc(total);
  if (!c->own) {
    nd_ctc_free(c);
    return nd_set_error(err, ND_ERR_NOMEM, "out of memory");
  }
  char *p = c->own;
  for (int i = 0; i < n; i++) {
    size_t len = strlen(chars[i]);
    memcpy(p, chars[i], len + 1);
    c->chars[i + 1] = p;
    p += len + 1;
  }
  ctc_finish(c);
  *out = c;
  return ND_OK;
}

int nd_ctc_num_classes(const nd_ctc *c) {
  return c ? c->n_classes : 0;
}

nd_status nd_ctc_set_space_threshold(nd_ctc *c, float t, nd_error *err) {
  if (!c)
    return nd_set_error(err, ND_ERR_INVALID_ARG, "ctc: NULL argument");
  if (!(t > 0.0f && t <= 1.0f))
    return nd_set_error(err, ND_ERR_INVALID_ARG, "ctc: space threshold %g is not in (0, 1]",
                        (double)t);
  c->space_threshold = t;
  return ND_OK;
}

void nd_ctc_free(nd_ctc *c) {
  if (!c)
    return;
  nd_labels_free(c->labels);
  free(c->own);
  free(c->chars);
  free(c->lens);
  free(c->text);
  free(c->rows);
  free(c);
}

/* Logits: the softmax denominator of the step at off, shifted by its
 * maximum mx. */
static double ctc_softmax_den(const nd_tensor *t, int64_t off, int64_t C, float mx) {
  double den = 0;
  for (int64_t k = 0; k < C; k++)
    den += exp((double)(nd_tget(t, off + k) - mx));
  return den;
}

nd_status nd_ctc_decode(nd_ctc *c, const nd_tensor *t, const nd_ctc_result **rows, int *n_rows,
                        nd_error *err) {
  if (n_rows)
    *n_rows = 0;
  if (rows)
    *rows = NULL;
  if (!c || !t || !rows || !n_rows)
    return nd_set_error(err, ND_ERR_INVALID_ARG, "ctc: NULL argument");
  char d[96];
  nd_dims_str(t, d, sizeof d);
  const char *name = t->name ? t->name : "?";
  int64_t N, T, C;
  if (t->n_dims == 3) {
    N = t->dims[0];
    T = t->dims[1];
    C = t->dims[2];
  } else if (t->n_dims == 2) {
    N = 1;
    T = t->dims[0];
    C = t->dims[1];
  } else {
    return nd_set_error(err, ND_ERR_RANK, "ctc: output '%s': expected dims [N,T,C], got %s", name,
                        d);
  }
  if (N < 0 || T < 0 || C < 0)
    return nd_set_error(err, ND_ERR_DIMS, "ctc: output '%s': negative dims %s", name, d);
  if (C != c->n_classes)
    return nd_set_error(err, ND_ERR_DIMS,
                        "ctc: output '%s' %s has %lld classes, the dictionary needs %d (blank + "
                        "%d entries + space)",
                        name, d, (long long)C, c->n_classes, c->n_classes - 2);
  if (N > ND_CTC_MAX_BATCH || T > ND_CTC_MAX_STEPS)
    return nd_set_error(err, ND_ERR_DIMS,
                        "ctc: output '%s' %s is larger than the limit (N <= %d, T <= %d)", name,
                        d, ND_CTC_MAX_BATCH, ND_CTC_MAX_STEPS);
  nd_status st = nd_tensor_validate(t, "ctc: output", err);
  if (st != ND_OK)
    return st;

  /* room: every step a character of the longest entry, plus the NULs */
  size_t need = (size_t)N * ((size_t)T * c->max_len + 1);
  if (need > c->text_cap) {
    char *nt = realloc(c->text, need);
    if (!nt)
      return nd_set_error(err, ND_ERR_NOMEM, "ctc: out of memory for %zu bytes of text", need);
    c->text = nt;
    c->text_cap = need;
  }
  if (N > c->rows_cap) {
    nd_ctc_result *nr = realloc(c->rows, (size_t)N * sizeof *nr);
    if (!nr)
      return nd_set_error(err, ND_ERR_NOMEM, "out of memory");
    c->rows = nr;
    c->rows_cap = (int)N;
  }

  const int f32 = t->dtype == ND_DTYPE_FLOAT32;
  const unsigned char *base = t->data;
  const int64_t space = C - 1;
  const bool soft_spaces = c->space_threshold < 1.0f;
  char *out = c->text;
  for (int64_t r = 0; r < N; r++) {
    char *start = out;
    double conf = 0;
    int kept = 0, inserted = 0;
    int64_t prev = -1;
    int64_t last_char = -1;  /* the last class written, -1 before the first */
    float gap_space = 0.0f;  /* the space class's best since then */
    for (int64_t s = 0; s < T; s++) {
      int64_t off = (r * T + s) * C;
      float mx = -INFINITY;
      int64_t arg = 0;
      double sum = 0;
      int probs = 1;
      for (int64_t k = 0; k < C; k++) {
        float v;
        if (f32)
          memcpy(&v, base + (off + k) * 4, 4);
        else
          v = nd_tget(t, off + k);
        if (v > mx) {
          mx = v;
          arg = k;
        }
        if (!(v >= 0.0f))
          probs = 0;
        sum += v;
      }
      const bool logits = !probs || fabs(sum - 1.0) > 1e-2;
      const bool emit = arg != prev && arg != 0;
      if (soft_spaces && !emit && last_char > 0 && last_char != space) {
        /* a step between two characters: how close the space came */
        double vs = nd_tget(t, off + space);
        float ps = (float)vs;
        if (logits) {
          double den = ctc_softmax_den(t, off, C, mx);
          ps = den > 0 ? (float)(exp(vs - mx) / den) : 0.0f;
        }
        if (ps > gap_space)
          gap_space = ps;
      }
      if (emit) {
        float p = mx;
        if (logits) {
          /* logits: the softmax of the maximum */
          double den = ctc_softmax_den(t, off, C, mx);
          p = den > 0 ? (float)(1.0 / den) : 0.0f;
        }
        /* each inserted space stands for a step that wrote nothing, so
         * the text still fits in T * max_len bytes */
        if (soft_spaces && arg != space && gap_space >= c->space_threshold) {
          *out++ = ' ';
          inserted++;
        }
        gap_space = 0.0f;
        last_char = arg;
        memcpy(out, c->chars[arg], c->lens[arg]);
        out += c->lens[arg];
        conf += p;
        kept++;
      }
      prev = arg;
    }
    *out++ = '\0';
    c->rows[r].text = start;
    c->rows[r].n_chars = kept + inserted;
    c->rows[r].confidence = kept ? (float)(conf / kept) : 0.0f;
  }
  *rows = c->rows;
  *n_rows = (int)N;
  return ND_OK;
}
